package gsym

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// rawFile lays out a GSYM file around hand-made FunctionInfo bodies, one per
// address; strs is the string table after its leading NUL; files are
// extra file entries.
func rawFile(addrs []uint16, bodies [][]byte, strs string, files ...FileEntry) []byte {
	o := binary.LittleEndian
	strtab := "\x00" + strs
	files = append([]FileEntry{{}}, files...)
	n := len(addrs)
	infoOff := align(HeaderSize+2*uint64(n), 4)
	strOff := infoOff + 4*uint64(n) + 4 + 8*uint64(len(files))
	bodyOff := align(strOff+uint64(len(strtab)), 4)
	h := Header{Magic: Magic, Version: Version, AddrOffSize: 2, NumAddresses: uint32(n), StrtabOffset: uint32(strOff), StrtabSize: uint32(len(strtab))}
	b := appendHeader(nil, o, &h)
	for _, a := range addrs {
		b = o.AppendUint16(b, a)
	}
	for uint64(len(b)) < infoOff {
		b = append(b, 0)
	}
	off := bodyOff
	for _, body := range bodies {
		b = o.AppendUint32(b, uint32(off))
		off = align(off+uint64(len(body)), 4)
	}
	b = o.AppendUint32(b, uint32(len(files)))
	for _, f := range files {
		b = o.AppendUint32(b, f.Dir)
		b = o.AppendUint32(b, f.Base)
	}
	b = append(b, strtab...)
	for _, body := range bodies {
		for uint64(len(b))%4 != 0 {
			b = append(b, 0)
		}
		b = append(b, body...)
	}
	return b
}

// body encodes a FunctionInfo: size, name 1, then chunks (type, data).
func body(size uint32, chunks ...any) []byte {
	o := binary.LittleEndian
	b := o.AppendUint32(nil, size)
	b = o.AppendUint32(b, 1)
	for i := 0; i+1 < len(chunks); i += 2 {
		data := chunks[i+1].([]byte)
		b = o.AppendUint32(b, uint32(chunks[i].(InfoType)))
		b = o.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
	}
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0)
}

// lineTable: min 0, max 0, first line 1, row at the start, end.
var okLines = []byte{0, 0, 1, SetFile, 1, AdvancePC, 0, EndSequence}

