package macho

import (
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Compact unwind information (__TEXT,__unwind_info), as Apple's
// <mach-o/compact_unwind_encoding.h> lays it out: a header, common
// encodings, a first-level index of pages by function offset, and
// second-level pages, regular (function offset + encoding pairs) or
// compressed (24-bit offsets from the index entry's, 8-bit encoding
// indexes into the common encodings then the page's own).

// UnwindEntry is one function of the compact unwind information.
type UnwindEntry struct {
	Func     uint32 // offset of the function from the image's start (__TEXT)
	End      uint32 // offset of the next function (the end of this one)
	Encoding uint32
}

const (
	pageRegular    = 2
	pageCompressed = 3
)

// maxUnwindEntries bounds the entries decoded: the section's size bounds
// them already (4 bytes each at least); this bounds the memory of a section
// whose pages are all the same page listed many times.
const maxUnwindEntries = 1 << 24

// ParseUnwindInfo decodes an __unwind_info section into its entries, sorted
// by function offset, each with its end. Damaged sections (offsets past
// the section, counts that do not fit, index entries out of order or
// naming one page again) are errors naming what is wrong; the work is
// bounded by the section's size.
func ParseUnwindInfo(b []byte) ([]UnwindEntry, error) {
	bo := binary.LittleEndian
	if len(b) < 28 {
		return nil, errors.New("header truncated")
	}
	if v := bo.Uint32(b); v != 1 {
		return nil, fmt.Errorf("version %d, want 1", v)
	}
	u32 := func(off uint64) (uint32, bool) {
		if off+4 > uint64(len(b)) {
			return 0, false
		}
		return bo.Uint32(b[off:]), true
	}
	commonOff, commonN := uint64(bo.Uint32(b[4:])), uint64(bo.Uint32(b[8:]))
	indexOff, indexN := uint64(bo.Uint32(b[20:])), uint64(bo.Uint32(b[24:]))
	if commonOff+commonN*4 > uint64(len(b)) {
		return nil, fmt.Errorf("%d common encodings at %#x run past the %d-byte section", commonN, commonOff, len(b))
	}
	if indexOff+indexN*12 > uint64(len(b)) {
		return nil, fmt.Errorf("%d index entries at %#x run past the %d-byte section", indexN, indexOff, len(b))
	}
	if indexN == 0 {
		return nil, nil
	}
	var out []UnwindEntry
	seen := map[uint32]bool{}
	for i := range indexN - 1 { // the last index entry only ends the last function
		e := b[indexOff+i*12:]
		first, page := bo.Uint32(e), bo.Uint32(e[4:])
		next := bo.Uint32(e[12:])
		if next < first {
			return nil, fmt.Errorf("index entry %d: function offset %#x after the next one's %#x", i, first, next)
		}
		if page == 0 {
			continue
		}
		if seen[page] {
			return nil, fmt.Errorf("index entry %d: second-level page at %#x already listed", i, page)
		}
		seen[page] = true
		kind, ok := u32(uint64(page))
		if !ok {
			return nil, fmt.Errorf("index entry %d: second-level page at %#x past the %d-byte section", i, page, len(b))
		}
		if uint64(page)+8 > uint64(len(b)) {
			return nil, fmt.Errorf("index entry %d: page header at %#x truncated", i, page)
		}
		p := b[page:]
		entOff, entN := uint64(bo.Uint16(p[4:])), uint64(bo.Uint16(p[6:]))
		start := len(out)
		switch kind {
		case pageRegular:
			if uint64(page)+entOff+entN*8 > uint64(len(b)) {
				return nil, fmt.Errorf("index entry %d: %d regular entries at %#x run past the section", i, entN, uint64(page)+entOff)
			}
			for j := range entN {
				r := p[entOff+j*8:]
				out = append(out, UnwindEntry{Func: bo.Uint32(r), Encoding: bo.Uint32(r[4:])})
			}
		case pageCompressed:
			if uint64(page)+12 > uint64(len(b)) {
				return nil, fmt.Errorf("index entry %d: compressed page header at %#x truncated", i, page)
			}
			encOff, encN := uint64(bo.Uint16(p[8:])), uint64(bo.Uint16(p[10:]))
			if uint64(page)+entOff+entN*4 > uint64(len(b)) || uint64(page)+encOff+encN*4 > uint64(len(b)) {
				return nil, fmt.Errorf("index entry %d: compressed page at %#x runs past the section", i, page)
			}
			for j := range entN {
				v := bo.Uint32(p[entOff+j*4:])
				ei := uint64(v >> 24)
				var enc uint32
				switch {
				case ei < commonN:
					enc = bo.Uint32(b[commonOff+ei*4:])
				case ei-commonN < encN:
					enc = bo.Uint32(p[encOff+(ei-commonN)*4:])
				default:
					return nil, fmt.Errorf("index entry %d: compressed entry %d: encoding index %d past the %d common and %d page encodings", i, j, ei, commonN, encN)
				}
				out = append(out, UnwindEntry{Func: first + v&0xffffff, Encoding: enc})
			}
		default:
			return nil, fmt.Errorf("index entry %d: second-level page at %#x of kind %d", i, page, kind)
		}
		if len(out) > maxUnwindEntries {
			return nil, fmt.Errorf("over %d entries", maxUnwindEntries)
		}
		// Ends: the next entry's start; the page's last ends at the next
		// index entry's first function.
		for k := start; k < len(out); k++ {
			out[k].End = next
			if k+1 < len(out) {
				out[k].End = out[k+1].Func
			}
		}
	}
	slices.SortStableFunc(out, func(a, b UnwindEntry) int { return int(int64(a.Func) - int64(b.Func)) })
	for k := range out {
		if k+1 < len(out) && out[k+1].Func < out[k].End {
			out[k].End = out[k+1].Func
		}
		if out[k].End < out[k].Func {
			out[k].End = out[k].Func
		}
	}
	return out, nil
}

// Compact unwind encodings.
const (
	modeMask = 0x0f000000

	x86RBPFrame    = 0x01000000
	x86StackImmd   = 0x02000000
	x86StackInd    = 0x03000000
	x86DWARF       = 0x04000000
	arm64Frameless = 0x02000000
	arm64DWARF     = 0x03000000
	arm64Frame     = 0x04000000
	armFrame       = 0x01000000
	armFrameD      = 0x02000000
	armDWARF       = 0x04000000
)

// x86Regs names the registers of the x86_64 encodings (0: none).
var x86Regs = [...]string{"", "$rbx", "$r12", "$r13", "$r14", "$r15", "$rbp"}

// i386Regs names the registers of the i386 encodings (0: none), as
// <mach-o/compact_unwind_encoding.h> numbers them (UNWIND_X86_REG_EBX 1,
// ECX 2, EDX 3, EDI 4, ESI 5, EBP 6).
var i386Regs = [...]string{"", "$ebx", "$ecx", "$edx", "$edi", "$esi", "$ebp"}

// Rules returns the STACK CFI rules an entry's encoding states for the
// function's body (after its prologue), in Breakpad's rule order, for cpu
// (x86_64, i386: the same modes in 4-byte words, arm64, armv7k);
// text reads code bytes at a function offset (for x86's STACK_IND, whose
// stack size is in the function's sub instruction). ok is false for
// entries without rules of their own: no unwind information, or DWARF
// mode (the __eh_frame FDE gives them).
func Rules(cpu macho.Cpu, enc uint32, fn uint32, text func(off uint32) (uint32, bool)) (rules string, ok bool, err error) {
	r := map[string]string{}
	switch cpu {
	case macho.CpuAmd64, macho.Cpu386:
		// The same encodings in words of 8 bytes (x86_64) or 4 (i386).
		word, regs, sp, fp := int64(8), x86Regs[:], "$rsp", "$rbp"
		if cpu == macho.Cpu386 {
			word, regs, sp, fp = 4, i386Regs[:], "$esp", "$ebp"
		}
		switch enc & modeMask {
		case x86RBPFrame:
			off := int64((enc >> 16) & 0xff)
			saved := enc & 0x7fff
			r[".cfa"], r[".ra"], r[fp] = fmt.Sprintf("%s %d +", fp, 2*word), fmt.Sprintf(".cfa %d + ^", -word), fmt.Sprintf(".cfa %d + ^", -2*word)
			for i := range int64(5) {
				reg := (saved >> (3 * i)) & 7
				if reg == 0 {
					continue
				}
				if reg > 6 {
					return "", false, fmt.Errorf("frame pointer encoding %#x: register number %d", enc, reg)
				}
				r[regs[reg]] = fmt.Sprintf(".cfa %d + ^", -2*word-off*word+i*word)
			}
		case x86StackImmd, x86StackInd:
			size := uint64((enc>>16)&0xff) * uint64(word)
			if enc&modeMask == x86StackInd {
				v, ok := text(fn + (enc>>16)&0xff)
				if !ok {
					return "", false, fmt.Errorf("frameless indirect encoding %#x: stack size at function offset %#x not in __text", enc, (enc>>16)&0xff)
				}
				size = uint64(v) + uint64((enc>>13)&7)*uint64(word)
			}
			count := (enc >> 10) & 7
			saved, err := permutation(count, enc&0x3ff)
			if err != nil {
				return "", false, fmt.Errorf("frameless encoding %#x: %w", enc, err)
			}
			r[".cfa"], r[".ra"] = fmt.Sprintf("%s %d +", sp, size), fmt.Sprintf(".cfa %d + ^", -word)
			for i, reg := range saved {
				r[regs[reg]] = fmt.Sprintf(".cfa %d + ^", -word-word*int64(count)+word*int64(i))
			}
		default:
			return "", false, nil
		}
	case macho.CpuArm64:
		switch enc & modeMask {
		case arm64Frame:
			r[".cfa"], r[".ra"], r["x29"] = "x29 16 +", ".cfa -8 + ^", ".cfa -16 + ^"
			arm64Pairs(r, enc, -16)
		case arm64Frameless:
			r[".cfa"], r[".ra"] = fmt.Sprintf("sp %d +", ((enc>>12)&0xfff)*16), "x30"
			arm64Pairs(r, enc, 0)
		default:
			return "", false, nil
		}
	case macho.CpuArm:
		// armv7k (the only 32-bit arm clang writes compact unwind for):
		// push {r4-r7, lr} of the first push's registers, r7 the frame
		// pointer at the saved r7, the second push's registers (r8-r12)
		// below, the d registers (FRAME_D) below those, left out as for
		// arm64; the stack adjustment (words) lies between the caller's
		// sp and lr (libunwind's CompactUnwinder_arm: sp = r7 + 8 +
		// adjust).
		switch enc & modeMask {
		case armFrame, armFrameD:
			adj := int64((enc>>22)&3) * 4
			r[".cfa"], r[".ra"], r["r7"] = fmt.Sprintf("r7 %d +", 8+adj), fmt.Sprintf(".cfa %d + ^", -4-adj), fmt.Sprintf(".cfa %d + ^", -8-adj)
			off := -8 - adj
			for _, p := range [...]struct {
				bit uint32
				reg string
			}{{4, "r6"}, {2, "r5"}, {1, "r4"}, {0x80, "r12"}, {0x40, "r11"}, {0x20, "r10"}, {0x10, "r9"}, {8, "r8"}} {
				if enc&p.bit != 0 {
					off -= 4
					r[p.reg] = fmt.Sprintf(".cfa %d + ^", off)
				}
			}
		default:
			return "", false, nil
		}
	default:
		return "", false, fmt.Errorf("no compact unwind rules for %s", archName(cpu, 0))
	}
	return formatRules(r), true, nil
}

// arm64Pairs adds the rules of the register pairs an arm64 encoding saves
// (bits 0-4: x19/x20 ... x27/x28, bits 8-11: d8/d9 ... d14/d15), laid
// from top, the CFA offset where the first pair's slots end, downwards in
// bit order, the lower-numbered register of each pair above the other: the
// layout LLVM MC encodes (.cfi_offset x19 at top-8, x20 at top-16, ...) and
// the code it encodes saves (stp x20, x19, [...]). libunwind's frame mode
// reads the same slots (from fp-8 down); its frameless mode reads each one
// slot higher, from sp+size (the CFA itself) down, and sets the caller's
// sp below it: the code's layout is the truth here (docs/dump_syms.md).
// d8..d15 are named v8..v15, as Breakpad names DWARF registers 72-79 in
// the __eh_frame rules of the same saves; walkers without vector
// registers (Breakpad's, ours) pass over them.
func arm64Pairs(r map[string]string, enc uint32, top int64) {
	pairs := [...][2]string{{"x19", "x20"}, {"x21", "x22"}, {"x23", "x24"}, {"x25", "x26"}, {"x27", "x28"},
		{"v8", "v9"}, {"v10", "v11"}, {"v12", "v13"}, {"v14", "v15"}}
	bits := [...]uint32{0, 1, 2, 3, 4, 8, 9, 10, 11}
	for i, p := range pairs {
		if enc&(1<<bits[i]) != 0 {
			r[p[0]], r[p[1]] = fmt.Sprintf(".cfa %d + ^", top-8), fmt.Sprintf(".cfa %d + ^", top-16)
			top -= 16
		}
	}
}

// formatRules writes rules in Breakpad's order (by name, as its map
// holds them).
func formatRules(r map[string]string) string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	slices.Sort(names)
	var sb strings.Builder
	for i, n := range names {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(n + ": " + r[n])
	}
	return sb.String()
}

