package msvc

import (
	"errors"
	"strings"
)

// MaxInput bounds the length of the names Demangle reads (MSVC replaces
// names over 4096 bytes by their MD5 hash).
const MaxInput = 16 << 10

// Style is an output style of [Demangle].
type Style int

const (
	// Full is llvm-undname's complete form: access, static and virtual,
	// return types, calling conventions, "class "/"struct " prefixes,
	// "__int64" ("public: int __thiscall ns::S::f(int)").
	Full Style = iota
	// Mozilla is the form Mozilla's dump_syms writes in symbol files
	// ("ns::S::f(int)", "std::basic_string<char, ...>::~basic_string<...>(void)"):
	// no return type, access or calling convention, no class prefixes,
	// "char const*"; "`anonymous namespace'" as it is (Mozilla normalizes
	// it to "(anonymous namespace)" in the names it reads from type
	// records, before demangling, so never in demangled ones). It fails
	// where Mozilla's demangler (msvc-demangler) fails on the corpus, e.g.
	// on const pointers to functions ("Q6A..."): Mozilla then writes the
	// decorated name, and so should callers.
	Mozilla
)

func (s Style) flags() flags {
	if s == Mozilla {
		return fSpaceAfterComma | fHugType | fNoMSKeywords | fNoClassType | fNoFuncReturns
	}
	return fSpaceAfterComma | fSpaceBeforePointer | fMSTypenames | fHugType | fLLVM
}

// Demangle returns the undecorated form of an MSVC decorated name (one
// starting with '?'). Names that are not decorated, malformed ones, and
// ones whose demangled form would be deeper than [MaxDepth] or longer than
// [MaxOutput] give an error.
func Demangle(decorated string, style Style) (string, error) {
	if len(decorated) > MaxInput {
		return "", errors.New("msvc: decorated name too long")
	}
	p := parser{in: decorated, llvm: style == Full}
	r, err := p.parse()
	if err != nil {
		return "", err
	}
	pr := printer{f: style.flags()}
	pr.result(r)
	if pr.over {
		return "", errTooLong
	}
	return string(pr.w), nil
}

// IsDecorated reports whether name looks like an MSVC decorated name.
func IsDecorated(name string) bool {
	return strings.HasPrefix(name, "?") || strings.HasPrefix(name, "@?")
}
