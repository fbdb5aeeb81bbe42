package moduleid

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestCorpusBinaries checks that the build IDs of the corpus programs give
// the debug identifiers under which Breakpad's dump_syms filed their symbols.
func TestCorpusBinaries(t *testing.T) {
	dir := corpus.Dir(t)
	for _, c := range []string{"deep_chain-x64-O0", "deep_chain-x86-O0", "deep_chain-arm64-O0"} {
		t.Run(c, func(t *testing.T) {
			caseDir := filepath.Join(dir, "generated", c)
			ids, err := filepath.Glob(filepath.Join(caseDir, "symbols", "deep_chain", "*"))
			if err != nil || len(ids) != 1 {
				t.Skipf("symbols of %s not found", c)
			}
			f, err := os.Open(filepath.Join(caseDir, "deep_chain"))
			if err != nil {
				t.Skip(err)
			}
			defer f.Close()
			id, err := BuildID(f)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ELFDebugID(id), filepath.Base(ids[0]); got != want {
				t.Errorf("ELFDebugID = %s, want %s", got, want)
			}
			// The file's first bytes are also its first loaded page.
			loaded, err := LoadedBuildID(f)
			if err != nil {
				t.Fatal(err)
			}
			if string(loaded) != string(id) {
				t.Errorf("LoadedBuildID = %x, BuildID = %x", loaded, id)
			}
		})
	}
}

func TestTextHashFallback(t *testing.T) {
	// An ELF file built here without a build ID note: take a system binary
	// and blank its note types so only the text hash remains.
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	f, err := elf.NewFile(bytesReader(data))
	if err != nil {
		t.Skip(err)
	}
	id, err := BuildIDNote(f)
	if err != nil {
		t.Skipf("/bin/true has no build id: %v", err)
	}
	if len(id) == 0 {
		t.Fatal("empty build id")
	}
	// Overwrite each NT_GNU_BUILD_ID type with 0 in the note sections.
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		b := data[s.Offset : s.Offset+s.Size]
		for len(b) >= 12 {
			namesz, descsz := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
			if binary.LittleEndian.Uint32(b[8:]) == 3 {
				binary.LittleEndian.PutUint32(b[8:], 0)
			}
			b = b[12+align4(uint64(namesz))+align4(uint64(descsz)):]
		}
	}
	f2, err := elf.NewFile(bytesReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildIDNote(f2); !errors.Is(err, ErrNoBuildID) {
		t.Fatalf("BuildIDNote after blanking = %v, want ErrNoBuildID", err)
	}
	hash, err := BuildID(bytesReader(data))
	if err != nil {
		t.Fatal(err)
	}
	text := f2.Section(".text")
	page := make([]byte, min(text.Size, 4096))
	text.ReadAt(page, 0)
	var want [16]byte
	for i, c := range page {
		want[i%16] ^= c
	}
	if string(hash) != string(want[:]) {
		t.Errorf("text hash %x, want %x", hash, want)
	}
}

func TestELFDebugID(t *testing.T) {
	id := []byte{0x48, 0x5d, 0x6e, 0x5a, 0x12, 0xb1, 0x75, 0xf8, 0x6f, 0xdc, 0x02, 0x4a, 0x45, 0xf5, 0x37, 0xc3, 0xaa, 0xbb}
	if got, want := ELFDebugID(id), "5A6E5D48B112F8756FDC024A45F537C30"; got != want {
		t.Errorf("ELFDebugID = %s, want %s", got, want)
	}
	if got, want := ELFDebugID([]byte{1, 2}), "00000201000000000000000000000000"+"0"; got != want {
		t.Errorf("ELFDebugID(short) = %s, want %s", got, want)
	}
}

func TestLoadedRejects(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("\x7fELF"), []byte("MZ\x90\x00xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")} {
		if _, err := LoadedBuildID(bytesReader(b)); err == nil {
			t.Errorf("LoadedBuildID(%q) succeeded", b)
		}
	}
}

type bytesReader []byte

func (b bytesReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(b)) {
		return 0, errors.New("out of range")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errors.New("short read")
	}
	return n, nil
}

func FuzzLoadedBuildID(f *testing.F) {
	if data, err := os.ReadFile("/bin/true"); err == nil && len(data) > 8192 {
		f.Add(data[:8192])
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = LoadedBuildID(bytesReader(data))
	})
}

func FuzzBuildID(f *testing.F) {
	if data, err := os.ReadFile("/bin/true"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = BuildID(bytesReader(data))
	})
}

func BenchmarkLoadedBuildID(b *testing.B) {
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadedBuildID(bytesReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