// permutation decodes the registers a frameless x86_64 function saved, in
// the order they lie on the stack from the lowest address, from the
// encoding's count and permutation number (libunwind's decoding).
func permutation(count, perm uint32) ([]uint32, error) {
	var p [6]uint32
	switch count {
	case 6, 5:
		p[0] = perm / 120
		perm -= p[0] * 120
		p[1] = perm / 24
		perm -= p[1] * 24
		p[2] = perm / 6
		perm -= p[2] * 6
		p[3] = perm / 2
		perm -= p[3] * 2
		p[4] = perm
	case 4:
		p[0] = perm / 60
		perm -= p[0] * 60
		p[1] = perm / 12
		perm -= p[1] * 12
		p[2] = perm / 3
		perm -= p[2] * 3
		p[3] = perm
	case 3:
		p[0] = perm / 20
		perm -= p[0] * 20
		p[1] = perm / 4
		perm -= p[1] * 4
		p[2] = perm
	case 2:
		p[0] = perm / 5
		perm -= p[0] * 5
		p[1] = perm
	case 1:
		p[0] = perm
	case 0:
		return nil, nil
	default:
		return nil, fmt.Errorf("%d saved registers", count)
	}
	var used [7]bool
	out := make([]uint32, 0, count)
	for i := range count {
		renum, found := uint32(0), false
		for u := uint32(1); u < 7; u++ {
			if used[u] {
				continue
			}
			if renum == p[i] {
				out = append(out, u)
				used[u], found = true, true
				break
			}
			renum++
		}
		if !found {
			return nil, fmt.Errorf("permutation %d of %d registers out of range", perm, count)
		}
	}
	return out, nil
}

