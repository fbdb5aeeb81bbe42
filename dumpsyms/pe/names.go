package pe

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gobreakpad/gobreakpad/pdb"
)

// formatter writes function names with their argument lists from the
// PDB's type records, as Mozilla's dump_syms (pdb-addr2line's type
// formatter with its default flags: no return types, no "static", a space
// after commas, class names only).
type formatter struct {
	tpi, ipi *pdb.TypeStream
	ptrSize  uint64
	depth    int
	steps    int
	fwd      map[string]uint64 // sizes of forward-declared classes, by name

	// Cross-module references (crossmodule.go): the imports of the module
	// whose names are being formatted.
	imports []pdb.CrossScopeImport
	xmod    *crossModules
}

// maxTypeDepth bounds the recursion through type records: cyclic or
// absurdly deep references end in an error.
const maxTypeDepth = 64

// maxTypeSteps bounds the type records visited for one name: shared
// subtrees (an argument list naming one function pointer type twice, whose
// own arguments do the same...) would otherwise cost exponential time.
const maxTypeSteps = 10000

var errTooMuch = fmt.Errorf("type records: more than %d visited for one name: %w", maxTypeSteps, pdb.ErrFormat)

var errTooDeep = fmt.Errorf("type records nested deeper than %d: %w", maxTypeDepth, pdb.ErrFormat)

// function formats a procedure's name with its argument list from type ti
// (a TPI type); on errors the bare name.
func (f *formatter) function(name string, ti pdb.TypeIndex) string {
	if ti == 0 {
		return orOmitted(name)
	}
	var w strings.Builder
	f.depth, f.steps = 0, 0
	if err := f.emitFunction(&w, name, ti); err != nil {
		return name
	}
	return w.String()
}

func orOmitted(name string) string {
	if name == "" {
		return "<name omitted>"
	}
	return name
}

func (f *formatter) emitFunction(w *strings.Builder, name string, ti pdb.TypeIndex) error {
	k, data, err := f.typeRec(ti)
	if err != nil {
		return err
	}
	switch k {
	case pdb.LF_MFUNCTION:
		m, err := pdb.ParseMemberFunction(data)
		if err != nil {
			return err
		}
		w.WriteString(orOmitted(name))
		return f.methodArgs(w, m, true)
	case pdb.LF_PROCEDURE:
		p, err := pdb.ParseProcedure(data)
		if err != nil {
			return err
		}
		w.WriteString(orOmitted(name))
		w.WriteByte('(')
		if err := f.typeIndex(w, p.ArgList); err != nil {
			return err
		}
		w.WriteByte(')')
	default:
		w.WriteString(name)
	}
	return nil
}

// id formats an IPI item (LF_FUNC_ID, LF_MFUNC_ID, LF_STRING_ID): an
// inlined function's name.
func (f *formatter) id(ti pdb.TypeIndex) (string, error) {
	var w strings.Builder
	f.depth, f.steps = 0, 0
	err := f.emitID(&w, ti)
	return w.String(), err
}

func (f *formatter) emitID(w *strings.Builder, ti pdb.TypeIndex) error {
	if f.depth++; f.depth > maxTypeDepth {
		return errTooDeep
	}
	defer func() { f.depth-- }()
	k, data, err := f.idRec(ti)
	if err != nil {
		fmt.Fprintf(w, "<missing type 0x%x>", uint32(ti))
		return nil
	}
	switch k {
	case pdb.LF_MFUNC_ID:
		m, err := pdb.ParseMFuncID(data)
		if err != nil {
			return err
		}
		k2, d2, err := f.typeRec(m.Type)
		if err != nil {
			return err
		}
		if k2 != pdb.LF_MFUNCTION {
			return fmt.Errorf("LF_MFUNC_ID %#x: type %#x is not LF_MFUNCTION: %w", ti, m.Type, pdb.ErrFormat)
		}
		mf, err := pdb.ParseMemberFunction(d2)
		if err != nil {
			return err
		}
		if err := f.typeIndex(w, m.Class); err != nil {
			return err
		}
		w.WriteString("::")
		w.WriteString(orOmitted(m.Name))
		return f.methodArgs(w, mf, true)
	case pdb.LF_FUNC_ID:
		fi, err := pdb.ParseFuncID(data)
		if err != nil {
			return err
		}
		k2, d2, err := f.typeRec(fi.Type)
		if err != nil {
			return err
		}
		if k2 != pdb.LF_PROCEDURE {
			return fmt.Errorf("LF_FUNC_ID %#x: type %#x is not LF_PROCEDURE: %w", ti, fi.Type, pdb.ErrFormat)
		}
		p, err := pdb.ParseProcedure(d2)
		if err != nil {
			return err
		}
		if fi.Scope != 0 {
			if err := f.emitID(w, fi.Scope); err != nil {
				return err
			}
			w.WriteString("::")
		}
		w.WriteString(orOmitted(fi.Name))
		w.WriteByte('(')
		if err := f.typeIndex(w, p.ArgList); err != nil {
			return err
		}
		w.WriteByte(')')
	case pdb.LF_STRING_ID:
		s, err := pdb.ParseStringID(data)
		if err != nil {
			return err
		}
		if isAnonymousNamespace(s.String) {
			w.WriteString("`anonymous namespace'")
		} else {
			w.WriteString(s.String)
		}
	default:
		fmt.Fprintf(w, "<unhandled id scope %#x>::", uint16(k))
	}
	return nil
}

