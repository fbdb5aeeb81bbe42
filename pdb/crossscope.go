package pdb

import (
	"fmt"
	"slices"
)

// IsCrossModule reports whether ti is a cross-module reference (its high
// bit set), as compilers write them with link-time code generation: an
// index into the referring module's DEBUG_S_CROSSSCOPEIMPORTS
// (CrossModule), to be resolved through the exporting module's
// DEBUG_S_CROSSSCOPEEXPORTS (ExportedIndex).
func (ti TypeIndex) IsCrossModule() bool { return ti&0x80000000 != 0 }

// CrossModule splits a cross-module reference into the entry of the
// referring module's imports (the exporting module) and the position in
// that entry's list.
func (ti TypeIndex) CrossModule() (module, index int) {
	return int(ti>>20) & 0x7ff, int(ti & 0xfffff)
}

// CrossScopeImport is one entry of a DEBUG_S_CROSSSCOPEIMPORTS subsection:
// the items a module uses from another module, by that module's own
// (local) indices.
type CrossScopeImport struct {
	ModuleName uint32      // offset of the exporting module's name in /names
	Locals     []TypeIndex // local indices in the exporting module
}

// CrossScopeExport is one entry of a DEBUG_S_CROSSSCOPEEXPORTS subsection:
// a module's local index and the TPI or IPI index it stands for.
type CrossScopeExport struct {
	Local, Global TypeIndex
}

// ParseCrossScopeImports decodes a DEBUG_S_CROSSSCOPEIMPORTS subsection.
func ParseCrossScopeImports(data []byte) ([]CrossScopeImport, error) {
	b := &buf{b: data, ctx: "cross-scope imports"}
	var out []CrossScopeImport
	for b.left() >= 8 {
		imp := CrossScopeImport{ModuleName: b.u32()}
		n := b.u32()
		if uint64(n)*4 > uint64(b.left()) {
			return out, fmt.Errorf("cross-scope imports: entry %d: %d indices in %d bytes: %w", len(out), n, b.left(), ErrFormat)
		}
		imp.Locals = make([]TypeIndex, n)
		for i := range imp.Locals {
			imp.Locals[i] = TypeIndex(b.u32())
		}
		out = append(out, imp)
	}
	return out, b.err
}

// ParseCrossScopeExports decodes a DEBUG_S_CROSSSCOPEEXPORTS subsection,
// sorted by local index.
func ParseCrossScopeExports(data []byte) ([]CrossScopeExport, error) {
	b := &buf{b: data, ctx: "cross-scope exports"}
	out := make([]CrossScopeExport, 0, len(data)/8)
	for b.left() >= 8 {
		out = append(out, CrossScopeExport{TypeIndex(b.u32()), TypeIndex(b.u32())})
	}
	slices.SortStableFunc(out, func(a, b CrossScopeExport) int {
		return int(int64(a.Local) - int64(b.Local))
	})
	if b.left() != 0 {
		return out, fmt.Errorf("cross-scope exports: %d bytes left over: %w", b.left(), ErrFormat)
	}
	return out, nil
}

// ExportedIndex looks a local index up in a module's exports (sorted, as
// ParseCrossScopeExports returns them).
func ExportedIndex(exports []CrossScopeExport, local TypeIndex) (TypeIndex, bool) {
	i, ok := slices.BinarySearchFunc(exports, local, func(e CrossScopeExport, l TypeIndex) int {
		return int(int64(e.Local) - int64(l))
	})
	if !ok {
		return 0, false
	}
	return exports[i].Global, true
}