// compactUnwind adds a STACK CFI INIT record for every function of the
// binary's __unwind_info that has rules of its own (not DWARF mode) and no
// __eh_frame entry: the rules its encoding states for the function's body.
func compactUnwind(o *object, out *dumpsyms.Model, warn func(string, ...any), exact bool) error {
	var ents []UnwindEntry
	if sec := o.Section("__unwind_info"); sec != nil && sec.Seg == "__TEXT" && sec.Offset != 0 {
		b, err := sectionBytes(o, sec)
		if err != nil {
			return err
		}
		if ents, err = ParseUnwindInfo(b); err != nil {
			return err
		}
	} else if sec := o.Section("__compact_unwind"); sec != nil && sec.Seg == "__LD" && sec.Offset != 0 && o.Type == macho.TypeObj {
		b, err := sectionBytes(o, sec)
		if err != nil {
			return fmt.Errorf("__compact_unwind: %w", err)
		}
		if ents, err = ParseCompactUnwind(b, o.Magic == macho.Magic64, relocatedAt(o, sec)); err != nil {
			return fmt.Errorf("__compact_unwind: %w", err)
		}
	}
	if len(ents) == 0 {
		return nil
	}
	base := textBase(o)
	text := o.Section("__text")
	readText := func(off uint32) (uint32, bool) {
		if text == nil || text.Offset == 0 {
			return 0, false
		}
		a := base + uint64(off)
		if a < text.Addr || a+4 > text.Addr+text.Size {
			return 0, false
		}
		var v [4]byte
		if _, err := o.r.ReadAt(v[:], int64(text.Offset)+int64(a-text.Addr)); err != nil {
			return 0, false
		}
		return binary.LittleEndian.Uint32(v[:]), true
	}
	have := map[uint64]bool{}
	for _, c := range out.CFI {
		have[c.Init.Address] = true
	}
	if exact && (o.Cpu == macho.CpuAmd64 || o.Cpu == macho.CpuArm64) {
		exactFDEs(o, out, text, base, warn)
	}
	var follow follower
	if exact {
		follow = exactFollower(o.Cpu)
		// The linker gives consecutive functions with one encoding one
		// entry; their prologues and epilogues are each function's own.
		ents = splitAtStarts(ents, functionStarts(o, base))
	}
	bad, inexact := 0, 0
	for _, e := range ents {
		if e.End <= e.Func || have[uint64(e.Func)] {
			continue
		}
		rules, ok, err := Rules(o.Cpu, e.Encoding, e.Func, readText)
		if err != nil {
			if bad++; bad <= 10 {
				warn("function at %#x: %v (no STACK CFI)", e.Func, err)
			}
			continue
		}
		if !ok {
			continue
		}
		entry := dumpsyms.CFIEntry{Init: symfile.CFIInit{Address: uint64(e.Func), Size: uint64(e.End - e.Func), Rules: rules}}
		if follow != nil {
			if code := funcCode(o, text, base, e); code != nil {
				if init, ch, err := follow(code, uint64(e.Func), fixed(rules)); err == nil {
					entry.Init.Rules, entry.Changes = init, ch
				} else if inexact++; inexact <= 10 {
					warn("--cfi-style exact: %v: the encoding's rules kept", err)
				}
			}
		}
		out.CFI = append(out.CFI, entry)
	}
	if inexact > 0 {
		warn("--cfi-style exact: %d functions whose code is not followed keep the encoding's rules", inexact)
	}
	slices.SortStableFunc(out.CFI, func(a, b dumpsyms.CFIEntry) int {
		return int(min(max(int64(a.Init.Address-b.Init.Address), -1), 1))
	})
	return nil
}

