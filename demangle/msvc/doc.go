// Package msvc demangles Microsoft Visual C++ decorated names
// ("?f@S@ns@@QAEHH@Z" → "public: int __thiscall ns::S::f(int)").
//
// It reads the whole grammar met in PDB publics and PE exports: functions
// (members with access, static and virtual, thunks with adjustors, global
// functions; __cdecl, __stdcall, __thiscall, __fastcall), variables and
// static members, vftables and vbtables, RTTI descriptors, string literals
// ("??_C@_0..."), local static guards, templates ("?$") with their own
// back-reference tables, name and type back-references (0-9), operators,
// anonymous namespaces ("?A0x..."), MD5-hashed names ("??@...@"),
// const/volatile, pointers and references (with __ptr64), rvalue
// references, arrays, function and member-function pointers.
//
// Two output styles: [Mozilla] is what Mozilla's dump_syms (through Sentry
// symbolic and the msvc-demangler crate) writes in FUNC and PUBLIC names —
// no return type, no __cdecl-style keywords, no "class " prefixes, pointers
// hugging their type ("char const*"); [Full]
// follows llvm-undname's complete form. Where Full differs from
// llvm-undname-22 is listed in testdata/README.md.
//
// Hostile names never panic: recursion depth and output length are bounded
// ([MaxDepth], [MaxOutput]) and give errors.
package msvc
