package symserver

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// walkCase is a corpus case: its dump and symbol stores (cases.tsv).
type walkCase struct{ name, dump, stores string }

// caseGroup is cases that walk with one server: stores is the union of
// their stores.
type caseGroup struct {
	stores []string
	cases  []walkCase
	// have is what the server will hold: module → hash of its .sym.
	have map[string][32]byte
	// mods are the modules the group's dumps name.
	mods []map[string]bool
	syms []map[string][32]byte
}

// storeSyms returns the modules (lower-cased NAME/ID) of the .sym files
// the test uploads from stores, with their hashes.
func storeSyms(t testing.TB, cdir string, stores []string) map[string][32]byte {
	out := map[string][32]byte{}
	for _, st := range stores {
		root := filepath.Join(cdir, st)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sym") {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			el := strings.Split(rel, string(filepath.Separator))
			if len(el) != 3 {
				return nil
			}
			if want, err := symstore.BreakpadPath(el[0], el[1], ".sym"); err != nil || want[2] != el[2] {
				return nil
			}
			if m, err := moduleLine(p); err != nil || symstore.BaseName(m.Name) != el[0] || m.ID != el[1] {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			k := strings.ToLower(el[0] + "/" + el[1])
			if _, ok := out[k]; !ok { // the first store wins, as in a walk
				out[k] = sha256.Sum256(b)
			}
			return nil
		})
	}
	return out
}

// dumpModules returns the modules (lower-cased NAME/ID) a dump names, or
// nil when it cannot be read.
func dumpModules(path string) map[string]bool {
	f, err := minidump.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	ms, err := f.ModuleList()
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for i := range ms {
		if f, id := ms[i].DebugFile(), ms[i].DebugIdentifier(); f != "" && id != "" {
			out[strings.ToLower(symstore.BaseName(f)+"/"+id)] = true
		}
	}
	return out
}

// groupCases puts cases on as few servers as keep each case's walk with
// exactly its own symbols: a case joins a group when, for every module
// its dump names and every module the group's dumps name, the group's
// symbols and the case's agree (both lack it or hold the same bytes). A
// dump that cannot be read gets a server of its own. It returns the
// groups and the number of distinct sets of stores.
func groupCases(t testing.TB, cdir string, cases []walkCase) ([]*caseGroup, int) {
	var groups []*caseGroup
	sets := map[string]bool{}
	for _, c := range cases {
		sets[c.stores] = true
		stores := strings.Fields(c.stores)
		syms := storeSyms(t, cdir, stores)
		mods := dumpModules(filepath.Join(cdir, c.dump))
		agree := func(g *caseGroup) bool {
			if mods == nil {
				return false
			}
			// The server must give the case's dump's modules as its
			// stores do (what the group lacks, the case adds) ...
			for m := range mods {
				h, ok := syms[m]
				if gh, gok := g.have[m]; gok && (!ok || h != gh) {
					return false
				}
			}
			// ... and the case must add nothing the group's dumps name
			// and their stores lack, nor change what they hold.
			for i, gm := range g.mods {
				for m := range gm {
					h, ok := syms[m]
					gh, gok := g.syms[i][m]
					if ok && (!gok || h != gh) {
						return false
					}
				}
			}
			return true
		}
		var g *caseGroup
		for _, cand := range groups {
			if agree(cand) {
				g = cand
				break
			}
		}
		if g == nil || mods == nil {
			g = &caseGroup{have: map[string][32]byte{}}
			groups = append(groups, g)
		}
		g.cases = append(g.cases, c)
		g.mods = append(g.mods, mods)
		g.syms = append(g.syms, syms)
		for _, st := range stores {
			if !slices.Contains(g.stores, st) {
				g.stores = append(g.stores, st)
			}
		}
		for m, h := range syms {
			if _, ok := g.have[m]; !ok {
				g.have[m] = h
			}
		}
	}
	return groups, len(sets)
}