// follower follows a function's code for --cfi-style exact: exactX86,
// exactI386, exactARM64.
type follower func(code []byte, addr uint64, body bodyRules) (init string, changes []symfile.CFI, err error)

// exactFollower returns the code follower of --cfi-style exact for a
// CPU, nil where there is none.
func exactFollower(cpu macho.Cpu) follower {
	switch cpu {
	case macho.CpuAmd64:
		return exactX86
	case macho.CpuArm64:
		return exactARM64
	case macho.Cpu386:
		return exactI386
	}
	return nil
}

// exactFDEs makes the rules of the functions whose unwind information is
// an FDE (__eh_frame; compact unwind's DWARF mode) right at every
// instruction as for compact encodings: clang's FDEs on Darwin describe
// neither epilogues nor, on arm64, the prologue's steps (one row after
// the last store), so a walk stopped there goes wrong. Where the code,
// followed from the entry, ends its prologue in the state the FDE states
// there, the followed rules replace the FDE's; elsewhere the FDE's stay
// (counted in a warning).
func exactFDEs(o *object, out *dumpsyms.Model, text *macho.Section, base uint64, warn func(string, ...any)) {
	follow := exactFollower(o.Cpu)
	kept := 0
	for i := range out.CFI {
		e := &out.CFI[i]
		if e.Init.Size == 0 || e.Init.Size > 1<<32 || e.Init.Address > 1<<32 {
			continue
		}
		code := funcCode(o, text, base, UnwindEntry{Func: uint32(e.Init.Address), End: uint32(e.Init.Address + e.Init.Size)})
		if code == nil {
			continue
		}
		fde := *e
		body := func(at uint64) string { return formatRules(rulesAt(fde, at)) }
		init, ch, err := follow(code, e.Init.Address, body)
		if err != nil {
			kept++
			continue
		}
		e.Init.Rules, e.Changes = init, ch
	}
	if kept > 0 {
		warn("--cfi-style exact: %d functions with FDEs whose code is not followed keep the FDE's rules", kept)
	}
}