func isAnonymousNamespace(s string) bool {
	rest, ok := strings.CutPrefix(s, "?A0x")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 16, 32)
	return err == nil
}

// methodArgs writes a member function's argument list, with " const" for
// const methods (allowConst) and the this type first when it is not a
// pointer to the class.
func (f *formatter) methodArgs(w *strings.Builder, m pdb.MemberFunction, allowConst bool) error {
	k, data, err := f.typeRec(m.ArgList)
	if err != nil {
		return err
	}
	if k != pdb.LF_ARGLIST {
		return fmt.Errorf("argument list %#x of kind %#x: %w", m.ArgList, k, pdb.ErrFormat)
	}
	args, err := pdb.ParseArgList(data)
	if err != nil {
		return err
	}
	isConst := false
	var extra pdb.TypeIndex
	if m.ThisType != 0 {
		given, c := f.ptrToClass(m.ThisType, m.ClassType)
		if given {
			isConst = c
		} else {
			extra = m.ThisType
		}
	}
	w.WriteByte('(')
	if extra != 0 {
		if err := f.typeIndex(w, extra); err != nil {
			return err
		}
		if len(args) > 0 {
			w.WriteString(", ")
		}
	}
	if err := f.argList(w, args); err != nil {
		return err
	}
	w.WriteByte(')')
	if isConst && allowConst {
		w.WriteString(" const")
	}
	return nil
}

// ptrToClass reports whether ptr is a pointer to class (given), and then
// whether the class is const.
func (f *formatter) ptrToClass(ptr, class pdb.TypeIndex) (given, isConst bool) {
	k, data, err := f.typeRec(ptr)
	if err != nil || k != pdb.LF_POINTER {
		return false, false
	}
	p, err := pdb.ParsePointer(data)
	if err != nil {
		return false, false
	}
	if p.Referent == class {
		return true, false
	}
	k, data, err = f.typeRec(p.Referent)
	if err == nil && k == pdb.LF_MODIFIER {
		if m, err := pdb.ParseModifier(data); err == nil && m.Type == class {
			return true, m.Modifiers&1 != 0
		}
	}
	return false, false
}

func (f *formatter) argList(w *strings.Builder, args []pdb.TypeIndex) error {
	for i, a := range args {
		if i > 0 {
			w.WriteString(", ")
		}
		if err := f.typeIndex(w, a); err != nil {
			return err
		}
	}
	return nil
}

// typeIndex writes the name of type ti.
func (f *formatter) typeIndex(w *strings.Builder, ti pdb.TypeIndex) error {
	if ti < 0x1000 {
		return f.primitive(w, ti, false)
	}
	k, data, err := f.typeRec(ti)
	if err != nil {
		fmt.Fprintf(w, "<missing type 0x%x>", uint32(ti))
		return nil
	}
	return f.typeRecord(w, ti, k, data)
}

