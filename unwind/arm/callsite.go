package arm

import (
	"encoding/binary"

	"github.com/gobreakpad/gobreakpad/unwind"
)

// callBefore is 32-bit ARM's unwind.CallCheck. In ARM code (an even return
// address) the word before it is BL, BLX (immediate) or BLX (register); in
// Thumb code (the return address has bit 0 set) the halfwords before it
// are a 32-bit BL or BLX (immediate) or a 16-bit BLX (register).
func callBefore(env unwind.Env, ra uint64) unwind.CallSite {
	if ra&1 == 0 {
		b := unwind.ReadCode(env, ra-4, 4)
		if b == nil {
			return unwind.CallUnknown
		}
		w := binary.LittleEndian.Uint32(b)
		switch {
		case w&0x0f000000 == 0x0b000000 && w>>28 != 0xf, // BL
			w&0xfe000000 == 0xfa000000,                 // BLX (immediate)
			w&0x0ffffff0 == 0x012fff30 && w>>28 != 0xf: // BLX (register)
			return unwind.CallBefore
		}
		return unwind.NoCallBefore
	}
	pc := ra &^ 1
	b := unwind.ReadCode(env, pc-4, 4)
	if b == nil {
		return unwind.CallUnknown
	}
	hw1, hw2 := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:])
	switch {
	case hw1&0xf800 == 0xf000 && hw2&0xd000 == 0xd000, // BL
		hw1&0xf800 == 0xf000 && hw2&0xd001 == 0xc000, // BLX (immediate)
		hw2&0xff87 == 0x4780:                         // BLX (register)
		return unwind.CallBefore
	}
	return unwind.NoCallBefore
}

// CallTarget implements unwind.CPU: 32-bit ARM's calls are not decoded for
// tail call frames (not available).
func (Unwinder) CallTarget(unwind.Env, uint64) (uint64, bool) { return 0, false }
