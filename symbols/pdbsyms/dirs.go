package pdbsyms

import (
	"debug/pe"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/moduleid"
	"github.com/gobreakpad/gobreakpad/pdb"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// MaxExtract bounds the size of a file extracted from a local CAB archive.
const MaxExtract = 4 << 30

// Dirs is a symbols.Source over local directories of Windows debug files.
// For a module whose debug file is NAME.pdb with debug identifier GUIDAGE,
// and whose code file is NAME.exe (or .dll...) with code identifier
// TIMESTAMPSIZE, each directory is searched for
//
//	DIR/NAME.pdb/GUIDAGE/NAME.pdb       a symbol-store tree (symstore.exe, SymSrv's downstream stores)
//	DIR/NAME.pdb/GUIDAGE/NAME.pd_       its compressed form (a CAB archive, extracted into the cache)
//	DIR/NAME.pdb                        a plain folder: used when its GUID and age are the module's
//	DIR/NAME.exe/TIMESTAMPSIZE/NAME.exe the PE (and NAME.ex_), for modules without a PDB
//	DIR/NAME.exe                        a plain folder: used when its timestamp and size are the module's
//
// A module without a debug file and identifier (a PE without a CodeView
// record, as Wine's DLLs are) is looked for by its code file and code
// identifier alone (the last two forms), its symbols made from the PE
// (exports, STACK CFI from .pdata and .xdata: Converter.Convert).
//
// and the PDB (or, without one, the PE) is converted once into the cache by
// Converter. Names are tried as the module gives them, then in lower case.
type Dirs struct {
	Roots []string
	Conv  *Converter

	mu      sync.Mutex
	matches map[string]bool // plain-folder file path + identifier: matches
}

// NewDirs returns the source over roots, converting with conv.
func NewDirs(conv *Converter, roots ...string) *Dirs { return &Dirs{Roots: roots, Conv: conv} }

// Load implements symbols.Source.
func (d *Dirs) Load(m symbols.Module) (*symbols.Symbols, error) {
	pdbName := symstore.BaseName(m.DebugFile)
	peName := symstore.BaseName(m.CodeFile)
	if pdbName == "" && m.DebugID == "" && peName != "" && IsPECodeID(m.CodeID) {
		// No CodeView record (Wine's DLLs): the PE alone, by its code
		// identifier.
		pePath, err := d.find(peName, m.CodeID, peMatches)
		if err != nil {
			return nil, err
		}
		if pePath == "" {
			return nil, fmt.Errorf("%w: no %s %s in %s", symbols.ErrNotFound, peName, m.CodeID, strings.Join(d.Roots, ", "))
		}
		return d.Conv.Convert(m, "", pePath)
	}
	if !strings.HasSuffix(strings.ToLower(pdbName), ".pdb") {
		return nil, fmt.Errorf("%w: %s: not a PDB", symbols.ErrNotFound, m.DebugFile)
	}
	pdbPath, err := d.find(pdbName, m.DebugID, pdbMatches)
	if err != nil {
		return nil, err
	}
	var pePath string
	if pdbPath == "" && peName != "" && m.CodeID != "" {
		if pePath, err = d.find(peName, m.CodeID, peMatches); err != nil {
			return nil, err
		}
	}
	if pdbPath == "" && pePath == "" {
		return nil, fmt.Errorf("%w: no %s %s in %s", symbols.ErrNotFound, pdbName, m.DebugID, strings.Join(d.Roots, ", "))
	}
	return d.Conv.Convert(m, pdbPath, pePath)
}

// find returns the path of file name with identifier id in the roots, its
// compressed form extracted into the cache, or "" when none has it.
func (d *Dirs) find(name, id string, matches func(path, id string) bool) (string, error) {
	if symstore.CheckName(name) != nil || symstore.CheckName(id) != nil {
		return "", nil
	}
	names := []string{name}
	if l := strings.ToLower(name); l != name {
		names = append(names, l)
	}
	for _, root := range d.Roots {
		for _, n := range names {
			if p, packed := StoreFile(root, n, id); p != "" {
				if !packed {
					return p, nil
				}
				if c, ok := d.Conv.Cache.Lookup(name, id, name); ok {
					return c, nil
				}
				return Extract(d.Conv.Cache, p, MaxExtract, name, id, name)
			}
			if p := filepath.Join(root, n); isFile(p) && d.match(p, id, matches) {
				return p, nil
			}
		}
	}
	return "", nil
}

// StoreFile returns the path of file name with index id in the
// Microsoft-layout store tree under root (symstore.MicrosoftPath): the file
// itself (root/NAME/ID/NAME), else its cabinet (root/NAME/ID/NAM_, packed
// true), else "". Names failing symstore.CheckName are in no store.
func StoreFile(root, name, id string) (path string, packed bool) {
	for _, form := range []symstore.Form{symstore.Plain, symstore.Packed} {
		elems, err := symstore.MicrosoftPath(name, id, form)
		if err != nil {
			return "", false
		}
		if p := filepath.Join(root, filepath.Join(elems...)); isFile(p) {
			return p, form == symstore.Packed
		}
	}
	return "", false
}

// match memoizes matches(p, id).
func (d *Dirs) match(p, id string, matches func(path, id string) bool) bool {
	key := p + "\x00" + id
	d.mu.Lock()
	ok, seen := d.matches[key]
	d.mu.Unlock()
	if seen {
		return ok
	}
	ok = matches(p, id)
	d.mu.Lock()
	if d.matches == nil {
		d.matches = map[string]bool{}
	}
	d.matches[key] = ok
	d.mu.Unlock()
	return ok
}

// Close releases nothing of its own (the Converter's files are its
// owner's to close).
func (d *Dirs) Close() error { return nil }

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// pdbMatches reports whether the PDB at p has debug identifier id (its GUID
// and age: the DBI stream's age when there is one, as dump_syms writes it).
func pdbMatches(p, id string) bool {
	f, err := pdb.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Info()
	if err != nil {
		return false
	}
	age := info.Age
	if dbi, err := f.DBI(); err == nil && dbi.Header.Age != 0 {
		age = dbi.Header.Age
	}
	return strings.EqualFold(moduleid.DebugID(info.GUID, age), id) || strings.EqualFold(info.DebugID(), id)
}

// peMatches reports whether the PE at p has code identifier id (its
// timestamp and image size).
func peMatches(p, id string) bool {
	f, err := pe.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var size uint32
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		size = h.SizeOfImage
	case *pe.OptionalHeader64:
		size = h.SizeOfImage
	default:
		return false
	}
	return strings.EqualFold(moduleid.PECodeID(f.FileHeader.TimeDateStamp, size), id)
}
