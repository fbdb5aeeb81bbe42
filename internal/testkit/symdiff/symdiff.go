// Package symdiff reads Breakpad .sym texts as multisets of records and
// tells their differences, as ../shared/tools/symdiff compares them: for
// the tests that hold dump_syms' output against the corpus' references.
package symdiff

import (
	"fmt"
	"slices"
	"strings"
)

// Records is a .sym text as a multiset of records: line and INLINE records
// name their file and origin instead of numbering them, and FILE and
// INLINE_ORIGIN records are dropped.
type Records map[string]int

// Parse reads text, with "\n" or "\r\n" line ends. keep, when not nil,
// rewrites or drops (by returning "") each record: kind is the record's
// keyword ("LINE" for line records), f its space-separated fields and rec
// the record as Records holds it.
func Parse(text string, keep func(kind string, f []string, rec string) string) Records {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	files, origins := map[string]string{}, map[string]string{}
	for _, l := range lines {
		p := strings.SplitN(l, " ", 3)
		if len(p) == 3 && p[0] == "FILE" {
			files[p[1]] = p[2]
		} else if len(p) == 3 && p[0] == "INLINE_ORIGIN" {
			origins[p[1]] = p[2]
		}
	}
	out := Records{}
	for _, l := range lines {
		if l == "" {
			continue
		}
		f := strings.Split(l, " ")
		kind, rec := f[0], l
		switch f[0] {
		case "FILE", "INLINE_ORIGIN":
			continue
		case "INLINE":
			if len(f) < 7 {
				continue
			}
			rec = fmt.Sprintf("INLINE %s %s %s %s %s", f[1], f[2], files[f[3]], origins[f[4]], strings.Join(f[5:], " "))
		case "MODULE", "INFO", "FUNC", "PUBLIC", "STACK":
		default:
			kind = "LINE"
			if len(f) == 4 {
				rec = fmt.Sprintf("%s %s %s %s", f[0], f[1], f[2], files[f[3]])
			}
		}
		if keep != nil {
			rec = keep(kind, f, rec)
		}
		if rec != "" {
			out[rec]++
		}
	}
	return out
}

// Diff returns the records of want missing from got and those of got not in
// want, each sorted.
func Diff(want, got Records) (missing, extra []string) {
	for r, n := range want {
		for i := got[r]; i < n; i++ {
			missing = append(missing, r)
		}
	}
	for r, n := range got {
		for i := want[r]; i < n; i++ {
			extra = append(extra, r)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}
