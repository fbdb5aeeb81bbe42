//go:build !linux

package pdb

// dropPages does nothing here: the system reclaims the mapping's pages
// when it needs them.
func dropPages(b []byte) {}
