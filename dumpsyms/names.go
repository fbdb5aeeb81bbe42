package dumpsyms

import "github.com/gobreakpad/gobreakpad/symfile"

// Names numbers the FILE and INLINE_ORIGIN records of a Symbols as a reader
// meets their names: the first use of a name appends its record, numbered
// in order, and later uses get the same number. It is for readers whose
// format keeps names, not numbers, per record (SymCache, symbfile).
type Names struct {
	s              *Model
	files, origins map[string]uint32
}

// NewNames returns a Names appending to s, which should have no FILE or
// INLINE_ORIGIN records yet.
func NewNames(s *Model) *Names {
	return &Names{s: s, files: map[string]uint32{}, origins: map[string]uint32{}}
}

// File returns the number of the FILE record named path.
func (n *Names) File(path string) uint32 {
	i, ok := n.files[path]
	if !ok {
		i = uint32(len(n.s.Files))
		n.files[path] = i
		n.s.Files = append(n.s.Files, symfile.File{Number: i, Name: path})
	}
	return i
}

// Origin returns the id of the INLINE_ORIGIN record named name.
func (n *Names) Origin(name string) uint32 {
	i, ok := n.origins[name]
	if !ok {
		i = uint32(len(n.s.Origins))
		n.origins[name] = i
		n.s.Origins = append(n.s.Origins, symfile.InlineOrigin{ID: i, Name: name})
	}
	return i
}
