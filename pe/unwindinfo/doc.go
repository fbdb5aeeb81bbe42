// Package unwindinfo reads the x64 unwind information of PE images: the
// exception directory's RUNTIME_FUNCTION entries (.pdata) and the
// UNWIND_INFO structures with their UNWIND_CODE arrays (.xdata) they point to,
// chained unwind information included, in the vocabulary of Microsoft's
// "x64 exception handling" document.
//
// [Table.Rules] turns them into Breakpad STACK CFI rule text, one entry (a
// STACK CFI INIT record, and for [StyleBreakpad] one STACK CFI record) per
// RUNTIME_FUNCTION, in one of the styles found in the wild, or in ours:
//
//   - [StyleSymbolic]: Sentry symbolic's current rules (also Mozilla
//     dump_syms's): the CFA after the prolog, every saved register and the
//     return address in the INIT record; offsets of registers saved above the
//     CFA are written as negative numbers (".cfa -8 - ^").
//   - [StyleMozilla]: the same with negative offsets clamped to 0, as
//     Mozilla's older references have them.
//   - [StyleBreakpad]: Google Breakpad's Windows dump_syms for a PE without a
//     PDB ("STACK CFI INIT a s .cfa: $rsp .ra: .cfa 8 - ^" followed by
//     "STACK CFI a .cfa: $rsp N +"), which knows no saved registers.
//   - [StyleMozillaPE]: Breakpad's sums with the CFA at entry in the INIT
//     record, as Mozilla dump_syms's older PE reader wrote them.
//   - [StyleExact] (ours): the rules at every instruction, as Windows' own
//     unwinder computes them there: from the entry's state in the INIT
//     record to symbolic's after the prolog, one STACK CFI record at the
//     end of each prolog instruction (each UNWIND_CODE's offset), and
//     records in each epilog, found by its code as Windows finds it.
//
// Besides the standard library, the package uses golang.org/x/arch's x86
// decoder to find epilogs (StyleExact). Bad tables (offsets past the end
// of a section, chains that loop, unknown codes) give errors and never
// panics; reading is bounded by the sizes of the image's sections, and
// StyleExact decodes at most four times their size of code.
package unwindinfo