// rulesAt returns the rules in force at addr of an entry.
func rulesAt(e dumpsyms.CFIEntry, addr uint64) map[string]string {
	r := map[string]string{}
	parseRules(e.Init.Rules, r)
	for _, c := range e.Changes {
		if c.Address <= addr {
			parseRules(c.Rules, r)
		}
	}
	return r
}

// parseRules adds the rules of a STACK CFI record's text ("REG: EXPR ...")
// to r.
func parseRules(s string, r map[string]string) {
	name := ""
	for _, t := range strings.Fields(s) {
		if strings.HasSuffix(t, ":") {
			name = strings.TrimSuffix(t, ":")
			r[name] = ""
			continue
		}
		if r[name] != "" {
			r[name] += " "
		}
		r[name] += t
	}
}

// sectionBytes reads a section of o, refusing one past the end of the
// file.
func sectionBytes(o *object, sec *macho.Section) ([]byte, error) {
	if int64(sec.Offset)+int64(sec.Size) > o.slice.Size || sec.Size > maxSection {
		return nil, fmt.Errorf("%d bytes at %#x run past the end of the file", sec.Size, sec.Offset)
	}
	b := make([]byte, sec.Size)
	if _, err := o.r.ReadAt(b, int64(sec.Offset)); err != nil {
		return nil, err
	}
	return b, nil
}

