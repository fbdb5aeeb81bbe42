package elf

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// TestMutatedDWARFTerminates flips bytes of the DWARF sections of small corpus
// binaries (seeded, a bounded number of inputs) and checks that every dump
// ends: bad input must never loop. An input that takes longer than 5 s is
// saved under os.TempDir() as dumpsyms-hang-*.bin.
func TestMutatedDWARFTerminates(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 30
	}
	if s := os.Getenv("DUMPSYMS_MUTATIONS"); s != "" {
		fmt.Sscan(s, &n)
	}
	seed := int64(1)
	if s := os.Getenv("DUMPSYMS_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	for _, p := range []string{"elf/x64-dw4/full/inline_chain", "elf/x64-dw5/full/inline_chain", "elf/x64-dw5/full/deep_chain", "elf/x86/full/inline_chain", "elf/x64-dw4/full/libshapes.so", "elf/x64-dw5/full/libshapes.so", "elf/arm64/full/deep_chain"} {
		path := filepath.Join(corpus.Path(), p)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Log(err)
			continue
		}
		ef, err := elf.NewFile(bytes.NewReader(orig))
		if err != nil {
			t.Fatal(err)
		}
		type span struct{ off, size int }
		var spans []span
		for _, s := range ef.Sections {
			switch s.Name {
			case ".debug_info", ".debug_abbrev", ".debug_line", ".debug_rnglists", ".debug_ranges", ".debug_str", ".debug_addr", ".debug_str_offsets", ".debug_line_str", ".debug_loclists":
				if s.Type != elf.SHT_NOBITS && s.Flags&elf.SHF_COMPRESSED == 0 {
					spans = append(spans, span{int(s.Offset), int(s.Size)})
				}
			}
		}
		if len(spans) == 0 {
			continue
		}
		rng := rand.New(rand.NewSource(seed))
		for i := 0; i < n; i++ {
			data := append([]byte(nil), orig...)
			flips := 1 + rng.Intn(8)
			for j := 0; j < flips; j++ {
				sp := spans[rng.Intn(len(spans))]
				o := sp.off + rng.Intn(sp.size)
				if rng.Intn(2) == 0 {
					data[o] ^= byte(1 << rng.Intn(8))
				} else {
					data[o] = byte(rng.Intn(256))
				}
			}
			if !dumpsTerminate(t, data, 5*time.Second) {
				f, _ := os.CreateTemp("", "dumpsyms-hang-*.bin")
				f.Write(data)
				f.Close()
				buf := make([]byte, 1<<20)
				t.Logf("goroutines:\n%s", buf[:runtime.Stack(buf, true)])
				t.Fatalf("%s mutation %d: dump did not end in 5 s; input saved at %s", p, i, f.Name())
			}
		}
	}
}

// dumpsTerminate runs the dumper on data and reports whether it ended in d.
func dumpsTerminate(t *testing.T, data []byte, d time.Duration) bool {
	done := make(chan struct{})
	dir := t.TempDir()
	go func() {
		defer close(done)
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		s, err := dumpFile(ef, filepath.Join(dir, "mutated"), dumpsyms.Options{Inlines: true})
		if err == nil {
			s.Write(io.Discard)
		}
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
