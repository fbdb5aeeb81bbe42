package pdbsyms

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// link makes dst (and its directories) a symbolic link to src.
func link(t *testing.T, src string, dst ...string) {
	t.Helper()
	p := filepath.Join(dst...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, p); err != nil {
		t.Fatal(err)
	}
}

// checkAgainst checks that syms answers lookups as the conversion of src
// does, at every FUNC and line address; it returns how many were checked.
func checkAgainst(t *testing.T, syms *symbols.Symbols, src string) int {
	t.Helper()
	want, err := dumpFile(src, filepath.Ext(src) != ".pdb", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := symtest.Table(t, want)
	if syms == nil || (len(want.CFI) > 0) != (syms.CFI != nil) {
		t.Fatalf("%d STACK CFI records made, symbols %+v", len(want.CFI), syms)
	}
	n := 0
	if len(want.Funcs)+len(want.Publics) == 0 {
		return len(want.CFI)
	}
	if syms.Lookup == nil {
		t.Fatalf("no lookups: %+v", syms)
	}
	if len(want.Funcs) == 0 {
		// Exports only: PUBLIC records.
		for _, p := range want.Publics {
			got, ok := syms.Lookup.Lookup(p.Address, false)
			w, wok := ref.Lookup(p.Address)
			if ok != wok || got.Function != w.Name {
				t.Fatalf("%#x: got %q, want %q", p.Address, got.Function, w.Name)
			}
			n++
		}
	}
	m, err := symtest.AgreeAtFuncs(t, syms, want)
	if err != nil {
		t.Fatal(err)
	}
	return n + m
}

// TestDirs lays corpus PDBs and PEs out as a symbol-store tree (plain and
// .pd_) and as a plain folder: each is found, converted once into the cache
// and answers as the file's own conversion; a plain file whose identifier
// is not the module's is not used.
func TestDirs(t *testing.T) {
	win := filepath.Join(corpus.Dir(t), "windows")
	regtest := filepath.Join(win, "breakpad", "dump_syms_regtest.pdb")
	regtestID := "9214611565FA4C538FE724A797B860F71"
	peOnly := filepath.Join(win, "breakpad", "pe_only_symbol_test.dll")
	basic := filepath.Join(win, "mozilla", "basic32.pd_")
	basicID := "34060D222DBB44E5AA72243CE8326C2F2"
	for _, p := range []string{regtest, peOnly, basic} {
		if _, err := os.Stat(p); err != nil {
			t.Skip(err)
		}
	}
	// The reference conversion of basic32.pdb, out of its CAB.
	basicPDB, err := Extract(&cache.Cache{Dir: t.TempDir()}, basic, MaxExtract, "basic32.pdb")
	if err != nil {
		t.Fatal(err)
	}

	tree, plain := t.TempDir(), t.TempDir()
	link(t, regtest, tree, "dump_syms_regtest.pdb", regtestID, "dump_syms_regtest.pdb")
	link(t, basic, tree, "basic32.pdb", basicID, "basic32.pd_")
	link(t, peOnly, tree, "pe_only_symbol_test.dll", "5C8AD05F12000", "pe_only_symbol_test.dll")
	link(t, regtest, plain, "dump_syms_regtest.pdb")
	link(t, basicPDB, plain, "basic32.pdb")
	link(t, peOnly, plain, "pe_only_symbol_test.dll")

	mods := []struct {
		m   symbols.Module
		ref string
	}{
		{symbols.Module{DebugFile: `c:\build\dump_syms_regtest.pdb`, DebugID: regtestID}, regtest},
		{symbols.Module{DebugFile: "basic32.pdb", DebugID: basicID, CodeFile: "basic32.dll"}, basicPDB},
		{symbols.Module{DebugFile: "pe_only_symbol_test.pdb", DebugID: "2A5EAB481FAB4A17A9761CDC14FE531A1",
			CodeFile: `C:\app\pe_only_symbol_test.dll`, CodeID: "5C8AD05F12000"}, peOnly},
	}
	for _, root := range []string{tree, plain} {
		cacheDir := t.TempDir()
		conv := &Converter{Cache: &cache.Cache{Dir: cacheDir}}
		d := NewDirs(conv, t.TempDir(), root)
		for _, c := range mods {
			syms, err := d.Load(c.m)
			if err != nil {
				t.Fatalf("%s: %s: %v", root, c.m.DebugFile, err)
			}
			n := checkAgainst(t, syms, c.ref)
			t.Logf("%s: %s: %d addresses or CFI records agree", filepath.Base(root), c.m.DebugFile, n)
			elems, err := symstore.BreakpadPath(c.m.DebugFile, c.m.DebugID, ".sym")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := conv.Cache.Lookup(elems...); !ok {
				t.Errorf("%s: no converted file in the cache", c.m.DebugFile)
			}
		}
		// Another wrong identifier: the plain file is not used, the tree
		// has no such directory.
		wrong := mods[0].m
		wrong.DebugID = "00000000000000000000000000000000A"
		if _, err := d.Load(wrong); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%s: a PDB of another identifier: %v, want not found", root, err)
		}
		wrongPE := mods[2].m
		wrongPE.CodeID = "5C8AD05F13000"
		if _, err := d.Load(wrongPE); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%s: a PE of another identifier: %v, want not found", root, err)
		}
		conv.Close()

		// A second converter over the same cache reads the converted
		// file without the originals.
		conv2 := &Converter{Cache: &cache.Cache{Dir: cacheDir}}
		syms, err := conv2.Convert(mods[0].m, "", "")
		if err != nil {
			t.Fatalf("converted file not reused: %v", err)
		}
		checkAgainst(t, syms, regtest)
		conv2.Close()
	}
	// ELF modules are not looked for.
	d := NewDirs(&Converter{Cache: &cache.Cache{Dir: t.TempDir()}}, tree)
	if _, err := d.Load(symbols.Module{DebugFile: "libc.so.6", DebugID: "AB", CodeFile: "libc.so.6"}); !errors.Is(err, symbols.ErrNotFound) {
		t.Errorf("ELF module: %v", err)
	}
}

