package symbfile

// Magic starts every symbfile.
const Magic = "symbfile"

// MessageType is the type number before each message.
type MessageType uint64

// Message types.
const (
	TypeInvalid     MessageType = 0
	TypeHeader      MessageType = 1
	TypeRange       MessageType = 2
	TypeReturnPad   MessageType = 3
	TypeStringTable MessageType = 4
)

// Range is a RangeV1 record with its strings resolved and its address made
// absolute.
type Range struct {
	// Start and Length delimit the instructions.
	Start, Length uint64
	// Func is the (demangled) function's name and File its source file.
	Func, File string
	// CallLine and CallFile are where the parent range called this inlined
	// function (0 and "" at depth 0; CallFile "" when it is the parent's
	// File).
	CallLine uint32
	CallFile string
	// Depth is 0 for a function's own range, d+1 for calls inlined into a
	// range at depth d.
	Depth uint32
	// Lines is the line table: each entry's line holds from its address to
	// the next entry's (or the range's end).
	Lines []LineEntry
}

// End returns the address after the range (saturating).
func (r *Range) End() uint64 {
	if e := r.Start + r.Length; e >= r.Start {
		return e
	}
	return ^uint64(0)
}

// LineEntry is one line table entry: an absolute address and a line.
type LineEntry struct {
	Addr uint64
	Line uint32
}

// ReturnPad is a ReturnPadV1 record: the inline stack at Addr (a return
// address minus one), outermost first; each frame's Line is the call line
// except the last, which is the line at Addr.
type ReturnPad struct {
	Addr   uint64
	Frames []PadFrame
}

// PadFrame is one frame of a return pad.
type PadFrame struct {
	Func, File string
	Line       uint32
}

// MaxInlineDepth caps the inlined calls a lookup returns at one address:
// ranges deeper than MaxInlineDepth are read but not indexed, and a return
// pad answers with its outermost MaxInlineDepth+1 frames, so that a lookup
// costs at most that many frames however deep a hostile file nests (real
// chains are tens deep). Package symfile and symcache have the same cap.
const MaxInlineDepth = 1024
