//go:build ignore

// trim keeps the records of a Breakpad .sym file that the signal-frame
// tests need: MODULE, INFO, FILE and INLINE_ORIGIN records, and the FUNC
// (with its line and INLINE records), PUBLIC and STACK records of the named
// functions, each function's range running to the next FUNC or PUBLIC. The
// FUNC or PUBLIC records of that next symbol are kept too (without their
// line, INLINE or STACK records), as the end of the range: without it a
// kept PUBLIC would name the code of every function dropped after it (a
// PUBLIC runs to the next PUBLIC, or to a FUNC starting after it), and a
// stale return address there would be taken for, say, _start + 0x111 (the
// walkers' entry-point rule then ends the walk). The end symbol, a PUBLIC
// for most of a static glibc, runs on over the dropped code after it in
// turn: what matters for stack scans is that every address of the text
// stays in some symbol's range, as with the whole file (scans accept the
// same words); only the names of stale words after the end symbol differ.
// Writing the ends as FUNCs of their own extent instead leaves that code
// unnamed, which scans reject where the whole file would name it.
//
//	go run trim.go FILE.sym NAME... >OUT.sym
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

type sym struct {
	addr uint64
	name string
}

// fields returns a FUNC or PUBLIC record's address and name.
func fields(l string) (uint64, string, bool) {
	f := strings.Fields(l)
	if len(f) > 1 && f[1] == "m" {
		f = append(f[:1], f[2:]...)
	}
	n := 4 // FUNC addr size params name
	if f[0] == "PUBLIC" {
		n = 3
	}
	if len(f) <= n {
		return 0, "", false
	}
	a, err := strconv.ParseUint(f[1], 16, 64)
	return a, strings.Join(f[n:], " "), err == nil
}

// aliases are the names glibc gives the functions a truth names otherwise.
var aliases = map[string]string{"gsignal": "raise", "__clone3": "clone3", "__clone": "clone", "___pthread_join": "pthread_join"}

// norm is a name without its parameter list (the last balanced
// parenthesis group of a name ending in ")" or ") const"), by its alias's
// name.
func norm(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ")") || strings.HasSuffix(s, ") const") {
		d := 0
		for i := len(s) - 1; i >= 0; i-- {
			switch s[i] {
			case ')':
				d++
			case '(':
				d--
			}
			if s[i] == '(' && d == 0 {
				s = s[:i]
				break
			}
		}
	}
	if a, ok := aliases[s]; ok {
		return a
	}
	return s
}

// truthNames returns the names of the FUNC and PUBLIC records of lines
// that the truth file names.
func truthNames(path string, lines []string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	want := map[string]bool{}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if _, fn, ok := strings.Cut(l, "\t"); ok {
			want[norm(fn)] = true
		}
	}
	names := map[string]bool{}
	for _, l := range lines {
		if strings.HasPrefix(l, "FUNC ") || strings.HasPrefix(l, "PUBLIC ") {
			if _, n, ok := fields(l); ok && want[norm(n)] {
				names[n] = true
			}
		}
	}
	return names
}

func main() {
	args := os.Args[1:]
	truth := ""
	if len(args) > 1 && args[0] == "-truth" {
		truth, args = args[1], args[2:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: trim FILE.sym NAME... | trim -truth TRUTH.txt FILE.sym")
		os.Exit(2)
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	names := map[string]bool{}
	for _, n := range args[1:] {
		names[n] = true
	}
	if truth != "" {
		names = truthNames(truth, lines)
	}
	var syms []sym
	for _, l := range lines {
		if strings.HasPrefix(l, "FUNC ") || strings.HasPrefix(l, "PUBLIC ") {
			if a, n, ok := fields(l); ok {
				syms = append(syms, sym{a, n})
			}
		}
	}
	slices.SortFunc(syms, func(x, y sym) int {
		if x.addr < y.addr {
			return -1
		} else if x.addr > y.addr {
			return 1
		}
		return 0
	})
	var ranges [][2]uint64
	bounds := map[uint64]bool{} // the addresses of the boundary symbols
	for i, s := range syms {
		if names[s.name] {
			end := s.addr + 1<<16
			for j := i + 1; j < len(syms); j++ {
				if syms[j].addr > s.addr {
					end = syms[j].addr
					bounds[end] = true
					break
				}
			}
			ranges = append(ranges, [2]uint64{s.addr, end})
		}
	}
	kept := func(hex string) bool {
		a, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			return false
		}
		for _, r := range ranges {
			if a >= r[0] && a < r[1] {
				return true
			}
		}
		return false
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	keep := false
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "MODULE" || f[0] == "INFO" || f[0] == "FILE" || f[0] == "INLINE_ORIGIN":
			fmt.Fprintln(w, l)
			continue
		case f[0] == "FUNC" || f[0] == "PUBLIC":
			a := f[1]
			if a == "m" {
				a = f[2]
			}
			keep = kept(a) && f[0] == "FUNC"
			if kept(a) {
				fmt.Fprintln(w, l)
			} else if n, err := strconv.ParseUint(a, 16, 64); err == nil && bounds[n] {
				fmt.Fprintln(w, l)
			}
			continue
		case f[0] == "STACK" && len(f) > 3 && f[2] == "INIT":
			keep = kept(f[3])
		case f[0] == "STACK" && len(f) > 2 && f[1] == "WIN":
			keep = len(f) > 3 && kept(f[3])
		}
		if keep {
			fmt.Fprintln(w, l)
		}
	}
}
