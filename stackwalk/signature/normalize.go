package signature

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Frame is one frame of the crashing thread as signature generation sees it
// (inline frames are frames of their own, innermost first, as the walk
// gives them).
type Frame struct {
	// Module is the module's file name (no directory), "" outside modules.
	Module string
	// Function, File and Line are the symbol information, when known.
	Function string
	File     string
	Line     int
	// ModuleOffset is the frame's address relative to its module, Offset
	// its absolute address.
	ModuleOffset uint64
	Offset       uint64
	// Unloaded names an unloaded module covering Offset, for frames outside
	// every loaded module.
	Unloaded string
}

// Compiled on first use, not at package init (docs/performance.md).
var (
	rustHash      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`::h[0-9a-fA-F]+$`) })
	lambdaNumbers = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`::\$_\d+::`) })
)

// normalizeFrame returns the frame's text in a signature: its normalized
// function; else FILE#LINE; else module@0xOFFSET (the module alone with
// bareModules); else "(unloaded NAME)"; else "@0xADDRESS" ("@0x0" for a
// null address).
func (g *Generator) normalizeFrame(f Frame) string {
	if f.Function != "" {
		file := sourceFile(f.File)
		switch {
		case strings.HasSuffix(file, ".rs"):
			return g.normalizeRust(f.Function, f.Line)
		case isGo(file, f.Function):
			return g.normalizeGo(f.Function, f.Line)
		}
		return g.normalizeCPP(f.Function, f.Line)
	}
	if f.File != "" && f.Line != 0 {
		name := strings.TrimRight(f.File, `/\`)
		if i := strings.LastIndex(name, `\`); i >= 0 {
			name = name[i+1:]
		} else if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		return name + "#" + strconv.Itoa(f.Line)
	}
	if f.Module != "" {
		m := strings.Trim(f.Module, "[]")
		if g.BareModules {
			return m
		}
		return m + "@0x" + strconv.FormatUint(f.ModuleOffset, 16)
	}
	if f.Unloaded != "" {
		return "(unloaded " + f.Unloaded + ")"
	}
	// Every walked frame has an address, 0 included: a call through a null
	// pointer is "@0x0", which the default prefix list keeps (Socorro reads
	// rust-minidump's "offset": "0x0", a string, so it is never empty).
	return "@0x" + strconv.FormatUint(f.Offset, 16)
}

// sourceFile returns the path part of a frame's file: the third field of a
// version-control reference "vcs:root:path:revision", the part after a
// drive "c:\path", or the path itself.
func sourceFile(file string) string {
	parts := strings.Split(file, ":")
	switch len(parts) {
	case 4:
		return parts[2]
	case 2:
		return parts[1]
	}
	return file
}

// isGo tells Go frames: a .go file, or a method name on a pointer receiver
// ("pkg.(*T).M"), which no C++ or Rust name has.
func isGo(file, function string) bool {
	return strings.HasSuffix(file, ".go") || strings.Contains(function, ".(*")
}

// normalizeCPP normalizes a C or C++ function name as Socorro does: cv and
// ref qualifiers, static/return type and (but for operators) prefixes go;
// `anonymous namespace' is spelled (anonymous namespace); lambda numbers,
// template arguments (to <T>), parameter lists and [clone .cold] labels are
// dropped; spacing around *, & and commas is made uniform.
func (g *Generator) normalizeCPP(fn string, line int) string {
	for _, q := range []string{"const", "const&", "const &", "&&", "&"} {
		if strings.HasSuffix(fn, q) {
			fn = strings.TrimSpace(fn[:len(fn)-len(q)])
		}
	}
	if !strings.Contains(fn, "::operator") {
		fn = dropPrefixAndReturnType(fn)
	}
	fn = strings.ReplaceAll(fn, "`anonymous namespace'", "(anonymous namespace)")
	fn = lambdaNumbers().ReplaceAllString(fn, "::$$::")
	fn = collapseTypes(fn)
	fn = replaceEnclosed(fn, '(', ')', func(before, inside string) string {
		if inside == "(anonymous namespace)" || strings.HasSuffix(before, "operator") {
			return inside
		}
		return ""
	})
	if strings.Contains(fn, "clone .cold") {
		fn = replaceEnclosed(fn, '[', ']', func(string, string) string { return "" })
	}
	return g.finish(fn, line)
}

// normalizeRust normalizes a Rust function name as Socorro does: prefixes and
// return types go, generic arguments become <T> (trait casts "<A as B>" are
// kept), parameter lists and the trailing "::h0123abcd" hash are dropped.
func (g *Generator) normalizeRust(fn string, line int) string {
	fn = dropPrefixAndReturnType(fn)
	fn = replaceEnclosed(fn, '<', '>', func(_, inside string) string {
		if strings.Contains(inside, " as ") {
			return inside
		}
		return "<T>"
	})
	fn = replaceEnclosed(fn, '(', ')', func(string, string) string { return "" })
	fn = g.finish(fn, line)
	return rustHash().ReplaceAllString(fn, "")
}

// normalizeGo normalizes a Go function name (gobreakpad's rule; Socorro has
// none): the name stays as the Go runtime prints it, receivers such as
// "(*T)" included, and the type arguments of generic functions and types
// become "[...]" as in Go's tracebacks.
func (g *Generator) normalizeGo(fn string, line int) string {
	fn = replaceEnclosed(fn, '[', ']', func(string, string) string { return "[...]" })
	return g.finish(fn, line)
}

// finish appends the line number when the lines-with-numbers list asks for
// it, and makes spacing uniform: no space before '*', '&' or ',', one space
// after each comma.
func (g *Generator) finish(fn string, line int) string {
	if g.lineNumbers != nil && g.lineNumbers.MatchString(fn) {
		fn += ":" + strconv.Itoa(line)
	}
	var b strings.Builder
	b.Grow(len(fn) + 4)
	for i := 0; i < len(fn); i++ {
		c := fn[i]
		if c == ' ' && i+1 < len(fn) && (fn[i+1] == '*' || fn[i+1] == '&' || fn[i+1] == ',') {
			continue
		}
		b.WriteByte(c)
		if c == ',' && (i+1 >= len(fn) || fn[i+1] != ' ') {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// collapseTypes replaces template argument lists by <T>, but keeps
// "<name omitted>", trait casts ("<A as B>"), "<unknown in lib.dll>",
// operator< and friends, and recurses into IPC::ParamTraits<...>.
func collapseTypes(fn string) string {
	return replaceEnclosed(fn, '<', '>', func(before, inside string) string {
		switch {
		case inside == "<name omitted>" || strings.Contains(inside, " as ") || strings.Contains(inside, " in "):
			return inside
		case strings.HasSuffix(before, "operator"):
			return inside
		case strings.HasSuffix(before, "IPC::ParamTraits"):
			if len(inside) >= 2 {
				return "<" + collapseTypes(inside[1:len(inside)-1]) + ">"
			}
			return inside
		}
		return "<T>"
	})
}

// replaceEnclosed replaces each outermost open...close slice of s (an
// unclosed one runs to the end) by repl(before, inside), where before is
// the text between the previous slice and this one and inside includes the
// delimiters.
func replaceEnclosed(s string, open, close byte, repl func(before, inside string) string) string {
	var b strings.Builder
	prevEnd, depth, start := 0, 0, 0
	emit := func(end int) {
		b.WriteString(s[prevEnd:start])
		b.WriteString(repl(s[prevEnd:start], s[start:end]))
		prevEnd = end
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == open:
			if depth == 0 {
				start = i
			}
			depth++
		case s[i] == close && depth > 0:
			depth--
			if depth == 0 {
				emit(i + 1)
			}
		}
	}
	if depth > 0 {
		emit(len(s))
	}
	b.WriteString(s[prevEnd:])
	return b.String()
}

// closers pairs the delimiters dropPrefixAndReturnType keeps together.
var closers = map[byte]byte{'(': ')', '{': '}', '[': ']', '<': '>', '`': '\''}

// dropPrefixAndReturnType keeps the last space-separated token of a function
// name, where spaces inside (), {}, [], <> and `' do not separate: it drops
// "static", return types and calling conventions. A last token that starts
// with "(" or "[clone" is joined back to the one before it.
func dropPrefixAndReturnType(fn string) string {
	var tokens []string
	var levels []byte
	cur := 0 // start of the current token
	for i := 0; i < len(fn); i++ {
		c := fn[i]
		if _, ok := closers[c]; ok {
			levels = append(levels, c)
			continue
		}
		if n := len(levels); n > 0 && closers[levels[n-1]] == c {
			levels = levels[:n-1]
			continue
		}
		if len(levels) == 0 && c == ' ' {
			tokens = append(tokens, fn[cur:i])
			cur = i + 1
		}
	}
	if cur < len(fn) {
		tokens = append(tokens, fn[cur:])
	}
	for len(tokens) > 1 {
		last := tokens[len(tokens)-1]
		if !strings.HasPrefix(last, "(") && !strings.HasPrefix(last, "[clone") {
			break
		}
		tokens = append(tokens[:len(tokens)-2], tokens[len(tokens)-2]+" "+last)
	}
	if len(tokens) == 0 {
		return ""
	}
	return tokens[len(tokens)-1]
}
