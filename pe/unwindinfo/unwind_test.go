package unwindinfo

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// buildPE returns an x64 PE image with one section at RVA 0x1000 holding
// data, and the exception directory at RVA 0x1000 with dirSize bytes.
func buildPE(data []byte, dirSize uint32) []byte {
	var b bytes.Buffer
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40)
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	binary.Write(&b, binary.LittleEndian, pe.FileHeader{
		Machine: pe.IMAGE_FILE_MACHINE_AMD64, NumberOfSections: 1,
		SizeOfOptionalHeader: uint16(binary.Size(pe.OptionalHeader64{})),
	})
	oh := pe.OptionalHeader64{Magic: 0x20b, NumberOfRvaAndSizes: 16, SizeOfImage: 0x10000}
	oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXCEPTION] = pe.DataDirectory{VirtualAddress: 0x1000, Size: dirSize}
	binary.Write(&b, binary.LittleEndian, oh)
	var sh pe.SectionHeader32
	copy(sh.Name[:], ".pdata")
	sh.VirtualSize, sh.VirtualAddress = uint32(len(data)), 0x1000
	sh.SizeOfRawData, sh.PointerToRawData = uint32(len(data)), 0x200
	binary.Write(&b, binary.LittleEndian, sh)
	for b.Len() < 0x200 {
		b.WriteByte(0)
	}
	b.Write(data)
	return b.Bytes()
}

type sect struct{ b []byte }

func (s *sect) u32(vs ...uint32) {
	for _, v := range vs {
		s.b = binary.LittleEndian.AppendUint32(s.b, v)
	}
}
func (s *sect) u8(vs ...uint8) { s.b = append(s.b, vs...) }
func (s *sect) u16(vs ...uint16) {
	for _, v := range vs {
		s.b = binary.LittleEndian.AppendUint16(s.b, v)
	}
}

func rules(t *testing.T, img []byte, style Style) ([]string, error) {
	t.Helper()
	f, err := pe.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := tab.Rules(style)
	return cfiLines(entries), err
}

