package macho

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
)

// The 32-bit inputs: object files (ld64.lld links no 32-bit Mach-O),
// remade by testdata/mach32/make.sh.
func mach32(name string) string { return filepath.Join("testdata", "mach32", name) }

// TestMach32Objects reads the i386 and armv7 objects: MODULE lines as
// Breakpad's dump_syms_mac writes them (the identifiers its MD5 gives
// objects without LC_UUID; armv7 as Breakpad on macOS names it), a FUNC with lines for every function of prog.c (address 0
// included: an object's first function), the inlined call with -d, and
// STACK CFI from i386's __eh_frame (Darwin's register numbers) and armv7's
// __debug_frame.
func TestMach32Objects(t *testing.T) {
	for _, c := range []struct {
		file, module string
		entryCFA     string // the CFA rule at a function's entry
	}{
		{"prog-i386.o", "MODULE mac x86 F5E9A7E0981B618895C2A350EE011A140 prog-i386.o", ".cfa: $esp 4 +"},
		{"prog-i386-fl.o", "MODULE mac x86 FFC2426B33C49AD3B41CDD20ED9CF9320 prog-i386-fl.o", ".cfa: $esp 4 +"},
		{"prog-armv7.o", "MODULE mac armv7 2AAF7A9F8FEC11D00898A6B5EA4BC7620 prog-armv7.o", ".cfa: sp 0 +"},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := Dump(mach32(c.file), Options{Options: dumpsyms.Options{Inlines: true}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := m.Write(&out); err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(out.String(), "\n"); !strings.HasPrefix(first, c.module) {
				t.Errorf("MODULE line %q, want %q", first, c.module)
			}
			funcs := map[string]bool{}
			for _, f := range m.Funcs {
				if len(f.Lines) == 0 {
					t.Errorf("FUNC %s has no lines", f.Name)
				}
				funcs[f.Name] = true
			}
			for _, want := range []string{"many_regs", "big_frame", "leaf", "main"} {
				if !funcs[want] {
					t.Errorf("no FUNC %s (have %v)", want, funcs)
				}
			}
			if !strings.Contains(out.String(), "INLINE_ORIGIN 0 twice\n") {
				t.Errorf("no INLINE_ORIGIN twice")
			}
			if len(m.CFI) < 3 {
				t.Fatalf("%d STACK CFI entries, want one per function", len(m.CFI))
			}
			for _, e := range m.CFI {
				if !strings.Contains(e.Init.Rules, c.entryCFA) {
					t.Errorf("STACK CFI INIT %x %s: want %s at the entry", e.Init.Address, e.Init.Rules, c.entryCFA)
				}
			}
		})
	}
}

