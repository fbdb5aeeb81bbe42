package pe

import (
	"strings"

	"github.com/gobreakpad/gobreakpad/pdb"
)

// crossModules resolves cross-module type and item references (indices
// with the high bit set, written with link-time code generation), as
// pdb-addr2line does for Mozilla's dump_syms: the referring module's
// DEBUG_S_CROSSSCOPEIMPORTS entry names the exporting module (through
// /names, matched case-insensitively with the DBI's module names) and its
// local index, which that module's DEBUG_S_CROSSSCOPEEXPORTS maps to a
// TPI or IPI index.
type crossModules struct {
	d       *dumper
	byName  map[string]int                 // lower-case module name → index
	exports map[int][]pdb.CrossScopeExport // by module index, read once
}

func (c *crossModules) resolve(imports []pdb.CrossScopeImport, ti pdb.TypeIndex) (pdb.TypeIndex, bool) {
	mi, li := ti.CrossModule()
	if mi >= len(imports) || li >= len(imports[mi].Locals) || c.d.names == nil {
		return 0, false
	}
	name, err := c.d.names.String(imports[mi].ModuleName)
	if err != nil {
		return 0, false
	}
	if c.byName == nil {
		c.byName = map[string]int{}
		for i := range c.d.dbi.Modules {
			n := strings.ToLower(c.d.dbi.Modules[i].Name)
			if _, dup := c.byName[n]; !dup {
				c.byName[n] = i
			}
		}
		c.exports = map[int][]pdb.CrossScopeExport{}
	}
	m, ok := c.byName[strings.ToLower(name)]
	if !ok {
		return 0, false
	}
	exp, ok := c.exports[m]
	if !ok {
		exp = c.readExports(m)
		c.exports[m] = exp
	}
	g, ok := pdb.ExportedIndex(exp, imports[mi].Locals[li])
	if !ok || g.IsCrossModule() {
		return 0, false
	}
	return g, true
}

// readExports reads module m's DEBUG_S_CROSSSCOPEEXPORTS.
func (c *crossModules) readExports(m int) []pdb.CrossScopeExport {
	mod := &c.d.dbi.Modules[m]
	ms, err := c.d.f.ModuleSymbols(mod)
	if err != nil || ms == nil {
		return nil
	}
	subs, _ := pdb.ParseSubsections(ms.C13)
	var out []pdb.CrossScopeExport
	for _, s := range subs {
		if s.Kind == pdb.DEBUG_S_CROSSSCOPEEXPORTS {
			e, err := pdb.ParseCrossScopeExports(s.Data)
			if err != nil {
				c.d.damage("cross-module imports", "module %s: %v", mod.Name, err)
			}
			out = append(out, e...)
		}
	}
	return out
}

// typeRec returns TPI record ti, a cross-module reference resolved.
func (f *formatter) typeRec(ti pdb.TypeIndex) (pdb.LeafKind, []byte, error) {
	return f.tpi.Record(f.global(ti))
}

// idRec returns IPI record ti, a cross-module reference resolved.
func (f *formatter) idRec(ti pdb.TypeIndex) (pdb.LeafKind, []byte, error) {
	return f.ipi.Record(f.global(ti))
}

// global resolves a cross-module reference of the current module; other
// indices (and references that do not resolve, which then read as
// missing) are returned as they are.
func (f *formatter) global(ti pdb.TypeIndex) pdb.TypeIndex {
	if !ti.IsCrossModule() || f.xmod == nil {
		return ti
	}
	if g, ok := f.xmod.resolve(f.imports, ti); ok {
		return g
	}
	return ti
}
