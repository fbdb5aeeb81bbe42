package macho

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func fatHeader(n uint32, size int) []byte {
	b := make([]byte, max(8, size))
	binary.BigEndian.PutUint32(b, magicFat)
	binary.BigEndian.PutUint32(b[4:], n)
	return b
}

// TestBadInput holds Dump to clear errors, quickly, on damaged files.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	hello, _ := os.ReadFile(filepath.Join(corpus.Path(), "macos", "built", "hello-x86_64"))
	thin := func(mut func(b []byte) []byte) []byte {
		if hello == nil {
			return nil
		}
		b := append([]byte(nil), hello...)
		return mut(b)
	}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated header", []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1, 3}, "file truncated"},
		{"fat with 2^32-1 architectures", fatHeader(0xffffffff, 64), "over the limit"},
		{"fat past the file", fatHeader(3, 32), "past the end"},
		{"fat with no architectures", fatHeader(0, 64), "no architectures"},
		{"slice past the file", func() []byte {
			b := fatHeader(1, 64)
			binary.BigEndian.PutUint32(b[8:], 0x01000007)
			binary.BigEndian.PutUint32(b[16:], 32)
			binary.BigEndian.PutUint32(b[20:], 1<<30)
			return b
		}(), "not inside"},
		{"load commands past the file", thin(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[20:], 0x7fffffff)
			return b
		}), "run past the end"},
		{"too many load commands", thin(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[16:], 0xffffff)
			return b
		}), "cannot fit"},
		{"truncated file", thin(func(b []byte) []byte { return b[:200] }), "run past the end"},
	}
	for _, c := range cases {
		if c.b == nil {
			t.Logf("%s: corpus file missing: skipped", c.name)
			continue
		}
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(p, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := Dump(p, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: %v", c.name, d)
		}
	}
}

// TestBundles checks the dSYM bundle rules: the one file inside, an error
// naming the files when there are several, and bundles that are not.
func TestBundles(t *testing.T) {
	root := filepath.Join(corpus.Dir(t), "macos", "symbolic")
	if _, err := Dump(filepath.Join(root, "crash.dSYM"), Options{}); err == nil || !strings.Contains(err.Error(), "2 files in Contents/Resources/DWARF (crash, invalid)") {
		t.Errorf("crash.dSYM: %v", err)
	}
	for _, b := range []string{"crash.app.dSYM", "other.dSYM", "other.dmp.dSYM"} {
		if _, err := Dump(filepath.Join(root, b), Options{}); err == nil {
			t.Errorf("%s: no error", b)
		} else {
			t.Logf("%s: %v", b, err)
		}
	}
	if _, err := Dump(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "not a dSYM bundle") {
		t.Errorf("empty directory: %v", err)
	}
	var sb strings.Builder
	if err := ListArch(filepath.Join(root, "Example.framework.dSYM"), &sb); err != nil || sb.String() != "Example.framework.dSYM contains the following architectures:\nx86_64, arm64\n" {
		t.Errorf("ListArch: %q, %v", sb.String(), err)
	}
}

// TestNoUUID identifies a file without LC_UUID by the MD5 of its sections'
// bytes, as Breakpad does (with Breakpad's MD5), and writes no INFO CODE_ID.
func TestNoUUID(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(corpus.Dir(t), "macos", "built", "hello-x86_64"))
	if err != nil {
		t.Skipf("corpus hello-x86_64: %v", err)
	}
	// Rename LC_UUID (0x1b) into a load command nobody reads.
	off := 32
	for range binary.LittleEndian.Uint32(b[16:]) {
		if binary.LittleEndian.Uint32(b[off:]) == 0x1b {
			binary.LittleEndian.PutUint32(b[off:], 0x7ffffff0)
		}
		off += int(binary.LittleEndian.Uint32(b[off+4:]))
	}
	p := filepath.Join(t.TempDir(), "nouuid")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Dump(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := macho.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := newBPMD5()
	for _, s := range f.Sections {
		if s.Flags&0xff != 1 && s.Offset != 0 {
			h.Write(b[s.Offset : s.Offset+uint32(s.Size)])
		}
	}
	if want := fmt.Sprintf("%X0", h.Sum()); m.Module.ID != want || m.CodeID.ID != "" {
		t.Errorf("MODULE id %s, INFO CODE_ID %q; want %s and none", m.Module.ID, m.CodeID.ID, want)
	}
}

// TestTablesPastEnd holds the tables debug/macho would allocate before
// reading (symbols, strings, indirect symbols, relocations) to the file's
// size: a damaged count is refused by name, not allocated.
func TestTablesPastEnd(t *testing.T) {
	for _, c := range []struct {
		file string
		cmd  uint32 // the load command to damage
		at   int    // the field's offset in it (in its first section for segments)
		want string
	}{
		{"prog-i386-fl.o", 0x2, 12, "symbol table"},
		{"prog-i386-fl.o", 0x2, 20, "string table"},
		{"prog-i386-fl.o", 0x1, 56 + 52, "relocations"},
		{"../libpairs-arm64.dylib", 0xb, 60, "indirect symbol table"},
		{"../libpairs-arm64.dylib", 0x19, 72 + 60, "relocations"},
	} {
		b, err := os.ReadFile(mach32(c.file))
		if err != nil {
			t.Fatal(err)
		}
		hsize := 28
		if b[0] == 0xcf {
			hsize = 32
		}
		found := false
		for off, i := hsize, 0; i < int(binary.LittleEndian.Uint32(b[16:])); i++ {
			if binary.LittleEndian.Uint32(b[off:]) == c.cmd {
				binary.LittleEndian.PutUint32(b[off+c.at:], 0x00ffffff)
				found = true
				break
			}
			off += int(binary.LittleEndian.Uint32(b[off+4:]))
		}
		if !found {
			t.Fatalf("%s: no load command %#x", c.file, c.cmd)
		}
		_, err = dumpBytes(c.file, b, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want+" (") || !strings.Contains(err.Error(), "runs past the end") {
			t.Errorf("%s, command %#x damaged at %d: %v, want an error about the %s", c.file, c.cmd, c.at, err, c.want)
		}
	}
}
