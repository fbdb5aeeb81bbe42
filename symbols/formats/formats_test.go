package formats

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbfile"
)

// TestSniffHead: each format with a magic is recognized by its first bytes,
// and text of no format is not.
func TestSniffHead(t *testing.T) {
	for _, tc := range []struct {
		head, want string
	}{
		{"MODULE Linux x86_64 0 a\n", "breakpad"},
		{"\x7fELF\x02\x01\x01", "elf"},
		{"GSYM", "gsym"},
		{"MYSG", "gsym"},
		{"SYMC\x09\x00\x00\x00", "symcache"},
		{symbfile.Magic, "symbfile"},
		{"\x28\xb5\x2f\xfd", "symbfile"},
		{"package main", ""},
		{"", ""},
	} {
		got := ""
		if f := SniffHead([]byte(tc.head)); f != nil {
			got = f.Name
		}
		if got != tc.want {
			t.Errorf("SniffHead(%q) = %q, want %q", tc.head, got, tc.want)
		}
	}
}

// TestConvert: Convert writes what ReadFor and Write write, and passes an
// ELF input's path on to the symbfile writer (return pads).
func TestConvert(t *testing.T) {
	elfPath := corpus.File(t, "elf/x64-dw5/full/inline_chain")
	sym := corpus.File(t, "symbolic/linux/crash.sym")
	for _, tc := range []struct{ in, to string }{{elfPath, "symbfile"}, {sym, "symbfile"}, {sym, "symcache"}, {sym, "gsym"}, {sym, "breakpad"}} {
		to, err := ByName(tc.to)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Convert(&got, tc.in, to, nil); err != nil {
			t.Fatalf("%s to %s: %v", tc.in, tc.to, err)
		}
		from, err := Sniff(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		in, err := ReadFor(from, to, tc.in, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := to.Write(&want, in.Symbols, in.Options); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s to %s: Convert wrote %d bytes, ReadFor and Write %d", tc.in, tc.to, got.Len(), want.Len())
		}
		if tc.in == elfPath {
			if in.Options.Binary != elfPath {
				t.Errorf("ReadFor of an ELF: Options.Binary %q", in.Options.Binary)
			}
			tab, err := symbfile.Parse(got.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if len(tab.Pads) == 0 {
				t.Error("symbfile of an ELF without return pads")
			}
		}
	}
	// Unsupported directions are errors, not panics.
	elfFmt, _ := ByName("elf")
	if err := Convert(&bytes.Buffer{}, sym, elfFmt, nil); err == nil {
		t.Error("Convert to elf: no error")
	}
	if _, _, err := elfFmt.Open(elfPath); err == nil {
		t.Error("elf lookups: no error")
	}
	text := filepath.Join(t.TempDir(), "x.txt")
	os.WriteFile(text, []byte("hello"), 0o644)
	bp, _ := ByName("breakpad")
	if err := Convert(&bytes.Buffer{}, text, bp, nil); err == nil {
		t.Error("Convert of text: no error")
	}
}
