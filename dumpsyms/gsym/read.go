package gsym

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/dumpsyms"
	"github.com/gobreakpad/gobreakpad/gsym"
	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/symfile"
)

// ReadFile reads the GSYM file at path into the model (see Read).
func ReadFile(path string, warn func(string, ...any)) (*dumpsyms.Model, error) {
	f, err := gsym.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return Read(f, name, warn)
}

// Read makes a model of a GSYM file, for a module named name. GSYM records
// neither operating system nor architecture: the MODULE record says
// "Linux unknown". The UUID becomes the code id and, as an ELF build ID,
// the debug id. Entries with a size become FUNC records with their line
// rows (each row a line record up to the next row or the function's end)
// and their inline trees as INLINE records; size-0 entries become PUBLIC
// records. Merged functions are left out (warn says so).
func Read(f *gsym.File, name string, warn func(string, ...any)) (*dumpsyms.Model, error) {
	if warn == nil {
		warn = func(string, ...any) {}
	}
	id := f.Header.ID()
	s := &dumpsyms.Model{
		Module:      symfile.Module{OS: "Linux", Arch: "unknown", ID: moduleid.ELFDebugID(id), Name: name},
		LoadAddress: f.Header.BaseAddress,
	}
	if len(id) > 0 {
		s.CodeID = symfile.CodeID{ID: strings.ToUpper(hex.EncodeToString(id))}
	} else {
		s.Module.ID = strings.Repeat("0", 33)
	}
	r := reader{f: f, s: s, warn: warn, strs: map[uint32]string{}, origins: map[uint32]uint32{}, files: map[uint32]bool{}}
	for i := 0; i < f.NumFunctions(); i++ {
		fi, err := f.FunctionAt(i)
		if err != nil {
			return nil, err
		}
		if err := r.function(fi); err != nil {
			return nil, fmt.Errorf("gsym: function %d: %w", i, err)
		}
	}
	for i := 1; i < f.NumFiles(); i++ {
		if !r.files[uint32(i)] {
			continue
		}
		p, err := f.Path(uint32(i))
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, symfile.File{Number: uint32(i), Name: p})
	}
	return s, nil
}

type reader struct {
	f       *gsym.File
	s       *dumpsyms.Model
	warn    func(string, ...any)
	strs    map[uint32]string
	origins map[uint32]uint32 // name offset → INLINE_ORIGIN id
	files   map[uint32]bool   // file indexes used
}

func (r *reader) str(off uint32) (string, error) {
	if s, ok := r.strs[off]; ok {
		return s, nil
	}
	s, err := r.f.String(off)
	r.strs[off] = s
	return s, err
}

func (r *reader) function(fi *gsym.FunctionInfo) error {
	name, err := r.str(fi.Name)
	if err != nil {
		return err
	}
	base := r.f.Header.BaseAddress
	start := fi.Start - base
	if len(fi.Merged) > 0 {
		r.warn("function %s at %#x: %d merged functions left out", name, start, len(fi.Merged))
	}
	if fi.Size == 0 {
		r.s.Publics = append(r.s.Publics, symfile.Public{Address: start, Name: name})
		return nil
	}
	fn := dumpsyms.Function{Name: name, Ranges: []symfile.Range{{Address: start, Size: uint64(fi.Size)}}}
	end := start + uint64(fi.Size)
	lt := fi.LineTable
	for i := 0; i < len(lt); i++ {
		// Of rows at one address the last is the one lookups find.
		if i+1 < len(lt) && lt[i+1].Address == lt[i].Address {
			continue
		}
		a := lt[i].Address - base
		next := end
		if i+1 < len(lt) {
			next = lt[i+1].Address - base
		}
		if a >= end || next <= a {
			continue
		}
		r.files[lt[i].File] = true
		fn.Lines = append(fn.Lines, symfile.Line{Address: a, Size: min(next, end) - a, Line: int64(lt[i].Line), File: lt[i].File})
	}
	if fi.Inline != nil {
		for _, c := range fi.Inline.Children {
			if err := r.inline(&fn, &c, 0); err != nil {
				return err
			}
		}
	}
	r.s.Funcs = append(r.s.Funcs, fn)
	return nil
}

func (r *reader) inline(fn *dumpsyms.Function, ii *gsym.InlineInfo, depth uint32) error {
	name, err := r.str(ii.Name)
	if err != nil {
		return err
	}
	id, ok := r.origins[ii.Name]
	if !ok {
		id = uint32(len(r.s.Origins))
		r.origins[ii.Name] = id
		r.s.Origins = append(r.s.Origins, symfile.InlineOrigin{ID: id, Name: name})
	}
	in := symfile.Inline{Depth: depth, CallLine: ii.CallLine, CallFile: int32(ii.CallFile), HasCallFile: true, Origin: id}
	if ii.CallFile == 0 {
		in.CallFile = -1
	} else {
		r.files[ii.CallFile] = true
	}
	base := r.f.Header.BaseAddress
	for _, x := range ii.Ranges {
		in.Ranges = append(in.Ranges, symfile.Range{Address: x.Start - base, Size: x.End - x.Start})
	}
	fn.Inlines = append(fn.Inlines, in)
	for i := range ii.Children {
		if err := r.inline(fn, &ii.Children[i], depth+1); err != nil {
			return err
		}
	}
	return nil
}
