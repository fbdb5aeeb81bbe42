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
//     DEBUG_S_FILECHKSMS, DEBUG_S_INLINEELINES, DEBUG_S_FRAMEDATA, and the
//     cross-module references of link-time code generation
//     (DEBUG_S_CROSSSCOPEIMPORTS/EXPORTS: [ParseCrossScopeImports],
//     [ParseCrossScopeExports], [TypeIndex.CrossModule], [ExportedIndex]);
//   - the TPI and IPI type streams ([File.TPI], [File.IPI],
//     [TypeStream.Record]) and the records names are made of
//     (LF_PROCEDURE, LF_MFUNCTION, LF_ARGLIST, LF_POINTER, LF_MODIFIER,
//     LF_ARRAY, classes, unions, enums, LF_FUNC_ID, LF_MFUNC_ID,
//     LF_STRING_ID).
//
// Memory: [Open] maps the file where the platform allows (Unix). A stream
// whose blocks follow each other is then a slice of the mapping, not a
// copy; the TPI and IPI streams, which the free page map's blocks cut
// every 4096 blocks (16 MB with 4 KiB blocks), are read in place in pieces
// (a record crossing a piece's end is copied); other streams are copied.
// [MSF.Release] gives a stream's pages back once read. [NewFileBytes] reads
// a PDB already in memory the same way; [NewFile] reads through an
// io.ReaderAt, copying each stream. Bytes of streams are valid until
// [File.Close].
//
// Bad input gives errors wrapping [ErrFormat], never a panic: stream sizes
// and counts are checked against the bytes that hold them before anything
// is allocated. The publics and globals hash tables are not read: their
// records are all in the global symbol record stream.
package pdb
