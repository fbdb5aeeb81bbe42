package macho

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/internal/testkit/symdiff"
)

// breakpadCase is one of the corpus' outputs of Breakpad's dump_syms_mac
// (macos/README.md) and the same dump made here.
type breakpadCase struct {
	want   string // under macos/
	input  string // under macos/
	alone  bool   // copy the input into a folder of its own (no dSYM found beside it)
	arch   string
	dsym   string // under macos/
	inline bool
	noCFI  bool
	// stabsNames: Breakpad names the FUNC records it reads from the debug
	// map's stabs with the symbol's underscore ("_main"); ours are the C
	// names, as its PUBLIC records and DWARF FUNC records have them
	// (docs/dump_syms.md, "Mach-O").
	stabsNames bool
	// arm64e: Breakpad built off macOS names an arm64e slice arm64.
	arm64e bool
}

var breakpadCases = []breakpadCase{
	{want: "breakpad/hello-x86_64.dSYM.d.sym", input: "built/hello-x86_64.dSYM", inline: true},
	{want: "breakpad/hello-arm64.dSYM.d.sym", input: "built/hello-arm64.dSYM", inline: true},
	{want: "breakpad/hello-x86_64.bin.sym", input: "built/hello-x86_64", alone: true, stabsNames: true},
	{want: "breakpad/hello-x86_64.bin+dsym.d.sym", input: "built/hello-x86_64", dsym: "built/hello-x86_64.dSYM", inline: true},
	{want: "breakpad/hello-x86_64.stripped.sym", input: "built/hello-x86_64.stripped"},
	{want: "breakpad/hello-fat.noarch.sym", input: "built/hello-fat", alone: true, stabsNames: true},
	{want: "breakpad/hello-fat.x86_64.sym", input: "built/hello-fat", alone: true, arch: "x86_64", stabsNames: true},
	{want: "breakpad/hello-fat.dSYM.arm64.d.sym", input: "built/hello-fat.dSYM", arch: "arm64", inline: true},
	{want: "breakpad/hello-fat.arm64e-request.sym", input: "built/hello-fat", alone: true, arch: "arm64e", stabsNames: true},
	{want: "breakpad/hello-arm64e.sym", input: "built/hello-arm64e", alone: true, stabsNames: true, arm64e: true},
	{want: "breakpad/hello-fat-x86_64-arm64e.arm64e.sym", input: "built/hello-fat-x86_64-arm64e", alone: true, arch: "arm64e", stabsNames: true, arm64e: true},
	{want: "breakpad/libdemo-x86_64.dylib.dSYM.d.sym", input: "built/libdemo-x86_64.dylib.dSYM", inline: true},
	{want: "breakpad/libdemo-fat.arm64.sym", input: "built/libdemo-fat.dylib", arch: "arm64", dsym: "built/libdemo-fat.dylib.dSYM"},
	{want: "breakpad/hello-x86_64.dSYM.nocfi.sym", input: "built/hello-x86_64.dSYM", noCFI: true},
	{want: "breakpad/libframeless-arm64.bin+dsym.sym", input: "built/libframeless-arm64.dylib", dsym: "built/libframeless-arm64.dylib.dSYM"},
	{want: "breakpad/libframeless-x86_64.bin+dsym.sym", input: "built/libframeless-x86_64.dylib", dsym: "built/libframeless-x86_64.dylib.dSYM"},
	{want: "symbolic/breakpad-out/crash.split.sym", input: "symbolic/crash", dsym: "symbolic/crash.dSYM/Contents/Resources/DWARF/crash"},
	{want: "symbolic/breakpad-out/crash.split.inlines.sym", input: "symbolic/crash", dsym: "symbolic/crash.dSYM/Contents/Resources/DWARF/crash", inline: true},
	{want: "symbolic/breakpad-out/Example.x86_64.sym", input: "symbolic/Example.framework.dSYM", arch: "x86_64"},
	{want: "symbolic/breakpad-out/Example.arm64.sym", input: "symbolic/Example.framework.dSYM", arch: "arm64"},
	{want: "symbolic/breakpad-out/overlapping_funcs.sym", input: "symbolic/overlapping_funcs.dSYM"},
	{want: "symbolic/breakpad-out/Electron.sym", input: "symbolic/electron/Electron/CB63147AC9DC308B8CA1EE92A5042E8E0/Electron.app.dSYM"},
}

