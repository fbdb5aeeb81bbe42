package dwarfcfi

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// entry assembles one length-prefixed CIE or FDE body.
func entry(body ...[]byte) []byte {
	var b []byte
	for _, p := range body {
		b = append(b, p...)
	}
	for len(b)%4 != 0 {
		b = append(b, 0) // DW_CFA_nop padding
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// ehFrame builds an .eh_frame at address secAddr with one CIE (augmentation
// "zR", pc-relative sdata4 pointers) and one FDE covering [begin, begin+n).
func ehFrame(secAddr, begin, n uint64, dataAlign byte, ra byte, cieInstr, fdeInstr []byte) []byte {
	cie := entry(u32(0), []byte{1, 'z', 'R', 0, 1, dataAlign, ra, 1, 0x1b}, cieInstr)
	// FDE: CIE pointer is relative to its own position.
	fdeStart := uint64(len(cie))
	ciePtr := uint32(fdeStart + 4)
	pcField := secAddr + fdeStart + 8
	body := [][]byte{u32(ciePtr), u32(uint32(int32(int64(begin) - int64(pcField)))), u32(uint32(n)), {0}, fdeInstr}
	fde := entry(body...)
	return append(append(cie, fde...), 0, 0, 0, 0)
}

type event struct {
	addr uint64
	col  int
	rule Rule
}

func (e event) String() string {
	return fmt.Sprintf("%#x %d %d/%d/%d/%x", e.addr, e.col, e.rule.Kind, e.rule.Reg, e.rule.Offset, e.rule.Expr)
}

func runAll(t *testing.T, s *Section) (fdes []*FDE, events []event) {
	t.Helper()
	err := s.Entries(func(f *FDE) error {
		fdes = append(fdes, f)
		return s.Run(f, func(addr uint64, col int, r Rule) { events = append(events, event{addr, col, r}) })
	}, func(off uint64, err error) { t.Errorf("entry %#x: %v", off, err) })
	if err != nil {
		t.Fatal(err)
	}
	return fdes, events
}

func TestEHFrameX86_64(t *testing.T) {
	cieInstr := []byte{0x0c, 7, 8, 0x90, 1} // def_cfa rsp+8; rip at cfa-8
	fdeInstr := []byte{
		0x41,     // advance_loc 1
		0x0e, 16, // def_cfa_offset 16
		0x86, 2, // offset rbp, cfa-16
		0x44,    // advance_loc 4
		0x0a,    // remember_state
		0x0e, 8, // def_cfa_offset 8
		0x07, 3, // undefined rbx
		0x41,       // advance_loc 1
		0x0b,       // restore_state
		0xc6,       // restore rbp
		0x2d,       // GNU_window_save / negate_ra_state: no rule change
		0x2e, 0x10, // GNU_args_size
	}
	data := ehFrame(0x2000, 0x1000, 0x40, 0x78, 16, cieInstr, fdeInstr)
	s := &Section{Kind: EHFrame, Data: data, Addr: 0x2000, ByteOrder: binary.LittleEndian, AddrSize: 8}
	fdes, events := runAll(t, s)
	if len(fdes) != 1 || fdes[0].Begin != 0x1000 || fdes[0].Length != 0x40 {
		t.Fatalf("FDEs: %+v", fdes)
	}
	if fdes[0].CIE.RAColumn != 16 || fdes[0].CIE.DataAlign != -8 || fdes[0].CIE.Augmentation != "zR" {
		t.Fatalf("CIE: %+v", fdes[0].CIE)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.String())
	}
	want := []string{
		"0x1000 -1 3/7/8/",  // CFA = rsp+8
		"0x1000 16 2/0/-8/", // rip at CFA-8
		"0x1001 -1 3/7/16/",
		"0x1001 6 2/0/-16/",
		"0x1005 -1 3/7/8/",
		"0x1005 3 0/0/0/",
		// restore_state at 0x1006: CFA back to rsp+16, rbx has no rule
		// in the remembered state: reported as same value.
		"0x1006 -1 3/7/16/",
		"0x1006 3 1/0/0/",
		// restore rbp: the CIE has no rule for it: same value.
		"0x1006 6 1/0/0/",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDebugFrame32(t *testing.T) {
	// .debug_frame, 32-bit addresses, CIE id 0xffffffff, absolute pointers.
	cie := entry(u32(0xffffffff), []byte{3, 0, 1, 0x7c, 8}, []byte{0x0c, 4, 4, 0x88, 1})
	fde := entry(u32(0), u32(0x8048000), u32(0x20), []byte{0x42, 0x0e, 8, 0x85, 2})
	data := append(cie, fde...)
	s := &Section{Kind: DebugFrame, Data: data, ByteOrder: binary.LittleEndian, AddrSize: 4}
	fdes, events := runAll(t, s)
	if len(fdes) != 1 || fdes[0].Begin != 0x8048000 || fdes[0].Length != 0x20 {
		t.Fatalf("FDEs: %+v", fdes)
	}
	if len(events) != 4 || events[2].addr != 0x8048002 || events[3].rule.Offset != -8 {
		t.Errorf("events: %v", events)
	}
}

func TestRestoreStateUnderflow(t *testing.T) {
	data := ehFrame(0, 0x100, 0x10, 0x78, 16, []byte{0x0c, 7, 8}, []byte{0x0b})
	s := &Section{Kind: EHFrame, Data: data, ByteOrder: binary.LittleEndian, AddrSize: 8}
	err := s.Entries(func(f *FDE) error {
		return s.Run(f, func(uint64, int, Rule) {})
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "restore") {
		t.Errorf("err = %v, want a remember/restore error", err)
	}
}

func TestTruncated(t *testing.T) {
	data := ehFrame(0, 0x100, 0x10, 0x78, 16, []byte{0x0c, 7, 8}, []byte{0x41})
	for n := 0; n < len(data); n++ {
		s := &Section{Kind: EHFrame, Data: data[:n], ByteOrder: binary.LittleEndian, AddrSize: 8}
		s.Entries(func(f *FDE) error { return s.Run(f, func(uint64, int, Rule) {}) }, nil)
	}
}

func FuzzCFI(f *testing.F) {
	f.Add(ehFrame(0x2000, 0x1000, 0x40, 0x78, 16, []byte{0x0c, 7, 8, 0x90, 1}, []byte{0x41, 0x0e, 16, 0x86, 2, 0x0a, 0x0b}), false, false)
	cie := entry(u32(0xffffffff), []byte{3, 0, 1, 0x7c, 8}, []byte{0x0c, 4, 4, 0x88, 1})
	f.Add(append(cie, entry(u32(0), u32(0x8048000), u32(0x20), []byte{0x42, 0x0e, 8, 0x85, 2})...), true, true)
	f.Fuzz(func(t *testing.T, data []byte, debugFrame, addr32 bool) {
		s := &Section{Kind: EHFrame, Data: data, Addr: 0x1000, ByteOrder: binary.LittleEndian, AddrSize: 8}
		if debugFrame {
			s.Kind = DebugFrame
		}
		if addr32 {
			s.AddrSize = 4
		}
		s.Entries(func(fde *FDE) error {
			if fde.CIE == nil || fde.CIE.AddrSize != 4 && fde.CIE.AddrSize != 8 {
				t.Fatalf("FDE at %#x with a bad CIE", fde.Offset)
			}
			s.Run(fde, func(addr uint64, col int, r Rule) {
				if addr < fde.Begin || addr-fde.Begin >= max(fde.Length, 1) {
					t.Fatalf("rule at %#x outside FDE [%#x, +%#x)", addr, fde.Begin, fde.Length)
				}
			})
			return nil
		}, func(uint64, error) {})
	})
}