func TestHostile(t *testing.T) {
	deep := []byte{}
	for range 5000 {
		deep = append(deep, 1, 0, 16, 1, 1, 0, 0, 0, 1, 1) // one range [0,16), children, name 1, file 1, line 1
	}
	cases := []struct {
		name string
		data []byte
		open string // error expected from opening, else from looking 0x1000 up
		look string
	}{
		{name: "2^32-1 addresses", data: func() []byte {
			b := rawFile([]uint16{0x1000}, [][]byte{body(16)}, "f\x00")
			binary.LittleEndian.PutUint32(b[16:], 1<<32-1)
			return b
		}(), open: "past the end"},
		{name: "2^32-1 files", data: func() []byte {
			b := rawFile([]uint16{0x1000}, [][]byte{body(16)}, "f\x00")
			binary.LittleEndian.PutUint32(b[HeaderSize+8:], 1<<32-1)
			return b
		}(), open: "file table"},
		{name: "string table past the end", data: func() []byte {
			b := rawFile([]uint16{0x1000}, [][]byte{body(16)}, "f\x00")
			binary.LittleEndian.PutUint32(b[24:], 1<<31)
			return b
		}(), open: "string table"},
		{name: "info offset past the end", data: func() []byte {
			b := rawFile([]uint16{0x1000}, [][]byte{body(16)}, "f\x00")
			binary.LittleEndian.PutUint32(b[HeaderSize+4:], 1<<31)
			return b
		}(), open: "past the end"}, // refused at open since issue 31

		{name: "chunk of 4 GiB", data: func() []byte {
			bb := body(16, LineTableInfo, okLines)
			binary.LittleEndian.PutUint32(bb[12:], 1<<32-1)
			return rawFile([]uint16{0x1000}, [][]byte{bb}, "f\x00")
		}(), open: "chunk"}, // the last function is checked at open
		{name: "line table without end", data: rawFile([]uint16{0x1000}, [][]byte{body(16, LineTableInfo, []byte{0, 0, 1, AdvancePC, 0})}, "f\x00", FileEntry{0, 1}),
			look: "EndSequence"},
		{name: "inline tree 5000 deep", data: rawFile([]uint16{0x1000}, [][]byte{body(16, LineTableInfo, okLines, InlineInfoType, deep)}, "f\x00", FileEntry{0, 1}),
			look: "deeper"},
		{name: "2^64 inline ranges", data: rawFile([]uint16{0x1000}, [][]byte{body(16, LineTableInfo, okLines, InlineInfoType,
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 16})}, "f\x00", FileEntry{0, 1}),
			look: "unexpected end"},
		{name: "2^32 merged functions", data: rawFile([]uint16{0x1000}, [][]byte{body(16, MergedFunctionsInfo, []byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0})}, "f\x00"),
			look: ""},
		{name: "name past the string table", data: func() []byte {
			bb := body(16)
			binary.LittleEndian.PutUint32(bb[4:], 1<<20)
			return rawFile([]uint16{0x1000}, [][]byte{bb}, "f\x00")
		}(), look: "string offset"},
	}
	for _, c := range cases {
		for _, how := range []string{"bytes", "ReaderAt"} {
			var f *File
			var err error
			if how == "bytes" {
				f, err = NewFileBytes(c.data)
			} else {
				f, err = NewFile(bytes.NewReader(c.data), int64(len(c.data)))
			}
			if c.open != "" {
				if err == nil || !strings.Contains(err.Error(), c.open) {
					t.Errorf("%s (%s): open: err = %v, want %q", c.name, how, err, c.open)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (%s): open: %v", c.name, how, err)
				continue
			}
			_, err = f.Lookup(0x1004)
			if c.look != "" && (err == nil || !strings.Contains(err.Error(), c.look)) {
				t.Errorf("%s (%s): lookup: err = %v, want %q", c.name, how, err, c.look)
			}
			if _, err := f.FunctionAt(0); err == nil && c.look != "string offset" {
				t.Errorf("%s (%s): FunctionAt decoded a bad entry", c.name, how)
			}
		}
	}
}

func TestNotFound(t *testing.T) {
	f, err := NewFileBytes(rawFile([]uint16{0x1000, 0x2000}, [][]byte{body(16), body(0)}, "f\x00"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []uint64{0, 0xfff, 0x1010, 0x1fff} {
		if _, err := f.Lookup(a); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup(%#x): err = %v, want ErrNotFound", a, err)
		}
	}
	// A size-0 entry covers everything above it.
	for _, a := range []uint64{0x1000, 0x100f, 0x2000, 0xffffffff} {
		if r, err := f.Lookup(a); err != nil || r.Name != "f" {
			t.Errorf("Lookup(%#x) = %+v, %v", a, r, err)
		}
	}
}

// TestTruncatedRefused cuts the corpus's libc GSYM at every 4 KiB (and the
// hostile corpus's cut at 401,408 bytes): every cut file is refused at
// open with a message, through both readers, where 135 of the 186 cuts
// used to answer lookups with nothing.
func TestTruncatedRefused(t *testing.T) {
	whole, err := os.ReadFile(corpus.File(t, "gsym/debian-libc.llvm22.gsym"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileBytes(whole); err != nil {
		t.Fatalf("the whole file: %v", err)
	}
	cuts := []int{401408}
	for n := 4096; n < len(whole); n += 4096 {
		cuts = append(cuts, n)
	}
	for _, n := range cuts {
		b := whole[:n]
		if _, err := NewFileBytes(b); err == nil {
			t.Errorf("cut at %d: opened", n)
		}
		if _, err := NewFile(bytes.NewReader(b), int64(n)); err == nil {
			t.Errorf("cut at %d: opened by NewFile", n)
		}
	}
	_, err = Open(corpus.File(t, "hostile/gsym-libc-cut-401408.gsym"))
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("gsym-libc-cut-401408.gsym: %v, want truncated", err)
	}
}
