package macho

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// packMachO returns a thin little-endian Mach-O file b without its
// padding: the header, its segments (with their sections and
// relocations), LC_SYMTAB and LC_UUID, then the bytes they point at packed
// one after the other. Sections' addresses and contents do not change, so
// the packed file dumps as the original (TestPackedSeeds); the other load
// commands (dyld's, LC_DYSYMTAB, versions) are left out. Real files are
// mostly page-alignment zeros: packing makes them fuzz seeds of a few
// hundred bytes to a few kilobytes.
func packMachO(b []byte) ([]byte, error) {
	le := binary.LittleEndian
	if len(b) < 32 {
		return nil, fmt.Errorf("%d bytes: too short", len(b))
	}
	var hsize, symsz int
	switch le.Uint32(b) {
	case magic32:
		hsize, symsz = 28, 12
	case magic64:
		hsize, symsz = 32, 16
	default:
		return nil, fmt.Errorf("not a thin little-endian Mach-O file")
	}
	var cmds [][]byte
	for off, i := hsize, 0; i < int(le.Uint32(b[16:])); i++ {
		cmd, n := le.Uint32(b[off:]), int(le.Uint32(b[off+4:]))
		if cmd == 0x1 || cmd == 0x19 || cmd == 0x2 || cmd == 0x1b {
			cmds = append(cmds, bytes.Clone(b[off:off+n]))
		}
		off += n
	}
	var data bytes.Buffer
	cmdsz := 0
	for _, c := range cmds {
		cmdsz += len(c)
	}
	base := (hsize + cmdsz + 15) &^ 15
	// put appends n bytes of b at off to the data, returning their new
	// offset.
	put := func(off, n uint32) uint32 {
		for data.Len()%16 != 0 {
			data.WriteByte(0)
		}
		at := uint32(base + data.Len())
		data.Write(b[off : off+n])
		return at
	}
	for _, c := range cmds {
		switch cmd := le.Uint32(c); cmd {
		case 0x1, 0x19:
			head, sect, word := 56, 68, 4
			if cmd == 0x19 {
				head, sect, word = 72, 80, 8
			}
			first, end := uint32(0), uint32(0)
			for j := 0; j < int(le.Uint32(c[head-8:])); j++ {
				s := c[head+j*sect:]
				size := uint32(le.Uint32(s[32+word:]))
				offAt := 32 + 2*word
				off, kind := le.Uint32(s[offAt:]), le.Uint32(s[offAt+24:])&0xff
				if off != 0 && size != 0 && kind != 0x1 && kind != 0xc && kind != 0x12 {
					at := put(off, size)
					le.PutUint32(s[offAt:], at)
					if first == 0 {
						first = at
					}
					end = at + size
				}
				if nrel := le.Uint32(s[offAt+12:]); nrel != 0 {
					le.PutUint32(s[offAt+8:], put(le.Uint32(s[offAt+8:]), nrel*8))
				}
			}
			fileoff := 24 + 2*word
			if string(bytes.TrimRight(c[8:24], "\x00")) == "__TEXT" {
				first = 0
			}
			if word == 4 {
				le.PutUint32(c[fileoff:], first)
				le.PutUint32(c[fileoff+4:], end-min(end, first))
			} else {
				le.PutUint64(c[fileoff:], uint64(first))
				le.PutUint64(c[fileoff+8:], uint64(end-min(end, first)))
			}
		case 0x2:
			le.PutUint32(c[8:], put(le.Uint32(c[8:]), le.Uint32(c[12:])*uint32(symsz)))
			le.PutUint32(c[16:], put(le.Uint32(c[16:]), le.Uint32(c[20:])))
		}
	}
	out := make([]byte, base, base+data.Len())
	copy(out, b[:hsize])
	le.PutUint32(out[16:], uint32(len(cmds)))
	le.PutUint32(out[20:], uint32(cmdsz))
	at := hsize
	for _, c := range cmds {
		at += copy(out[at:], c)
	}
	return append(out, data.Bytes()...), nil
}

