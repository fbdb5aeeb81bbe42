package symfile

// Parsers for single records. Each takes one line without its line end and
// returns the record's fields, with names given as offsets into the line so
// that the indexing pass allocates nothing; a non-empty message describes
// why the line is malformed.

type funcFields struct {
	multiple          bool
	addr, size, param uint64
	name              int // offset of the name in the line
}

func parseFuncLine(b []byte) (f funcFields, msg string) {
	var ok bool
	i := len("FUNC ")
	f.multiple, i = multipleFlag(b, i)
	if f.addr, i, ok = hexField(b, i); !ok {
		return f, "FUNC: bad address"
	}
	if f.size, i, ok = hexField(b, i); !ok {
		return f, "FUNC: bad size"
	}
	if f.param, i, ok = hexField(b, i); !ok || f.param > 1<<62 {
		return f, "FUNC: bad parameter size"
	}
	if f.name, ok = restField(b, i); !ok {
		return f, "FUNC: missing name"
	}
	return f, ""
}

type publicFields struct {
	multiple    bool
	addr, param uint64
	name        int
}

func parsePublicLine(b []byte) (p publicFields, msg string) {
	var ok bool
	i := len("PUBLIC ")
	p.multiple, i = multipleFlag(b, i)
	if p.addr, i, ok = hexField(b, i); !ok {
		return p, "PUBLIC: bad address"
	}
	if p.param, i, ok = hexField(b, i); !ok || p.param > 1<<62 {
		return p, "PUBLIC: bad parameter size"
	}
	if p.name, ok = restField(b, i); !ok {
		return p, "PUBLIC: missing name"
	}
	return p, ""
}

func parseLineRecord(b []byte) (l Line, msg string) {
	var ok bool
	var v int64
	i := 0
	if l.Address, i, ok = hexField(b, i); !ok {
		return l, "line record: bad address"
	}
	if l.Size, i, ok = hexField(b, i); !ok {
		return l, "line record: bad size"
	}
	if l.Line, i, ok = decField(b, i); !ok || l.Line < 0 {
		return l, "line record: bad line number"
	}
	if v, i, ok = decField(b, i); !ok || v < 0 {
		return l, "line record: bad file number"
	}
	// Like Breakpad, ignore anything after the file number.
	l.File = uint32(v)
	return l, ""
}

// parseNumbered parses the "number name" tail shared by FILE and the new form
// of INLINE_ORIGIN, starting at b[i].
func parseNumbered(b []byte, i int) (num uint32, name int, ok bool) {
	v, i, ok := decField(b, i)
	if !ok || v < 0 {
		return 0, 0, false
	}
	name, ok = restField(b, i)
	return uint32(v), name, ok
}

func parseFileLine(b []byte) (num uint32, name int, msg string) {
	num, name, ok := parseNumbered(b, len("FILE "))
	if !ok {
		return 0, 0, "FILE: malformed"
	}
	return num, name, ""
}

type originFields struct {
	id      uint32
	hasFile bool
	file    int32
	name    int
}

func parseInlineOriginLine(b []byte) (o originFields, msg string) {
	var ok bool
	var i int
	if o.id, i, ok = parseNumbered(b, len("INLINE_ORIGIN ")); !ok {
		return o, "INLINE_ORIGIN: malformed"
	}
	// As Breakpad does: if the word after the id is a number (or -N), it is the
	// old form's file number.
	s, e := word(b, i)
	if s < e {
		digits := true
		for k := s; k < e; k++ {
			if !(b[k] >= '0' && b[k] <= '9') && !(k == s && b[k] == '-') {
				digits = false
				break
			}
		}
		if digits {
			v, j, ok := decField(b, s)
			if !ok || v < -1 {
				return o, "INLINE_ORIGIN: bad file number"
			}
			if o.name, ok = restField(b, j); !ok {
				return o, "INLINE_ORIGIN: missing name"
			}
			o.hasFile, o.file = true, int32(v)
			return o, ""
		}
	}
	o.name = i
	return o, ""
}

