package msvc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth bounds the parser's recursion (nested types, templates and
// names); deeper names are errors.
const MaxDepth = 128

// MaxOutput bounds a demangled name's length in bytes; longer results are
// errors (back-references can make a short name's expansion exponential).
const MaxOutput = 1 << 16

var errDepth = errors.New("msvc: recursion too deep")

type parser struct {
	in    string
	pos   int
	depth int
	names []*name // back-referenced names (up to 10)
	types []*typ  // back-referenced parameter types (up to 10)
	llvm  bool    // llvm-undname's grammar where msvc-demangler's is narrower
	// adjustor is the this-adjustment of the last thunk's function class.
	adjustor int32
}

func (p *parser) fail(msg string) error {
	return fmt.Errorf("msvc: %s at offset %d of %.80q", msg, p.pos, p.in)
}

func (p *parser) enter() error {
	if p.depth++; p.depth > MaxDepth {
		return errDepth
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) peek() byte {
	if p.pos < len(p.in) {
		return p.in[p.pos]
	}
	return 0
}

func (p *parser) get() (byte, error) {
	if p.pos >= len(p.in) {
		return 0, p.fail("unexpected end")
	}
	p.pos++
	return p.in[p.pos-1], nil
}

func (p *parser) consume(s string) bool {
	if strings.HasPrefix(p.in[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *parser) expect(s string) error {
	if !p.consume(s) {
		return p.fail(fmt.Sprintf("expected %q", s))
	}
	return nil
}

func (p *parser) digit() (int, bool) {
	if c := p.peek(); c >= '0' && c <= '9' {
		p.pos++
		return int(c - '0'), true
	}
	return 0, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// parse reads a whole decorated name.
func (p *parser) parse() (*result, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if !p.consume("?") {
		return nil, p.fail("no leading '?'")
	}
	if p.consume("?@") {
		start := p.pos
		for p.pos < len(p.in) && isHex(p.in[p.pos]) {
			p.pos++
		}
		if p.pos-start != 32 || !p.consume("@") {
			return nil, p.fail("bad MD5 name")
		}
		return &result{sym: &symbol{name: &name{kind: nkMD5, str: p.in[start : p.pos-1]}}, typ: &typ{}}, nil
	}
	if p.consume("$") {
		if p.consume("TSS") {
			d, ok := p.digit()
			if !ok {
				return nil, p.fail("missing digit")
			}
			n := int32(d)
			for !p.consume("@") {
				d, ok := p.digit()
				if !ok {
					return nil, p.fail("missing digit")
				}
				n = n*10 + int32(d)
			}
			nm, err := p.nestedName()
			if err != nil {
				return nil, err
			}
			if p.llvm {
				// llvm-undname names the guard variable itself, in the
				// scope of the function that follows.
				sym := &symbol{name: &name{kind: nkPlain, str: "$TSS" + strconv.Itoa(int(n))}, scope: []*name{nm}}
				scope, err := p.scope()
				if err != nil {
					return nil, err
				}
				sym.scope = append(sym.scope, scope...)
				if err := p.expect("4HA"); err != nil {
					return nil, err
				}
				return &result{sym: sym, typ: &typ{kind: tkTSSGuard, num: n}}, nil
			}
			scope, err := p.scope()
			if err != nil {
				return nil, err
			}
			if err := p.expect("4HA"); err != nil {
				return nil, err
			}
			return &result{sym: &symbol{name: nm, scope: scope}, typ: &typ{kind: tkTSSGuard, num: n}}, nil
		}
		nm, err := p.templateName()
		if err != nil {
			return nil, err
		}
		return &result{sym: &symbol{name: nm}, typ: &typ{}}, nil
	}
	sym, err := p.fullName(true)
	if err != nil {
		return nil, err
	}
	if sym.name.kind == nkOperator && (sym.name.op == opLocalStaticGuard || sym.name.op == opLocalStaticThreadGuard) {
		if !p.consume("4IA") && !p.consume("5") {
			return nil, p.fail("unexpected local guard marker")
		}
		if p.pos < len(p.in) {
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, p.fail("negative guard scope")
			}
			sym.name.num = n
			sym.name.nums[0] = 1 // scope present
		}
	}
	if p.pos >= len(p.in) {
		return &result{sym: sym, typ: &typ{}}, nil
	}
	c, _ := p.get()
	var t *typ
	switch {
	case c >= '0' && c <= '4':
		inner, err := p.varType(0)
		if err != nil {
			return nil, err
		}
		t = &typ{kind: tkVar, inner: inner, vk: varKind(c - '0'), sc: p.storageClass()}
	case c == '6' || c == '7':
		q := p.qualifier()
		scope, err := p.scope()
		if err != nil {
			return nil, err
		}
		t = &typ{kind: tkVFTable, sc: q, scope: scope}
		if c == '7' {
			t.kind = tkVBTable
		}
	case c == '9':
		t = &typ{kind: tkExternC}
	case c == 'Y':
		cc, err := p.callingConv()
		if err != nil {
			return nil, err
		}
		rsc, err := p.returnStorage()
		if err != nil {
			return nil, err
		}
		ret, err := p.varType(rsc)
		if err != nil {
			return nil, err
		}
		params, err := p.funcParams()
		if err != nil {
			return nil, err
		}
		t = &typ{kind: tkFunc, cc: cc, params: params, inner: ret}
	case c == '_':
		c2, err := p.get()
		if err != nil {
			return nil, err
		}
		if c2 != '0' && c2 != '1' {
			return nil, p.fail("unknown string character type")
		}
		if p.llvm {
			t, err = p.llvmString(c2 == '1')
		} else {
			t, err = p.encodedString(1 + int32(c2-'0'))
		}
		if err != nil {
			return nil, err
		}
	case c == '$' && p.llvm && (p.peek() >= '0' && p.peek() <= '5' || p.peek() == 'R'):
		t, err := p.vtordispThunk()
		if err != nil {
			return nil, err
		}
		return &result{sym: sym, typ: t}, nil
	case c == '$':
		if err := p.expect("B"); err != nil {
			return nil, err
		}
		off, err := p.number()
		if err != nil {
			return nil, err
		}
		if err := p.expect("A"); err != nil {
			return nil, err
		}
		cc, err := p.callingConv()
		if err != nil {
			return nil, err
		}
		t = &typ{kind: tkVCallThunk, num: off, cc: cc}
	case c == '8':
		t = &typ{kind: tkRTTI}
	default:
		fc, err := p.funcClass(c)
		if err != nil {
			return nil, err
		}
		var this storage
		if fc&fcStatic == 0 {
			if this, err = p.funcQualifiers(); err != nil {
				return nil, err
			}
		}
		cc, ret, params, err := p.memberSignature()
		if err != nil {
			return nil, err
		}
		t = &typ{kind: tkMemberFunc, fc: fc, cc: cc, params: params, thisSC: this, inner: ret}
		if fc&fcThunk != 0 {
			t.num = p.adjustor
		}
	}
	return &result{sym: sym, typ: t}, nil
}

func (p *parser) encodedString(charBytes int32) (*typ, error) {
	n, err := p.number() // bytes, with the terminator
	if err != nil {
		return nil, err
	}
	if _, err := p.number(); err != nil { // CRC
		return nil, err
	}
	n = min(n, charBytes*32)
	for i := int32(0); i < n; i++ {
		c, err := p.get()
		if err != nil {
			return nil, err
		}
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$':
		case c == '?':
			c, err := p.get()
			if err != nil {
				return nil, err
			}
			switch {
			case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			case c == '$':
				if _, err := p.get(); err != nil {
					return nil, err
				}
				if _, err := p.get(); err != nil {
					return nil, err
				}
			default:
				return nil, p.fail("bad escaped string character")
			}
		default:
			return nil, p.fail("bad string character")
		}
	}
	return &typ{kind: tkString}, nil
}

// number reads <number> ::= [?] (<digit> | <hex A-P>+ @).
func (p *parser) number() (int32, error) {
	neg := p.consume("?")
	if d, ok := p.digit(); ok {
		if neg {
			return -int32(d + 1), nil
		}
		return int32(d + 1), nil
	}
	var v int32
	for i := p.pos; i < len(p.in); i++ {
		c := p.in[i]
		if c == '@' {
			p.pos = i + 1
			if neg {
				return -v, nil
			}
			return v, nil
		}
		if c < 'A' || c > 'P' {
			break
		}
		v = v<<4 + int32(c-'A')
	}
	return 0, p.fail("bad number")
}

func (p *parser) str() (string, error) {
	i := strings.IndexByte(p.in[p.pos:], '@')
	if i < 0 {
		return "", p.fail("missing '@'")
	}
	s := p.in[p.pos : p.pos+i]
	p.pos += i + 1
	return s, nil
}

func (p *parser) memorizeName(n *name) { p.names = memorize(p.names, n, nameKey) }

func (p *parser) memorizeType(t *typ) { p.types = memorize(p.types, t, typeKey) }

// memorize adds v to a back-reference table: ten entries at most, each key
// once.
func memorize[T any](table []T, v T, key func(T) string) []T {
	if len(table) >= 10 {
		return table
	}
	k := key(v)
	for _, m := range table {
		if key(m) == k {
			return table
		}
	}
	return append(table, v)
}

func (p *parser) templateName() (*name, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	savedN, savedT := p.names, p.types
	p.names, p.types = nil, nil
	inner, err := p.unqualifiedName(false)
	if err != nil {
		return nil, err
	}
	params, err := p.params()
	if err != nil {
		return nil, err
	}
	p.names, p.types = savedN, savedT
	return &name{kind: nkTemplate, inner: inner, params: params}, nil
}

func (p *parser) backref() (*name, bool, error) {
	d, ok := p.digit()
	if !ok {
		return nil, false, nil
	}
	if d >= len(p.names) {
		return nil, true, p.fail("name back-reference too large")
	}
	return p.names[d], true, nil
}

func (p *parser) nestedName() (*name, error) {
	if n, ok, err := p.backref(); ok {
		return n, err
	}
	if p.consume("?") {
		if p.peek() == '?' {
			r, err := p.parse()
			if err != nil {
				return nil, err
			}
			return &name{kind: nkParsed, parsed: r}, nil
		}
		switch {
		case p.consume("$"):
			n, err := p.templateName()
			if err != nil {
				return nil, err
			}
			p.memorizeName(n)
			return n, nil
		case p.consume("A"):
			n := &name{kind: nkAnonymous}
			if p.consume("0x") {
				start := p.pos
				for p.pos < len(p.in) && isHex(p.in[p.pos]) {
					p.pos++
				}
				n.str = "0x" + p.in[start:p.pos]
			}
			if err := p.expect("@"); err != nil {
				return nil, err
			}
			if n.str != "" {
				p.memorizeName(n)
			}
			return n, nil
		case p.consume("Q"):
			s, err := p.str()
			if err != nil {
				return nil, err
			}
			if err := p.expect("@"); err != nil {
				return nil, err
			}
			n := &name{kind: nkInterface, str: s}
			p.memorizeName(n)
			return n, nil
		}
		d, err := p.number()
		if err != nil {
			return nil, err
		}
		return &name{kind: nkDiscriminator, num: d}, nil
	}
	return p.plainName()
}

// plainName reads a simple name up to its '@' and memorizes it.
func (p *parser) plainName() (*name, error) {
	s, err := p.str()
	if err != nil {
		return nil, err
	}
	n := &name{kind: nkPlain, str: s}
	p.memorizeName(n)
	return n, nil
}

func (p *parser) unqualifiedName(function bool) (*name, error) {
	if n, ok, err := p.backref(); ok {
		return n, err
	}
	if p.consume("?$") {
		n, err := p.templateName()
		if err != nil {
			return nil, err
		}
		if !function {
			p.memorizeName(n)
		}
		return n, nil
	}
	if p.consume("?") {
		return p.specialName()
	}
	return p.plainName()
}

func (p *parser) scope() ([]*name, error) {
	var names []*name
	for !p.consume("@") {
		if p.pos >= len(p.in) {
			return nil, p.fail("unterminated scope")
		}
		n, err := p.nestedName()
		if err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

func (p *parser) fullName(function bool) (*symbol, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	n, err := p.unqualifiedName(function)
	if err != nil {
		return nil, err
	}
	scope, err := p.scope()
	if err != nil {
		return nil, err
	}
	return &symbol{name: n, scope: scope}, nil
}

var simpleOps = map[byte]op{
	'0': opCtor, '1': opDtor, '2': opNew, '3': opDelete, '4': opAssign, '5': opRShift, '6': opLShift,
	'7': opNot, '8': opEq, '9': opNe, 'A': opSubscript, 'B': opConversion, 'C': opArrow, 'D': opStar,
	'E': opIncr, 'F': opDecr, 'G': opMinus, 'H': opPlus, 'I': opAmp, 'J': opArrowStar, 'K': opDiv,
	'L': opMod, 'M': opLess, 'N': opLessEq, 'O': opGreater, 'P': opGreaterEq, 'Q': opComma, 'R': opCall,
	'S': opTilde, 'T': opCaret, 'U': opPipe, 'V': opAndAnd, 'W': opOrOr, 'X': opMulAssign,
	'Y': opPlusAssign, 'Z': opMinusAssign,
}

var underscoreOps = map[byte]op{
	'0': opDivAssign, '1': opModAssign, '2': opRShiftAssign, '3': opLShiftAssign, '4': opAndAssign,
	'5': opOrAssign, '6': opXorAssign, '7': opVFTable, '8': opVBTable, '9': opVCall, 'A': opTypeof,
	'B': opLocalStaticGuard, 'C': opString, 'D': opVBaseDtor, 'E': opVectorDeletingDtor,
	'F': opDefaultCtorClosure, 'G': opScalarDeletingDtor, 'H': opVectorCtorIter, 'I': opVectorDtorIter,
	'J': opVectorVBaseCtorIter, 'K': opVirtualDisplacementMap, 'L': opEHVectorCtorIter,
	'M': opEHVectorDtorIter, 'N': opEHVectorVBaseCtorIter, 'O': opCopyCtorClosure,
	'S': opLocalVFTable, 'T': opLocalVFTableCtorClosure, 'U': opArrayNew, 'V': opArrayDelete,
	'X': opPlacementDeleteClosure, 'Y': opPlacementArrayDeleteClosure,
}

var doubleUnderscoreOps = map[byte]op{
	'L': opCoAwait, 'E': opDynamicInitializer, 'F': opDynamicAtexitDtor, 'J': opLocalStaticThreadGuard,
	'K': opLiteral, 'M': opSpaceship,
}

func (p *parser) specialName() (*name, error) {
	c, err := p.get()
	if err != nil {
		return nil, err
	}
	if o, ok := simpleOps[c]; ok {
		return &name{kind: nkOperator, op: o}, nil
	}
	if c != '_' {
		return nil, p.fail("unknown operator")
	}
	if c, err = p.get(); err != nil {
		return nil, err
	}
	if o, ok := underscoreOps[c]; ok {
		return &name{kind: nkOperator, op: o}, nil
	}
	switch c {
	case 'R':
		c, err := p.get()
		if err != nil {
			return nil, err
		}
		switch c {
		case '0':
			var sc storage
			if p.consume("?") {
				sc = p.storageClass()
			} else if !p.llvm {
				return nil, p.fail("expected '?'")
			}
			t, err := p.varType(sc)
			if err != nil {
				return nil, err
			}
			return &name{kind: nkOperator, op: opRTTITypeDescriptor, opType: t}, nil
		case '1':
			n := &name{kind: nkOperator, op: opRTTIBaseClassDescriptor}
			for i := range n.nums {
				if n.nums[i], err = p.number(); err != nil {
					return nil, err
				}
			}
			return n, nil
		case '2':
			return &name{kind: nkOperator, op: opRTTIBaseClassArray}, nil
		case '3':
			return &name{kind: nkOperator, op: opRTTIClassHierarchyDescriptor}, nil
		case '4':
			return &name{kind: nkOperator, op: opRTTICompleteObjectLocator}, nil
		}
		return nil, p.fail("unknown RTTI operator")
	case '_':
		c, err := p.get()
		if err != nil {
			return nil, err
		}
		if o, ok := doubleUnderscoreOps[c]; ok {
			return &name{kind: nkOperator, op: o}, nil
		}
	}
	return nil, p.fail("unknown operator")
}

// funcClass reads a member function's class: 'A' to 'X' in groups of eight
// per access (private, protected, public), each group plain, static,
// virtual and thunk (virtual, with an adjustor), near then far; 'Y' and 'Z'
// global, near and far.
func (p *parser) funcClass(c byte) (funcClass, error) {
	switch {
	case c == 'Y':
		return fcGlobal, nil
	case c == 'Z':
		return fcGlobal | fcFar, nil
	case c < 'A' || c > 'X':
		return 0, p.fail("unknown function class")
	}
	i := c - 'A'
	fc := [...]funcClass{fcPrivate, fcProtected, fcPublic}[i/8] |
		[...]funcClass{0, fcStatic, fcVirtual, fcVirtual | fcThunk}[i%8/2]
	if i%2 == 1 {
		fc |= fcFar
	}
	if fc&fcThunk != 0 {
		n, err := p.number() // the adjustor
		if err != nil {
			return 0, err
		}
		p.adjustor = n
	}
	return fc, nil
}

// cv is the const and volatile storage of the four letters of each run the
// qualifiers use: 'A' to 'D' (none, const, volatile, both), 'Q' to 'T' the
// same, 'E' to 'H' the same and far.
var cv = [4]storage{0, scConst, scVolatile, scConst | scVolatile}

func (p *parser) qualifier() storage {
	var s storage
	switch c := p.peek(); {
	case c >= 'A' && c <= 'D':
		s = cv[c-'A']
	case c >= 'Q' && c <= 'T':
		s = cv[c-'Q']
	default:
		return 0
	}
	p.pos++
	return s
}

func (p *parser) funcQualifiers() (storage, error) {
	var s storage
	if p.consume("E") {
		s |= scPtr64
	}
	if p.consume("I") {
		s |= scRestrict
	}
	if p.consume("F") {
		s |= scUnaligned
	}
	if p.consume("G") {
		s |= scLValue
	} else if p.consume("H") {
		s |= scRValue
	}
	return s | p.qualifier(), nil
}

func (p *parser) callingConv() (callConv, error) {
	c, err := p.get()
	if err != nil {
		return 0, err
	}
	switch c {
	case 'A', 'B':
		return ccCdecl, nil
	case 'C', 'D':
		return ccPascal, nil
	case 'E', 'F':
		return ccThiscall, nil
	case 'G', 'H':
		return ccStdcall, nil
	case 'I', 'J':
		return ccFastcall, nil
	case 'M', 'N':
		return ccClrcall, nil
	case 'O', 'P':
		return ccEabi, nil
	case 'Q':
		return ccVectorcall, nil
	case 'S':
		return ccSwift, nil
	case 'w':
		return ccRegcall, nil
	}
	return 0, p.fail("unknown calling convention")
}

// memberSignature reads what follows a member function's class and this
// qualifiers: calling convention, return storage and type ("@" for none, as
// constructors and destructors have) and parameters.
func (p *parser) memberSignature() (callConv, *typ, []*typ, error) {
	cc, err := p.callingConv()
	if err != nil {
		return 0, nil, nil, err
	}
	rsc, err := p.returnStorage()
	if err != nil {
		return 0, nil, nil, err
	}
	ret, err := p.returnType(rsc)
	if err != nil {
		return 0, nil, nil, err
	}
	params, err := p.funcParams()
	if err != nil {
		return 0, nil, nil, err
	}
	return cc, ret, params, nil
}

func (p *parser) returnType(sc storage) (*typ, error) {
	if p.consume("@") {
		return &typ{}, nil
	}
	return p.varType(sc)
}

func (p *parser) storageClass() storage {
	if c := p.peek(); c >= 'E' && c <= 'H' {
		p.pos++
		return cv[c-'E'] | scFar
	}
	return p.qualifier()
}

func (p *parser) returnStorage() (storage, error) {
	if !p.consume("?") {
		return 0, nil
	}
	c, err := p.get()
	if err != nil {
		return 0, err
	}
	if c < 'A' || c > 'D' {
		return 0, p.fail("unknown return storage class")
	}
	return cv[c-'A'], nil
}

func (p *parser) memberFuncPtr(qualifiers bool) (*typ, error) {
	sym, err := p.fullName(true)
	if err != nil {
		return nil, err
	}
	var s storage
	if p.consume("E") {
		s = scPtr64
	}
	var fc funcClass
	if qualifiers {
		s |= p.qualifier()
	} else {
		c, err := p.get()
		if err != nil {
			return nil, err
		}
		if fc, err = p.funcClass(c); err != nil {
			return nil, err
		}
	}
	cc, ret, params, err := p.memberSignature()
	if err != nil {
		return nil, err
	}
	return &typ{kind: tkMemberFuncPtr, sym: sym, fc: fc, cc: cc, params: params, thisSC: s, inner: ret}, nil
}

func (p *parser) funcType(qualifiers bool) (*typ, error) {
	var s storage
	if qualifiers {
		var err error
		if s, err = p.funcQualifiers(); err != nil {
			return nil, err
		}
	}
	cc, err := p.callingConv()
	if err != nil {
		return nil, err
	}
	var vsc storage
	if p.consume("?") {
		vsc = p.storageClass()
	}
	ret, err := p.varType(vsc)
	if err != nil {
		return nil, err
	}
	params, err := p.funcParams()
	if err != nil {
		return nil, err
	}
	return &typ{kind: tkFunc, cc: cc, params: params, thisSC: s, inner: ret}, nil
}

var primitives = map[byte]prim{
	'X': pVoid, 'D': pChar, 'C': pSchar, 'E': pUchar, 'F': pShort, 'G': pUshort, 'H': pInt,
	'I': pUint, 'J': pLong, 'K': pUlong, 'M': pFloat, 'N': pDouble, 'O': pLdouble,
}

var underscorePrimitives = map[byte]prim{
	'N': pBool, 'J': pInt64, 'K': pUint64, 'L': pInt128, 'M': pUint128, 'W': pWchar,
	'Q': pChar8, 'S': pChar16, 'U': pChar32,
}

func (p *parser) varType(sc storage) (*typ, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	named := func(k typeKind) (*typ, error) {
		sym, err := p.fullName(false)
		if err != nil {
			return nil, err
		}
		return &typ{kind: k, sym: sym, sc: sc}, nil
	}
	switch {
	case p.consume("W4"):
		return named(tkEnum)
	case p.consume("A6"):
		f, err := p.funcType(false)
		if err != nil {
			return nil, err
		}
		return &typ{kind: tkRef, inner: f, sc: sc}, nil
	case p.consume("P6"):
		f, err := p.funcType(false)
		if err != nil {
			return nil, err
		}
		return &typ{kind: tkPtr, inner: f, sc: sc}, nil
	case p.consume("P8"):
		return p.memberFuncPtr(true)
	}
	if p.llvm && p.pos+1 < len(p.in) && p.in[p.pos+1] == '6' {
		var k typeKind
		var s storage
		switch p.in[p.pos] {
		case 'Q':
			k, s = tkPtr, scConst
		case 'R':
			k, s = tkPtr, scVolatile
		case 'S':
			k, s = tkPtr, scConst|scVolatile
		case 'B':
			k, s = tkRef, scVolatile
		}
		if k != 0 {
			p.pos += 2
			f, err := p.funcType(false)
			if err != nil {
				return nil, err
			}
			return &typ{kind: k, inner: f, sc: s}, nil
		}
	}
	if p.consume("$") {
		switch {
		case p.consume("0"):
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			return &typ{kind: tkConstant, num: n}, nil
		case p.consume("D"):
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			return &typ{kind: tkTemplateParam, num: n}, nil
		case p.consume("$BY"):
			return p.array()
		case p.llvm && (strings.HasPrefix(p.in[p.pos:], "1?") || strings.HasPrefix(p.in[p.pos:], "E?")):
			addr := p.in[p.pos] == '1'
			p.pos++
			r, err := p.parse()
			if err != nil {
				return nil, err
			}
			t := &typ{kind: tkSymbolArg, target: r}
			if addr {
				t.num = 1
			}
			return t, nil
		case p.consume("$Q"):
			t, own, err := p.pointee()
			if err != nil {
				return nil, err
			}
			return &typ{kind: tkRValueRef, inner: t, sc: sc | own}, nil
		case p.consume("S"), p.consume("$V"), p.consume("$Z"), p.consume("$$V"):
			return &typ{kind: tkEmptyPack}, nil
		case p.consume("$T"):
			return &typ{kind: tkNullptr}, nil
		case p.consume("$A6"):
			return p.funcType(false)
		case p.consume("$A8@@"):
			return p.funcType(true)
		case p.consume("$Y"):
			return named(tkAlias)
		case p.consume("$C"):
			sc = p.qualifier()
		default:
			switch p.peek() {
			case '1', 'H', 'I', 'J':
				p.pos++
				if err := p.expect("?"); err != nil {
					return nil, err
				}
				return p.memberFuncPtr(false)
			}
		}
	}
	if p.consume("?") {
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		return &typ{kind: tkTemplateParam, num: -n}, nil
	}
	if d, ok := p.digit(); ok {
		if d >= len(p.types) {
			return nil, p.fail("type back-reference too large")
		}
		return p.types[d], nil
	}
	c, err := p.get()
	if err != nil {
		return nil, err
	}
	ptr := func(k typeKind, s storage) (*typ, error) {
		t, own, err := p.pointee()
		if err != nil {
			return nil, err
		}
		return &typ{kind: k, inner: t, sc: s | own}, nil
	}
	switch c {
	case 'T':
		return named(tkUnion)
	case 'U':
		return named(tkStruct)
	case 'V':
		return named(tkClass)
	case 'A':
		return ptr(tkRef, sc)
	case 'B':
		return ptr(tkRef, scVolatile)
	case 'P':
		return ptr(tkPtr, sc)
	case 'Q':
		return ptr(tkPtr, scConst)
	case 'R':
		return ptr(tkPtr, scVolatile)
	case 'S':
		return ptr(tkPtr, scConst|scVolatile)
	case 'Y':
		return p.array()
	case '_':
		c, err := p.get()
		if err != nil {
			return nil, err
		}
		if pr, ok := underscorePrimitives[c]; ok {
			return &typ{kind: tkPrimitive, prim: pr, sc: sc}, nil
		}
	default:
		if pr, ok := primitives[c]; ok {
			return &typ{kind: tkPrimitive, prim: pr, sc: sc}, nil
		}
	}
	return nil, p.fail("unknown type")
}

// pointee reads a pointer's target; the pointer modifiers (E __ptr64,
// I __restrict, F __unaligned) before it are returned for the pointer
// itself (llvm-undname's grammar; msvc-demangler's knows E only).
func (p *parser) pointee() (*typ, storage, error) {
	var s, own storage
	if p.consume("E") {
		s = scPtr64
	}
	for p.llvm {
		if p.consume("E") {
			s |= scPtr64
		} else if p.consume("I") {
			own |= scRestrict
		} else if p.consume("F") {
			s |= scUnaligned
		} else {
			break
		}
	}
	t, err := p.varType(p.storageClass() | s)
	return t, own, err
}

func (p *parser) array() (*typ, error) {
	dims, err := p.number()
	if err != nil {
		return nil, err
	}
	if dims <= 0 || dims > MaxDepth {
		return nil, p.fail("bad array dimension")
	}
	lens := make([]int32, dims)
	for i := range lens {
		if lens[i], err = p.number(); err != nil {
			return nil, err
		}
	}
	var sc storage
	if p.consume("$$C") {
		switch {
		case p.consume("B"):
			sc = scConst
		case p.consume("C"), p.consume("D"):
			sc = scConst | scVolatile
		case p.consume("A"):
		default:
			return nil, p.fail("unknown array storage class")
		}
	}
	t, err := p.varType(0)
	if err != nil {
		return nil, err
	}
	for i := len(lens) - 1; i >= 0; i-- {
		t = &typ{kind: tkArray, num: lens[i], inner: t, sc: sc}
	}
	return t, nil
}

func (p *parser) params() ([]*typ, error) {
	var out []*typ
	for p.pos < len(p.in) && p.peek() != '@' && p.peek() != 'Z' {
		if d, ok := p.digit(); ok {
			if d >= len(p.types) {
				return nil, p.fail("type back-reference too large")
			}
			out = append(out, p.types[d])
			continue
		}
		start := p.pos
		t, err := p.varType(0)
		if err != nil {
			return nil, err
		}
		if p.pos-start > 1 {
			p.memorizeType(t)
		}
		out = append(out, t)
		if len(out) > MaxOutput {
			return nil, p.fail("too many parameters")
		}
	}
	switch {
	case p.consume("Z"):
		out = append(out, &typ{kind: tkVarArgs})
	case p.pos >= len(p.in):
	default:
		if err := p.expect("@"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *parser) funcParams() ([]*typ, error) {
	var out []*typ
	if p.consume("X") {
		out = []*typ{{kind: tkPrimitive, prim: pVoid}}
	} else {
		var err error
		if out, err = p.params(); err != nil {
			return nil, err
		}
	}
	if err := p.expect("Z"); err != nil {
		return nil, err
	}
	return out, nil
}

// vtordispThunk reads a vtordisp thunk (llvm-undname's grammar): "$0".."$5"
// (private, protected, public; near, far) with two offsets, or "$R0".."$R5"
// with four, then the function's qualifiers and type.
func (p *parser) vtordispThunk() (*typ, error) {
	n := 2
	if p.consume("R") {
		n = 4
	}
	c, err := p.get()
	if err != nil {
		return nil, err
	}
	if c < '0' || c > '5' {
		return nil, p.fail("unknown vtordisp function class")
	}
	fc := [...]funcClass{fcPrivate, fcPrivate | fcFar, fcProtected, fcProtected | fcFar, fcPublic, fcPublic | fcFar}[c-'0'] | fcVirtual | fcThunk
	offs := make([]int32, n)
	for i := range offs {
		if offs[i], err = p.number(); err != nil {
			return nil, err
		}
	}
	this, err := p.funcQualifiers()
	if err != nil {
		return nil, err
	}
	cc, ret, params, err := p.memberSignature()
	if err != nil {
		return nil, err
	}
	return &typ{kind: tkMemberFunc, fc: fc, cc: cc, params: params, thisSC: this, inner: ret, vtordisp: offs}, nil
}
