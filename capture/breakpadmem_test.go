package capture

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/capture/procfs"
)

// TestKeepBreakpadMemory: after collectMemory (stacks, code windows around
// the pcs and the stack's code addresses, the vDSO, a one-page code
// mapping), KeepBreakpadMemory leaves the stacks and 128 bytes on either
// side of the crashing thread's pc.
func TestKeepBreakpadMemory(t *testing.T) {
	mem := &fakeMemory{pages: map[uint64][]byte{}}
	mem.fill(0x10000, 0x12000, 's') // thread 1's stack
	mem.fill(0x20000, 0x21000, 't') // thread 2's
	mem.fill(0x40000, 0x42000, 'c') // code
	mem.fill(0x50000, 0x51000, 'v') // vDSO
	mem.fill(0x60000, 0x61000, 'q') // a one-page code mapping
	maps, err := procfs.ParseMaps([]byte("00010000-00012000 rw-p 00000000 00:00 0 [stack]\n" +
		"00020000-00021000 rw-p 00000000 00:00 0\n" +
		"00040000-00042000 r-xp 00000000 08:01 7 /bin/prog\n" +
		"00050000-00051000 r-xp 00000000 00:00 0 [vdso]\n" +
		"00060000-00061000 r-xp 00000000 00:00 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	// A return address into the program on thread 1's stack: a code window.
	mem.pages[0x11000][0xf08] = 0x00
	mem.pages[0x11000][0xf09] = 0x18
	mem.pages[0x11000][0xf0a] = 0x04
	for i := 0xf0b; i < 0xf10; i++ {
		mem.pages[0x11000][i] = 0
	}
	p := &Process{
		CPU:  arch.AMD64,
		Maps: maps,
		Threads: []Thread{
			{ID: 1, SP: 0x11f00, PC: 0x40400},
			{ID: 2, SP: 0x20f00, PC: 0x41000},
		},
		Crash: &Crash{ThreadID: 1, Signal: 11},
	}
	p.collectMemory(mem)
	if len(p.Memory) < 5 {
		t.Fatalf("collectMemory kept %d regions, want the stacks, code windows, the vDSO and the code page", len(p.Memory))
	}
	p.KeepBreakpadMemory()
	want := []struct{ start, end uint64 }{
		{0x11f00 - redZone, 0x12000}, // thread 1's stack
		{0x20f00 - redZone, 0x21000}, // thread 2's
		{0x40400 - 128, 0x40400 + 128},
	}
	var got []struct{ start, end uint64 }
	for _, r := range p.Memory {
		got = append(got, struct{ start, end uint64 }{r.Addr, r.End()})
	}
	// Regions may be split where collectMemory's were.
	merged := got[:0:0]
	for _, g := range got {
		if n := len(merged); n > 0 && merged[n-1].end == g.start {
			merged[n-1].end = g.end
			continue
		}
		merged = append(merged, g)
	}
	if len(merged) != len(want) {
		t.Fatalf("memory %#x, want %#x", merged, want)
	}
	for i := range want {
		if merged[i] != want[i] {
			t.Errorf("region %d %#x-%#x, want %#x-%#x", i, merged[i].start, merged[i].end, want[i].start, want[i].end)
		}
	}
	for i, th := range p.Threads {
		if len(th.Stack.Data) == 0 || th.Stack.Addr != th.SP-redZone {
			t.Errorf("thread %d stack %#x+%#x", i, th.Stack.Addr, len(th.Stack.Data))
		}
	}
	if p.Threads[0].Stack.Data[0] != 's' || p.Memory[0].Data[0] != 's' {
		t.Errorf("stack bytes not kept")
	}
}
