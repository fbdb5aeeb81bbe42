package symfile

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

// This test checks lookups against Breakpad's minidump_stackwalk output for
// every case in the corpus's cases.tsv: for each frame Breakpad printed with
// an instruction pointer, the function, source file, line and offset (and the
// inlined frames before it) must come out of Table.Lookup the same way. The
// modules' bases and debug identifiers come from minidump_dump's output.

type dumpModule struct {
	base, size                   uint64
	codeFile, debugFile, debugID string
}

var (
	reBase    = regexp.MustCompile(`^\s+base_of_image\s+= 0x([0-9a-f]+)`)
	reSize    = regexp.MustCompile(`^\s+size_of_image\s+= 0x([0-9a-f]+)`)
	reCode    = regexp.MustCompile(`^\s+\(code_file\)\s+= "(.*)"`)
	reArch    = regexp.MustCompile(`^\s+processor_architecture\s+= (0x[0-9a-f]+)`)
	reDbgFile = regexp.MustCompile(`^\s+\(debug_file\)\s+= "(.*)"`)
	reDbgID   = regexp.MustCompile(`^\s+\(debug_identifier\)\s+= "(.*)"`)
	reFrame   = regexp.MustCompile(`^ ?(\d+)  (.*)$`)
	rePC      = regexp.MustCompile(`\b(rip|eip|pc) = 0x([0-9a-f]+)`)
	reSrc     = regexp.MustCompile(`^(.+?)!(.*) \[(.*) : (\d+) \+ 0x([0-9a-f]+)\]$`)
	reFunc    = regexp.MustCompile(`^(.+?)!(.*) \+ 0x([0-9a-f]+)$`)
	reModOff  = regexp.MustCompile(`^(.+?) \+ 0x([0-9a-f]+)$`)
)

// readDump returns the modules listed in minidump_dump output and whether the
// dump is of an arm64 process.
func readDump(t *testing.T, path string) (mods []dumpModule, arm64 bool) {
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no minidump_dump output: %v", err)
	}
	defer f.Close()
	inModule := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if s := reArch.FindStringSubmatch(l); s != nil {
			arm64 = s[1] == "0x8003" || s[1] == "0xc"
		}
		if strings.HasPrefix(l, "MDRawModule") {
			mods = append(mods, dumpModule{})
			inModule = true
			continue
		}
		if !inModule || len(mods) == 0 {
			continue
		}
		if strings.HasPrefix(l, "MD") && !strings.HasPrefix(l, "MDRawModule") {
			inModule = false
			continue
		}
		m := &mods[len(mods)-1]
		if s := reBase.FindStringSubmatch(l); s != nil {
			m.base, _ = strconv.ParseUint(s[1], 16, 64)
		} else if s := reSize.FindStringSubmatch(l); s != nil {
			m.size, _ = strconv.ParseUint(s[1], 16, 64)
		} else if s := reCode.FindStringSubmatch(l); s != nil {
			m.codeFile = s[1]
		} else if s := reDbgFile.FindStringSubmatch(l); s != nil {
			m.debugFile = s[1]
		} else if s := reDbgID.FindStringSubmatch(l); s != nil {
			m.debugID = s[1]
		}
	}
	return mods, arm64
}

type printedFrame struct {
	text  string
	pc    uint64
	hasPC bool
	first bool // frame 0 of a thread: looked up at the pc itself
}

// readFrames returns the frames of every thread, grouping each real frame
// with the inlined frames printed before it.
func readFrames(t *testing.T, path string) [][]printedFrame {
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no stackwalk output: %v", err)
	}
	defer f.Close()
	var groups [][]printedFrame
	var cur []printedFrame
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "Loaded modules") {
			break
		}
		if strings.HasPrefix(l, "Thread ") {
			cur = nil
			continue
		}
		if s := reFrame.FindStringSubmatch(l); s != nil {
			cur = append(cur, printedFrame{text: s[2], first: s[1] == "0"})
			continue
		}
		if len(cur) == 0 {
			continue
		}
		if s := rePC.FindStringSubmatch(l); s != nil {
			last := &cur[len(cur)-1]
			last.pc, _ = strconv.ParseUint(s[2], 16, 64)
			last.hasPC = true
			first := cur[0].first
			groups = append(groups, cur)
			cur = nil
			_ = first
		}
	}
	return groups
}

