package cab

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

func extract(t testing.TB, data []byte) (*File, []byte) {
	t.Helper()
	c, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 1 {
		t.Fatalf("%d files, want 1", len(c.Files))
	}
	r, err := c.Files[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return c.Files[0], out
}

func TestHello(t *testing.T) {
	data, err := os.ReadFile("testdata/hello.cab")
	if err != nil {
		t.Fatal(err)
	}
	f, out := extract(t, data)
	var want strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&want, "line %d: the quick brown fox jumps over the lazy dog\n", i)
	}
	if f.Name != "hello.txt" || string(out) != want.String() {
		t.Errorf("%s: %d bytes, want hello.txt of %d bytes", f.Name, len(out), want.Len())
	}
}

// TestGcabPDB compresses corpus PDBs with gcab, as symstore.exe makes the
// .pd_ files of a symbol server, and reads them back byte for byte.
func TestGcabPDB(t *testing.T) {
	if _, err := exec.LookPath("gcab"); err != nil {
		t.Skip("gcab not installed (apt-get install gcab)")
	}
	dir := corpus.Dir(t)
	for _, name := range []string{"windows/breakpad/dump_syms_regtest.pdb"} {
		orig, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		tmp := t.TempDir()
		base := filepath.Base(name)
		if err := os.WriteFile(filepath.Join(tmp, base), orig, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("gcab", "-c", "-z", "out.cab", base)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcab: %v: %s", err, out)
		}
		data, err := os.ReadFile(filepath.Join(tmp, "out.cab"))
		if err != nil {
			t.Fatal(err)
		}
		f, out := extract(t, data)
		if f.Name != base || !bytes.Equal(out, orig) {
			t.Errorf("%s: got %s of %d bytes, want the original's %d bytes", name, f.Name, len(out), len(orig))
		}
	}
}

// TestMozillaPD_ reads the .pd_ file of Mozilla's dump_syms tests, made by
// Microsoft's tools: a PDB (MSF 7.0) comes out.
func TestMozillaPD_(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus.Dir(t), "windows/mozilla/basic32.pd_"))
	if err != nil {
		t.Fatal(err)
	}
	f, out := extract(t, data)
	if !bytes.HasPrefix(out, []byte("Microsoft C/C++ MSF 7.00\r\n\x1aDS")) {
		t.Errorf("%s: %d bytes, not a PDB: %q", f.Name, len(out), out[:min(len(out), 32)])
	}
	t.Logf("%s: %d bytes from %d", f.Name, len(out), len(data))
}

func TestDamaged(t *testing.T) {
	data, err := os.ReadFile("testdata/hello.cab")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, 36, 60, 100, len(data) / 2, len(data) - 1} {
		d := data[:n]
		c, err := NewReader(bytes.NewReader(d), int64(len(d)))
		if err != nil {
			continue
		}
		r, err := c.Files[0].Open()
		if err != nil {
			continue
		}
		if _, err := io.ReadAll(r); err == nil {
			t.Errorf("cut at %d: no error", n)
		}
	}
}

func FuzzReader(f *testing.F) {
	data, err := os.ReadFile("testdata/hello.cab")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, fl := range c.Files {
			r, err := fl.Open()
			if err != nil {
				continue
			}
			// Output is bounded by the blocks present, not by the claimed size.
			io.Copy(io.Discard, io.LimitReader(r, 64<<20))
		}
	})
}

// TestChecksums refuses the hostile corpus's damaged cabinets (a block
// corrupted with its checksum left, one bit flipped) and every one-bit flip
// in the data of the test cabinet's blocks that carry a checksum: reading
// fails with ErrChecksum instead of yielding wrong bytes.
func TestChecksums(t *testing.T) {
	for _, name := range []string{"cab-checksum-wrong-data-corrupt.pd_", "cab-one-bit-flipped.pd_"} {
		data, err := os.ReadFile(filepath.Join(corpus.Dir(t), "hostile", name))
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Files[0].Open()
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		if !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want a checksum error", name, err)
		}
	}
	data, err := os.ReadFile("testdata/hello.cab")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	fo := c.folders[0]
	if sum := binary.LittleEndian.Uint32(data[fo.dataOff:]); sum == 0 {
		t.Skip("hello.cab's blocks have no checksum")
	}
	first := int(fo.dataOff) + 8 + c.dataRes
	for i := first; i < len(data); i += 97 {
		d := bytes.Clone(data)
		d[i] ^= 0x10
		c, err := NewReader(bytes.NewReader(d), int64(len(d)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Files[0].Open()
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		if err == nil {
			t.Errorf("bit flipped at %d: no error", i)
		}
	}
}