// TestMach32EHRegisters checks the i386 __eh_frame register numbers on
// prog-i386.o's frame-pointer functions: after "push ebp" the rule saving
// ebp, after "mov ebp, esp" the CFA from ebp (Breakpad's dump_syms names
// them the other way round: docs/dump_syms.md).
func TestMach32EHRegisters(t *testing.T) {
	m, err := Dump(mach32("prog-i386.o"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.CFI {
		a := e.Init.Address
		if got := rulesAt(e, a+1); got["$ebp"] != ".cfa -8 + ^" || got[".cfa"] != "$esp 8 +" {
			t.Errorf("function %#x after push ebp: %v", a, got)
		}
		if got := rulesAt(e, a+3); got[".cfa"] != "$ebp 8 +" {
			t.Errorf("function %#x after mov ebp, esp: %v", a, got)
		}
	}
}

// TestMach32CompactUnwind decodes the i386 objects' compact unwind
// entries (__LD,__compact_unwind, what ld64 turns into __unwind_info) with
// Rules and checks each against the __eh_frame FDE clang wrote for the same
// function: the encoding's rules are the FDE's at some instruction of the
// body. Covers the EBP-frame mode (with saved registers), the frameless
// immediate and indirect modes; the DWARF-mode entries must have no rules.
// The same for armv7k's frame mode (prog-armv7k.o, built with
// -femit-dwarf-unwind=always so that its functions have FDEs too).
func TestMach32CompactUnwind(t *testing.T) {
	modes := map[uint32]int{}
	armFrames := 0
	for _, name := range []string{"prog-i386.o", "prog-i386-fl.o", "prog-i386-ind.o", "prog-armv7k.o"} {
		in, err := open(mach32(name), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer in.close()
		o := in.obj
		sec := o.Section("__compact_unwind")
		b, err := sectionBytes(o, sec)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := ParseCompactUnwind(b, false, relocatedAt(o, sec))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Dump(mach32(name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		fde := map[uint64]dumpsyms.CFIEntry{}
		for _, e := range m.CFI {
			fde[e.Init.Address] = e
		}
		for _, e := range ents {
			rules, ok, err := Rules(o.Cpu, e.Encoding, e.Func, func(off uint32) (uint32, bool) {
				text := o.Section("__text")
				if off < uint32(text.Addr) || off+4 > uint32(text.Addr+text.Size) {
					return 0, false
				}
				var v [4]byte
				o.r.ReadAt(v[:], int64(text.Offset)+int64(off-uint32(text.Addr)))
				return binary.LittleEndian.Uint32(v[:]), true
			})
			if err != nil {
				t.Fatalf("%s: function %#x: %v", name, e.Func, err)
			}
			mode := e.Encoding & modeMask
			if o.Cpu == macho.CpuArm {
				if mode == armFrame {
					armFrames++
				}
			} else {
				modes[mode]++
			}
			if !ok {
				if mode != x86DWARF && mode != 0 {
					t.Errorf("%s: function %#x: encoding %#x has no rules", name, e.Func, e.Encoding)
				}
				continue
			}
			f, have := fde[uint64(e.Func)]
			if !have || f.Init.Size != uint64(e.End-e.Func) {
				t.Fatalf("%s: function %#x..%#x: no FDE of that range", name, e.Func, e.End)
			}
			want := ruleMap(rules)
			found := false
			for a := e.Func; a < e.End; a++ {
				if maps.Equal(rulesAt(f, uint64(a)), want) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: function %#x, encoding %#x: rules %q are the FDE's nowhere", name, e.Func, e.Encoding, rules)
			}
		}
	}
	if modes[x86RBPFrame] == 0 || modes[x86StackImmd] == 0 || modes[x86StackInd] == 0 || modes[x86DWARF] == 0 {
		t.Errorf("modes covered %v, want EBP frame, frameless immediate and indirect, DWARF", modes)
	}
	if armFrames != 3 {
		t.Errorf("%d armv7k frame-mode entries, want 3", armFrames)
	}
}

// m32arch returns the architecture of a test file's slice (the first
// without arch).
func m32arch(file, arch string) string {
	in, err := open(mach32(file), arch, nil)
	if err != nil {
		return err.Error()
	}
	defer in.close()
	return in.obj.slice.Arch()
}

// ruleMap splits a rule string into its rules by register.
func ruleMap(s string) map[string]string {
	r := map[string]string{}
	parseRules(s, r)
	return r
}

// TestMach32Fat lists and selects the slices of a universal file of
// 32-bit (and 64-bit) objects, by Apple's names and Breakpad's x86.
func TestMach32Fat(t *testing.T) {
	var list bytes.Buffer
	if err := ListArch(mach32("prog-fat.o"), &list); err != nil {
		t.Fatal(err)
	}
	if want := "prog-fat.o contains the following architectures:\nx86, x86_64, armv7\n"; list.String() != want {
		t.Errorf("--list-arch: %q, want %q", list.String(), want)
	}
	for arch, want := range map[string]string{"i386": "x86", "x86": "x86", "armv7": "armv7", "arm": "armv7", "x86_64": "x86_64"} {
		m, err := Dump(mach32("prog-fat.o"), Options{Arch: arch})
		if err != nil {
			t.Fatalf("-a %s: %v", arch, err)
		}
		if m.Module.Arch != want || len(m.Funcs) != 4 {
			t.Errorf("-a %s: MODULE arch %s, %d FUNCs; want %s, 4", arch, m.Module.Arch, len(m.Funcs), want)
		}
	}
	// The i386 slice is prog-i386-fl.o: the same records.
	thin, err := Dump(mach32("prog-i386-fl.o"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	slice, err := Dump(mach32("prog-fat.o"), Options{Arch: "i386", Options: dumpsyms.Options{Name: "prog-i386-fl.o"}})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	thin.Write(&a)
	slice.Write(&b)
	if a.String() != b.String() {
		t.Errorf("the fat file's i386 slice reads differently from the thin file")
	}
	if _, err := Dump(mach32("prog-fat.o"), Options{Arch: "arm64"}); err == nil || !strings.Contains(err.Error(), "i386, x86_64, armv7") {
		t.Errorf("-a arm64: %v, want an error naming the slices", err)
	}
}

// TestMach32Symbolizer checks every line record of the 32-bit objects
// and linked executables (read with their dSYMs) against llvm-symbolizer-22
// on the object or dSYM: the function (its outermost
// frame) and the line (its innermost frame's) at the record's address.
func TestMach32Symbolizer(t *testing.T) {
	sym, err := exec.LookPath("llvm-symbolizer-22")
	if err != nil {
		t.Skip("llvm-symbolizer-22 not installed (Debian's llvm-22)")
	}
	for _, c := range []struct {
		name, obj string
		base      uint64 // the records' base: __TEXT's address
	}{
		{"prog-i386.o", "prog-i386.o", 0},
		{"prog-i386-fl.o", "prog-i386-fl.o", 0},
		{"prog-armv7.o", "prog-armv7.o", 0},
		{"link-i386", "link-i386.dSYM/Contents/Resources/DWARF/link-i386", 0x1000},
		{"link-i386-fp", "link-i386-fp.dSYM/Contents/Resources/DWARF/link-i386-fp", 0x1000},
		{"link-armv7", "link-armv7.dSYM/Contents/Resources/DWARF/link-armv7", 0x1000},
		{"prog-armv7k.o", "prog-armv7k.o", 0},
		{"link-armv7k", "link-armv7k.dSYM/Contents/Resources/DWARF/link-armv7k", 0x1000},
	} {
		name := c.name
		m, err := Dump(mach32(name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var in bytes.Buffer
		type want struct {
			fn   string
			line int64
		}
		var wants []want
		for _, f := range m.Funcs {
			for _, l := range f.Lines {
				fmt.Fprintf(&in, "0x%x\n", c.base+l.Address)
				wants = append(wants, want{f.Name, l.Line})
			}
		}
		cmd := exec.Command(sym, "--obj="+mach32(c.obj), "--output-style=JSON")
		cmd.Stdin = &in
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		type frame struct {
			FunctionName string
			Line         int64
		}
		var got []struct{ Symbol []frame }
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			var r struct{ Symbol []frame }
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if len(got) != len(wants) {
			t.Fatalf("%s: llvm-symbolizer gave %d answers for %d addresses", name, len(got), len(wants))
		}
		bad := 0
		for i, w := range wants {
			// The line table's line is the innermost frame's; the FUNC
			// is the outermost.
			fr := got[i].Symbol
			if len(fr) == 0 || fr[len(fr)-1].FunctionName != w.fn || fr[0].Line != w.line {
				if bad++; bad <= 10 {
					t.Errorf("%s: record %d: %s line %d, llvm-symbolizer %+v", name, i, w.fn, w.line, fr)
				}
			}
		}
		t.Logf("%s: %d line records, %d differ from llvm-symbolizer", name, len(wants), bad)
	}
}

// TestMach32Breakpad compares with Breakpad's dump_syms_mac on the same
// files (testdata/mach32/breakpad, made by make.sh): the MODULE line
// (armv7, armv7k where Breakpad built off macOS writes arm), and each PUBLIC of
// Breakpad's a PUBLIC or a FUNC of the same name at the same address of
// ours (Breakpad reads no DWARF from an object: docs/dump_syms.md). Then
// the i386 object with its segment renamed __TEXT, where Breakpad reads
// __eh_frame: its STACK CFI records are ours with $esp and $ebp swapped
// (Breakpad names Darwin's i386 __eh_frame registers by the System V
// numbers).
func TestMach32Breakpad(t *testing.T) {
	read := func(p string) []string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	ours := func(p string, opts Options) []string {
		m, err := Dump(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		m.Write(&out)
		return strings.Split(strings.TrimSpace(out.String()), "\n")
	}
	for _, c := range []struct{ sym, file, arch string }{
		{"prog-i386.o.sym", "prog-i386.o", ""},
		{"prog-i386-fl.o.sym", "prog-i386-fl.o", ""},
		{"prog-i386-ind.o.sym", "prog-i386-ind.o", ""},
		{"prog-armv7.o.sym", "prog-armv7.o", ""},
		{"prog-armv7k.o.sym", "prog-armv7k.o", ""},
		{"prog-fat.o.i386.sym", "prog-fat.o", "i386"},
	} {
		bp := read(mach32("breakpad/" + c.sym))
		got := ours(mach32(c.file), Options{Arch: c.arch})
		if want := strings.Replace(bp[0], "MODULE mac arm ", "MODULE mac "+m32arch(c.file, c.arch)+" ", 1); got[0] != want {
			t.Errorf("%s: %q, Breakpad's %q", c.sym, got[0], bp[0])
		}
		have := map[string]bool{}
		for _, l := range got {
			f := strings.Fields(l)
			switch {
			case len(f) >= 5 && f[0] == "FUNC":
				have[f[1]+" "+strings.Join(f[4:], " ")] = true
			case len(f) >= 4 && f[0] == "PUBLIC":
				have[f[1]+" "+strings.Join(f[3:], " ")] = true
			}
		}
		n := 0
		for _, l := range bp[1:] {
			f := strings.Fields(l)
			if len(f) < 4 || f[0] != "PUBLIC" {
				t.Errorf("%s: unexpected record %q", c.sym, l)
				continue
			}
			n++
			if !have[f[1]+" "+strings.Join(f[3:], " ")] {
				t.Errorf("%s: %q is neither FUNC nor PUBLIC of ours", c.sym, l)
			}
		}
		if n == 0 {
			t.Errorf("%s: no PUBLIC records", c.sym)
		}
	}

	b, err := os.ReadFile(mach32("prog-i386-fl.o"))
	if err != nil {
		t.Fatal(err)
	}
	copy(b[36:52], "__TEXT\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	p := filepath.Join(t.TempDir(), "prog-i386-fl.textseg.o")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	swap := strings.NewReplacer("$esp", "$ebp", "$ebp", "$esp")
	// norm writes a STACK CFI record's rules in name order.
	norm := func(l string) string {
		f := strings.Fields(l)
		head := 3
		if f[2] == "INIT" {
			head = 5
		}
		return strings.Join(f[:head], " ") + " " + formatRules(ruleMap(strings.Join(f[head:], " ")))
	}
	var want, got []string
	for _, l := range read(mach32("breakpad/prog-i386-fl.textseg.sym")) {
		if strings.HasPrefix(l, "STACK ") {
			want = append(want, norm(l))
		}
	}
	for _, l := range ours(p, Options{}) {
		if strings.HasPrefix(l, "STACK ") {
			got = append(got, norm(swap.Replace(l)))
		}
	}
	if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("STACK CFI, $esp and $ebp swapped:\n%s\nBreakpad's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMach32Linked compares our records of the linked 32-bit executables
// (mklink's, with dsymutil-22's dSYMs) with Breakpad's dump_syms_mac on
// the same files (testdata/mach32/breakpad): binary + dSYM (-d -g), the
// binary alone (FUNC from the stabs), a universal dSYM's i386 slice. Every
// record of Breakpad's is ours, but for its names of i386 __eh_frame
// registers ($esp and $ebp exchanged), the FUNC names it reads from the
// stabs (with their underscore) and armv7 and armv7k, which Breakpad off
// macOS calls arm; ours has INFO CODE_ID and the compact unwind rules in addition, one
// STACK CFI INIT per function whose entry has an encoding of its own.
func TestMach32Linked(t *testing.T) {
	read := func(p string) []string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	swap := strings.NewReplacer("$esp", "$ebp", "$ebp", "$esp")
	norm := func(l string, i386 bool) string {
		f := strings.Fields(l)
		switch {
		case len(f) > 2 && f[0] == "STACK" && f[1] == "CFI":
			if i386 {
				l = swap.Replace(l)
				f = strings.Fields(l)
			}
			head := 3
			if f[2] == "INIT" {
				head = 5
			}
			return strings.Join(f[:head], " ") + " " + formatRules(ruleMap(strings.Join(f[head:], " ")))
		case len(f) == 5 && f[0] == "FUNC" && strings.HasPrefix(f[4], "_"):
			return strings.Join(f[:4], " ") + " " + f[4][1:]
		case len(f) == 5 && f[0] == "MODULE" && strings.HasPrefix(f[2], "armv"):
			return "MODULE mac arm " + f[3] + " " + f[4] // Breakpad's name off macOS
		}
		return l
	}
	for _, c := range []struct {
		sym     string
		opts    Options
		path    string
		i386    bool
		compact int // functions with compact unwind rules
	}{
		{"link-i386.g.sym", Options{DSYM: mach32("link-i386.dSYM"), Options: dumpsyms.Options{Inlines: true}}, "link-i386", true, 3},
		{"link-i386-fp.g.sym", Options{DSYM: mach32("link-i386-fp.dSYM"), Options: dumpsyms.Options{Inlines: true}}, "link-i386-fp", true, 5},
		{"link-armv7.g.sym", Options{DSYM: mach32("link-armv7.dSYM"), Options: dumpsyms.Options{Inlines: true}}, "link-armv7", false, 0},
		{"link-armv7k.g.sym", Options{DSYM: mach32("link-armv7k.dSYM"), Options: dumpsyms.Options{Inlines: true}}, "link-armv7k", false, 3},
		{"link-armv7k.sym", Options{}, "link-armv7k", false, 3},
		{"link-i386.sym", Options{}, "link-i386", true, 3},
		{"link-i386-fp.sym", Options{}, "link-i386-fp", true, 5},
		{"link-armv7.sym", Options{}, "link-armv7", false, 0},
		{"link-fat.dSYM.i386.sym", Options{Arch: "i386", Options: dumpsyms.Options{Inlines: true}}, "link-fat.dSYM", true, 0},
		{"link-fat.arm.sym", Options{Arch: "arm"}, "link-fat", false, 0},
	} {
		p := mach32(c.path)
		if !strings.Contains(c.sym, "dSYM") && c.opts.DSYM == "" {
			// The binary alone, as Breakpad reads it: not beside its dSYM.
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			p = filepath.Join(t.TempDir(), c.path)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m, err := Dump(p, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.sym, err)
		}
		var out bytes.Buffer
		m.Write(&out)
		ours := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			ours[norm(l, false)] = true
		}
		bp := map[string]bool{}
		missing := 0
		for _, l := range read(mach32("breakpad/" + c.sym)) {
			if strings.HasPrefix(l, "Failed to find") || strings.HasPrefix(l, "Using ") { // its stderr
				continue
			}
			n := norm(l, c.i386)
			bp[n] = true
			if !ours[n] {
				if missing++; missing <= 5 {
					t.Errorf("%s: Breakpad's %q (%q) is not ours", c.sym, l, n)
				}
			}
		}
		extra := 0
		for l := range ours {
			if !bp[l] {
				switch {
				case strings.HasPrefix(l, "INFO CODE_ID "):
				case strings.HasPrefix(l, "STACK CFI INIT "):
					extra++
				default:
					t.Errorf("%s: extra record %q", c.sym, l)
				}
			}
		}
		if extra != c.compact {
			t.Errorf("%s: %d extra STACK CFI INIT records, want %d (the compact unwind entries)", c.sym, extra, c.compact)
		}
		t.Logf("%s: Breakpad's %d records, %d missing, %d extra STACK CFI INIT", c.sym, len(bp), missing, extra)
	}
}