func TestConformanceWithBreakpad(t *testing.T) {
	root := corpus.Dir(t)
	cases, err := os.ReadFile(filepath.Join(root, "cases.tsv"))
	if err != nil {
		t.Skip("no cases.tsv")
	}
	var checked, agreed, skipped int
	for _, line := range strings.Split(strings.TrimSpace(string(cases)), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) < 4 {
			continue
		}
		name, mOut, symRoots := cols[0], cols[2], strings.Fields(cols[3])
		human := strings.Replace(mOut, "ref-m.txt", "ref.txt", 1)
		human = strings.Replace(human, ".m.txt", ".txt", 1)
		dumpOut := filepath.Join(filepath.Dir(mOut), "dump.txt")
		if strings.HasPrefix(mOut, "breakpad/expected/") {
			dumpOut = strings.Replace(mOut, ".m.txt", ".dump.txt", 1)
		}
		if _, err := os.Stat(filepath.Join(root, human)); err != nil {
			skipped++
			continue
		}
		if _, err := os.Stat(filepath.Join(root, dumpOut)); err != nil {
			skipped++
			continue
		}
		for i := range symRoots {
			symRoots[i] = filepath.Join(root, symRoots[i])
		}
		t.Run(name, func(t *testing.T) {
			mods, arm64 := readDump(t, filepath.Join(root, dumpOut))
			store := NewStore(symRoots...)
			tables := map[int]*Table{}
			defer func() {
				for _, tab := range tables {
					if tab != nil {
						tab.Close()
					}
				}
			}()
			for _, g := range readFrames(t, filepath.Join(root, human)) {
				real := g[len(g)-1]
				mi := -1
				for i, m := range mods {
					if real.pc >= m.base && real.pc-m.base < m.size {
						mi = i
						break
					}
				}
				if mi < 0 {
					continue
				}
				tab, ok := tables[mi]
				if !ok {
					var st Status
					tab, st, _ = store.Load(mods[mi].debugFile, mods[mi].debugID)
					if st != Found {
						if tab != nil {
							tab.Close()
						}
						tab = nil
					}
					tables[mi] = tab
				}
				if tab == nil {
					continue
				}
				// Breakpad looks a caller frame up at an address inside the
				// call instruction: one byte before the return address, or
				// the instruction before it on arm64, where it also prints
				// offsets from there.
				rel := real.pc - mods[mi].base
				addr := rel
				if !g[0].first {
					if arm64 {
						rel -= 4
						addr = rel
					} else {
						addr--
					}
				}
				module := mods[mi].codeFile
				if i := strings.LastIndexAny(module, `/\`); i >= 0 {
					module = module[i+1:]
				}
				if !strings.HasPrefix(real.text, module) {
					continue // Breakpad placed the address in another module
				}
				want := make([]string, len(g))
				for i, f := range g {
					want[i] = f.text
				}
				got := formatFrames(tab, module, addr, rel)
				checked++
				if strings.Join(got, "\n") == strings.Join(want, "\n") {
					agreed++
					continue
				}
				t.Errorf("module %s address %#x:\n got:\n  %s\nwant:\n  %s", mods[mi].debugFile, addr, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
	t.Logf("%d of %d frames agree with Breakpad (%d cases without outputs skipped)", agreed, checked, skipped)
	if checked == 0 {
		t.Error("no frames checked")
	}
}

// formatFrames prints the frames for addr as Breakpad's human output does.
// rel is the address Breakpad prints offsets of real frames from; inlined
// frames use addr.
func formatFrames(tab *Table, module string, addr, rel uint64) []string {
	sym, ok := tab.Lookup(addr)
	if !ok {
		return []string{module + " + 0x" + strconv.FormatUint(rel, 16)}
	}
	var out []string
	for _, f := range sym.Frames() {
		at := rel
		if f.Inline {
			at = addr
		}
		file := f.File
		if i := strings.LastIndexAny(file, `/\`); i >= 0 {
			file = file[i+1:]
		}
		if file != "" {
			out = append(out, module+"!"+f.Name+" ["+file+" : "+strconv.FormatInt(f.Line, 10)+" + 0x"+strconv.FormatUint(at-sym.LineAddress, 16)+"]")
		} else {
			out = append(out, module+"!"+f.Name+" + 0x"+strconv.FormatUint(at-f.Address, 16))
		}
	}
	return out
}
