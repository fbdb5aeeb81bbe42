package msvc

import (
	"errors"
	"strconv"
	"strings"
)

// flags select details of the output, as undname's and msvc-demangler's.
type flags uint32

const (
	fNoFuncReturns flags = 1 << iota
	fNameOnly
	fNoAccess
	fNoMemberType
	fNoMSKeywords
	fNoThisType
	fMSTypenames
	fNoClassType
	fSpaceAfterComma
	fHugType
	fSpaceBeforePointer
	fWithPtr64
	fLLVM // llvm-undname's details: ">>", template constructors, operator casts
)

var errTooLong = errors.New("msvc: demangled name too long")

// printer writes a parsed name. C declarators are written inside out:
// pre writes what comes before the declared name (return types, pointers'
// pointees), post what comes after (parameter lists, array bounds).
type printer struct {
	f    flags
	w    []byte
	over bool
	max  int // output bound; MaxOutput when 0
}

func (p *printer) limit() int {
	if p.max > 0 {
		return p.max
	}
	return MaxOutput
}

func (p *printer) has(f flags) bool { return p.f&f != 0 }

func (p *printer) str(s string) {
	if len(p.w)+len(s) > p.limit() {
		p.over = true
		return
	}
	p.w = append(p.w, s...)
}

func (p *printer) byte(c byte) {
	if len(p.w)+1 > p.limit() {
		p.over = true
		return
	}
	p.w = append(p.w, c)
}

