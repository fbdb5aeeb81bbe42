//go:build race

package main

// raceEnabled: the race detector slows walks about fivefold; long corpus
// tests walk a sample of their cases.
const raceEnabled = true
