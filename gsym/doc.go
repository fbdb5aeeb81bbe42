// Package gsym reads and writes GSYM files, LLVM's memory-mappable symbol
// format (llvm-gsymutil, llvm-symbolizer --gsym-file-directory), version 1.
//
// A GSYM file is, in order:
//
//   - a 48-byte [Header]: magic, version, the size of an address offset
//     (1, 2, 4 or 8 bytes), the UUID (an ELF build ID, a Mach-O UUID), the
//     base address every function address is an offset from, the number
//     of functions and the string table's place;
//   - the address table: one offset from the base per function, sorted,
//     aligned to its own size;
//   - the address info table: one 4-byte file offset per function, of its
//     [FunctionInfo];
//   - the file table: a 4-byte count, then per file two string table offsets
//     ([FileEntry]: directory and base name); entry 0 is always empty;
//   - the string table: NUL-terminated strings, offset 0 the empty one;
//   - the FunctionInfos, each 4-byte aligned: size, name, then typed chunks
//     ([InfoType]): a [LineTable] (rows made by special opcodes that advance
//     address and line at once), an [InlineInfo] tree (ranges relative to
//     the parent's first range, call file and line), and in newer files
//     merged functions and call sites.
//
// Either byte order is read; the magic tells which. [File] reads lazily:
// opening checks the header and the tables' bounds, and a [File.Lookup]
// binary-searches the address table and decodes one FunctionInfo, touching
// a few pages of a mapping (Open) or making a few reads of an io.ReaderAt
// (NewFile). Lookups follow LLVM's GsymReader: the entry covering the
// address (a size-0 entry covers everything up to the next), the last line
// row at or below it, the inline chain innermost first with each frame's
// offset from the start of its function or inlined call (the call's first
// range; SourceLocation.Start also gives the range holding the address).
//
// [Writer] builds a file from functions, files and strings, laid out as
// LLVM's GsymCreator lays them out. Package dumpsyms/gsym converts between
// GSYM and the project's symbol model.
//
// Bad input never panics: every offset and count is checked against the
// data before it is used, inline trees are bounded in depth, and nothing is
// allocated in proportion to a count the file claims.
package gsym