// TestExtractBomb: a cabinet declaring far more than MaxInflateRatio times
// its size is refused before anything is decompressed or written.
func TestExtractBomb(t *testing.T) {
	data, err := os.ReadFile("../../cab/testdata/hello.cab")
	if err != nil {
		t.Fatal(err)
	}
	files := binary.LittleEndian.Uint32(data[16:]) // CFHEADER.coffFiles
	binary.LittleEndian.PutUint32(data[files:], 0xfffffff0)
	path := filepath.Join(t.TempDir(), "bomb.pd_")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cache.Cache{Dir: t.TempDir()}
	_, err = Extract(c, path, MaxExtract, "bomb.pdb")
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("err = %v, want the declared size refused", err)
	}
	if ents, _ := os.ReadDir(c.Dir); len(ents) != 0 {
		t.Errorf("cache holds %d entries after a refused cabinet", len(ents))
	}
}

// TestExtractDamaged: a cabinet whose block checksums fail (the hostile
// corpus's corrupted basic32.pd_) is refused and the cache keeps no file
// of it, not even a partial one.
func TestExtractDamaged(t *testing.T) {
	for _, name := range []string{"cab-checksum-wrong-data-corrupt.pd_", "cab-one-bit-flipped.pd_"} {
		c := &cache.Cache{Dir: t.TempDir()}
		_, err := Extract(c, corpus.File(t, "hostile/"+name), MaxExtract, "basic32.pdb", "ID", "basic32.pdb")
		if err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("%s: err = %v, want a checksum error", name, err)
		}
		filepath.WalkDir(c.Dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("%s: the cache keeps %s", name, p)
			}
			return nil
		})
	}
}
