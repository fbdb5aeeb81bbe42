package symbols

import (
	"errors"
	"fmt"
)

// Chain is a Source asking its sources in order. For each kind of
// information (lookups, CFI, STACK WIN), the first source that has the module
// and that kind wins; later sources are asked only while a kind is still
// missing. The module is corrupt when a source whose information is used
// says so.
type Chain []Source

// Load implements Source. When no source has the module it returns an
// error wrapping ErrNotFound, or the first error of a source that found
// something it could not read.
func (c Chain) Load(m Module) (*Symbols, error) {
	var out Symbols
	var firstErr error
	for i, s := range c {
		if s == nil {
			continue
		}
		got, err := s.Load(m)
		if err != nil {
			if !errors.Is(err, ErrNotFound) && firstErr == nil {
				firstErr = fmt.Errorf("source %d: %w", i, err)
			}
			continue
		}
		if got.Empty() {
			continue
		}
		used := false
		if out.Lookup == nil && got.Lookup != nil {
			out.Lookup, used = got.Lookup, true
		}
		if out.CFI == nil && got.CFI != nil {
			out.CFI, used = got.CFI, true
		}
		if out.Win == nil && got.Win != nil {
			out.Win, used = got.Win, true
		}
		if used && got.Corrupt {
			out.Corrupt = true
		}
		if out.complete() {
			break
		}
	}
	if out.Empty() {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, fmt.Errorf("%s %s: %w", m.DebugFile, m.DebugID, ErrNotFound)
	}
	return &out, nil
}