func (p *printer) last() byte {
	if len(p.w) == 0 {
		return 0
	}
	return p.w[len(p.w)-1]
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// space writes a space after a word, '*', '&', '>' or ')'.
func (p *printer) space() {
	if c := p.last(); isAlpha(c) || c == '*' || c == '&' || c == '>' || c == ')' {
		p.byte(' ')
	}
}

func (p *printer) spacePre() {
	if c := p.last(); isAlpha(c) || c == '&' || c == '>' || c == ')' {
		p.byte(' ')
	}
}

func (p *printer) spacePtr() {
	if c := p.last(); isAlpha(c) || c == '>' || c == ')' || p.has(fLLVM) && c >= '0' && c <= '9' {
		p.byte(' ')
	}
}

func (p *printer) result(r *result) {
	if p.over {
		return
	}
	if r.typ.kind == tkString && p.has(fLLVM) {
		p.str(r.typ.lit)
		return
	}
	if !p.has(fNameOnly | fNoFuncReturns) {
		p.pre(r.typ)
	}
	p.symbol(r.sym, r.typ)
	if !p.has(fNameOnly) {
		p.post(r.typ)
	}
}

func (p *printer) callConv(cc callConv) {
	if c := p.last(); c != ' ' && c != '(' {
		p.byte(' ')
	}
	if !p.has(fNoMSKeywords) {
		p.str(ccNames[cc])
		p.byte(' ')
	}
}

var primNames = [...]string{
	pVoid: "void", pBool: "bool", pChar: "char", pSchar: "signed char", pUchar: "unsigned char",
	pShort: "short", pUshort: "unsigned short", pInt: "int", pUint: "unsigned int", pLong: "long",
	pUlong: "unsigned long", pInt64: "int64_t", pUint64: "uint64_t", pInt128: "int128_t",
	pUint128: "uint128_t", pWchar: "wchar_t", pFloat: "float", pDouble: "double",
	pLdouble: "long double", pChar8: "char8_t", pChar16: "char16_t", pChar32: "char32_t",
}

var msPrimNames = map[prim]string{pInt64: "__int64", pUint64: "unsigned __int64", pInt128: "__int128", pUint128: "unsigned __int128"}

func (p *printer) pre(t *typ) {
	if p.over {
		return
	}
	var sc storage
	switch t.kind {
	case tkString:
		if p.has(fLLVM) {
			p.str(t.lit)
		}
		return
	case tkSymbolArg:
		if t.num == 1 {
			p.byte('&')
		}
		p.result(t.target)
		return
	case tkExternC:
		if p.has(fLLVM) {
			p.str(`extern "C" `)
		}
		return
	case tkNone, tkEmptyPack, tkRTTI:
		return
	case tkMemberFunc:
		if t.fc&fcThunk != 0 {
			p.str("[thunk]: ")
		}
		if !p.has(fNoAccess) {
			switch {
			case t.fc&fcPrivate != 0:
				p.str("private: ")
			case t.fc&fcProtected != 0:
				p.str("protected: ")
			case t.fc&fcPublic != 0:
				p.str("public: ")
			}
		}
		if !p.has(fNoMemberType) {
			if t.fc&fcStatic != 0 {
				p.str("static ")
			}
			if t.fc&fcVirtual != 0 {
				p.str("virtual ")
			}
		}
		p.pre(t.inner)
		p.callConv(t.cc)
		return
	case tkMemberFuncPtr:
		p.pre(t.inner)
		p.space()
		p.byte('(')
		p.callConv(t.cc)
		p.space()
		p.space()
		p.symbol(t.sym, nil)
		p.str("::*")
		return
	case tkFunc:
		p.pre(t.inner)
		p.callConv(t.cc)
		if p.has(fLLVM) && p.last() == ' ' {
			p.w = p.w[:len(p.w)-1]
		}
		return
	case tkVCallThunk:
		p.str("[thunk]: ")
		p.callConv(t.cc)
		return
	case tkVBTable, tkVFTable:
		sc = t.sc
	case tkTemplateParam:
		p.str("`template-parameter")
		p.str(strconv.Itoa(int(t.num)))
		p.byte('\'')
		return
	case tkTSSGuard:
		if p.has(fLLVM) {
			p.str("int")
			return
		}
		p.str("TSS")
		p.str(strconv.Itoa(int(t.num)))
		return
	case tkConstant:
		p.str(strconv.Itoa(int(t.num)))
		return
	case tkVarArgs:
		p.str("...")
		return
	case tkNullptr:
		p.str("std::nullptr_t")
		return
	case tkPtr, tkRef, tkRValueRef:
		switch in := t.inner; in.kind {
		case tkMemberFunc, tkFunc:
			p.pre(in.inner)
			p.space()
			p.byte('(')
			p.callConv(in.cc)
		case tkArray:
			p.pre(in)
			if p.has(fLLVM) {
				p.spacePtr()
			} else {
				p.space()
			}
			p.byte('(')
		default:
			p.pre(in)
		}
		if !p.has(fHugType) {
			p.space()
		} else if p.has(fSpaceBeforePointer) {
			p.spacePtr()
		}
		switch t.kind {
		case tkPtr:
			p.byte('*')
		case tkRef:
			p.byte('&')
		default:
			p.str("&&")
		}
		if t.sc&scRestrict != 0 && p.has(fLLVM) {
			p.str("__restrict")
		}
		sc = t.sc
	case tkArray:
		p.pre(t.inner)
		sc = t.sc
	case tkVar:
		switch t.vk {
		case vkPrivateStatic:
			p.str("private: static ")
		case vkProtectedStatic:
			p.str("protected: static ")
		case vkPublicStatic:
			p.str("public: static ")
		}
		p.pre(t.inner)
		sc = t.sc
		if p.has(fLLVM) && (t.inner.kind == tkPtr || t.inner.kind == tkRef || t.inner.kind == tkRValueRef) {
			sc = 0 // llvm-undname shows the pointer's own qualifiers only
		}
	case tkAlias:
		p.symbol(t.sym, nil)
		sc = t.sc
	case tkStruct, tkUnion, tkClass, tkEnum:
		if !p.has(fNoClassType) {
			p.str([...]string{tkStruct: "struct ", tkUnion: "union ", tkClass: "class ", tkEnum: "enum "}[t.kind])
		}
		p.symbol(t.sym, nil)
		sc = t.sc
	case tkPrimitive:
		if s, ok := msPrimNames[t.prim]; ok && p.has(fMSTypenames) {
			p.str(s)
		} else {
			p.str(primNames[t.prim])
		}
		sc = t.sc
	}
	if sc&scConst != 0 {
		if p.has(fSpaceBeforePointer) {
			p.spacePtr()
		} else {
			p.space()
		}
		p.str("const")
	}
	if sc&scVolatile != 0 {
		if p.has(fSpaceBeforePointer) {
			p.spacePtr()
		} else {
			p.space()
		}
		p.str("volatile")
	}
	if sc&scUnaligned != 0 && p.has(fLLVM) {
		p.spacePtr()
		p.str("__unaligned")
	}
}

func (p *printer) thisQualifiers(sc storage) {
	if p.has(fNoThisType) {
		return
	}
	one := func(f storage, s string) {
		if sc&f != 0 {
			p.space()
			p.str(s)
		}
	}
	one(scConst, "const")
	one(scVolatile, "volatile")
	if p.has(fWithPtr64) {
		one(scPtr64, "__ptr64")
	}
	one(scRestrict, "__restrict")
	one(scLValue, "&")
	one(scRValue, "&&")
}

func (p *printer) post(t *typ) {
	if p.over {
		return
	}
	switch t.kind {
	case tkMemberFunc, tkFunc:
		p.byte('(')
		p.types(t.params)
		p.byte(')')
		p.thisQualifiers(t.thisSC)
		p.post(t.inner)
	case tkMemberFuncPtr:
		p.str(")(")
		p.types(t.params)
		p.byte(')')
		p.post(t.inner)
		if t.thisSC&scConst != 0 {
			p.space()
			p.str("const")
		}
	case tkVBTable:
		p.scope(t.scope)
		p.str("'}")
	case tkPtr, tkRef:
		switch t.inner.kind {
		case tkMemberFunc, tkFunc, tkArray:
			p.byte(')')
		}
		p.post(t.inner)
	case tkArray:
		p.byte('[')
		p.str(strconv.Itoa(int(t.num)))
		p.byte(']')
		p.post(t.inner)
	case tkVar:
		p.post(t.inner)
	case tkVFTable:
		if len(t.scope) > 0 {
			p.str("{for `")
			p.scope(t.scope)
			p.str("'}")
		}
	case tkVCallThunk:
		p.byte('{')
		p.str(strconv.Itoa(int(t.num)))
		p.byte(',')
		if p.has(fSpaceAfterComma) {
			p.byte(' ')
		}
		p.str("{flat}}")
	}
}

func (p *printer) types(ts []*typ) {
	i := 0
	for _, t := range ts {
		if t.kind == tkEmptyPack {
			continue
		}
		if i > 0 {
			p.byte(',')
			if p.has(fSpaceAfterComma) {
				p.byte(' ')
			}
		}
		i++
		p.pre(t)
		p.post(t)
		if p.over {
			return
		}
	}
}

func (p *printer) operator(n *name) {
	switch n.op {
	case opLocalStaticGuard, opLocalStaticThreadGuard:
		p.str(opText[n.op])
		if n.nums[0] != 0 {
			p.byte('{')
			p.str(strconv.Itoa(int(n.num)))
			p.byte('}')
		}
	case opRTTITypeDescriptor:
		p.pre(n.opType)
		if p.has(fLLVM) {
			p.post(n.opType)
			p.spacePtr()
			p.str("`RTTI Type Descriptor'")
			return
		}
		p.str("::`RTTI Type Descriptor'")
	case opRTTIBaseClassDescriptor:
		sp := ""
		if p.has(fSpaceAfterComma) {
			sp = " "
		}
		p.str("`RTTI Base Class Descriptor at (")
		for i, v := range n.nums {
			if i > 0 {
				p.str("," + sp)
			}
			p.str(strconv.Itoa(int(v)))
		}
		p.str(")'")
	default:
		if t, ok := llvmOpText[n.op]; ok && p.has(fLLVM) {
			p.str(t)
			return
		}
		p.str(opText[n.op])
	}
}

// llvmOpText are the operator names llvm-undname spells differently.
var llvmOpText = map[op]string{
	opVBaseDtor: "`vbase dtor'", opVectorDeletingDtor: "`vector deleting dtor'",
	opDefaultCtorClosure: "`default ctor closure'", opScalarDeletingDtor: "`scalar deleting dtor'",
	opVectorCtorIter: "`vector ctor iterator'", opVectorDtorIter: "`vector dtor iterator'",
	opVectorVBaseCtorIter: "`vector vbase ctor iterator'", opEHVectorCtorIter: "`eh vector ctor iterator'",
	opEHVectorDtorIter: "`eh vector dtor iterator'", opEHVectorVBaseCtorIter: "`eh vector vbase ctor iterator'",
	opCopyCtorClosure: "`copy ctor closure'", opLocalVFTableCtorClosure: "`local vftable ctor closure'",
}

func (p *printer) oneName(n *name) {
	switch n.kind {
	case nkMD5:
		p.str("??@" + n.str + "@")
	case nkOperator:
		p.space()
		p.operator(n)
	case nkPlain:
		p.str(n.str)
	case nkInterface:
		p.str("[" + n.str + "]")
	case nkTemplate:
		p.oneName(n.inner)
		p.tmplParams(n.params)
	case nkDiscriminator:
		p.str("`" + strconv.Itoa(int(n.num)) + "'")
	case nkParsed:
		p.byte('`')
		p.result(n.parsed)
		p.byte('\'')
	case nkAnonymous:
		p.str("`anonymous namespace'")
	}
}

func (p *printer) scope(names []*name) {
	for i := len(names) - 1; i >= 0; i-- {
		p.oneName(names[i])
		if i > 0 {
			p.str("::")
		}
	}
}

func (p *printer) symbol(s *symbol, t *typ) {
	if p.over {
		return
	}
	if p.has(fSpaceBeforePointer) {
		p.spacePtr()
	} else {
		p.spacePre()
	}
	literal := s.name.kind == nkOperator && s.name.op == opLiteral
	if literal {
		p.space()
		p.operator(s.name)
	}
	p.scope(s.scope)
	if len(s.scope) > 0 && !literal {
		p.str("::")
	}
	n := s.name
	if p.has(fLLVM) && n.kind == nkOperator && (n.op == opDynamicInitializer || n.op == opDynamicAtexitDtor) && len(s.scope) > 0 && !literal {
		// llvm-undname names the variable: "`dynamic initializer for 'x''".
		var v printer
		v.f = p.f
		v.scope(s.scope)
		if suffix := string(v.w) + "::"; !p.over && !v.over && strings.HasSuffix(string(p.w), suffix) {
			p.w = p.w[:len(p.w)-len(suffix)]
			p.str(strings.TrimSuffix(opText[n.op], "'") + " for '" + string(v.w) + "''")
			return
		}
	}
	if p.has(fLLVM) && t != nil && t.kind == tkTSSGuard {
		p.oneName(n)
		return
	}
	if p.has(fLLVM) && n.kind == nkTemplate && n.inner.kind == nkOperator && n.inner.op == opConversion && t != nil && t.kind == tkMemberFunc {
		p.str("operator")
		p.tmplParams(n.params)
		p.byte(' ')
		p.pre(t.inner)
		p.post(t.inner)
		return
	}
	if p.has(fLLVM) && n.kind == nkTemplate && n.inner.kind == nkOperator && (n.inner.op == opCtor || n.inner.op == opDtor) && len(s.scope) > 0 {
		if n.inner.op == opDtor {
			p.byte('~')
		}
		p.oneName(s.scope[0])
		p.tmplParams(n.params)
		return
	}
	switch n.kind {
	case nkOperator:
		switch n.op {
		case opCtor, opDtor:
			if len(s.scope) == 0 {
				p.str("[invalid]")
				break
			}
			if n.op == opDtor {
				p.byte('~')
			}
			p.oneName(s.scope[0])
		case opVBTable:
			p.str("`vbtable'{for `")
		case opConversion:
			if t != nil && t.kind == tkMemberFunc {
				p.str("operator ")
				p.pre(t.inner)
				p.post(t.inner)
			} else {
				p.space()
				p.operator(n)
			}
		case opLiteral:
		default:
			p.space()
			p.operator(n)
		}
	case nkParsed:
		p.result(n.parsed)
	case nkAnonymous:
		p.str("`anonymous namespace'")
	default:
		p.oneName(n)
	}
	if p.has(fLLVM) && t != nil && t.kind == tkMemberFunc && t.fc&fcThunk != 0 {
		switch len(t.vtordisp) {
		case 0:
			p.str("`adjustor{" + strconv.Itoa(int(t.num)) + "}'")
		case 2:
			p.str("`vtordisp{")
		default:
			p.str("`vtordispex{")
		}
		for i, v := range t.vtordisp {
			if i > 0 {
				p.str(", ")
			}
			p.str(strconv.Itoa(int(v)))
		}
		if len(t.vtordisp) > 0 {
			p.str("}'")
		}
	}
}

func (p *printer) tmplParams(ts []*typ) {
	p.byte('<')
	if len(ts) > 0 {
		p.types(ts)
		if p.last() == '>' && !p.has(fLLVM) {
			p.byte(' ')
		}
	}
	p.byte('>')
}

// keys identify back-referenced names and types by their text.
const keyFlags = fSpaceAfterComma | fWithPtr64

// keyMax bounds a key's length: longer texts compare by their start.
const keyMax = 4096

func nameKey(n *name) string {
	if n.key == "" {
		p := printer{f: keyFlags, max: keyMax}
		p.oneName(n)
		n.key = strconv.Itoa(int(n.kind)) + string(p.w)
	}
	return n.key
}

func typeKey(t *typ) string {
	if t.key == "" {
		p := printer{f: keyFlags, max: keyMax}
		p.pre(t)
		p.byte('|')
		p.post(t)
		t.key = strconv.Itoa(int(t.kind)) + string(p.w)
	}
	return t.key
}
