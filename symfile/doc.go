// Package symfile reads, indexes, finds and writes Breakpad symbol files
// (".sym"), the text format described in Breakpad's docs/symbol_files.md.
//
// # Records
//
// Each kind of line has a plain struct: [Module], [CodeID], [Info], [File],
// [InlineOrigin], [Func], [Line], [Inline], [Public], [CFIInit], [CFI] and
// [StackWin]. Addresses in them are module-relative.
//
// # Writing
//
// [Writer] emits records in Breakpad's exact text form, as dump_syms writes them:
//
//	w := symfile.NewWriter(f)
//	w.WriteModule(symfile.Module{OS: "Linux", Arch: "x86_64", ID: id, Name: "libfoo.so"})
//	w.WriteFunc(symfile.Func{Address: 0x1000, Size: 0x20, Name: "foo"})
//	w.WriteLine(symfile.Line{Address: 0x1000, Size: 0x20, Line: 12, File: 0})
//	err := w.Flush()
package symfile
