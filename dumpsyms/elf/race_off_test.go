//go:build !race

package elf

const raceBuild = false
