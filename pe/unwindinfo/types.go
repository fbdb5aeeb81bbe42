package unwindinfo

// RuntimeFunction is a RUNTIME_FUNCTION entry of the exception directory:
// the relative virtual addresses of a function's code and of its unwind
// information. An UnwindInfo address with bit 0 set names another
// RUNTIME_FUNCTION entry (at UnwindInfo &^ 1) whose unwind information is
// shared, a form some linkers write.
type RuntimeFunction struct {
	Begin      uint32 // BeginAddress
	End        uint32 // EndAddress (exclusive)
	UnwindInfo uint32 // UnwindInfoAddress (UnwindData)
}

// Op is an unwind operation code (UWOP_*), the low 4 bits of an UNWIND_CODE's
// second byte.
type Op uint8

// The unwind operation codes. Codes 6 and 7 mean UWOP_SAVE_XMM and
// UWOP_SAVE_XMM_FAR in version 1 unwind information, UWOP_EPILOG and
// UWOP_SPARE_CODE in version 2.
const (
	OpPushNonvol    Op = 0  // UWOP_PUSH_NONVOL: push of register Info
	OpAllocLarge    Op = 1  // UWOP_ALLOC_LARGE: Info 0: next slot × 8; Info 1: next two slots, unscaled
	OpAllocSmall    Op = 2  // UWOP_ALLOC_SMALL: Info × 8 + 8 bytes
	OpSetFPReg      Op = 3  // UWOP_SET_FPREG: frame register = RSP + FrameOffset × 16
	OpSaveNonvol    Op = 4  // UWOP_SAVE_NONVOL: register Info saved at next slot × 8
	OpSaveNonvolFar Op = 5  // UWOP_SAVE_NONVOL_FAR: register Info saved at next two slots
	OpEpilog        Op = 6  // UWOP_EPILOG (version 2); UWOP_SAVE_XMM (version 1, next slot × 16)
	OpSpareCode     Op = 7  // UWOP_SPARE_CODE (version 2, two slots); UWOP_SAVE_XMM_FAR (version 1)
	OpSaveXMM128    Op = 8  // UWOP_SAVE_XMM128: XMM register Info saved at next slot × 16
	OpSaveXMM128Far Op = 9  // UWOP_SAVE_XMM128_FAR: XMM register Info saved at next two slots
	OpPushMachframe Op = 10 // UWOP_PUSH_MACHFRAME: Info 1 with an error code
)

var opNames = [...]string{
	"UWOP_PUSH_NONVOL", "UWOP_ALLOC_LARGE", "UWOP_ALLOC_SMALL", "UWOP_SET_FPREG",
	"UWOP_SAVE_NONVOL", "UWOP_SAVE_NONVOL_FAR", "UWOP_EPILOG", "UWOP_SPARE_CODE",
	"UWOP_SAVE_XMM128", "UWOP_SAVE_XMM128_FAR", "UWOP_PUSH_MACHFRAME",
}

// String returns the operation's UWOP_ name.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "UWOP_?"
}

// UNWIND_INFO flags (the high 5 bits of the first byte).
const (
	FlagEHandler  = 0x1 // UNW_FLAG_EHANDLER: an exception handler follows the codes
	FlagUHandler  = 0x2 // UNW_FLAG_UHANDLER: a termination handler follows the codes
	FlagChainInfo = 0x4 // UNW_FLAG_CHAININFO: a RUNTIME_FUNCTION follows the codes
)

// Code is one decoded unwind operation: an UNWIND_CODE with the slots it
// takes.
type Code struct {
	PrologOffset uint8 // CodeOffset: offset in the prolog of the instruction's end
	Op           Op
	Info         uint8 // OpInfo: a register number, or the operation's variant
	// Value is the operation's operand, scaled: the allocation size for
	// UWOP_ALLOC_*, the offset of the save for UWOP_SAVE_*; 0 otherwise.
	Value uint32
}

// Info is an UNWIND_INFO structure.
type Info struct {
	Version     uint8
	Flags       uint8
	PrologSize  uint8
	FrameReg    uint8  // frame register number, 0 when none
	FrameOffset uint32 // scaled offset of the frame register from RSP (× 16)
	Codes       []Code // in the order stored: descending prolog offset
	// Chained is the RUNTIME_FUNCTION of the chained (primary) unwind
	// information when Flags has FlagChainInfo.
	Chained *RuntimeFunction
	// Handler is the language-specific handler's address when Flags has
	// FlagEHandler or FlagUHandler.
	Handler uint32
}

var regNames = [16]string{
	"$rax", "$rcx", "$rdx", "$rbx", "$rsp", "$rbp", "$rsi", "$rdi",
	"$r8", "$r9", "$r10", "$r11", "$r12", "$r13", "$r14", "$r15",
}

// RegisterName is the Breakpad name of general-purpose register n (0..15) as
// UNWIND_CODE operands number them: "$rax", "$rcx", ... "$r15".
func RegisterName(n uint8) string { return regNames[n&15] }