// fatOf returns a fat file of the thin files given.
func fatOf(thin ...[]byte) []byte {
	be := binary.BigEndian
	out := fatHeader(uint32(len(thin)), 8+20*len(thin))
	for i, t := range thin {
		for len(out)%16 != 0 {
			out = append(out, 0)
		}
		a := out[8+20*i:]
		be.PutUint32(a, binary.LittleEndian.Uint32(t[4:]))     // cputype
		be.PutUint32(a[4:], binary.LittleEndian.Uint32(t[8:])) // cpusubtype
		be.PutUint32(a[8:], uint32(len(out)))
		be.PutUint32(a[12:], uint32(len(t)))
		be.PutUint32(a[16:], 4)
		out = append(out, t...)
	}
	return out
}

// fuzzSeeds returns FuzzDump's seeds, named: small files of each shape
// (32- and 64-bit, objects, linked images, a dSYM's DWARF file, fat),
// packed; the corpus's x86_64 ones when it is present.
func fuzzSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	files := map[string]string{
		"prog-i386-fl.o":   mach32("prog-i386-fl.o"),
		"prog-armv7.o":     mach32("prog-armv7.o"),
		"link-i386.dSYM":   mach32("link-i386.dSYM/Contents/Resources/DWARF/link-i386"),
		"libpairs-arm64":   filepath.Join("testdata", "libpairs-arm64.dylib"),
		"hello-x86_64":     filepath.Join(corpus.Path(), "macos", "built", "hello-x86_64"),
		"libframeless-x86": filepath.Join(corpus.Path(), "macos", "built", "libframeless-x86_64.dylib"),
		"hello-arm64.dSYM": filepath.Join(corpus.Path(), "macos", "built", "hello-arm64.dSYM/Contents/Resources/DWARF/hello-arm64"),
	}
	for name, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			if !os.IsNotExist(err) {
				t.Fatal(err)
			}
			continue // the corpus's, without the corpus
		}
		pb, err := packMachO(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		seeds[name] = pb
	}
	if a, b := seeds["prog-i386-fl.o"], seeds["prog-armv7.o"]; a != nil && b != nil {
		seeds["fat"] = fatOf(a, b)
	}
	return seeds
}

// TestPackedSeeds checks that FuzzDump's packed seeds dump as the files
// they were packed from, so that they hold each shape's paths.
func TestPackedSeeds(t *testing.T) {
	seeds := fuzzSeeds(t)
	if len(seeds) < 5 {
		t.Fatalf("%d seeds", len(seeds))
	}
	text := func(name string, b []byte, exact bool) string {
		m, err := dumpBytes(name, b, Options{Options: dumpsyms.Options{Inlines: true}, Exact: exact})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var w bytes.Buffer
		if err := m.Write(&w); err != nil {
			t.Fatal(err)
		}
		return w.String()
	}
	originals := map[string]string{
		"prog-i386-fl.o": mach32("prog-i386-fl.o"),
		"prog-armv7.o":   mach32("prog-armv7.o"),
		"link-i386.dSYM": mach32("link-i386.dSYM/Contents/Resources/DWARF/link-i386"),
		"libpairs-arm64": filepath.Join("testdata", "libpairs-arm64.dylib"),
	}
	if dir := corpus.Path(); isDir(dir) {
		originals["hello-x86_64"] = filepath.Join(dir, "macos", "built", "hello-x86_64")
		originals["libframeless-x86"] = filepath.Join(dir, "macos", "built", "libframeless-x86_64.dylib")
		originals["hello-arm64.dSYM"] = filepath.Join(dir, "macos", "built", "hello-arm64.dSYM/Contents/Resources/DWARF/hello-arm64")
	}
	for name, p := range originals {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, exact := range []bool{false, true} {
			want, got := text(name, b, exact), text(name, seeds[name], exact)
			if got != want {
				t.Errorf("%s (exact %v): packed (%d bytes) dumps\n%s\nthe file (%d bytes)\n%s", name, exact, len(seeds[name]), got, len(b), want)
			}
		}
		if filepath.Ext(name) != ".o" && len(seeds[name]) >= len(b) { // objects have no padding
			t.Errorf("%s: packed to %d bytes of %d", name, len(seeds[name]), len(b))
		}
		t.Logf("%s: %d bytes packed to %d", name, len(b), len(seeds[name]))
	}
	if got := text("fat", seeds["fat"], false); got != text("fat", seeds["prog-i386-fl.o"], false) {
		t.Errorf("the fat seed's default slice dumps\n%s", got)
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
