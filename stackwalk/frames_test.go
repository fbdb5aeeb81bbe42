package stackwalk

import (
	"math/rand/v2"
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
)

// TestFrameRegisters stores frames' registers packed and reads them back:
// Context gives the known registers and the program counter's slot, reg and
// StackPointer each one, across the store's chunks (a thread of 70,000
// frames, some with every register known).
func TestFrameRegisters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cpu := range []unwind.CPU{amd64unwind.Unwinder{}, &arm64unwind.Unwinder{}} {
		thr := &frameThread{cpu: cpu}
		var want []unwind.Context
		var frames []*StackFrame
		for i := range 70000 {
			var c unwind.Context
			switch i % 5 {
			case 0:
				c.Valid = 1<<unwind.MaxRegs - 1 // every register
			case 1:
				c.Valid = 0 // none: a tail call frame keeps its pc alone
			default:
				c.Valid = rng.Uint64() & (1<<unwind.MaxRegs - 1)
			}
			for r := range unwind.MaxRegs {
				c.Regs[r] = rng.Uint64()
			}
			f := thr.newFrame()
			thr.setContext(f, &c)
			// What Context gives back: the known registers and the pc.
			var w unwind.Context
			for r := range unwind.MaxRegs {
				if c.Has(r) || r == cpu.PC() {
					w.Regs[r] = c.Regs[r]
				}
			}
			w.Valid = c.Valid
			want = append(want, w)
			frames = append(frames, f)
		}
		for i, f := range frames {
			if got := f.Context(); got != want[i] {
				t.Fatalf("%T frame %d: Context %v, want %v", cpu, i, got, want[i])
			}
			for r := range unwind.MaxRegs {
				v, ok := f.reg(r)
				if ok != want[i].Has(r) || (ok && v != want[i].Regs[r]) {
					t.Fatalf("%T frame %d: reg %d = %#x, %v; want %#x, %v", cpu, i, r, v, ok, want[i].Regs[r], want[i].Has(r))
				}
			}
			sp, ok := f.StackPointer()
			if ok != want[i].Has(cpu.SP()) || sp != want[i].Regs[cpu.SP()]*b2u(ok) {
				t.Fatalf("%T frame %d: StackPointer %#x, %v", cpu, i, sp, ok)
			}
		}
		for _, chunk := range thr.vals {
			if cap(chunk) > regChunk {
				t.Fatalf("%T: a register chunk of %d words, over %d", cpu, cap(chunk), regChunk)
			}
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
