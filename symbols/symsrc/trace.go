package symsrc

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// trace records, per module, what each source said. It is bounded for
// long-running users (crashd's processor keeps one Sources for its life):
// a record keeps each distinct answer once and at most maxAnswers of
// them, and past maxTraced modules the oldest module's record is dropped.
type trace struct {
	mu    sync.Mutex
	order []symbols.Module // oldest first
	recs  map[symbols.Module]*record
}

// The bounds of a trace: answers per module, modules (a variable for the
// tests). Past maxTraced modules the oldest tenth is dropped.
const maxAnswers = 16

var maxTraced = 10000

// addAnswer appends msg to list unless it holds it already or is full.
func addAnswer(list []string, msg string) []string {
	if len(list) >= maxAnswers || slices.Contains(list, msg) {
		return list
	}
	return append(list, msg)
}

type record struct {
	from    []string
	reasons []string
}

// traced is a source whose answers are recorded.
type traced struct {
	name string
	src  symbols.Source
	t    *trace
}

func (t *trace) wrap(name string, src symbols.Source) symbols.Source {
	return &traced{name: name, src: src, t: t}
}

func (s *traced) Load(m symbols.Module) (*symbols.Symbols, error) {
	syms, err := s.src.Load(m)
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	if s.t.recs == nil {
		s.t.recs = map[symbols.Module]*record{}
	}
	r := s.t.recs[m]
	if r == nil {
		r = &record{}
		s.t.recs[m] = r
		if len(s.t.order) >= maxTraced {
			n := len(s.t.order) - maxTraced*9/10
			for _, old := range s.t.order[:n] {
				delete(s.t.recs, old)
			}
			s.t.order = append(s.t.order[:0], s.t.order[n:]...)
		}
		s.t.order = append(s.t.order, m)
	}
	switch {
	case err == nil && !syms.Empty():
		var kinds []string
		if syms.Lookup != nil {
			kinds = append(kinds, "lookups")
		}
		if syms.CFI != nil {
			kinds = append(kinds, "CFI")
		}
		if syms.Win != nil {
			kinds = append(kinds, "STACK WIN")
		}
		state := strings.Join(kinds, ", ")
		if syms.Corrupt {
			// Breakpad's "corrupt symbols": records that did not parse
			// were left out.
			state = "corrupt: records that did not parse were left out; " + state
		}
		r.from = addAnswer(r.from, fmt.Sprintf("%s (%s)", s.name, state))
	case err != nil && !errors.Is(err, symbols.ErrNotFound):
		r.reasons = addAnswer(r.reasons, fmt.Sprintf("%s: unreadable: %v", s.name, err))
	case err != nil:
		// Local stores' misses say nothing worth a line; servers say why.
		msg := strings.TrimPrefix(err.Error(), symbols.ErrNotFound.Error()+": ")
		if strings.Contains(s.name, "://") {
			r.reasons = addAnswer(r.reasons, msg)
		}
	}
	return syms, err
}

func (t *trace) write(w io.Writer, prog string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// By name: loads finish in any order when prefetched or walked by
	// several threads, and the summary should read the same every run.
	order := slices.Clone(t.order)
	slices.SortStableFunc(order, func(a, b symbols.Module) int {
		return cmp.Or(cmp.Compare(a.DebugFile, b.DebugFile), cmp.Compare(a.DebugID, b.DebugID),
			cmp.Compare(a.CodeFile, b.CodeFile), cmp.Compare(a.CodeID, b.CodeID))
	})
	for _, m := range order {
		r := t.recs[m]
		name := fmt.Sprintf("%s %s", m.DebugFile, m.DebugID)
		if m.DebugFile == "" && m.DebugID == "" && m.CodeFile != "" {
			// No debug file (a PE without a CodeView record): named as
			// the sources look it up, by its code file and identifier.
			name = fmt.Sprintf("%s %s", m.CodeFile, m.CodeID)
		}
		if len(r.from) > 0 {
			fmt.Fprintf(w, "%s: symbols: %s: from %s\n", prog, name, strings.Join(r.from, "; "))
			continue
		}
		why := "not in any source"
		if len(r.reasons) > 0 {
			why = strings.Join(r.reasons, "; ")
		}
		fmt.Fprintf(w, "%s: symbols: %s: none (%s)\n", prog, name, why)
	}
}

// from returns the sources m's symbols came from.
func (t *trace) from(m symbols.Module) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.recs[m]; r != nil {
		return append([]string(nil), r.from...)
	}
	return nil
}

// reasons returns why the sources had no symbols for m, as far as they said.
func (t *trace) reasons(m symbols.Module) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.recs[m]; r != nil {
		return append([]string(nil), r.reasons...)
	}
	return nil
}