// parseInlineLine parses an INLINE record, appending its ranges to
// in.Ranges (pass a reused slice to avoid allocation).
func parseInlineLine(b []byte, in *Inline) (msg string) {
	i := len("INLINE ")
	n := 0
	for k := i; ; n++ {
		s, e := word(b, k)
		if s == e {
			break
		}
		k = e
	}
	// Breakpad tells the two forms apart by the parity of the field count.
	if n < 5 {
		return "INLINE: too few fields"
	}
	in.HasCallFile = n%2 == 0
	v, i, ok := decField(b, i)
	if !ok || v < 0 {
		return "INLINE: bad nest level"
	}
	in.Depth = uint32(v)
	if v, i, ok = decField(b, i); !ok || v < 0 {
		return "INLINE: bad call site line"
	}
	in.CallLine = uint32(v)
	in.CallFile = 0
	if in.HasCallFile {
		if v, i, ok = decField(b, i); !ok || v < -1 {
			return "INLINE: bad call site file number"
		}
		in.CallFile = int32(v)
	}
	if v, i, ok = decField(b, i); !ok || v < 0 {
		return "INLINE: bad origin"
	}
	in.Origin = uint32(v)
	for skipSpaces(b, i) < len(b) {
		var r Range
		if r.Address, i, ok = hexField(b, i); !ok {
			return "INLINE: bad range address"
		}
		if r.Size, i, ok = hexField(b, i); !ok {
			return "INLINE: bad range size"
		}
		in.Ranges = append(in.Ranges, r)
	}
	return ""
}

// STACK records. The kind is the word after "STACK ".
const (
	stackBad = iota
	stackCFIInit
	stackCFI
	stackWin
)

type cfiFields struct {
	addr, size uint64
	rules      int
}

// stackWord returns the word after "STACK " (Breakpad skips any spaces
// before it) and the index just past it. b must start with "STACK ".
func stackWord(b []byte) (string, int) {
	s, e := word(b, len("STACK "))
	return string(b[s:e]), e
}

// parseCFILine parses a line known to be a STACK CFI record.
func parseCFILine(b []byte) (kind int, c cfiFields, msg string) {
	_, e := stackWord(b)
	return parseStackCFI(b, e)
}

// isCFILine reports whether b is a STACK CFI record.
func isCFILine(b []byte) bool {
	if !hasPrefix(b, "STACK ") {
		return false
	}
	w, _ := stackWord(b)
	return w == "CFI"
}

func parseStackCFI(b []byte, i int) (kind int, c cfiFields, msg string) {
	var ok bool
	s, e := word(b, i)
	if string(b[s:e]) == "INIT" {
		if c.addr, i, ok = hexField(b, e); !ok {
			return stackBad, c, "STACK CFI INIT: bad address"
		}
		if c.size, i, ok = hexField(b, i); !ok {
			return stackBad, c, "STACK CFI INIT: bad size"
		}
		if c.rules, ok = restField(b, i); !ok {
			return stackBad, c, "STACK CFI INIT: missing rules"
		}
		return stackCFIInit, c, ""
	}
	if c.addr, i, ok = hexField(b, i); !ok {
		return stackBad, c, "STACK CFI: bad address"
	}
	if c.rules, ok = restField(b, i); !ok {
		return stackBad, c, "STACK CFI: missing rules"
	}
	return stackCFI, c, ""
}

// parseStackWin parses the fields of a STACK WIN record after "WIN" (at b[i]).
// The program string, if any, is returned as an offset.
func parseStackWin(b []byte, i int) (w StackWin, prog int, msg string) {
	var v [9]uint64
	var ok bool
	for k := range v {
		if v[k], i, ok = hexField(b, i); !ok || v[k] > 0xffffffff {
			return w, 0, "STACK WIN: bad number"
		}
	}
	if v[0] > uint64(WinFrameData) {
		return w, 0, "STACK WIN: unknown type"
	}
	w.Type = WinType(v[0])
	w.RVA, w.CodeSize, w.PrologSize, w.EpilogSize = uint32(v[1]), uint32(v[2]), uint32(v[3]), uint32(v[4])
	w.ParamSize, w.SavedRegisterSize, w.LocalSize, w.MaxStackSize = uint32(v[5]), uint32(v[6]), uint32(v[7]), uint32(v[8])
	has, i, ok := hexField(b, i)
	if !ok {
		return w, 0, "STACK WIN: bad has_program_string"
	}
	w.HasProgramString = has != 0
	if w.HasProgramString {
		if prog, ok = restField(b, i); !ok {
			return w, 0, "STACK WIN: missing program string"
		}
		return w, prog, ""
	}
	abp, _, ok := hexField(b, i)
	if !ok {
		return w, 0, "STACK WIN: bad allocates_base_pointer"
	}
	w.AllocatesBasePointer = abp != 0
	return w, 0, ""
}
