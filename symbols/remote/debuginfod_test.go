package remote

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	"github.com/gobreakpad/gobreakpad/internal/cmdtest"
	"github.com/gobreakpad/gobreakpad/internal/corpus"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/breakpad"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// TestDebuginfodSplit serves a stripped program and its separate debug file
// (Debian's .build-id layout) from debuginfod: the symbols made from its
// /executable and /debuginfo answer as those of the unstripped build.
func TestDebuginfodSplit(t *testing.T) {
	dir := corpus.File(t, "elf/x64-dw4")
	f, err := os.Open(filepath.Join(dir, "buildid/deep_chain"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := moduleid.BuildID(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	buildID := hex.EncodeToString(id)
	url := cmdtest.Debuginfod(t, filepath.Join(dir, "buildid"), buildID)

	c := newClient(t)
	src := NewDebuginfod(url, c)
	defer src.Close()
	m := symbols.Module{CodeFile: "/usr/bin/deep_chain", CodeID: buildID, DebugFile: "deep_chain", DebugID: "whatever"}
	got, err := src.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	full, err := elf.Dump(filepath.Join(dir, "full/deep_chain"), dumpsyms.Options{Inlines: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	full.Write(&buf)
	tab, err := symfile.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := breakpad.Symbols(tab)
	if got.CFI == nil || want.CFI == nil {
		t.Fatalf("CFI: got %v, want %v", got.CFI != nil, want.CFI != nil)
	}
	same := 0
	for rel := uint64(0); rel < 0x3000; rel++ {
		g, gok := got.Lookup.Lookup(rel, true)
		w, wok := want.Lookup.Lookup(rel, true)
		if gok != wok || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%#x: got %+v, want %+v", rel, g, w)
		}
		gc, _ := got.CFI.CFIRules(rel, nil)
		wc, _ := want.CFI.CFIRules(rel, nil)
		if fmt.Sprint(gc) != fmt.Sprint(wc) {
			t.Fatalf("%#x: CFI %q, want %q", rel, gc, wc)
		}
		if gok && g.HasLine {
			same++
		}
	}
	if same == 0 {
		t.Fatal("no address with a line: nothing compared")
	}
	// A second source over the same cache converts nothing and asks nothing.
	c2 := &Client{Cache: c.Cache}
	src2 := NewDebuginfod(url, c2)
	defer src2.Close()
	if _, err := src2.Load(m); err != nil || c2.Requests() != 0 {
		t.Errorf("second load: %v, %d requests", err, c2.Requests())
	}
	onlyCache(t, c)
}
