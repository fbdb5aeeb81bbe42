package gsym_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	dself "github.com/gobreakpad/gobreakpad/dumpsyms/elf"
	dumpgsym "github.com/gobreakpad/gobreakpad/dumpsyms/gsym"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/ianlancetaylor/demangle"
)

// gsymTools are the llvm-gsymutil versions the writer is checked against.
var gsymTools = []string{"llvm-gsymutil-22", "llvm-gsymutil-14"}

// TestGSYMWriterAgreesWithLLVM: for each corpus ELF (every target, and the
// compressed, split and dwz variants), our GSYM file is dumped by each
// installed llvm-gsymutil without error, and its lookups of every address
// of every function equal that tool's lookups in its own conversion of the
// same program: same frames, functions, offsets and files. Two differences
// come from the model, which is dump_syms's reading of the DWARF, not from
// the writer, and are allowed: names are demangled (LLVM keeps top-level
// functions' linkage names), and where the DWARF line table has several
// rows at one address dump_syms takes the last, LLVM the first; lines that
// differ (the innermost frame's file and line, which are the row's) are
// counted and logged. LLVM 14 also picks other rows than LLVM 22 at a few
// inline_chain addresses.
func TestGSYMWriterAgreesWithLLVM(t *testing.T) {
	root := corpus.Dir(t)
	var tools []string
	for _, tool := range gsymTools {
		if _, err := exec.LookPath(tool); err == nil {
			tools = append(tools, tool)
		}
	}
	if len(tools) == 0 {
		t.Skipf("none of %v installed (Debian packages llvm-22, llvm-14)", gsymTools)
	}
	tmp := t.TempDir()
	addrsOf := map[string][]byte{}
	lookups, _ := filepath.Glob(filepath.Join(root, "gsym", "*.lookups.txt"))
	for _, lp := range lookups {
		data, err := os.ReadFile(lp)
		if err != nil {
			t.Fatal(err)
		}
		var addrs bytes.Buffer
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "0x") {
				addrs.WriteString(strings.SplitN(line, ":", 2)[0] + "\n")
			}
		}
		addrsOf[strings.TrimSuffix(filepath.Base(lp), ".lookups.txt")] = addrs.Bytes()
	}
	run := func(stdin []byte, tool string, args ...string) (string, error) {
		cmd := exec.Command(tool, args...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	lookup := func(tool, file string, addrs []byte) string {
		in := strings.ReplaceAll(string(addrs), "\n", " "+file+"\n")
		out, err := run([]byte(in), tool, "--addresses-from-stdin")
		if err != nil {
			t.Fatalf("%s --addresses-from-stdin %s: %v\n%s", tool, file, err, out)
		}
		return strings.ReplaceAll(out, file, "FILE")
	}
	checked, files, same, lineDiffs, lineDiffs22 := 0, 0, 0, 0, 0
	targets := []string{"x64-dw4", "x64-dw5", "x86", "arm64"}
	if raceBuild {
		targets = targets[1:2] // a sample: DWARF reading under -race is slow
	}
	for _, target := range targets {
		for _, prog := range []string{"deep_chain", "inline_chain", "libshapes.so"} {
			addrs := addrsOf[target+"-"+prog]
			full := filepath.Join(root, "elf", target, "full", prog)
			if addrs == nil {
				t.Errorf("%s-%s: no lookups in the corpus", target, prog)
				continue
			}
			theirs := map[string]string{}
			for _, tool := range tools {
				out := filepath.Join(tmp, tool+"-"+target+"-"+prog+".gsym")
				if msg, err := run(nil, tool, "--quiet", "--convert", full, "-o", out); err != nil {
					t.Fatalf("%s --convert %s: %v\n%s", tool, full, err, msg)
				}
				theirs[tool] = lookup(tool, out, addrs)
			}
			seen := map[[32]byte]bool{}
			for _, variant := range []string{"full", "zlib", "zstd", "split", "dwz", "dwz-multi", "debuglink"} {
				in := filepath.Join(root, "elf", target, variant, prog)
				if _, err := os.Stat(in); err != nil {
					continue
				}
				m, err := dself.Dump(in, dumpsyms.Options{Inlines: true}) // as symconv reads an ELF
				if err != nil {
					t.Errorf("%s: %v", in, err)
					continue
				}
				var buf bytes.Buffer
				if err := dumpgsym.Write(&buf, m, nil); err != nil {
					t.Fatalf("%s: %v", in, err)
				}
				files++
				sum := sha256.Sum256(buf.Bytes())
				if seen[sum] {
					same++
					continue // the tools already checked these bytes
				}
				seen[sum] = true
				ours := filepath.Join(tmp, "ours-"+target+"-"+variant+"-"+prog+".gsym")
				if err := os.WriteFile(ours, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, tool := range tools {
					if msg, err := run(nil, tool, ours); err != nil || strings.Contains(msg, "error") {
						t.Errorf("%s %s (from %s): %v\n%.2000s", tool, ours, in, err, msg)
					}
					n, lines, err := compareLookups(lookup(tool, ours, addrs), theirs[tool])
					if err != nil {
						t.Errorf("%s: lookups of our GSYM of %s differ from its own conversion's: %v", tool, in, err)
					}
					checked += n
					lineDiffs += lines
					if tool == "llvm-gsymutil-22" {
						lineDiffs22 += lines
					}
				}
			}
		}
	}
	t.Logf("tools %v: %d GSYM files written (%d identical to another variant's), %d lookups compared with the tools' own conversions': %d with another line row (of those, for llvm-gsymutil-22: %d)", tools, files, same, checked, lineDiffs, lineDiffs22)
}

// llvmFrame is one line of an llvm-gsymutil lookup result.
type llvmFrame struct {
	name, offset, file, line string
}

func parseLLVMFrame(s string) llvmFrame {
	s = strings.TrimSuffix(strings.TrimSpace(s), " [inlined]")
	var f llvmFrame
	if i := strings.LastIndex(s, " @ "); i >= 0 {
		loc := s[i+3:]
		s = s[:i]
		if j := strings.LastIndexByte(loc, ':'); j >= 0 {
			f.file, f.line = loc[:j], loc[j+1:]
		}
	}
	if i := strings.LastIndex(s, " + "); i >= 0 && strings.Trim(s[i+3:], "0123456789") == "" {
		s, f.offset = s[:i], s[i+3:]
	}
	f.name = demangle.Filter(s)
	return f
}

// compareLookups compares two llvm-gsymutil outputs address by address. It
// returns how many results it compared and how many differ only in the
// line row (the innermost frame's file and line), and an error for any
// other difference.
func compareLookups(got, want string) (n, lines int, err error) {
	g, w := strings.Split(strings.TrimSpace(got), "\n\n"), strings.Split(strings.TrimSpace(want), "\n\n")
	if len(g) != len(w) {
		return 0, 0, fmt.Errorf("%d results, want %d", len(g), len(w))
	}
	for i := range g {
		gl, wl := strings.Split(g[i], "\n"), strings.Split(w[i], "\n")
		ga, _, _ := strings.Cut(gl[0], ": ")
		wa, _, _ := strings.Cut(wl[0], ": ")
		if ga != wa || len(gl) != len(wl) {
			return n, lines, fmt.Errorf("got\n%s\nwant\n%s", g[i], w[i])
		}
		lineOnly := false
		for j := range gl {
			gs, ws := gl[j], wl[j]
			if j == 0 {
				_, gs, _ = strings.Cut(gs, ": ")
				_, ws, _ = strings.Cut(ws, ": ")
			}
			gf, wf := parseLLVMFrame(gs), parseLLVMFrame(ws)
			if j == 0 && (gf.line != wf.line || gf.file != wf.file) {
				// The innermost frame's file and line are the line row's.
				lineOnly = true
				gf.line, gf.file = wf.line, wf.file
			}
			if gf != wf {
				return n, lines, fmt.Errorf("got\n%s\nwant\n%s", g[i], w[i])
			}
		}
		if lineOnly {
			lines++
		}
		n++
	}
	return n, lines, nil
}
