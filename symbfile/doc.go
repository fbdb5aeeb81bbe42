// Package symbfile reads and writes symbfiles, the symbol format of the
// OpenTelemetry eBPF profiler (Elastic's symblib): the magic "symbfile",
// then records, each a ULEB128 length, a ULEB128 message type and a protobuf
// message of that length. The messages ([MessageType]) are an empty Header
// (first), [Range] (RangeV1), [ReturnPad] (ReturnPadV1) and a string table
// (StringTableV1) which replaces the one in force; messages of other types
// are skipped. Strings in ranges are either inline or references into the
// current string table; addresses are either absolute or deltas from the
// previous range's or return pad's address.
//
// Ranges form a flattened tree of inlined calls: a range at depth 0 is a
// function's code, one at depth d+1 an inlined call inside a range at depth
// d. Each carries the function's name and source file, the line table of its
// own code (the addresses not covered by deeper ranges), and for inlined
// calls the call line (and call file when it differs from the parent's).
// A return pad is the whole inline stack at a call's return address minus
// one, outermost first.
//
// [Reader] streams the records; [Table] indexes a whole file for lookups
// ([Table.Lookup]); [Writer] writes records, interning strings. Files
// compressed with zstd as a whole (".zst") are read transparently by [Open].
// Addresses are ELF virtual addresses, 64 bits.
package symbfile
