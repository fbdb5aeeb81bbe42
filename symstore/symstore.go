// Package symstore is the one authority for the names and layouts of symbol
// stores: where a Breakpad-layout store keeps a module's files
// (NAME/ID/NAME.sym, and the other formats' .symc, .symbfile, .symbfile.zst
// and .gsym beside it), where a Microsoft symbol store keeps a file (the file
// itself, its cabinet NAM_ and file.ptr), the check every name from a dump
// or a server passes before it becomes a path (CheckName), and a module's
// base name from a Unix or Windows path (BaseName).
//
// It is a leaf (the standard library only), so that the readers of stores,
// the symbol sources, the programs and the walker's outputs all take these
// rules from one place.
package symstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrBadName is wrapped by the errors about names that cannot be one element
// of a path inside a root.
var ErrBadName = errors.New("unusable file name")

// maxName is the longest name CheckName accepts, in bytes (NAME_MAX of the
// usual file systems).
const maxName = 255

// CheckName reports whether s can be one element of a path that must stay
// inside its root and mean the same on every system. It refuses:
//
//   - the empty name, "." and "..";
//   - names holding a separator: '/' or '\' (either system's), or ':' (a
//     drive, "c:", or an alternate data stream on Windows);
//   - names holding NUL or another control byte (0x00-0x1f, 0x7f);
//   - names over 255 bytes.
//
// An absolute path is refused by these rules (it holds a separator). The
// errors wrap ErrBadName.
func CheckName(s string) error {
	switch {
	case s == "" || s == "." || s == "..":
		return fmt.Errorf("%w: %q", ErrBadName, s)
	case len(s) > maxName:
		return fmt.Errorf("%w: %d bytes long", ErrBadName, len(s))
	case strings.ContainsAny(s, `/\:`):
		return fmt.Errorf("%w: %q holds a separator", ErrBadName, s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return fmt.Errorf("%w: %q holds a control byte", ErrBadName, s)
		}
	}
	return nil
}

// staysIn reports whether s, one element of a path, cannot leave the
// directory it is joined to: the part of CheckName's rules about leaving a
// root, all that a lookup in an existing Breakpad store needs.
func staysIn(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// BaseName returns the last element of a module's path, Unix or Windows
// (either separator), as Breakpad's PathnameStripper and rust-minidump do:
// "" for a path ending in a separator.
func BaseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// BreakpadPath returns the path, relative to the root of a Breakpad-layout
// symbol store, of the file with extension ext (".sym", ".symc",
// ".symbfile", ".symbfile.zst", ".gsym") of a module with the given debug
// file and debug identifier, as its three elements:
//
//	NAME/ID/STEM.ext
//
// NAME is the debug file's base name (BaseName: directory parts in Unix or
// Windows form dropped) and STEM is NAME without a ".pdb" extension (in any
// case, when something is left before it), as Breakpad's
// SimpleSymbolSupplier names them. It fails (wrapping ErrBadName) when NAME
// or ID is empty, "." or "..", or holds a separator or NUL: the elements
// never leave the root. These are the rules of lookups in existing stores,
// which find names CheckName refuses (a ':' in a Unix file name); a caller
// writing the file or sending the names to a server checks them with
// CheckName as well.
func BreakpadPath(debugFile, debugID, ext string) ([]string, error) {
	name := BaseName(debugFile)
	if !staysIn(name) {
		return nil, fmt.Errorf("debug file %q: %w", debugFile, ErrBadName)
	}
	if !staysIn(debugID) {
		return nil, fmt.Errorf("debug identifier %q: %w", debugID, ErrBadName)
	}
	stem := name
	if len(stem) > 4 && strings.EqualFold(stem[len(stem)-4:], ".pdb") {
		stem = stem[:len(stem)-4]
	}
	return []string{name, debugID, stem + ext}, nil
}

// BreakpadFile returns the path under root of a module's file with extension
// ext in a Breakpad-layout store: root joined with [BreakpadPath]'s elements.
func BreakpadFile(root, debugFile, debugID, ext string) (string, error) {
	elems, err := BreakpadPath(debugFile, debugID, ext)
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{root}, elems...)...), nil
}

// Form is one of the forms in which a Microsoft symbol store keeps a file.
type Form uint8

const (
	// Plain is the file itself: NAME/ID/NAME.
	Plain Form = iota
	// Packed is its cabinet (MS-CAB): NAME/ID/NAM_ (PackedName).
	Packed
	// Pointer is the text file saying where the file is: NAME/ID/file.ptr
	// ("PATH:location" or "MSG:why not").
	Pointer
)

// pointerFile is the name of a Microsoft store's pointer file.
const pointerFile = "file.ptr"

// MicrosoftPath returns the path, relative to the root of a Microsoft symbol
// store (the layout symstore.exe writes and SymSrv reads, also used by the
// cache of symbol downloads), of file name with index id in the given form,
// as its three elements: NAME/ID/NAME, NAME/ID/NAM_ or NAME/ID/file.ptr. The
// index is a PDB's GUID and age (a minidump's debug identifier) or a PE's
// timestamp and image size (its code identifier). name is used as given (a
// caller holding a module's path takes its BaseName first); name and id must
// pass CheckName, else the error says which did not.
func MicrosoftPath(name, id string, form Form) ([]string, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("file name: %w", err)
	}
	if err := CheckName(id); err != nil {
		return nil, fmt.Errorf("identifier: %w", err)
	}
	switch form {
	case Plain:
		return []string{name, id, name}, nil
	case Packed:
		return []string{name, id, PackedName(name)}, nil
	case Pointer:
		return []string{name, id, pointerFile}, nil
	}
	return nil, fmt.Errorf("symstore: unknown form %d", form)
}

// PackedName is the name a Microsoft symbol store gives the cabinet of the
// file name: its last letter replaced with '_' (NAME.pd_ for NAME.pdb,
// NAME.ex_ for NAME.exe). It returns "" for "".
func PackedName(name string) string {
	if name == "" {
		return ""
	}
	return name[:len(name)-1] + "_"
}

// UnpackedName is the name of the file a cabinet named name holds, as
// symbol stores name them: NAME.pdb for NAME.pd_, .exe for .ex_, .dll for
// .dl_, .dbg for .db_ (extensions in any case); other names are returned
// unchanged.
func UnpackedName(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || strings.ContainsAny(name[i:], `/\`) {
		return name
	}
	stem, ext := name[:i], name[i:]
	switch strings.ToLower(ext) {
	case ".pd_":
		return stem + ".pdb"
	case ".ex_":
		return stem + ".exe"
	case ".dl_":
		return stem + ".dll"
	case ".db_":
		return stem + ".dbg"
	}
	return name
}
