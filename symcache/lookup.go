package symcache

import "strings"

// MaxInlineDepth bounds the inline chains Lookup follows, so that a corrupt
// file's cycle of source locations ends.
const MaxInlineDepth = 1024

// Location is one frame of a lookup's answer: a source location with its
// function and file resolved.
type Location struct {
	// Index is the source location's index.
	Index uint32
	// Function is the function's name ("?" when the record is missing),
	// EntryPC its entry address (None for inlined-only functions) and Lang
	// its language.
	Function string
	EntryPC  uint32
	Lang     Language
	// File is the file's full path (compilation directory, directory and
	// name joined as symbolic joins them; "" without a file) and Line the
	// line (0 when unknown).
	File string
	Line uint32
}

// Lookup returns the source locations at addr, innermost (inlined) first and
// the function the code belongs to last; nil when no range covers addr or its
// range has no information.
func (c *Reader) Lookup(addr uint64) []Location {
	r, ok := c.FindRange(addr)
	if !ok {
		return nil
	}
	return c.Chain(c.RangeLocation(r))
}

// Chain returns source location i and those it was inlined into, up to the
// root; nil when i is NoSourceLocation or out of range.
func (c *Reader) Chain(i uint32) []Location {
	var out []Location
	for depth := 0; depth < MaxInlineDepth; depth++ {
		sl, ok := c.SourceLocation(i)
		if !ok || (depth == 0 && sl == NoSourceLocation) {
			break
		}
		out = append(out, c.Resolve(i, sl))
		i = sl.InlinedInto
	}
	return out
}

// Resolve resolves source location sl (index i)'s function and file.
func (c *Reader) Resolve(i uint32, sl SourceLocation) Location {
	loc := Location{Index: i, Function: "?", EntryPC: None, Line: sl.Line}
	if f, ok := c.Function(sl.Function); ok {
		if name, ok := c.String(f.Name); ok {
			loc.Function = name
		}
		loc.EntryPC, loc.Lang = f.EntryPC, f.Lang
	}
	if p, ok := c.paths.Load(sl.File); ok {
		loc.File = p.(string)
	} else if f, ok := c.File(sl.File); ok {
		loc.File = c.FullPath(f)
		c.paths.Store(sl.File, loc.File)
	}
	return loc
}

// FullPath joins a file's compilation directory, directory and name, and
// cleans the result, as symbolic's File::full_path does.
func (c *Reader) FullPath(f File) string {
	comp, _ := c.String(f.CompDir)
	dir, _ := c.String(f.Directory)
	name, _ := c.String(f.Name)
	if c.RawPaths {
		return JoinPath(JoinPath(comp, dir), name)
	}
	return CleanPath(JoinPath(JoinPath(comp, dir), name))
}

// FunctionInfo is a function record with its name resolved.
type FunctionInfo struct {
	Name    string
	EntryPC uint32
	Lang    Language
}

// Functions returns the functions with an entry address, in the file's
// order (symbolic's SymCache::functions).
func (c *Reader) Functions() []FunctionInfo {
	var out []FunctionInfo
	for i := uint32(0); i < c.NumFunctions; i++ {
		f, _ := c.Function(i)
		if f.EntryPC == None {
			continue
		}
		name, ok := c.String(f.Name)
		if !ok {
			name = "?"
		}
		out = append(out, FunctionInfo{name, f.EntryPC, f.Lang})
	}
	return out
}

func isSep(c byte) bool { return c == '/' || c == '\\' }

func isWindowsAbs(p string) bool {
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return true
	}
	if len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z')) {
		return len(p) == 2 || isSep(p[2])
	}
	return false
}

func isWindowsPath(p string) bool { return isWindowsAbs(p) || strings.Contains(p, `\`) }

// JoinPath joins two paths as symbolic_common::join_path does: an absolute
// (Unix or Windows) or "<...>" other wins, Windows separators when either
// path is a Windows one.
func JoinPath(base, other string) string {
	if strings.HasPrefix(other, "<") && strings.HasSuffix(other, ">") {
		return other
	}
	if base == "" || isWindowsAbs(other) || strings.HasPrefix(other, "/") {
		return other
	}
	if other == "" {
		return base
	}
	if isSep(other[0]) {
		if isWindowsAbs(base) {
			return base[:2] + other
		}
		return other
	}
	sep := "/"
	if isWindowsPath(base) || isWindowsPath(other) {
		sep = `\`
	}
	return strings.TrimRight(base, `/\`) + sep + strings.TrimLeft(other, `/\`)
}

// CleanPath removes "." and resolvable ".." components as
// symbolic_common::clean_path does (it keeps repeated separators).
func CleanPath(p string) string {
	sep := byte('/')
	if isWindowsPath(p) {
		sep = '\\'
	}
	var rv []byte
	needSep, pastRoot := false, false
	pop := func() bool {
		for i := len(rv) - 1; i >= 0; i-- {
			if isSep(rv[i]) {
				rv = rv[:i]
				return true
			}
		}
		if len(rv) > 0 {
			rv = rv[:0]
			return true
		}
		return false
	}
	// split_terminator: a trailing separator yields no empty last segment.
	segs := splitTerminator(p)
	for _, s := range segs {
		switch s {
		case ".":
			continue
		case "..":
			if !pastRoot && pop() {
				if len(rv) == 0 {
					needSep = false
				}
			} else {
				if !pastRoot {
					needSep, pastRoot = false, true
				}
				if needSep {
					rv = append(rv, sep)
				}
				rv = append(rv, ".."...)
				needSep = true
			}
			continue
		}
		if needSep {
			rv = append(rv, sep)
		} else {
			needSep = true
		}
		rv = append(rv, s...)
	}
	return string(rv)
}

// splitTerminator splits at '/' and '\', without an empty last segment for a
// trailing separator (Rust's split_terminator).
func splitTerminator(p string) []string {
	if p == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if isSep(p[i]) {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	if start < len(p) {
		out = append(out, p[start:])
	}
	return out
}
