// Package strindex finds the strings already in a string table being
// written (GSYM's, SymCache's) by their hash and offset, without keeping
// them a second time as map keys: the names of a big module are tens of
// megabytes.
package strindex

import "hash/maphash"

// Index maps strings to their offsets in a table that the caller keeps.
// The zero Index is empty and ready to use.
type Index struct {
	seed  maphash.Seed
	first map[uint64]uint32 // hash → offset of the first string with it
	more  map[string]uint32 // strings whose hash another string had first
}

// Hash returns the hash of s that Find and Add take.
func (x *Index) Hash(s string) uint64 {
	if x.first == nil {
		x.seed = maphash.MakeSeed()
		x.first = map[uint64]uint32{}
	}
	return maphash.String(x.seed, s)
}

// Find returns the offset of s, of hash h; at(off, s) reports whether the
// table holds s at off.
func (x *Index) Find(h uint64, s string, at func(off uint32, s string) bool) (uint32, bool) {
	off, ok := x.first[h]
	if !ok {
		return 0, false
	}
	if at(off, s) {
		return off, true
	}
	off, ok = x.more[s]
	return off, ok
}

// Add records s, of hash h, at off.
func (x *Index) Add(h uint64, s string, off uint32) {
	if x.first == nil {
		x.Hash(s)
	}
	if _, ok := x.first[h]; !ok {
		x.first[h] = off
		return
	}
	if x.more == nil {
		x.more = map[string]uint32{}
	}
	x.more[s] = off
}
