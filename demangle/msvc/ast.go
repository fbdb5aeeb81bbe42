package msvc

// storage is a set of type qualifiers and pointer attributes.
type storage uint16

const (
	scConst storage = 1 << iota
	scVolatile
	scFar
	scHuge
	scUnaligned
	scRestrict
	scPtr64
	scLValue
	scRValue
)

// funcClass is a member function's access and kind.
type funcClass uint8

const (
	fcPublic funcClass = 1 << iota
	fcProtected
	fcPrivate
	fcGlobal
	fcStatic
	fcVirtual
	fcFar
	fcThunk
)

type callConv uint8

const (
	ccCdecl callConv = iota
	ccPascal
	ccThiscall
	ccStdcall
	ccFastcall
	ccVectorcall
	ccClrcall
	ccEabi
	ccSwift
	ccRegcall
)

var ccNames = [...]string{"__cdecl", "__pascal", "__thiscall", "__stdcall", "__fastcall", "__vectorcall", "__clrcall", "__eabi", "__swift_1", "__regcall"}

type varKind uint8

const (
	vkPrivateStatic varKind = iota
	vkProtectedStatic
	vkPublicStatic
	vkGlobal
	vkLocalStatic
)

// nameKind says which fields of a name are used.
type nameKind uint8

const (
	nkPlain         nameKind = iota // str
	nkMD5                           // str: the 32 hex digits
	nkOperator                      // op (and rtti fields)
	nkInterface                     // str
	nkTemplate                      // inner, params
	nkDiscriminator                 // num
	nkParsed                        // parsed
	nkAnonymous                     // str: the id, may be empty
)

type name struct {
	kind   nameKind
	str    string
	op     op
	num    int32
	nums   [4]int32 // RTTI base class descriptor
	opType *typ     // RTTI type descriptor's type
	inner  *name
	params []*typ
	parsed *result
	key    string // back-reference identity, computed once
}

type symbol struct {
	name  *name
	scope []*name // innermost first
}

type typeKind uint8

const (
	tkNone typeKind = iota
	tkMemberFunc
	tkMemberFuncPtr
	tkFunc
	tkVBTable
	tkVFTable
	tkVCallThunk
	tkTemplateParam
	tkTSSGuard
	tkConstant
	tkString
	tkPtr
	tkRef
	tkRValueRef
	tkArray
	tkVar
	tkAlias
	tkStruct
	tkUnion
	tkClass
	tkEnum
	tkPrimitive // prim
	tkNullptr
	tkEmptyPack
	tkRTTI
	tkVarArgs
	tkExternC   // a name with C linkage: no type
	tkSymbolArg // a template argument naming a symbol ($1, $E): sym in target
)

type typ struct {
	kind     typeKind
	sc       storage
	inner    *typ
	params   []*typ
	sym      *symbol   // member function pointer class, named types
	scope    []*name   // vftable / vbtable "for"
	fc       funcClass // member functions
	cc       callConv
	thisSC   storage // member function qualifiers
	num      int32   // array length, constant, thunk offset, template parameter index
	vk       varKind
	prim     prim
	lit      string  // a string literal's text (llvm-undname's form)
	target   *result // tkSymbolArg's symbol
	vtordisp []int32 // a vtordisp thunk's offsets (2, or 4 for vtordispex)
	key      string  // back-reference identity, computed once
}

type prim uint8

const (
	pVoid prim = iota
	pBool
	pChar
	pSchar
	pUchar
	pShort
	pUshort
	pInt
	pUint
	pLong
	pUlong
	pInt64
	pUint64
	pInt128
	pUint128
	pWchar
	pFloat
	pDouble
	pLdouble
	pChar8
	pChar16
	pChar32
)

type result struct {
	sym *symbol
	typ *typ
}

type op uint8

