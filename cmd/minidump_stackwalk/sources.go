package main

import (
	"io"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symbols/gsym"
	"github.com/gobreakpad/gobreakpad/symbols/symbfile"
	"github.com/gobreakpad/gobreakpad/symbols/symcache"
)

// storeSource is a symbol source over symbol store directories that holds
// files open until closed.
type storeSource interface {
	symbols.Source
	io.Closer
}

// stores are the symbol sources searched in every SYMBOL_PATH, in order: for
// each kind of information (lookups, CFI, STACK WIN) the first that has the
// module wins (symbols.Chain). Files of the lookup-only formats (SymCache,
// symbfile, GSYM) come first: a store holding one beside a module's .sym was made
// to answer lookups from it (the .sym may keep only its STACK records), and
// the .sym after them still gives the unwind rules. Breakpad's stores hold
// only .sym files, so walks over them are unchanged. Each new format adds its
// store here.
var stores = []func(roots ...string) storeSource{
	func(roots ...string) storeSource { return symcache.NewDirs(roots...) },
	func(roots ...string) storeSource { return symbfile.NewDirs(roots...) },
	func(roots ...string) storeSource { return gsym.NewDirs(roots...) },
	func(roots ...string) storeSource { return breakpad.NewDirs(roots...) },
}

// symbolSources returns the chain of stores over the symbol paths, and a
// function closing them.
func symbolSources(paths []string) (symbols.Source, func()) {
	var chain symbols.Chain
	var open []io.Closer
	for _, s := range stores {
		src := s(paths...)
		chain = append(chain, src)
		open = append(open, src)
	}
	return chain, func() {
		for _, c := range open {
			c.Close()
		}
	}
}