func (f *formatter) typeRecord(w *strings.Builder, ti pdb.TypeIndex, k pdb.LeafKind, data []byte) error {
	if f.depth++; f.depth > maxTypeDepth {
		return errTooDeep
	}
	defer func() { f.depth-- }()
	if f.steps++; f.steps > maxTypeSteps {
		return errTooMuch
	}
	switch k {
	case pdb.LF_CLASS, pdb.LF_STRUCTURE, pdb.LF_INTERFACE, pdb.LF_UNION, pdb.LF_ENUM:
		c, err := pdb.ParseClass(k, data)
		if err != nil {
			return err
		}
		w.WriteString(c.Name)
	case pdb.LF_MFUNCTION:
		m, err := pdb.ParseMemberFunction(data)
		if err != nil {
			return err
		}
		w.WriteString("()")
		return f.methodArgs(w, m, false)
	case pdb.LF_PROCEDURE:
		p, err := pdb.ParseProcedure(data)
		if err != nil {
			return err
		}
		w.WriteString("()(")
		return f.typeIndex(w, p.ArgList)
	case pdb.LF_ARGLIST:
		args, err := pdb.ParseArgList(data)
		if err != nil {
			return err
		}
		return f.argList(w, args)
	case pdb.LF_POINTER:
		p, err := pdb.ParsePointer(data)
		if err != nil {
			return err
		}
		return f.pointer(w, p, false)
	case pdb.LF_ARRAY:
		a, err := pdb.ParseArray(data)
		if err != nil {
			return err
		}
		return f.array(w, a)
	case pdb.LF_MODIFIER:
		m, err := pdb.ParseModifier(data)
		if err != nil {
			return err
		}
		return f.modifier(w, m)
	default:
		fmt.Fprintf(w, "unhandled type /* %#x */", uint16(k))
	}
	return nil
}

type ptrAttr struct {
	pointerConst, pointeeConst bool
	mode                       int
}

func (f *formatter) pointer(w *strings.Builder, p pdb.Pointer, isConst bool) error {
	attrs := []ptrAttr{{pointerConst: p.IsConst() || isConst, mode: p.Mode()}}
	for range maxTypeDepth {
		if p.Referent < 0x1000 {
			return f.otherPtr(w, p.Referent, attrs)
		}
		k, data, err := f.typeRec(p.Referent)
		if err != nil {
			fmt.Fprintf(w, "<missing type 0x%x>", uint32(p.Referent))
			return nil
		}
		switch k {
		case pdb.LF_POINTER:
			q, err := pdb.ParsePointer(data)
			if err != nil {
				return err
			}
			attrs = append(attrs, ptrAttr{pointerConst: q.IsConst(), mode: q.Mode()})
			p = q
		case pdb.LF_MODIFIER:
			m, err := pdb.ParseModifier(data)
			if err != nil {
				return err
			}
			attrs[len(attrs)-1].pointeeConst = m.Modifiers&1 != 0
			k2, d2, err := f.typeRec(m.Type)
			if err == nil && k2 == pdb.LF_POINTER {
				q, err := pdb.ParsePointer(d2)
				if err != nil {
					return err
				}
				attrs = append(attrs, ptrAttr{pointerConst: q.IsConst(), mode: q.Mode()})
				p = q
				continue
			}
			return f.otherPtr(w, m.Type, attrs)
		default:
			return f.otherPtr(w, p.Referent, attrs)
		}
	}
	return errTooDeep
}

// otherPtr writes a pointer to type ti: function pointers in their
// declarator form, others as the type then the sigils.
func (f *formatter) otherPtr(w *strings.Builder, ti pdb.TypeIndex, attrs []ptrAttr) error {
	if ti >= 0x1000 {
		if k, data, err := f.typeRec(ti); err == nil {
			switch k {
			case pdb.LF_MFUNCTION:
				m, err := pdb.ParseMemberFunction(data)
				if err != nil {
					return err
				}
				if m.Options&2 == 0 {
					if err := f.typeIndex(w, m.ReturnType); err != nil {
						return err
					}
					w.WriteByte(' ')
				}
				w.WriteByte('(')
				if err := f.typeIndex(w, m.ClassType); err != nil {
					return err
				}
				f.attributes(w, attrs, false, false)
				w.WriteByte(')')
				return f.methodArgs(w, m, false)
			case pdb.LF_PROCEDURE:
				p, err := pdb.ParseProcedure(data)
				if err != nil {
					return err
				}
				if p.Options&2 == 0 {
					if err := f.typeIndex(w, p.ReturnType); err != nil {
						return err
					}
					w.WriteByte(' ')
				}
				w.WriteByte('(')
				f.attributes(w, attrs, false, false)
				w.WriteString(")(")
				if err := f.typeIndex(w, p.ArgList); err != nil {
					return err
				}
				w.WriteByte(')')
				return nil
			}
		}
	}
	var sub strings.Builder
	if err := f.typeIndex(&sub, ti); err != nil {
		return err
	}
	s := sub.String()
	w.WriteString(s)
	sigil := strings.HasSuffix(s, "*") || strings.HasSuffix(s, "&")
	f.attributes(w, attrs, true, sigil)
	return nil
}

