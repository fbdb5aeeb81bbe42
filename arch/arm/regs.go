package arm

// Register slots of an unwinder's register file for 32-bit ARM, in Breakpad's print
// order: r0-r10, r12, then fp (r11), sp, lr and pc.
const (
	SlotR12 = 11
	SlotFP  = 12
	SlotSP  = 13
	SlotLR  = 14
	SlotPC  = 15
	NumRegs = 16
)

// RegisterNames are the registers' names in slot order, as Breakpad prints
// them. The slice must not be modified.
var RegisterNames = []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10",
	"r12", "fp", "sp", "lr", "pc"}

// CFIRegisterNames are the registers' names in STACK CFI rules, in slot
// order. The slice must not be modified.
var CFIRegisterNames = []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10",
	"r12", "r11", "sp", "lr", "pc"}