// TestBreakpadCorpus holds Dump against Breakpad's dump_syms_mac on every
// corpus input, as record sets: equal but for the documented differences
// (docs/dump_syms.md, "Mach-O"), which each case names.
func TestBreakpadCorpus(t *testing.T) {
	root := filepath.Join(corpus.Dir(t), "macos")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("corpus has no macos folder: %v", err)
	}
	for _, c := range breakpadCases {
		t.Run(strings.ReplaceAll(c.want, "/", "_"), func(t *testing.T) {
			in := filepath.Join(root, c.input)
			if c.alone {
				in = filepath.Join(t.TempDir(), filepath.Base(c.input))
				b, err := os.ReadFile(filepath.Join(root, c.input))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(in, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			opts := Options{Options: dumpsyms.Options{Inlines: c.inline, NoCFI: c.noCFI}, Arch: c.arch}
			if c.dsym != "" {
				opts.DSYM = filepath.Join(root, c.dsym)
			}
			m, err := Dump(in, opts)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := m.Write(&b); err != nil {
				t.Fatal(err)
			}
			wantText, err := os.ReadFile(filepath.Join(root, c.want))
			if err != nil {
				t.Fatal(err)
			}
			want := symdiff.Parse(string(wantText), func(kind string, f []string, rec string) string {
				switch {
				case kind == "FUNC" && c.stabsNames && len(f) == 5:
					return strings.Replace(rec, " _", " ", 1)
				case kind == "MODULE" && c.arm64e:
					return strings.Replace(rec, " arm64 ", " arm64e ", 1)
				}
				return rec
			})
			got := symdiff.Parse(b.String(), func(kind string, f []string, rec string) string {
				if kind == "INFO" {
					return "" // Breakpad writes no INFO CODE_ID
				}
				return rec
			})
			missing, extra := symdiff.Diff(want, got)
			nDemangler := len(missing)
			missing, extra = demanglerDiffs(missing, extra)
			nDemangler -= len(missing)
			for _, r := range missing {
				t.Errorf("missing: %.200s", r)
			}
			for _, r := range extra {
				if !strings.HasPrefix(r, "STACK CFI") { // compact unwind (TestCompactUnwind)
					t.Errorf("extra: %.200s", r)
				}
			}
			n := 0
			for _, k := range want {
				n += k
			}
			t.Logf("%d records of Breakpad's; missing %d, extra %d STACK CFI (compact unwind); %d records differ only by the demangler", n, len(missing), len(extra), nDemangler)
		})
	}
}

// demanglerDiffs drops the INLINE_ORIGIN (and INLINE) records that differ
// only by the demangler's rendering of a few libc++ template names
// (docs/dump_syms.md: github.com/ianlancetaylor/demangle substitutes
// template parameters of enable_if<...> in the return type differently
// from libc++abi's __cxa_demangle, which is right).
func demanglerDiffs(missing, extra []string) ([]string, []string) {
	isEnableIf := func(r string) bool { return strings.Contains(r, "std::__1::enable_if<") }
	var m, e []string
	nm, ne := 0, 0
	for _, r := range missing {
		if isEnableIf(r) {
			nm++
			continue
		}
		m = append(m, r)
	}
	for _, r := range extra {
		if isEnableIf(r) {
			ne++
			continue
		}
		e = append(e, r)
	}
	if nm != ne {
		return missing, extra
	}
	return m, e
}