// TestOps covers every unwind operation, chained and indirect unwind
// information, and the styles.
func TestOps(t *testing.T) {
	var s sect
	// Directory: 4 functions at 0x1000 (48 bytes); unwind infos from 0x1040.
	s.u32(0x2000, 0x2100, 0x1040) // all ops, frame register rbp
	s.u32(0x2100, 0x2180, 0x1080) // chained to function 0's info
	s.u32(0x2180, 0x2190, 0x1019) // indirect: shares entry 1's (at 0x100c+... see below)
	s.u32(0x2190, 0x21a0, 0x10a0) // machine frame with error code
	for len(s.b) < 0x40 {
		s.u8(0)
	}
	// 0x1040: version 1, frame register rbp (5) offset 2*16, codes in
	// descending prolog order.
	s.u8(1, 0x20, 15, 0x25)
	s.u8(0x20, byte(OpSaveXMM128Far)|6<<4)
	s.u16(0x40, 0)
	s.u8(0x1c, byte(OpSaveXMM128)|7<<4)
	s.u16(2)
	s.u8(0x18, byte(OpSaveNonvolFar)|3<<4) // rbx at 0x50
	s.u16(0x50, 0)
	s.u8(0x14, byte(OpSetFPReg))
	s.u8(0x10, byte(OpAllocLarge)|1<<4)
	s.u16(0x0000, 0x1) // 65536
	s.u8(0x08, byte(OpAllocLarge))
	s.u16(2)                            // 16
	s.u8(0x02, byte(OpPushNonvol)|5<<4) // rbp
	// 15 slots, odd: one slot of padding.
	for len(s.b) < 0x80 {
		s.u8(0)
	}
	// 0x1080: version 2, chained; an epilog code, a save and an alloc.
	s.u8(2|FlagChainInfo<<3, 8, 4, 0)
	s.u8(0x04, byte(OpEpilog)|1<<4)
	s.u8(0x08, byte(OpSaveNonvol)|6<<4) // rsi at 3*8
	s.u16(3)
	s.u8(0x04, byte(OpAllocSmall)|3<<4) // 32
	s.u32(0x2000, 0x2100, 0x1040)
	for len(s.b) < 0xa0 {
		s.u8(0)
	}
	// 0x10a0: machine frame with error code, then an allocation.
	s.u8(1, 4, 2, 0)
	s.u8(4, byte(OpAllocSmall)|1<<4) // 16
	s.u8(0, byte(OpPushMachframe)|1<<4)
	for len(s.b) < 0xc0 {
		s.u8(0)
	}
	// Entry 2 names entry 1 (at 0x100c) indirectly: 0x100c|1 = 0x100d.
	binary.LittleEndian.PutUint32(s.b[0x20:], 0x100d)
	img := buildPE(s.b, 48)

	got, err := rules(t, img, StyleSymbolic)
	if err != nil {
		t.Fatal(err)
	}
	f0 := ".cfa: $rbp 65536 + $rbp: .cfa 16 - ^ $rbx: $rbp 48 + ^ .ra: .cfa 8 - ^"
	f1 := ".cfa: $rbp 65568 + $rsi: .cfa 16 - ^ $rbp: .cfa 48 - ^ $rbx: $rbp 48 + ^ .ra: .cfa 8 - ^"
	want := []string{
		"STACK CFI INIT 2000 100 " + f0,
		"STACK CFI INIT 2100 80 " + f1,
		"STACK CFI INIT 2180 10 " + f1,
		"STACK CFI INIT 2190 10 .cfa: $rsp 72 + $rsp: .cfa 24 - ^ .ra: .cfa 48 - ^",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("symbolic style:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	got, err = rules(t, img, StyleBreakpad)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"STACK CFI INIT 2000 100 .cfa: $rsp .ra: .cfa 8 - ^", "STACK CFI 2000 .cfa: $rsp 65568 +",
		"STACK CFI INIT 2100 80 .cfa: $rsp .ra: .cfa 8 - ^", "STACK CFI 2100 .cfa: $rsp 65600 +",
		"STACK CFI INIT 2180 10 .cfa: $rsp .ra: .cfa 8 - ^", "STACK CFI 2180 .cfa: $rsp 65600 +",
		"STACK CFI INIT 2190 10 .cfa: $rsp .ra: .cfa 88 - ^", "STACK CFI 2190 .cfa: $rsp 112 +",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("breakpad style:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	got, err = rules(t, img, StyleExact)
	if err != nil {
		t.Fatal(err)
	}
	// Entry 0: push rbp, two allocations, the frame register, a save (the
	// XMM saves change no rule). Entries 1 and 2 start where entry 0's
	// prolog ends; their own codes (version 2: the epilog code is no prolog
	// instruction) allocate 32 bytes, which the frame register hides, and
	// save rsi relative to RSP (their unwind information names no frame
	// register). Entry 3: the machine frame at offset 0 is in force at the
	// entry.
	p0 := ".cfa: $rbp 65536 + .ra: .cfa 8 - ^ $rbp: .cfa 16 - ^ $rbx: .cfa 65488 - ^"
	want = []string{
		"STACK CFI INIT 2000 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
		"STACK CFI 2002 .cfa: $rsp 16 + $rbp: .cfa 16 - ^",
		"STACK CFI 2008 .cfa: $rsp 32 +",
		"STACK CFI 2010 .cfa: $rsp 65568 +",
		"STACK CFI 2014 .cfa: $rbp 65536 +",
		"STACK CFI 2018 $rbx: .cfa 65488 - ^",
		"STACK CFI INIT 2100 80 " + p0,
		"STACK CFI 2108 $rsi: .cfa 65576 - ^",
		"STACK CFI INIT 2180 10 " + p0,
		"STACK CFI 2188 $rsi: .cfa 65576 - ^",
		"STACK CFI INIT 2190 10 .cfa: $rsp 56 + .ra: .cfa 48 - ^ $rsp: .cfa 24 - ^",
		"STACK CFI 2194 .cfa: $rsp 72 +",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exact style:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestHostile checks that loops, truncations and addresses outside the
// image give errors.
func TestHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		fill func(s *sect)
		want string
	}{
		{"chain loop", func(s *sect) {
			s.u32(0x2000, 0x2010, 0x1010, 0)
			s.u8(1|FlagChainInfo<<3, 0, 0, 0)
			s.u32(0x2000, 0x2010, 0x1010)
		}, "loop"},
		{"indirect loop", func(s *sect) { s.u32(0x2000, 0x2010, 0x1001) }, "loop"},
		{"past the end", func(s *sect) { s.u32(0x2000, 0x2010, 0x9000) }, "in no section"},
		{"truncated code", func(s *sect) {
			s.u32(0x2000, 0x2010, 0x1010, 0)
			s.u8(1, 0, 1, 0, 0, byte(OpSaveNonvol), 0, 0)
		}, "operand past"},
		{"bad version", func(s *sect) {
			s.u32(0x2000, 0x2010, 0x1010, 0)
			s.u8(3, 0, 0, 0)
		}, "version"},
		{"unknown op", func(s *sect) {
			s.u32(0x2000, 0x2010, 0x1010, 0)
			s.u8(1, 0, 2, 0, 0, 11, 0, 0)
		}, "unknown operation"},
		{"codes past section", func(s *sect) {
			s.u32(0x2000, 0x2010, 0x1010, 0)
			s.u8(1, 0, 200, 0)
		}, "truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s sect
			tc.fill(&s)
			got, err := rules(t, buildPE(s.b, 12), StyleSymbolic)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q (records %q)", err, tc.want, got)
			}
		})
	}
}

// FuzzTable reads hostile images' unwind tables in every style.
func FuzzTable(f *testing.F) {
	var s sect
	s.u32(0x2000, 0x2010, 0x1010, 0)
	s.u8(1|FlagChainInfo<<3, 0, 2, 0x35, 0, byte(OpAllocLarge), 3, 0)
	s.u32(0x2000, 0x2010, 0x1020, 0)
	s.u8(2, 0, 4, 0, 0, byte(OpPushMachframe), 0, byte(OpEpilog), 0, byte(OpSetFPReg), 0, 0)
	f.Add(s.b, uint32(12))
	// A function whose code is in the section (decoded for epilogs).
	var c sect
	c.u32(0x1000, 0x1020, 0x100c)
	c.u8(1, 4, 2, 0, 4, byte(OpAllocSmall)|3<<4, 1, byte(OpPushNonvol)|3<<4)
	c.u8(0x48, 0x83, 0xc4, 0x20, 0x5b, 0xc3, 0x5b, 0xe9, 0, 0, 1, 0, 0x48, 0x8d, 0x65, 0x10, 0xc3)
	f.Add(c.b, uint32(12))
	f.Fuzz(func(t *testing.T, data []byte, dirSize uint32) {
		pf, err := pe.NewFile(bytes.NewReader(buildPE(data, dirSize)))
		if err != nil {
			return
		}
		tab, err := New(pf)
		if err != nil {
			return
		}
		for _, st := range []Style{StyleSymbolic, StyleMozilla, StyleBreakpad, StyleMozillaPE, StyleExact} {
			tab.Rules(st)
		}
	})
}

// TestEpilogs finds epilogs by their code and writes their records.
func TestEpilogs(t *testing.T) {
	code := []byte{
		0x53,                   // 0: push rbx (the prolog)
		0x48, 0x83, 0xec, 0x20, // 1: sub rsp, 32
		0x48, 0x83, 0xc4, 0x20, // 5: add rsp, 32 (an epilog)
		0x5b,                // 9: pop rbx
		0xc3,                // a: ret
		0x5b,                // b: pop rbx (an epilog of pops alone)
		0xe9, 0, 0x10, 0, 0, // c: jmp out of the function (a tail call)
		0x48, 0x8d, 0x65, 0x10, // 11: lea rsp, [rbp+16]
		0x90, // 15: nop: no epilog
		0xc3, // 16: ret alone: nothing to describe
	}
	eps := findEpilogs(code, 5)
	if len(eps) != 2 || eps[0].start != 5 || !eps[0].adjRS || len(eps[0].pops) != 1 || eps[1].start != 0xb || eps[1].adjRS {
		t.Fatalf("epilogs %+v", eps)
	}
	var post ruleSet
	post.set(".cfa: $rsp 48 +")
	post.set(".ra: .cfa 8 - ^")
	post.set("$rbx: .cfa 16 - ^")
	var got []string
	for _, c := range epilogChanges(0x1000, uint32(len(code)), eps, &post) {
		got = append(got, fmt.Sprintf("%x %s", c.Address, c.Rules))
	}
	want := []string{
		"1009 .cfa: $rsp 16 +",
		"100a .cfa: $rsp 8 + $rbx: $rbx",
		"100b .cfa: $rsp 16 + $rbx: .cfa 16 - ^",
		"100c .cfa: $rsp 8 + $rbx: $rbx",
		"1011 .cfa: $rsp 48 + $rbx: .cfa 16 - ^",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}
