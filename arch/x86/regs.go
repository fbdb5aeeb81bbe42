package x86

// Register slots of an unwinder's register file for x86, in Breakpad's print order.
const (
	EIP = iota
	ESP
	EBP
	EBX
	ESI
	EDI
	EAX
	ECX
	EDX
	EFL
	NumRegs
)

// RegisterNames are the registers' names in slot order, as Breakpad prints
// them. The slice must not be modified.
var RegisterNames = []string{"eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx", "efl"}

// CFIRegisterNames are the registers' names in STACK CFI and STACK WIN rule
// text, in slot order. The slice must not be modified.
var CFIRegisterNames = []string{"$eip", "$esp", "$ebp", "$ebx", "$esi", "$edi", "$eax", "$ecx", "$edx", "$eflags"}
