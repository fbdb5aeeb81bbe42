package signature

import (
	"regexp"
	"sync"
)

// memoEntries bounds the answers a matcher remembers; when full it starts
// over. memoKeyMax is the longest string whose answer is remembered.
const (
	memoEntries = 1 << 14
	memoKeyMax  = 512
)

// matcher is one compiled list: a regular expression that remembers its
// answers. The lists' alternations are long (hundreds of patterns), and a
// crash server asks them about the same function names crash after crash:
// a map lookup answers what the expression already answered. Safe for
// concurrent use; a nil matcher matches nothing.
type matcher struct {
	re   *regexp.Regexp
	mu   sync.RWMutex
	seen map[string]bool
}

// newMatcher returns the matcher of re, nil for a nil re (an empty list).
func newMatcher(re *regexp.Regexp, err error) (*matcher, error) {
	if err != nil || re == nil {
		return nil, err
	}
	return &matcher{re: re, seen: map[string]bool{}}, nil
}

// MatchString tells whether s matches m's expression.
func (m *matcher) MatchString(s string) bool {
	if m == nil {
		return false
	}
	if len(s) > memoKeyMax {
		return m.re.MatchString(s)
	}
	m.mu.RLock()
	ok, known := m.seen[s]
	m.mu.RUnlock()
	if known {
		return ok
	}
	ok = m.re.MatchString(s)
	m.mu.Lock()
	if len(m.seen) >= memoEntries {
		clear(m.seen)
	}
	m.seen[s] = ok
	m.mu.Unlock()
	return ok
}
