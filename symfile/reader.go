package symfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Record is one record of a symbol file: a Module, CodeID, Info, File,
// InlineOrigin, Func, Line, Inline, Public, CFIInit, CFI or StackWin value.
type Record interface {
	record()
}

func (Module) record()       {}
func (CodeID) record()       {}
func (Info) record()         {}
func (File) record()         {}
func (InlineOrigin) record() {}
func (Func) record()         {}
func (Line) record()         {}
func (Inline) record()       {}
func (Public) record()       {}
func (CFIInit) record()      {}
func (CFI) record()          {}
func (StackWin) record()     {}

// MaxLineLength is the longest line a Reader accepts.
const MaxLineLength = 64 << 20

// Reader reads the records of a symbol file one line at a time, in file
// order, with the same record parsers as Table: the streaming counterpart of
// Writer, for converting a symbol file into another format. It keeps no
// index and checks no relation between records (a line record is returned
// whether or not a FUNC came before it).
type Reader struct {
	sc   *bufio.Scanner
	line int
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineLength)
	return &Reader{sc: sc}
}

// Line returns the 1-based number of the line the last record came from.
func (r *Reader) Line() int { return r.line }

// Read returns the next record. It returns io.EOF at the end of the input, a
// *SyntaxError for a malformed line (reading may go on after it), and any
// other error from the underlying reader, or for a line longer than
// MaxLineLength, as the end of reading. Blank lines are skipped.
func (r *Reader) Read() (Record, error) {
	for r.sc.Scan() {
		r.line++
		b := bytes.TrimRight(r.sc.Bytes(), "\r")
		if len(b) == 0 {
			continue
		}
		rec, err := ParseRecord(b)
		if err != nil {
			err.(*SyntaxError).Line = r.line
			return nil, err
		}
		return rec, nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", r.line+1, MaxLineLength)
		}
		return nil, err
	}
	return nil, io.EOF
}

// ParseRecord parses one non-empty line of a symbol file (without its line
// end), as Reader does: the record, or a *SyntaxError (its Line 0) saying
// what is wrong with it. Only the record's strings are copied out of b.
func ParseRecord(b []byte) (Record, error) {
	rec, msg := parseRecord(b)
	if msg != "" {
		return nil, &SyntaxError{Msg: msg}
	}
	return rec, nil
}

// CheckRecord reports what ParseRecord would of line b: nil when it is a
// well-formed record, else the *SyntaxError (its Line 0). It copies nothing
// out of b and, for line, INLINE and STACK records, allocates nothing
// (beyond an INLINE record's fifth range): for passes over big files that
// need only to know which lines are well formed.
func CheckRecord(b []byte) error {
	var msg string
	switch {
	case hasPrefix(b, "STACK CFI "):
		_, _, msg = parseStackCFI(b, len("STACK CFI"))
	case hasPrefix(b, "STACK WIN "):
		_, _, msg = parseStackWin(b, len("STACK WIN"))
	case hasPrefix(b, "INLINE "):
		var rs [4]Range
		in := Inline{Ranges: rs[:0]}
		msg = parseInlineLine(b, &in)
	case hasPrefix(b, "MODULE "), hasPrefix(b, "INFO "), hasPrefix(b, "FILE "), hasPrefix(b, "INLINE_ORIGIN "),
		hasPrefix(b, "FUNC "), hasPrefix(b, "PUBLIC "):
		_, msg = parseRecord(b)
	default:
		_, msg = parseLineRecord(b)
	}
	if msg != "" {
		return &SyntaxError{Msg: msg}
	}
	return nil
}

// parseRecord parses one non-empty line, or says what is wrong with it.
func parseRecord(b []byte) (Record, string) {
	s := func(i int) string { return string(b[i:]) }
	switch {
	case hasPrefix(b, "MODULE "):
		m, ok := parseModuleLine(b)
		if !ok {
			return nil, "MODULE: malformed"
		}
		return m, ""
	case hasPrefix(b, "INFO "):
		return parseInfoLine(b), ""
	case hasPrefix(b, "FILE "):
		n, name, msg := parseFileLine(b)
		if msg != "" {
			return nil, msg
		}
		return File{Number: n, Name: s(name)}, ""
	case hasPrefix(b, "INLINE_ORIGIN "):
		o, msg := parseInlineOriginLine(b)
		if msg != "" {
			return nil, msg
		}
		return InlineOrigin{ID: o.id, HasFile: o.hasFile, File: o.file, Name: s(o.name)}, ""
	case hasPrefix(b, "INLINE "):
		var in Inline
		if msg := parseInlineLine(b, &in); msg != "" {
			return nil, msg
		}
		return in, ""
	case hasPrefix(b, "FUNC "):
		f, msg := parseFuncLine(b)
		if msg != "" {
			return nil, msg
		}
		return Func{Multiple: f.multiple, Address: f.addr, Size: f.size, ParamSize: f.param, Name: s(f.name)}, ""
	case hasPrefix(b, "PUBLIC "):
		p, msg := parsePublicLine(b)
		if msg != "" {
			return nil, msg
		}
		return Public{Multiple: p.multiple, Address: p.addr, ParamSize: p.param, Name: s(p.name)}, ""
	case hasPrefix(b, "STACK CFI "):
		kind, c, msg := parseStackCFI(b, len("STACK CFI"))
		if msg != "" {
			return nil, msg
		}
		if kind == stackCFIInit {
			return CFIInit{Address: c.addr, Size: c.size, Rules: s(c.rules)}, ""
		}
		return CFI{Address: c.addr, Rules: s(c.rules)}, ""
	case hasPrefix(b, "STACK WIN "):
		w, prog, msg := parseStackWin(b, len("STACK WIN"))
		if msg != "" {
			return nil, msg
		}
		if w.HasProgramString {
			w.ProgramString = s(prog)
		}
		return w, ""
	}
	l, msg := parseLineRecord(b)
	if msg != "" {
		return nil, msg
	}
	return l, ""
}
