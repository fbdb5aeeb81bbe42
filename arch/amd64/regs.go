package amd64

// Register slots of an unwinder's register file for x86-64, in Breakpad's print order.
const (
	RAX = iota
	RDX
	RCX
	RBX
	RSI
	RDI
	RBP
	RSP
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
	RIP
	NumRegs
)

// RegisterNames are the registers' names in slot order, as Breakpad prints
// them. The slice must not be modified.
var RegisterNames = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

// CFIRegisterNames are the registers' names in STACK CFI rules, in slot
// order. The slice must not be modified.
var CFIRegisterNames = []string{"$rax", "$rdx", "$rcx", "$rbx", "$rsi", "$rdi", "$rbp", "$rsp",
	"$r8", "$r9", "$r10", "$r11", "$r12", "$r13", "$r14", "$r15", "$rip"}
