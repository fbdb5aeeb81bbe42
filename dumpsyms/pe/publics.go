package pe

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/demangle/msvc"
	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// parseWinName splits a public symbol's C decoration as Mozilla's
// dump_syms does: "_f@12" (stdcall) and "@f@12" (fastcall) give "f" and
// 12 bytes of parameters, "_f" gives "f"; names with "::" or "(" and C++
// decorated names ("?f@@YAXXZ") are kept whole without a size.
//
// Only i386 decorates C names (x86 is the machine's word): x64, ARM and
// ARM64 names are kept as they are, so that the public __stack_chk_fail
// stays __stack_chk_fail (llvm-pdbutil's dump --publics) where Breakpad's
// and Mozilla's dump_syms strip one underscore on every machine
// (docs/dump_syms.md, "Windows").
func parseWinName(name string, x86 bool) (string, uint32, bool) {
	if !x86 || strings.ContainsAny(name, ":(") {
		return name, 0, false
	}
	if i := strings.LastIndex(name, "@@"); i >= 0 {
		if n, err := strconv.ParseUint(name[i+2:], 10, 32); err == nil {
			return name[:i], uint32(n), true
		}
	}
	if name != "" && (name[0] == '@' || name[0] == '_') {
		rest := name[1:]
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			if n, err := strconv.ParseUint(rest[i+1:], 10, 32); err == nil {
				return rest[:i], uint32(n), true
			}
		}
		if name[0] == '_' {
			return rest, 0, false
		}
	}
	return name, 0, false
}

// demangle undecorates an MSVC C++ name as Mozilla's dump_syms writes it
// (msvc.Mozilla); names that are not decorated, and those the demangler
// cannot read, are kept as they are, as Mozilla keeps them.
func demangle(name string) string {
	if !msvc.IsDecorated(name) {
		return name
	}
	if d, err := msvc.Demangle(name, msvc.Mozilla); err == nil {
		return d
	}
	return name
}

// skipPublic reports the publics Mozilla's dump_syms leaves out: string
// literals (??_C) and floating-point and vector constants (__real@,
// __xmm@, __ymm@).
func skipPublic(name string) bool {
	if strings.HasPrefix(name, "??_C") {
		return true
	}
	if rest, ok := strings.CutPrefix(name, "__"); ok {
		return strings.HasPrefix(rest, "real@") || strings.HasPrefix(rest, "xmm@") || strings.HasPrefix(rest, "ymm@")
	}
	return false
}

// Section characteristics marking code.
const (
	scnCntCode    = 0x20
	scnMemExecute = 0x20000000
)

// publics adds the S_PUB32 function symbols as Mozilla's dump_syms does:
// those inside a function are left out, one at a function's address gives
// it its parameter size (and its name when the function's has no argument
// list), publics folded onto one address are marked "m".
func (d *dumper) publics(funcs []dumpsyms.Function) {
	b, err := d.f.GlobalSymbols()
	if err != nil {
		d.damage("public symbols", "public symbols: %v", err)
		return
	}
	defer d.f.MSF.Release(int(d.dbi.Header.SymRecordStream))
	byAddr := map[uint32]int{} // final RVA → index in pubs
	var pubs []symfile.Public
	// Every range of every function: a function split by OMAP has
	// several, and its public lands on its entry's.
	type fr struct {
		addr, size uint64
		fn         int
	}
	var ranges []fr
	for i, f := range funcs {
		for _, r := range f.Ranges {
			ranges = append(ranges, fr{r.Address, r.Size, i})
		}
	}
	slices.SortStableFunc(ranges, func(a, b fr) int { return cmp.Compare(a.addr, b.addr) })
	funcAt := map[uint64]int{}
	for _, r := range ranges {
		if _, ok := funcAt[r.addr]; !ok {
			funcAt[r.addr] = r.fn
		}
	}
	inside := func(a uint64) bool {
		i, found := slices.BinarySearchFunc(ranges, a, func(r fr, v uint64) int { return cmp.Compare(r.addr, v) })
		if found || i == 0 {
			return false
		}
		r := ranges[i-1]
		return a < r.addr+r.size
	}
	it := pdb.NewSymbolIter(b, 0)
	for {
		s, ok := it.Next()
		if !ok {
			break
		}
		if s.Kind != pdb.S_PUB32 {
			continue
		}
		p, err := pdb.ParsePub(s.Data)
		if err != nil {
			d.damage("public symbols", "public symbol at %#x: %v", s.Offset, err)
			continue
		}
		// Code publics: Mozilla's dump_syms takes those in executable
		// sections, whatever their flags say (assembly labels such as
		// __NLG_Return2 carry none).
		if p.Segment == 0 || int(p.Segment) > len(d.sections) || d.sections[p.Segment-1].Characteristics&(scnCntCode|scnMemExecute) == 0 {
			continue
		}
		orig, ok := d.rva(p.Segment, p.Offset)
		if !ok {
			continue
		}
		rva, ok := d.finalRVA(orig)
		if !ok {
			continue
		}
		if inside(uint64(rva)) || skipPublic(p.Name) {
			continue
		}
		// Demangled only where the name is used: most publics name a
		// function whose own name (with its argument list) stays.
		name, size, hasSize := parseWinName(p.Name, d.dbi.Header.Machine == pdb.MachineI386)
		if i, ok := funcAt[uint64(rva)]; ok {
			f := &d.syms.Funcs[i]
			if !strings.Contains(f.Name, "(") {
				f.Name = demangle(fixName(name))
			}
			if hasSize {
				f.ParamSize = uint64(size)
			}
			continue
		}
		if i, ok := byAddr[rva]; ok {
			pubs[i].Multiple = true
			continue
		}
		name = demangle(fixName(name))
		if name == "" {
			name = "<name omitted>"
		}
		byAddr[rva] = len(pubs)
		pubs = append(pubs, symfile.Public{Address: uint64(rva), ParamSize: uint64(size), Name: name})
	}
	if err := it.Err(); err != nil {
		d.damage("public symbols", "public symbols: %v", err)
	}
	slices.SortStableFunc(pubs, func(a, b symfile.Public) int { return cmp.Compare(a.Address, b.Address) })
	d.syms.Publics = pubs
}
