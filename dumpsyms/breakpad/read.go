// Package breakpad reads Breakpad .sym files into the format-neutral symbol
// model of package dumpsyms, so that a symbol file can be converted into the
// other formats the project writes (and, through dumpsyms.Model.Write,
// back into the same text).
package breakpad

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// Read reads a symbol file into the model. Records keep their file order:
// each FUNC record becomes one Function with one range, owning the line and
// INLINE records after it; each STACK CFI INIT record one CFIEntry, owning the
// STACK CFI records after it. Malformed lines, and line or INLINE records with
// no FUNC before them (or CFI deltas with no INIT), are skipped and reported
// to warn when it is set; reading goes on. A file without a MODULE record is
// an error.
func Read(r io.Reader, warn func(format string, args ...any)) (*dumpsyms.Model, error) {
	if warn == nil {
		warn = func(string, ...any) {}
	}
	s := &dumpsyms.Model{}
	sr := symfile.NewReader(r)
	var fn *dumpsyms.Function
	var cfi *dumpsyms.CFIEntry
	hasModule := false
	for {
		rec, err := sr.Read()
		if err == io.EOF {
			break
		}
		var se *symfile.SyntaxError
		if errors.As(err, &se) {
			warn("%v", se)
			continue
		}
		if err != nil {
			return nil, err
		}
		if addHeader(s, rec, &hasModule, sr.Line(), warn) {
			continue
		}
		switch rec := rec.(type) {
		case symfile.Func:
			s.Funcs = append(s.Funcs, dumpsyms.Function{
				Name: rec.Name, Multiple: rec.Multiple, ParamSize: rec.ParamSize,
				Ranges: []symfile.Range{{Address: rec.Address, Size: rec.Size}},
			})
			fn = &s.Funcs[len(s.Funcs)-1]
		case symfile.Line:
			if fn == nil {
				warn("line %d: a line record with no FUNC before it, ignored", sr.Line())
				continue
			}
			fn.Lines = append(fn.Lines, rec)
		case symfile.Inline:
			if fn == nil {
				warn("line %d: an INLINE record with no FUNC before it, ignored", sr.Line())
				continue
			}
			fn.Inlines = append(fn.Inlines, rec)
		case symfile.Public:
			s.Publics = append(s.Publics, rec)
		case symfile.StackWin:
			s.Wins = append(s.Wins, rec)
		case symfile.CFIInit:
			s.CFI = append(s.CFI, dumpsyms.CFIEntry{Init: rec})
			cfi = &s.CFI[len(s.CFI)-1]
		case symfile.CFI:
			if cfi == nil {
				warn("line %d: a STACK CFI record with no STACK CFI INIT before it, ignored", sr.Line())
				continue
			}
			cfi.Changes = append(cfi.Changes, rec)
		}
		// Appending may move the slices; keep the pointers on their last element.
		if n := len(s.Funcs); n > 0 && fn != nil {
			fn = &s.Funcs[n-1]
		}
		if n := len(s.CFI); n > 0 && cfi != nil {
			cfi = &s.CFI[n-1]
		}
	}
	if !hasModule {
		return nil, fmt.Errorf("symbol file: no MODULE record")
	}
	// The model keeps functions and each function's lines sorted by address,
	// as Breakpad's writers emit them; a file out of order is put in order.
	byAddr := func(a, b dumpsyms.Function) int { return cmp.Compare(a.Ranges[0].Address, b.Ranges[0].Address) }
	if !slices.IsSortedFunc(s.Funcs, byAddr) {
		slices.SortStableFunc(s.Funcs, byAddr)
	}
	lineAddr := func(a, b symfile.Line) int { return cmp.Compare(a.Address, b.Address) }
	for i := range s.Funcs {
		if l := s.Funcs[i].Lines; !slices.IsSortedFunc(l, lineAddr) {
			slices.SortStableFunc(l, lineAddr)
		}
	}
	return s, nil
}

// ReadFile reads the symbol file at path into the model (see Read).
func ReadFile(path string, warn func(format string, args ...any)) (*dumpsyms.Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Read(f, warn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// addHeader adds a MODULE, INFO CODE_ID, INFO, FILE or INLINE_ORIGIN record
// to s (a MODULE after the first is reported to warn and dropped), and
// reports whether rec was one of them.
func addHeader(s *dumpsyms.Model, rec symfile.Record, hasModule *bool, line int, warn func(format string, args ...any)) bool {
	switch rec := rec.(type) {
	case symfile.Module:
		if *hasModule {
			warn("line %d: a second MODULE record, ignored", line)
		} else {
			s.Module, *hasModule = rec, true
		}
	case symfile.CodeID:
		s.CodeID = rec
	case symfile.Info:
		s.Infos = append(s.Infos, rec)
	case symfile.File:
		s.Files = append(s.Files, rec)
	case symfile.InlineOrigin:
		s.Origins = append(s.Origins, rec)
	default:
		return false
	}
	return true
}