const (
	opCtor op = iota
	opDtor
	opNew
	opDelete
	opAssign
	opRShift
	opLShift
	opNot
	opEq
	opNe
	opSubscript
	opConversion
	opArrow
	opStar
	opIncr
	opDecr
	opMinus
	opPlus
	opAmp
	opArrowStar
	opDiv
	opMod
	opLess
	opLessEq
	opGreater
	opGreaterEq
	opComma
	opCall
	opTilde
	opCaret
	opPipe
	opAndAnd
	opOrOr
	opMulAssign
	opPlusAssign
	opMinusAssign
	opDivAssign
	opModAssign
	opRShiftAssign
	opLShiftAssign
	opAndAssign
	opOrAssign
	opXorAssign
	opVFTable
	opVBTable
	opVCall
	opTypeof
	opLocalStaticGuard
	opString
	opVBaseDtor
	opVectorDeletingDtor
	opDefaultCtorClosure
	opScalarDeletingDtor
	opVectorCtorIter
	opVectorDtorIter
	opVectorVBaseCtorIter
	opVirtualDisplacementMap
	opEHVectorCtorIter
	opEHVectorDtorIter
	opEHVectorVBaseCtorIter
	opCopyCtorClosure
	opLocalVFTable
	opLocalVFTableCtorClosure
	opArrayNew
	opArrayDelete
	opPlacementDeleteClosure
	opPlacementArrayDeleteClosure
	opCoAwait
	opLiteral
	opRTTITypeDescriptor
	opRTTIBaseClassDescriptor
	opRTTIBaseClassArray
	opRTTIClassHierarchyDescriptor
	opRTTICompleteObjectLocator
	opDynamicInitializer
	opDynamicAtexitDtor
	opLocalStaticThreadGuard
	opSpaceship
)

var opText = [...]string{
	opCtor: "ctor", opDtor: "dtor", opNew: "operator new", opDelete: "operator delete",
	opAssign: "operator=", opRShift: "operator>>", opLShift: "operator<<", opNot: "operator!",
	opEq: "operator==", opNe: "operator!=", opSubscript: "operator[]", opConversion: "operatorcast",
	opArrow: "operator->", opStar: "operator*", opIncr: "operator++", opDecr: "operator--",
	opMinus: "operator-", opPlus: "operator+", opAmp: "operator&", opArrowStar: "operator->*",
	opDiv: "operator/", opMod: "operator%", opLess: "operator<", opLessEq: "operator<=",
	opGreater: "operator>", opGreaterEq: "operator>=", opComma: "operator,", opCall: "operator()",
	opTilde: "operator~", opCaret: "operator^", opPipe: "operator|", opAndAnd: "operator&&",
	opOrOr: "operator||", opMulAssign: "operator*=", opPlusAssign: "operator+=", opMinusAssign: "operator-=",
	opDivAssign: "operator/=", opModAssign: "operator%=", opRShiftAssign: "operator>>=", opLShiftAssign: "operator<<=",
	opAndAssign: "operator&=", opOrAssign: "operator|=", opXorAssign: "operator^=",
	opVFTable: "`vftable'", opVBTable: "`vbtable'", opVCall: "`vcall'", opTypeof: "`typeof'",
	opLocalStaticGuard: "`local static guard'", opString: "`string'", opVBaseDtor: "`vbase destructor'",
	opVectorDeletingDtor: "`vector deleting destructor'", opDefaultCtorClosure: "`default constructor closure'",
	opScalarDeletingDtor: "`scalar deleting destructor'", opVectorCtorIter: "`vector constructor iterator'",
	opVectorDtorIter: "`vector destructor iterator'", opVectorVBaseCtorIter: "`vector vbase constructor iterator'",
	opVirtualDisplacementMap: "`virtual displacement map'", opEHVectorCtorIter: "`eh vector constructor iterator'",
	opEHVectorDtorIter: "`eh vector destructor iterator'", opEHVectorVBaseCtorIter: "`eh vector vbase constructor iterator'",
	opCopyCtorClosure: "`copy constructor closure'", opLocalVFTable: "`local vftable'",
	opLocalVFTableCtorClosure: "`local vftable constructor closure'", opArrayNew: "operator new[]",
	opArrayDelete: "operator delete[]", opPlacementDeleteClosure: "`placement delete closure'",
	opPlacementArrayDeleteClosure: "`placement delete[] closure'", opCoAwait: "operator co_await",
	opLiteral: "operator \"\"", opRTTIBaseClassArray: "`RTTI Base Class Array'",
	opRTTIClassHierarchyDescriptor: "`RTTI Class Hierarchy Descriptor'",
	opRTTICompleteObjectLocator:    "`RTTI Complete Object Locator'", opDynamicInitializer: "`dynamic initializer'",
	opDynamicAtexitDtor: "`dynamic atexit destructor'", opLocalStaticThreadGuard: "`local static thread guard'",
	opSpaceship: "operator<=>",
}
