package elf

import (
	"debug/elf"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms/dwarfcfi"
)

func cfiEntry(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// debugFrame64 builds a .debug_frame with one CIE and one FDE at begin.
func debugFrame64(begin, n uint64, codeAlign, dataAlign, ra byte, cieInstr, fdeInstr []byte) []byte {
	cie := cfiEntry(binary.LittleEndian.AppendUint32(nil, 0xffffffff), []byte{3, 0, codeAlign, dataAlign, ra}, cieInstr)
	fde := cfiEntry(binary.LittleEndian.AppendUint32(nil, 0),
		binary.LittleEndian.AppendUint64(nil, begin), binary.LittleEndian.AppendUint64(nil, n), fdeInstr)
	return append(cie, fde...)
}

func convertAll(t *testing.T, m elf.Machine, data []byte) string {
	t.Helper()
	sec := &dwarfcfi.Section{Kind: dwarfcfi.DebugFrame, Data: data, ByteOrder: binary.LittleEndian, AddrSize: 8}
	conv := &cfiConverter{names: registerNames(m)}
	var out []string
	err := sec.Entries(func(f *dwarfcfi.FDE) error {
		e, err := conv.convertFDE(sec, f, 0)
		if err != nil {
			return err
		}
		var b strings.Builder
		b.WriteString("INIT " + e.Init.Rules)
		for _, c := range e.Changes {
			b.WriteString("\n" + strings.TrimLeft(hexU(c.Address), " ") + " " + c.Rules)
		}
		out = append(out, b.String())
		return nil
	}, func(off uint64, err error) { t.Errorf("entry %#x: %v", off, err) })
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

func hexU(v uint64) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v >>= 4 {
		b = append([]byte{digits[v&15]}, b...)
	}
	return string(b)
}

// TestCFIArm64 checks the AArch64 shape Breakpad writes: the CIE sets no
// rule for x30 (the return address column), so .ra starts as x30; restoring
// registers the CIE left unspecified gives "same value" rules.
func TestCFIArm64(t *testing.T) {
	cie := []byte{0x0c, 31, 0} // def_cfa sp+0
	fde := []byte{
		0x41, 0x0e, 32, // advance 1 (code align 4): cfa sp+32
		0x9d, 4, 0x9e, 3, // x29 at cfa-32, x30 at cfa-24
		0x2d,          // negate_ra_state (pointer authentication)
		0x42, 0x93, 2, // advance 2: x19 at cfa-16
		0x4e, 0xde, 0xd3, 0xdd, 0x0e, 0, // advance 14: restore x30, x19, x29; cfa sp+0
	}
	got := convertAll(t, elf.EM_AARCH64, debugFrame64(0x800, 0x48, 4, 0x78, 30, cie, fde))
	want := "INIT .cfa: sp 0 + .ra: x30\n" +
		"804 .cfa: sp 32 + .ra: .cfa -24 + ^ x29: .cfa -32 + ^\n" +
		"80c x19: .cfa -16 + ^\n" +
		"844 .cfa: sp 0 + .ra: .ra x19: x19 x29: x29"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestCFIExpressions checks the translation of DWARF expressions into
// postfix where Breakpad's notation can express them, and their omission
// where it cannot (the PLT's CFA rule).
func TestCFIExpressions(t *testing.T) {
	cie := []byte{0x0c, 7, 8, 0x90, 1} // cfa rsp+8, rip at cfa-8
	fde := []byte{
		0x41, 0x0f, 3, 0x76, 0x78, 0x06, // advance 1: cfa = *(rbp-8)
		0x41, 0x10, 3, 2, 0x76, 0x70, // advance 1: rbx saved at rbp-16
		0x41, 0x16, 4, 2, 0x23, 0x10, // advance 1: rsi = cfa+16 (val_expression)
		// advance 1: the PLT rule: rsp+8 + ((rip&15)>=11)<<3: not expressible
		0x41, 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
	}
	got := convertAll(t, elf.EM_X86_64, debugFrame64(0x1000, 0x10, 1, 0x78, 16, cie, fde))
	want := "INIT .cfa: $rsp 8 + .ra: .cfa -8 + ^\n" +
		"1001 .cfa: $rbp -8 + ^\n" +
		"1002 $rbx: $rbp -16 + ^\n" +
		"1003 $rsi: .cfa 16 +"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestCFIUndefinedReturnAddress checks that an undefined return address
// (_start's "cfi_undefined rip", a thread's start routine) is written as
// ".ra: .undef", in the INIT record and in a delta, while other undefined
// registers are still left out.
func TestCFIUndefinedReturnAddress(t *testing.T) {
	cie := []byte{0x0c, 7, 8, 0x90, 1} // cfa rsp+8, rip at cfa-8
	fde := []byte{
		0x07, 16, // undefined rip (in the FDE's initial instructions)
		0x41, 0x07, 3, // advance 1: undefined rbx
	}
	got := convertAll(t, elf.EM_X86_64, debugFrame64(0x1000, 0x10, 1, 0x78, 16, cie, fde))
	if want := "INIT .cfa: $rsp 8 + .ra: .undef"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	cie = []byte{0x0c, 31, 0}    // def_cfa sp+0
	fde = []byte{0x41, 0x07, 30} // advance 1 (code align 4): undefined x30
	got = convertAll(t, elf.EM_AARCH64, debugFrame64(0x800, 0x48, 4, 0x78, 30, cie, fde))
	if want := "INIT .cfa: sp 0 + .ra: x30\n804 .ra: .undef"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
