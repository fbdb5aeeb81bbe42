package stackwalk

import (
	"math/bits"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// A walk holds every frame it found until the outputs print them, so what a
// frame costs bounds the walk's memory (docs/hostile.md: a frame of a walk
// along frame pointers is justified by 16 bytes of stack). A StackFrame keeps
// only the registers the unwinder knew, packed in slot order into its
// thread's register store, and shares its thread's unwinder and print layout
// through one pointer; frames are allocated in blocks. A frame found by
// frame pointers costs about 150 bytes (its StackFrame, its three
// registers, its place in CallStack.Frames), where one holding a whole
// unwind.Context cost about 400.

// frameThread is what the frames of one thread share: the unwinder that
// found them (register slots), how the outputs print them, and the values
// of their known registers.
type frameThread struct {
	cpu    unwind.CPU
	layout *printLayout
	// vals holds the registers in chunks of at most regChunk words: a
	// frame's values lie in one chunk, from its at (chunk index <<
	// regChunkBits | offset).
	vals [][]uint64
	// frames is the block the next frames are taken from.
	frames []StackFrame
}

const (
	regChunkBits = 12
	regChunk     = 1 << regChunkBits
	// The first blocks are small: most threads have tens of frames.
	firstRegChunk   = 32
	firstFrameBlock = 2
	maxFrameBlock   = 256
	// slotBits are the bits of unwind.Context.Valid that name register
	// slots: only those registers are stored.
	slotBits uint64 = 1<<unwind.MaxRegs - 1
)

// newFrame returns a zeroed frame of the thread.
func (t *frameThread) newFrame() *StackFrame {
	if len(t.frames) == cap(t.frames) {
		n := min(max(2*cap(t.frames), firstFrameBlock), maxFrameBlock)
		t.frames = make([]StackFrame, 0, n)
	}
	t.frames = t.frames[:len(t.frames)+1]
	f := &t.frames[len(t.frames)-1]
	f.thr = t
	return f
}

// add returns a frame of the thread holding fr (a frame of its own when t
// is nil).
func (t *frameThread) add(fr StackFrame) *StackFrame {
	if t == nil {
		return &fr
	}
	f := t.newFrame()
	*f = fr
	return f
}

// setContext stores c as f's registers.
func (t *frameThread) setContext(f *StackFrame, c *unwind.Context) {
	f.valid = c.Valid
	if t.cpu != nil {
		f.pc = c.Regs[t.cpu.PC()]
	}
	n := bits.OnesCount64(c.Valid & slotBits)
	if n == 0 {
		return
	}
	last := len(t.vals) - 1
	if last < 0 || len(t.vals[last])+n > cap(t.vals[last]) {
		size := firstRegChunk
		if last >= 0 {
			size = min(2*cap(t.vals[last]), regChunk)
		}
		t.vals = append(t.vals, make([]uint64, 0, max(size, n)))
		last++
	}
	chunk := t.vals[last]
	f.at = uint32(last)<<regChunkBits | uint32(len(chunk))
	for v := c.Valid & slotBits; v != 0; v &= v - 1 {
		chunk = append(chunk, c.Regs[bits.TrailingZeros64(v)])
	}
	t.vals[last] = chunk
}

// values returns the values of f's known registers, in slot order.
func (f *StackFrame) values() []uint64 {
	n := bits.OnesCount64(f.valid & slotBits)
	if n == 0 || f.thr == nil {
		return nil
	}
	off := int(f.at & (regChunk - 1))
	return f.thr.vals[f.at>>regChunkBits][off : off+n]
}

// reg returns register i and whether it is known.
func (f *StackFrame) reg(i int) (uint64, bool) {
	if i < 0 || i >= unwind.MaxRegs || f.valid&(1<<uint(i)) == 0 {
		return 0, false
	}
	return f.values()[bits.OnesCount64(f.valid&(1<<uint(i)-1))], true
}

// Context returns the frame's registers (none for inline frames): the known
// ones, and the program counter's slot even when it is not known.
func (f *StackFrame) Context() unwind.Context {
	var c unwind.Context
	if f.thr == nil {
		return c
	}
	if f.thr.cpu != nil {
		c.Regs[f.thr.cpu.PC()] = f.pc
	}
	vals := f.values()
	k := 0
	for v := f.valid & slotBits; v != 0; v &= v - 1 {
		c.Regs[bits.TrailingZeros64(v)] = vals[k]
		k++
	}
	c.Valid = f.valid
	return c
}

// cpu returns the unwinder that found f, or nil.
func (f *StackFrame) cpu() unwind.CPU {
	if f.thr == nil {
		return nil
	}
	return f.thr.cpu
}

// layout returns how the outputs print f, or nil.
func (f *StackFrame) layout() *printLayout {
	if f.thr == nil {
		return nil
	}
	return f.thr.layout
}
