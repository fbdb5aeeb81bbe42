package symfile

// This file holds the plain record types, one per kind of line in a Breakpad
// symbol file. Field names follow Breakpad's own vocabulary (see its
// docs/symbol_files.md). Addresses are module-relative.

// Module is the MODULE record that opens every symbol file:
//
//	MODULE operatingsystem architecture id name
type Module struct {
	OS   string // operating system: "Linux", "windows", "mac", ...
	Arch string // architecture: "x86", "x86_64", "arm", "arm64", ...
	ID   string // debug identifier, upper-case hex with the age appended
	Name string // debug file name; may contain spaces
}

// CodeID is the INFO CODE_ID record:
//
//	INFO CODE_ID code_id [code_file]
//
// Linux files carry only the build id; Windows files add the code (PE) file name.
type CodeID struct {
	ID   string
	File string // empty when absent
}

// Info is any other INFO record, kept verbatim:
//
//	INFO key value...
//
// For example Key "GENERATOR" and Value "mozilla/dump_syms 2.3.4".
type Info struct {
	Key   string
	Value string // the rest of the line after the key and one space; may be empty
}

// File is a FILE record, naming a source file by number:
//
//	FILE number name
type File struct {
	Number uint32
	Name   string
}

// InlineOrigin is an INLINE_ORIGIN record, naming an inlined function:
//
//	INLINE_ORIGIN id name
//
// Older files also carry the number of the FILE defining the function
// ("INLINE_ORIGIN id file name"); HasFile is set for those, and File may be -1.
type InlineOrigin struct {
	ID      uint32
	HasFile bool
	File    int32
	Name    string
}

// Func is a FUNC record:
//
//	FUNC [m] address size parameter_size name
//
// Multiple ("m") means several symbols were folded onto this address range.
type Func struct {
	Multiple  bool
	Address   uint64
	Size      uint64
	ParamSize uint64
	Name      string
}

// Line is a line record, which belongs to the FUNC record before it:
//
//	address size line filenum
type Line struct {
	Address uint64
	Size    uint64
	Line    int64
	File    uint32 // number of a FILE record
}

// Range is an address range [Address, Address+Size).
type Range struct {
	Address uint64
	Size    uint64
}

// Inline is an INLINE record, which belongs to the FUNC record before it:
//
//	INLINE inline_nest_level call_site_line call_site_file_num origin_num [address size]+
//
// Older files omit call_site_file_num; HasCallFile is false for those.
type Inline struct {
	Depth       uint32 // inline_nest_level: 0 for calls made directly from the FUNC
	CallLine    uint32 // call_site_line
	CallFile    int32  // call_site_file_num, a FILE number or -1 for none; valid when HasCallFile
	HasCallFile bool
	Origin      uint32 // an INLINE_ORIGIN id
	Ranges      []Range
}

// Public is a PUBLIC record:
//
//	PUBLIC [m] address parameter_size name
type Public struct {
	Multiple  bool
	Address   uint64
	ParamSize uint64
	Name      string
}

// CFIInit is a STACK CFI INIT record, opening a CFI frame description entry:
//
//	STACK CFI INIT address size rules
//
// Rules is kept as text ("register: expression ..."); package cfi compiles it.
type CFIInit struct {
	Address uint64
	Size    uint64
	Rules   string
}

// CFI is a STACK CFI delta record, changing rules from Address on within the
// entry opened by the preceding STACK CFI INIT record:
//
//	STACK CFI address rules
type CFI struct {
	Address uint64
	Rules   string
}

// WinType is the type field of a STACK WIN record, the kind of Windows unwind data.
type WinType uint8

// The STACK WIN types Breakpad knows; only FPO (0) and FrameData (4) appear in practice.
const (
	WinFPO       WinType = 0
	WinTrap      WinType = 1
	WinTSS       WinType = 2
	WinStandard  WinType = 3
	WinFrameData WinType = 4
)

// StackWin is a STACK WIN record:
//
//	STACK WIN type rva code_size prologue_size epilogue_size parameter_size saved_register_size local_size max_stack_size has_program_string program_string_OR_allocates_base_pointer
//
// All numbers except has_program_string are hex. When HasProgramString is set the
// record carries ProgramString (a postfix program, may contain spaces); otherwise
// it carries AllocatesBasePointer.
type StackWin struct {
	Type                 WinType
	RVA                  uint32
	CodeSize             uint32
	PrologSize           uint32
	EpilogSize           uint32
	ParamSize            uint32
	SavedRegisterSize    uint32
	LocalSize            uint32
	MaxStackSize         uint32
	HasProgramString     bool
	ProgramString        string
	AllocatesBasePointer bool
}