// relocatedAt returns, for an object's section, the value its relocations
// add at a section offset: the value of the symbol an external relocation
// names (the bytes there hold only the addend); 0 where a relocation is
// local (the bytes hold the address itself, as for every relocation of
// the i386 and arm objects clang writes) or absent.
func relocatedAt(o *object, sec *macho.Section) func(off uint32) uint64 {
	ext := map[uint32]uint64{}
	for _, r := range sec.Relocs {
		if r.Extern && !r.Scattered && o.Symtab != nil && int(r.Value) < len(o.Symtab.Syms) {
			ext[r.Addr] = o.Symtab.Syms[r.Value].Value
		}
	}
	return func(off uint32) uint64 { return ext[off] }
}

// ParseCompactUnwind decodes the __LD,__compact_unwind section of an
// object file (the compiler's list the linker turns into __unwind_info):
// entries of function address, length, encoding, personality and LSDA, of
// 20 bytes (32-bit objects) or 32 (64-bit). reloc gives what the
// relocations add to the address at an entry's offset. The entries come
// sorted by address; a function's length past 2^32 or an address past
// 2^32 is an error.
func ParseCompactUnwind(b []byte, is64 bool, reloc func(off uint32) uint64) ([]UnwindEntry, error) {
	size := 20
	if is64 {
		size = 32
	}
	if len(b)%size != 0 {
		return nil, fmt.Errorf("%d bytes, not a whole number of %d-byte entries", len(b), size)
	}
	if len(b)/size > maxUnwindEntries {
		return nil, fmt.Errorf("over %d entries", maxUnwindEntries)
	}
	bo := binary.LittleEndian
	out := make([]UnwindEntry, 0, len(b)/size)
	for off := 0; off < len(b); off += size {
		e := b[off:]
		var addr uint64
		var length, enc uint32
		if is64 {
			addr, length, enc = bo.Uint64(e), bo.Uint32(e[8:]), bo.Uint32(e[12:])
		} else {
			addr, length, enc = uint64(bo.Uint32(e)), bo.Uint32(e[4:]), bo.Uint32(e[8:])
		}
		if reloc != nil {
			addr += reloc(uint32(off))
		}
		if addr+uint64(length) > 1<<32-1 {
			return nil, fmt.Errorf("entry at %#x: function at %#x, %d bytes, past 4 GiB", off, addr, length)
		}
		out = append(out, UnwindEntry{Func: uint32(addr), End: uint32(addr) + length, Encoding: enc})
	}
	slices.SortStableFunc(out, func(a, b UnwindEntry) int { return int(int64(a.Func) - int64(b.Func)) })
	return out, nil
}

