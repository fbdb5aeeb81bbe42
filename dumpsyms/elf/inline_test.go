package elf

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// frame is one frame of llvm-symbolizer's answer: function name and
// file:line, innermost first.
type llvmFrame struct {
	name, file string
	line       int64
}

// readAddr2line parses NAME.addr2line.txt: blocks of an address line then
// pairs of function and file:line:column lines.
func readAddr2line(t *testing.T, path string) map[uint64][]llvmFrame {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64][]llvmFrame{}
	for _, block := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if len(lines) < 3 || len(lines)%2 != 1 {
			t.Fatalf("%s: malformed block %q", path, block)
		}
		addr, err := strconv.ParseUint(strings.TrimPrefix(lines[0], "0x"), 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var frames []llvmFrame
		for i := 1; i+1 < len(lines); i += 2 {
			loc := strings.Split(lines[i+1], ":")
			if len(loc) < 3 {
				t.Fatalf("%s: malformed location %q", path, lines[i+1])
			}
			ln, _ := strconv.ParseInt(loc[len(loc)-2], 10, 64)
			frames = append(frames, llvmFrame{name: lines[i], file: strings.Join(loc[:len(loc)-2], ":"), line: ln})
		}
		out[addr] = frames
	}
	return out
}

// baseName is a function name without its parameters and qualifiers:
// llvm-symbolizer prints DW_AT_name where Breakpad composes a qualified name.
func baseName(n string) string {
	if i := strings.IndexByte(n, '('); i > 0 {
		n = n[:i]
	}
	if i := strings.LastIndex(n, "::"); i >= 0 {
		n = n[i+2:]
	}
	return n
}

// lookup returns the function, line and inline chain (outermost first) our
// records give for addr.
func lookup(s *dumpsyms.Model, addr uint64) (fn *dumpsyms.Function, line *lineAt, chain []inlineAt) {
	for i := range s.Funcs {
		f := &s.Funcs[i]
		for _, r := range f.Ranges {
			if addr-r.Address < r.Size {
				fn = f
			}
		}
	}
	if fn == nil {
		return nil, nil, nil
	}
	for _, l := range fn.Lines {
		if addr-l.Address < l.Size {
			line = &lineAt{file: s.Files[l.File].Name, line: l.Line}
		}
	}
	byDepth := map[uint32]inlineAt{}
	for _, in := range fn.Inlines {
		for _, r := range in.Ranges {
			if addr-r.Address < r.Size {
				file := ""
				if in.CallFile >= 0 {
					file = s.Files[in.CallFile].Name
				}
				byDepth[in.Depth] = inlineAt{name: s.Origins[in.Origin].Name, callFile: file, callLine: int64(in.CallLine)}
			}
		}
	}
	for d := uint32(0); ; d++ {
		in, ok := byDepth[d]
		if !ok {
			break
		}
		chain = append(chain, in)
	}
	return fn, line, chain
}

type lineAt struct {
	file string
	line int64
}

type inlineAt struct {
	name     string
	callFile string
	callLine int64
}

// TestInlinesAgainstLLVM checks our FUNC, line and INLINE records against
// llvm-symbolizer's answers (inlined frames included) at each function's
// first byte and a byte in its middle, for every target's full build and
// its split build (.dwp for x64-dw4, .dwo files for the DWARF 5 targets).
func TestInlinesAgainstLLVM(t *testing.T) {
	root := corpus.Dir(t)
	checked := 0
	for _, target := range []string{"x64-dw4", "x64-dw5", "x86", "arm64"} {
		for _, variant := range []string{"full", "split"} {
			for _, file := range []string{"inline_chain", "deep_chain", "libshapes.so"} {
				name := fmt.Sprintf("elf-%s-%s-%s", target, variant, file)
				t.Run(name, func(t *testing.T) {
					truth := readAddr2line(t, corpus.File(t, "breakpad/expected-dump_syms/"+name+".addr2line.txt"))
					s, err := Dump(filepath.Join(root, "elf", target, variant, file), dumpsyms.Options{Inlines: true})
					if err != nil {
						t.Fatal(err)
					}
					for addr, frames := range truth {
						checkFrames(t, s, addr, frames)
						checked++
					}
				})
			}
		}
	}
	t.Logf("%d addresses checked", checked)
}

func checkFrames(t *testing.T, s *dumpsyms.Model, addr uint64, frames []llvmFrame) {
	t.Helper()
	fn, line, chain := lookup(s, addr)
	if fn == nil {
		t.Errorf("%#x: no FUNC (llvm: %s)", addr, frames[len(frames)-1].name)
		return
	}
	n := len(frames) - 1
	if baseName(fn.Name) != baseName(frames[n].name) {
		t.Errorf("%#x: FUNC %q, llvm %q", addr, fn.Name, frames[n].name)
	}
	if len(chain) != n {
		t.Errorf("%#x: %d inlined frames, llvm %d (%v)", addr, len(chain), n, frames)
		return
	}
	if frames[0].line != 0 {
		if line == nil || line.line != frames[0].line || line.file != frames[0].file {
			t.Errorf("%#x: line %+v, llvm %s:%d", addr, line, frames[0].file, frames[0].line)
		}
	}
	for k := 1; k <= n; k++ {
		in := chain[n-k]
		if baseName(in.name) != baseName(frames[k-1].name) {
			t.Errorf("%#x: inline depth %d is %q, llvm %q", addr, n-k, in.name, frames[k-1].name)
		}
		if in.callLine != frames[k].line || in.callFile != frames[k].file {
			t.Errorf("%#x: inline depth %d called from %s:%d, llvm %s:%d", addr, n-k, in.callFile, in.callLine, frames[k].file, frames[k].line)
		}
	}
}
