// Package pdb reads Microsoft PDB 7.0 files (program databases), in the
// style of debug/elf: the format's vocabulary as types, one file per part
// of the format, streams read when first asked for.
//
// A PDB is a multi-stream file (MSF 7.00, [NewMSF]): fixed-size blocks (512
// to 32768 bytes), a stream directory listed by block-map blocks (one, or
// several in the large-directory form). On top of it ([File]):
//
//   - the information stream ([File.Info]): GUID, age, time stamp and the
//     named streams such as /names;
//   - the DBI stream ([File.DBI]): machine type, age, the module
//     (compiland) list with their symbol streams, section contributions and
//     the optional debug header's streams ([File.DebugStream]): FPO
//     ([ParseFPO]), FrameData ([ParseFrameData]), OMAP to and from the
//     original image ([ParseOMAP]) and section headers
//     ([ParseSectionHeaders]);
//   - the /names string table ([File.Names]) that file checksums and frame
//     programs refer to;
//   - the global symbol record stream ([File.GlobalSymbols]: S_PUB32,
//     S_PROCREF, S_GDATA32...) and each module's symbol stream
//     ([File.ModuleSymbols]), walked with [SymbolIter] and decoded per kind
//     ([ParseProc], [ParseThunk], [ParseBlock], [ParseSepCode],
//     [ParsePub], [ParseRef], [ParseFrameProc], [ParseInlineSite] with
//     [DecodeAnnotations]);
//   - a module's C13 line information ([ParseSubsections]): DEBUG_S_LINES,
//     DEBUG_S_FILECHKSMS, DEBUG_S_INLINEELINES, DEBUG_S_FRAMEDATA;
//   - the TPI and IPI type streams ([File.TPI], [File.IPI],
//     [TypeStream.Record]) and the records names are made of
//     (LF_PROCEDURE, LF_MFUNCTION, LF_ARGLIST, LF_POINTER, LF_MODIFIER,
//     LF_ARRAY, classes, unions, enums, LF_FUNC_ID, LF_MFUNC_ID,
//     LF_STRING_ID).
//
// Bad input gives errors wrapping [ErrFormat], never a panic: stream sizes
// and counts are checked against the bytes that hold them before anything
// is allocated. The publics and globals hash tables are not read: their
// records are all in the global symbol record stream.
package pdb
