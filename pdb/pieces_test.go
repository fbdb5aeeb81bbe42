package pdb

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// splitPieces cuts data into pieces of n bytes (the last shorter).
func splitPieces(data []byte, n int) pieces {
	ps := pieces{size: len(data)}
	for off := 0; off < len(data); off += n {
		ps.p = append(ps.p, data[off:min(len(data), off+n)])
		ps.start = append(ps.start, off)
	}
	if len(ps.p) == 0 {
		return onePiece(data)
	}
	return ps
}

func TestPiecesAt(t *testing.T) {
	data := []byte("0123456789abcdefghij")
	for _, n := range []int{1, 3, 7, 20} {
		ps := splitPieces(data, n)
		for off := 0; off <= len(data); off++ {
			for l := 0; off+l <= len(data); l++ {
				if got := ps.at(off, l); !bytes.Equal(got, data[off:off+l]) {
					t.Fatalf("pieces of %d: at(%d, %d) = %q", n, off, l, got)
				}
			}
			if ps.at(off, len(data)-off+1) != nil || ps.at(-1, 1) != nil {
				t.Fatalf("pieces of %d: bytes past the end at %d", n, off)
			}
		}
	}
}

// TestInPlaceStreams: every corpus PDB reads the same in place (the file
// in memory, streams as slices or pieces of it, pages released) as
// through an io.ReaderAt: every stream's bytes, every type record.
func TestInPlaceStreams(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t), "windows")
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "*.pdb"))
	if len(paths) == 0 {
		t.Skip("no corpus PDBs")
	}
	defer func(n int) { minPieceSize = n }(minPieceSize)
	minPieceSize = 1 // every stream in pieces, however fragmented
	for _, p := range paths {
		data, err := os.ReadFile(p)
		orig := bytes.Clone(data)
		if err != nil {
			t.Fatal(err)
		}
		ra, err := NewFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		mapped, err := Open(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		inMem, err := NewFileBytes(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, f := range []*File{mapped, inMem} {
			for i := range ra.MSF.NumStreams() {
				want, err1 := ra.MSF.Stream(i)
				got, err2 := f.MSF.Stream(i)
				if (err1 != nil) != (err2 != nil) || !bytes.Equal(want, got) {
					t.Fatalf("%s: stream %d differs in place (%v, %v)", p, i, err1, err2)
				}
				f.MSF.Release(i)
			}
			for _, read := range []func(*File) (*TypeStream, error){(*File).TPI, (*File).IPI} {
				want, err1 := read(ra)
				got, err2 := read(f)
				if err1 != nil || err2 != nil || (want == nil) != (got == nil) {
					t.Fatalf("%s: type streams: %v in place, %v read", p, err2, err1)
				}
				if want == nil {
					continue
				}
				if want.Len() != got.Len() {
					t.Fatalf("%s: %d type records in place, %d read", p, got.Len(), want.Len())
				}
				for i := range want.Len() {
					ti := want.Header.IndexBegin + TypeIndex(i)
					k1, d1, _ := want.Record(ti)
					k2, d2, _ := got.Record(ti)
					if k1 != k2 || !bytes.Equal(d1, d2) {
						t.Fatalf("%s: type record %#x differs in place", p, ti)
					}
				}
			}
		}
		if !bytes.Equal(data, orig) {
			t.Fatalf("%s: the bytes given to NewFileBytes changed", p)
		}
		if err := mapped.Close(); err != nil {
			t.Fatal(err)
		}
		if err := mapped.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
}