func (f *formatter) attributes(w *strings.Builder, attrs []ptrAttr, spaceAtBeginning, prevSigil bool) {
	atBeginning := true
	for i := len(attrs) - 1; i >= 0; i-- {
		a := attrs[i]
		if a.pointeeConst {
			if !atBeginning || spaceAtBeginning {
				w.WriteByte(' ')
			}
			w.WriteString("const")
			atBeginning = false
			prevSigil = false
		}
		atBeginning = false
		switch a.mode {
		case pdb.PtrModePointer:
			w.WriteByte('*')
		case pdb.PtrModeLValueRef:
			w.WriteByte('&')
		case pdb.PtrModeDataMember, pdb.PtrModeMemberFunction:
			w.WriteString("::*")
		case pdb.PtrModeRValueRef:
			w.WriteString("&&")
		}
		prevSigil = true
		if a.pointerConst {
			w.WriteString(" const")
			prevSigil = false
		}
	}
	_ = prevSigil
}

func (f *formatter) array(w *strings.Builder, a pdb.Array) error {
	dims := []uint64{a.Size}
	base := a.ElemType
	for range maxTypeDepth {
		if base < 0x1000 {
			break
		}
		k, data, err := f.typeRec(base)
		if err != nil || k != pdb.LF_ARRAY {
			break
		}
		b, err := pdb.ParseArray(data)
		if err != nil {
			return err
		}
		dims = append(dims, b.Size)
		base = b.ElemType
	}
	baseSize := f.size(base, 0)
	if err := f.typeIndex(w, base); err != nil {
		return err
	}
	for i, d := range dims {
		next := baseSize
		if i+1 < len(dims) {
			next = dims[i+1]
		}
		if next != 0 {
			fmt.Fprintf(w, "[%d]", d/next)
		} else {
			w.WriteString("[]")
		}
	}
	return nil
}

func (f *formatter) modifier(w *strings.Builder, m pdb.Modifier) error {
	isConst := m.Modifiers&1 != 0
	if m.Type < 0x1000 {
		return f.primitive(w, m.Type, isConst)
	}
	k, data, err := f.typeRec(m.Type)
	if err != nil {
		fmt.Fprintf(w, "<missing type 0x%x>", uint32(m.Type))
		return nil
	}
	if k == pdb.LF_POINTER {
		p, err := pdb.ParsePointer(data)
		if err != nil {
			return err
		}
		return f.pointer(w, p, isConst)
	}
	if isConst {
		w.WriteString("const ")
	}
	return f.typeRecord(w, m.Type, k, data)
}

// primitiveNames are the names of the basic types (the low byte of a
// primitive type index).
var primitiveNames = map[uint32]string{
	0x00: "<NoType>", 0x03: "void", 0x08: "HRESULT",
	0x10: "signed char", 0x20: "unsigned char", 0x70: "char", 0x71: "wchar_t", 0x7a: "char16_t", 0x7b: "char32_t", 0x7c: "char8_t",
	0x68: "int8_t", 0x69: "uint8_t",
	0x11: "short", 0x21: "unsigned short", 0x72: "int16_t", 0x73: "uint16_t",
	0x12: "long", 0x22: "unsigned long", 0x74: "int", 0x75: "unsigned int",
	0x13: "long long", 0x23: "unsigned long long", 0x76: "int64_t", 0x77: "uint64_t",
	0x14: "int128_t", 0x24: "uint128_t", 0x78: "int128_t", 0x79: "uint128_t",
	0x46: "float16_t", 0x40: "float", 0x45: "float", 0x44: "float48_t", 0x41: "double", 0x42: "long double", 0x43: "long double",
	0x50: "complex<float>", 0x51: "complex<double>", 0x52: "complex<long double>", 0x53: "complex<long double>",
	0x30: "bool", 0x31: "bool16_t", 0x32: "bool32_t", 0x33: "bool64_t",
}

var primitiveSizes = map[uint32]uint64{
	0x10: 1, 0x20: 1, 0x70: 1, 0x68: 1, 0x69: 1, 0x30: 1, 0x7c: 1,
	0x71: 2, 0x7a: 2, 0x11: 2, 0x21: 2, 0x72: 2, 0x73: 2, 0x46: 2, 0x31: 2,
	0x12: 4, 0x22: 4, 0x74: 4, 0x75: 4, 0x40: 4, 0x45: 4, 0x7b: 4, 0x32: 4, 0x50: 8,
	0x13: 8, 0x23: 8, 0x76: 8, 0x77: 8, 0x41: 8, 0x33: 8, 0x08: 4,
	0x14: 16, 0x24: 16, 0x78: 16, 0x79: 16, 0x43: 16, 0x51: 16,
	0x44: 6, 0x42: 10, 0x52: 20, 0x53: 32,
}

