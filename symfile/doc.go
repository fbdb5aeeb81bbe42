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
//
// # Reading and looking up
//
// [Open] memory-maps a file and [Parse] indexes bytes already in memory; both
// return a [Table] after one streaming pass. The Table answers, for a
// module-relative address, in O(log n):
//
//   - [Table.Lookup]: the [Symbol] there, as Breakpad's SourceLineResolver
//     finds it: the FUNC covering the address with the line record covering it
//     and the chain of inlined calls (innermost first), or else the nearest
//     PUBLIC at or below the address, provided it lies above the start of the
//     nearest FUNC below the address. [Symbol.Frames] turns this into the
//     frames Breakpad prints, with the source positions moved along the
//     inline chain as Breakpad does.
//   - [Table.CFIRules]: the STACK CFI INIT record covering the address and the
//     delta records to apply up to and including it, as text ([CFIRules]),
//     with Breakpad's rule that any delta record of the file between the INIT
//     address and the address applies.
//   - [Table.StackWin]: the STACK WIN record for the address, FrameData (type 4)
//     preferred over FPO (type 0), innermost range first, as Breakpad does.
//
// [Table.Module] and [Table.CodeID] give the MODULE and INFO CODE_ID records.
// Lookups are safe for concurrent use and return strings that stay valid
// after [Table.Close].
//
// Breakpad's behaviour is kept for overlapping records: of overlapping FUNC,
// line or STACK CFI INIT records the first in the file wins; of PUBLIC records
// at one address the first wins, and PUBLIC records at address 0 are ignored;
// STACK WIN and INLINE ranges may nest, and one that partly overlaps an
// earlier one is dropped (equal INLINE ranges nest, the later inside).
//
// Malformed lines are skipped, and the rest of the file loads, as in Breakpad.
// [Table.Errors] reports them with their line numbers and [Table.Corrupt] says
// whether Breakpad would call the file corrupt (INLINE and INLINE_ORIGIN errors
// do not count, as in Breakpad). Accepted text forms: LF or CRLF line ends, a
// missing final newline, blank lines, hex in either case with an optional 0x,
// runs of spaces between numeric fields, names with spaces (the last field
// runs to the line end).
//
// # Symbol stores
//
// A [Store] finds the file for a module in the Breakpad layout
// ROOT/<debug file>/<debug id>/<debug file minus .pdb>.sym over several roots
// and reports [Found], [NotFound] or [Corrupt] apart. Names taken from a dump
// are reduced to their base name and refused when they could leave the root
// ([ErrBadName]).
//
// # Speed and memory
//
// The pass touches each byte once; the commonest records (line records,
// STACK CFI and PUBLIC records in the usual form) are checked in place
// without searching for their line end first. Files of 4 MiB or more are
// parsed in chunks on all CPUs at once (up to four chunks a CPU), cut at
// FUNC, PUBLIC, STACK CFI INIT or STACK WIN lines (the file is parsed in a
// single pass instead if a chunk's first records belong to the function
// before the cut); records are collected in blocks that never move and
// joined once. Function names, rules and line records are not copied: the index
// holds sorted arrays of small structs referring into the file by offset.
// FILE and INLINE_ORIGIN names are copied once, after the pass, into one
// string each, so that lookups return them without allocating. Line records
// are found by a search in the file text itself when a function's records
// are in address order without overlap (as every dump_syms writes them):
// interpolation first, since line records are of similar length, so that a
// lookup on a large file misses the cache on one or two lines of the text
// rather than on a dozen; otherwise they are decoded on first use (and kept,
// for large functions). INLINE records and STACK CFI deltas are decoded at
// lookup time, INLINE records only when the address lies within the bounds
// of the function's INLINE ranges (kept per function); only the few delta
// records that can apply outside the block after their INIT record (Breakpad
// keeps all deltas in one map by address) are indexed. On a 200 MB synthetic
// file the index peaks at about 25 MB of heap. Files must be smaller than 4 GiB.
package symfile
