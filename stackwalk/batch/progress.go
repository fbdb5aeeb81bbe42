package batch

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Progress reports walked dumps on a writer: a bar redrawn in place on a
// terminal, otherwise a line ("PROGRAM: walked N/TOTAL dumps") at each
// tenth of the dumps. Its methods may be called from several goroutines at
// once, and on a nil *Progress (which reports nothing).
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	program  string
	total    int
	n        int
	terminal bool
	off      bool
}

// NewProgress returns the progress of total dumps on w (a terminal when it
// is an *os.File of a character device), its lines starting with program.
func NewProgress(w io.Writer, program string, total int) *Progress {
	p := &Progress{w: w, program: program, total: total, off: total == 0}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

const barWidth = 40

// Done counts one more walked dump.
func (p *Progress) Done() {
	if p == nil || p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.terminal {
		fill := min(p.n, p.total) * barWidth / p.total
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d dumps", strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), p.n, p.total)
		return
	}
	if p.n == p.total || p.n*10/p.total != (p.n-1)*10/p.total {
		fmt.Fprintf(p.w, "%s: walked %d/%d dumps\n", p.program, p.n, p.total)
	}
}

// Finish ends the bar's line on a terminal.
func (p *Progress) Finish() {
	if p == nil || p.off || !p.terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n > 0 { // read under the lock: Done may be counting
		fmt.Fprintln(p.w)
	}
}