func (f *formatter) primitive(w *strings.Builder, ti pdb.TypeIndex, isConst bool) error {
	name, ok := primitiveNames[uint32(ti)&0xff]
	if !ok {
		fmt.Fprintf(w, "<unknown primitive 0x%x>", uint32(ti))
		return nil
	}
	switch {
	case uint32(ti)&0xf00 != 0 && isConst:
		w.WriteString(name + " const*")
	case uint32(ti)&0xf00 != 0:
		w.WriteString(name + "*")
	case isConst:
		w.WriteString("const " + name)
	default:
		w.WriteString(name)
	}
	return nil
}

// size returns the size of type ti in bytes, 0 when unknown.
func (f *formatter) size(ti pdb.TypeIndex, depth int) uint64 {
	if depth > maxTypeDepth {
		return 0
	}
	if ti < 0x1000 {
		if uint32(ti)&0xf00 != 0 {
			return f.ptrSize
		}
		return primitiveSizes[uint32(ti)&0xff]
	}
	k, data, err := f.typeRec(ti)
	if err != nil {
		return 0
	}
	switch k {
	case pdb.LF_CLASS, pdb.LF_STRUCTURE, pdb.LF_INTERFACE, pdb.LF_UNION:
		c, err := pdb.ParseClass(k, data)
		if err != nil {
			return 0
		}
		if c.Props&0x80 != 0 {
			return f.forwardSize(c, ti)
		}
		return c.Size
	case pdb.LF_ENUM:
		c, err := pdb.ParseClass(k, data)
		if err != nil {
			return 0
		}
		return f.size(c.Underlying, depth+1)
	case pdb.LF_POINTER:
		p, err := pdb.ParsePointer(data)
		if err != nil {
			return 0
		}
		return uint64(p.Size())
	case pdb.LF_ARRAY:
		a, err := pdb.ParseArray(data)
		if err != nil {
			return 0
		}
		return a.Size
	case pdb.LF_MODIFIER:
		m, err := pdb.ParseModifier(data)
		if err != nil {
			return 0
		}
		return f.size(m.Type, depth+1)
	case pdb.LF_PROCEDURE, pdb.LF_MFUNCTION:
		return f.ptrSize
	}
	return 0
}

// forwardSize finds the size of a forward-declared class from its
// definition, a later record with the same (unique) name.
func (f *formatter) forwardSize(c pdb.Class, ti pdb.TypeIndex) uint64 {
	name := c.UniqueName
	if name == "" {
		name = c.Name
	}
	if sz, ok := f.fwd[name]; ok {
		return sz
	}
	f.fwd[name] = c.Size // until found; also ends cycles
	end := f.tpi.Header.IndexBegin + pdb.TypeIndex(f.tpi.Len())
	for i := ti + 1; i < end; i++ {
		k, data, err := f.typeRec(i)
		if err != nil {
			break
		}
		switch k {
		case pdb.LF_CLASS, pdb.LF_STRUCTURE, pdb.LF_INTERFACE, pdb.LF_UNION:
			d, err := pdb.ParseClass(k, data)
			if err != nil || d.Props&0x80 != 0 {
				continue
			}
			n := d.UniqueName
			if n == "" {
				n = d.Name
			}
			if n == name {
				f.fwd[name] = d.Size
				return d.Size
			}
		}
	}
	return c.Size
}

// compilerSuffix matches the suffixes compilers append to local copies of
// functions (".llvm.123", ".cold", " [clone .isra.0]"), which Mozilla's
// dump_syms strips.
var compilerSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`((\.(cold|constprop|llvm|localalias|lto_priv|isra|part|str)(\.[0-9]+)?)|( ?\[clone[^\]]*\] ?))+$`)
})

// hasCompilerSuffix reports whether s holds one of the pieces that
// compilerSuffix matches: without one the expression (which backtracks
// from every position of the name) cannot match.
func hasCompilerSuffix(s string) bool {
	if !strings.ContainsAny(s, ".[") {
		return false
	}
	for _, p := range [...]string{".cold", ".constprop", ".llvm", ".localalias", ".lto_priv", ".isra", ".part", ".str", "[clone"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// fixName normalizes a name as Mozilla's dump_syms: compiler suffixes
// stripped, "`anonymous namespace'" written "(anonymous namespace)".
func fixName(s string) string {
	if hasCompilerSuffix(s) {
		s = compilerSuffix().ReplaceAllString(s, "")
	}
	return strings.ReplaceAll(s, "`anonymous namespace'", "(anonymous namespace)")
}
