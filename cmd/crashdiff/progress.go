package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// progress reports walked dumps on stderr: a bar redrawn in place on a
// terminal, otherwise a line at each tenth of the dumps.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	total    int
	n        int
	terminal bool
	off      bool
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	p := &progress{w: w, total: total, off: quiet || total == 0}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

const barWidth = 40

// done counts one more walked dump.
func (p *progress) done() {
	if p == nil || p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.terminal {
		fill := p.n * barWidth / p.total
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d dumps", strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), p.n, p.total)
		return
	}
	if p.n == p.total || p.n*10/p.total != (p.n-1)*10/p.total {
		fmt.Fprintf(p.w, "crashdiff: walked %d/%d dumps\n", p.n, p.total)
	}
}

// finish ends the bar's line.
func (p *progress) finish() {
	if p != nil && !p.off && p.terminal && p.n > 0 {
		fmt.Fprintln(p.w)
	}
}
