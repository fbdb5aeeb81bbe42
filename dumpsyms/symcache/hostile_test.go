package symcache

import (
	"bytes"
	"encoding/binary"
	"testing"

	symsymcache "github.com/gobreakpad/gobreakpad/symbols/symcache"
	"github.com/gobreakpad/gobreakpad/symcache"
)

// hostileCache encodes raw and parses it; the test fails if it does not
// parse.
func hostileCache(t *testing.T, raw *symcache.Raw) *symcache.Reader {
	t.Helper()
	raw.Header.Version = symcache.LatestVersion
	var buf bytes.Buffer
	if _, err := raw.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c, err := symcache.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHostileSymCache: caches whose references loop or point past their
// sections answer lookups, list functions and read back into the model
// without panicking, hanging or growing chains past MaxInlineDepth.
func TestHostileSymCache(t *testing.T) {
	st := symcache.NewStringTable(symcache.LatestVersion)
	name := st.Insert("f")
	past := uint32(1 << 30)
	for _, tc := range []struct {
		what string
		raw  *symcache.Raw
	}{
		{"inlined_into cycle", &symcache.Raw{
			Functions: []symcache.Function{{Name: name, CompDir: symcache.None, EntryPC: 0x10}},
			SourceLocations: []symcache.SourceLocation{
				{File: symcache.None, Line: 1, Function: 0, InlinedInto: 1},
				{File: symcache.None, Line: 2, Function: 0, InlinedInto: 0},
				{File: symcache.None, Line: 3, Function: 0, InlinedInto: 1}, // range 0
				{File: symcache.None, Line: 4, Function: 0, InlinedInto: 2}, // range 1: into itself's range
			},
			Ranges: []uint32{0x10, 0x20}, Strings: st.Bytes(),
		}},
		{"references past every section", &symcache.Raw{
			Files:     []symcache.File{{CompDir: past, Directory: past, Name: past, SrcSrvName: past, SrcSrvDir: past, SrcSrvRevision: past}},
			Functions: []symcache.Function{{Name: past, CompDir: past, EntryPC: 0x10}},
			SourceLocations: []symcache.SourceLocation{
				{File: 0, Line: 1, Function: past, InlinedInto: past},
				{File: past, Line: 2, Function: 0, InlinedInto: symcache.None},
				{File: 0, Line: 3, Function: 0, InlinedInto: 0},
			},
			Ranges: []uint32{0x10, 0x20, symcache.None}, Strings: st.Bytes(),
		}},
		{"ranges out of order", &symcache.Raw{
			Functions: []symcache.Function{{Name: name, CompDir: symcache.None, EntryPC: 0x10}},
			SourceLocations: []symcache.SourceLocation{
				{File: symcache.None, Line: 1, Function: 0, InlinedInto: symcache.None},
				{File: symcache.None, Line: 2, Function: 0, InlinedInto: symcache.None},
				{File: symcache.None, Line: 3, Function: 0, InlinedInto: symcache.None},
			},
			Ranges: []uint32{0x30, 0x10, 0x20}, Strings: st.Bytes(),
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			c := hostileCache(t, tc.raw)
			for _, a := range []uint64{0, 0x10, 0x18, 0x20, 0x30, uint64(symcache.None), 1 << 40} {
				if n := len(c.Lookup(a)); n > symcache.MaxInlineDepth {
					t.Errorf("Lookup(%#x): %d frames", a, n)
				}
				(&symsymcache.Table{Cache: c}).Lookup(a, true)
			}
			c.Functions()
			s := Read(c, "hostile")
			for _, f := range s.Funcs {
				// A chain holds each source location once.
				if len(f.Inlines) > len(tc.raw.SourceLocations) {
					t.Errorf("%s: %d inline records", f.Name, len(f.Inlines))
				}
			}
			var out bytes.Buffer
			if err := s.Write(&out); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHostileSymCacheCounts: headers claiming more records than the file
// holds are errors, not allocations.
func TestHostileSymCacheCounts(t *testing.T) {
	var buf bytes.Buffer
	if _, err := (&symcache.Raw{Header: symcache.Header{Version: symcache.Version7}}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	base := buf.Bytes()
	// Header counts follow the 8-byte preamble, debug id (32) and arch
	// (4): files, functions, source locations, ranges, string bytes.
	for i, field := range []string{"files", "functions", "source locations", "ranges", "string bytes"} {
		for _, n := range []uint32{1, 1 << 20, symcache.None} {
			b := bytes.Clone(base)
			binary.LittleEndian.PutUint32(b[8+36+4*i:], n)
			if i == 3 { // as many source locations as ranges
				binary.LittleEndian.PutUint32(b[8+36+8:], n)
			}
			if _, err := symcache.Parse(b); err == nil {
				t.Errorf("%s = %d in an empty cache: parsed", field, n)
			}
		}
	}
}
