//go:build race

package queue

// raceBuild is set in -race builds: the embedded nats-server's own data
// races are not this package's (TestStartTogether).
const raceBuild = true
