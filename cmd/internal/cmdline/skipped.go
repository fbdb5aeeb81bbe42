package cmdline

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Skipped collects what a program's readers left out (their Warn lines):
// with Verbose every line is printed; without, the lines saying that
// information was lost (Lost) still are, each once, so that nothing is
// dropped silently, while the explanations -v adds stay quiet.
type Skipped struct {
	Prog    string
	W       io.Writer
	Verbose bool

	mu   sync.Mutex
	seen map[string]bool
	lost bool
}

// lossMarks are the words of the readers' warnings about information left
// out of the output: a section or unit skipped (a decompression bomb, a
// corrupt line program, ...), a PE dumped without its PDB, no FUNC records.
var lossMarks = []string{"skipped", "alone holds", "no FUNC records", "corrupt"}

// Lost reports whether a reader's warning says that information was left out
// of the output (not only how the output was made).
func Lost(msg string) bool {
	for _, m := range lossMarks {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// Warn prints a reader's warning as "PROG: MSG" with Verbose, else as
// "PROG: warning: MSG (-v says more)" when it is a loss (Lost), once.
func (s *Skipped) Warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	lost := Lost(msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = s.lost || lost
	if s.Verbose {
		fmt.Fprintf(s.W, "%s: %s\n", s.Prog, msg)
		return
	}
	if !lost || s.seen[msg] {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[msg] = true
	fmt.Fprintf(s.W, "%s: warning: %s\n", s.Prog, msg)
}

// Lost reports whether a loss was warned about (with or without Verbose).
func (s *Skipped) Lost() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}
