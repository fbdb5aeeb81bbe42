package capture

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/capture/procfs"
)

// TestWholeImagesAndCodeWindows: a core's unnamed mapping at
// AT_SYSINFO_EHDR becomes "[vdso]" and is kept whole, as is a one-page
// unnamed code mapping (qemu-user's signal trampolines); a stack word
// pointing into code gets a small window around it, a word pointing
// elsewhere none.
func TestWholeImagesAndCodeWindows(t *testing.T) {
	mem := &fakeMemory{pages: map[uint64][]byte{}}
	mem.fill(0x10000, 0x12000, 0)   // stack
	mem.fill(0x40000, 0x42000, 'c') // program code
	mem.fill(0x70000, 0x72000, 'v') // vDSO, two pages
	mem.fill(0x80000, 0x81000, 't') // trampoline page
	stack := mem.pages[0x11000]
	binary.LittleEndian.PutUint64(stack[0x10:], 0x41230) // a return address
	binary.LittleEndian.PutUint64(stack[0x18:], 0x10020) // a stack address
	maps, err := procfs.ParseMaps([]byte("00010000-00012000 rw-p 00000000 00:00 0\n" +
		"00040000-00042000 r-xp 00000000 08:01 7 /bin/prog\n" +
		"00070000-00072000 r-xp 00000000 00:00 0\n" +
		"00080000-00081000 r-xp 00000000 00:00 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	var auxv []byte
	for _, w := range []uint64{atSysinfoEHDR, 0x70000, atNull, 0} {
		auxv = binary.LittleEndian.AppendUint64(auxv, w)
	}
	p := &Process{CPU: arch.AMD64, Maps: maps, Auxv: auxv, Threads: []Thread{{ID: 1, SP: 0x11000, PC: 0x40010}}}
	p.nameVDSO()
	if p.Maps[2].Path != vdsoPath {
		t.Errorf("mapping at AT_SYSINFO_EHDR named %q, want %q", p.Maps[2].Path, vdsoPath)
	}
	p.collectMemory(mem)
	has := func(start, end uint64) bool {
		for _, r := range p.Memory {
			if r.Addr <= start && r.End() >= end {
				return true
			}
		}
		return false
	}
	for _, w := range [][2]uint64{{0x70000, 0x72000}, {0x80000, 0x81000}, {0x41230 - codeWindow, 0x41230 + codeWindow}} {
		if !has(w[0], w[1]) {
			t.Errorf("%#x-%#x not captured; memory %v", w[0], w[1], regions(p.Memory))
		}
	}
	if has(0x41000, 0x41100) {
		t.Errorf("more code than the window captured: %v", regions(p.Memory))
	}
}

func regions(rs []Region) [][2]uint64 {
	var out [][2]uint64
	for _, r := range rs {
		out = append(out, [2]uint64{r.Addr, r.End()})
	}
	return out
}