// maxFuncCode bounds the bytes of one function decoded for exact rules.
const maxFuncCode = 1 << 20

// funcCode returns the bytes of the function of entry e from text (the
// __text section), nil when they are not all there.
func funcCode(o *object, text *macho.Section, base uint64, e UnwindEntry) []byte {
	if text == nil || text.Offset == 0 {
		return nil
	}
	a, n := base+uint64(e.Func), uint64(e.End-e.Func)
	if a < text.Addr || a+n > text.Addr+text.Size || n > maxFuncCode {
		return nil
	}
	b := make([]byte, n)
	if _, err := o.r.ReadAt(b, int64(text.Offset)+int64(a-text.Addr)); err != nil {
		return nil
	}
	return b
}

// maxFunctionStarts bounds the bytes of LC_FUNCTION_STARTS read: a
// uleb128 delta a function, some bytes each.
const maxFunctionStarts = 64 << 20

// functionStarts returns the functions' offsets from base (the __TEXT
// segment's address), sorted: those LC_FUNCTION_STARTS lists (uleb128
// deltas, the first from base; what the linker writes, kept by strip) and
// the symbol table's symbols in __text. Damaged data ends the list where
// it is damaged.
func functionStarts(o *object, base uint64) []uint32 {
	set := map[uint32]bool{}
	for _, l := range o.Loads {
		b := l.Raw()
		if len(b) < 16 || o.ByteOrder.Uint32(b) != 0x26 { // LC_FUNCTION_STARTS
			continue
		}
		off, size := int64(o.ByteOrder.Uint32(b[8:])), int64(o.ByteOrder.Uint32(b[12:]))
		if size > maxFunctionStarts || off+size > o.slice.Size {
			continue
		}
		data := make([]byte, size)
		if _, err := o.r.ReadAt(data, off); err != nil {
			continue
		}
		a := uint64(0)
		for len(data) > 0 {
			d, n := binary.Uvarint(data)
			if n <= 0 || d == 0 {
				break
			}
			data = data[n:]
			if a += d; a > 1<<32 {
				break
			}
			set[uint32(a)] = true
		}
	}
	if text := o.Section("__text"); text != nil && o.Symtab != nil {
		idx := uint8(0)
		for i, s := range o.Sections {
			if s == text && i < 255 {
				idx = uint8(i + 1)
			}
		}
		for _, s := range o.Symtab.Syms {
			if idx != 0 && s.Type&0xe0 == 0 && s.Type&0x0e == 0x0e && s.Sect == idx && s.Value >= base && s.Value-base < 1<<32 {
				set[uint32(s.Value-base)] = true
			}
		}
	}
	out := make([]uint32, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// splitAtStarts splits the entries that cover more than one function
// (sorted starts) into one entry a function, with the same encoding.
func splitAtStarts(ents []UnwindEntry, starts []uint32) []UnwindEntry {
	if len(starts) == 0 {
		return ents
	}
	out := make([]UnwindEntry, 0, len(ents))
	for _, e := range ents {
		i, _ := slices.BinarySearch(starts, e.Func+1)
		for ; i < len(starts) && starts[i] < e.End; i++ {
			p := e
			p.End = starts[i]
			out = append(out, p)
			e.Func = starts[i]
		}
		out = append(out, e)
	}
	return out
}
