package pdbsyms

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/cache"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestDirsWithoutCodeView: a module without a debug file (a PE without a
// CodeView record) is found by its code file and code identifier in a
// symbol-store tree and in a plain folder, and converted from the PE alone
// into the cache under its code file and identifier: RaiseException's name
// from the exports, its unwind rules from .pdata. A PE of another
// identifier, and modules whose code identifier is no PE's, are not used.
func TestDirsWithoutCodeView(t *testing.T) {
	src, err := filepath.Abs(symtest.WineKernelbasePath)
	if err != nil {
		t.Fatal(err)
	}
	tree, plain := t.TempDir(), t.TempDir()
	link(t, src, tree, "kernelbase.dll", symtest.WineKernelbase.CodeID, "kernelbase.dll")
	link(t, src, plain, "kernelbase.dll")
	for _, root := range []string{tree, plain} {
		conv := &Converter{Cache: &cache.Cache{Dir: t.TempDir()}}
		d := NewDirs(conv, t.TempDir(), root)
		syms, err := d.Load(symtest.WineKernelbase)
		if err != nil {
			t.Fatalf("%s: %v", root, err)
		}
		const pc = 0x13d7e // RaiseException + 0x4e: the call of RtlRaiseException returns there
		if s, ok := syms.Lookup.Lookup(pc, false); !ok || s.Function != "RaiseException" {
			t.Errorf("%s: %#x is %q, want RaiseException", root, pc, s.Function)
		}
		if syms.CFI == nil {
			t.Fatalf("%s: no unwind rules", root)
		}
		if rules, ok := syms.CFI.CFIRules(pc, nil); !ok || !strings.Contains(strings.Join(rules, " "), ".cfa:") {
			t.Errorf("%s: rules at %#x: %q %v", root, pc, rules, ok)
		}
		p, ok := conv.Cache.Lookup("kernelbase.dll", symtest.WineKernelbase.CodeID, "kernelbase.dll.sym")
		if !ok {
			t.Fatalf("%s: no converted file in the cache", root)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(b), "\n"); first != "MODULE windows x86_64 63F14E2B5E5000 kernelbase.dll" {
			t.Errorf("%s: converted file starts %q", root, first)
		}
		wrong := symtest.WineKernelbase
		wrong.CodeID = "63F14E2B5e6000"
		if _, err := d.Load(wrong); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%s: a PE of another identifier: %v, want not found", root, err)
		}
		elf := symbols.Module{CodeFile: "kernelbase.dll", CodeID: "b5381a457906d279073822a5ceb2495642fbd6d5"}
		if _, err := d.Load(elf); !errors.Is(err, symbols.ErrNotFound) {
			t.Errorf("%s: a build ID as code identifier: %v, want not found", root, err)
		}
		conv.Close()
	}
}

func TestIsPECodeID(t *testing.T) {
	for id, want := range map[string]bool{
		"63F14E2B5e5000": true, "5C8AD05F12000": true, "63F14E2B1": true, "63F14E2BFFFFFFFF": true,
		"": false, "63F14E2B": false, "63F14E2B5e5000z": false, "63F14E2B1000000000": false,
		"b5381a457906d279073822a5ceb2495642fbd6d5": false,
	} {
		if got := IsPECodeID(id); got != want {
			t.Errorf("IsPECodeID(%q) = %v, want %v", id, got, want)
		}
	}
}
