package dumpsyms

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Damage collects the parts of an input that failed to parse (a PDB
// record or stream), by kind, so that a program can say them once per
// kind with a count, as dump_syms does by default on stderr, or refuse the
// input (dump_syms --strict) for pipelines that prefer no symbols to wrong
// ones. The zero value is ready; it is safe for concurrent use.
type Damage struct {
	mu    sync.Mutex
	kinds []string // in the order first met
	count map[string]int
	first map[string]string
	incon map[string]bool // kinds of inconsistencies (AddInconsistent), not failures to parse
}

// Add records one failure of kind, described by msg.
func (d *Damage) Add(kind, msg string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.count == nil {
		d.count, d.first = map[string]int{}, map[string]string{}
	}
	if d.count[kind] == 0 {
		d.kinds = append(d.kinds, kind)
		d.first[kind] = msg
	}
	d.count[kind]++
}

// AddInconsistent records one part of kind that parsed but contradicts the
// rest of the input (a line naming a file checksum the module lacks, a
// subsection of no known kind, an empty frame program), described by msg:
// it is used as read, and said (and refused by --strict) like a failure.
func (d *Damage) AddInconsistent(kind, msg string) {
	if d == nil {
		return
	}
	d.Add(kind, msg)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.incon == nil {
		d.incon = map[string]bool{}
	}
	d.incon[kind] = true
}

// Len returns the number of failures recorded.
func (d *Damage) Len() int {
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, c := range d.count {
		n += c
	}
	return n
}

// Lines returns one line per kind, in the order first met: the kind, how
// many failed, and the first failure's message.
func (d *Damage) Lines() []string {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, k := range d.kinds {
		n := d.count[k]
		if d.incon[k] {
			out = append(out, fmt.Sprintf("%s: %d inconsistent with the rest of the file, used as read (first: %s)", k, n, d.first[k]))
			continue
		}
		what := "1 failed to parse"
		if n > 1 {
			what = fmt.Sprintf("%d failed to parse", n)
		}
		out = append(out, fmt.Sprintf("%s: %s, left out (first: %s)", k, what, d.first[k]))
	}
	return out
}

// ErrDamaged is wrapped by Damage.Err.
var ErrDamaged = errors.New("damaged input")

// Err returns nil when nothing was recorded, else an error wrapping
// ErrDamaged that holds Lines.
func (d *Damage) Err() error {
	lines := d.Lines()
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrDamaged, strings.Join(lines, "; "))
}

// Damaged reports a part of the input that failed to parse: to Warn (one
// line each, as every problem) and to Damage under kind.
func (o Options) Damaged(kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if o.Warn != nil {
		o.Warn("%s", msg)
	}
	o.Damage.Add(kind, msg)
}

// Inconsistent reports a part of the input that parsed but contradicts the
// rest of it: to Warn and to Damage under kind (Damage.AddInconsistent).
func (o Options) Inconsistent(kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if o.Warn != nil {
		o.Warn("%s", msg)
	}
	o.Damage.AddInconsistent(kind, msg)
}
