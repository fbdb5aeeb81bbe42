// Package symcache reads and writes Sentry's SymCache files (the format of
// getsentry/symbolic's symbolic-symcache, versions 7, 8 and 9), the compact,
// memory-mappable lookup cache behind Sentry's symbolication.
//
// A SymCache is little-endian: the magic "SYMC", a version, a [Header]
// (debug id, architecture, counts), then five sections, each starting at an
// 8-byte boundary: [File] records, [Function] records, [SourceLocation]
// records, range starts (one uint32 per range) and string bytes. Strings are
// referred to by their offset in the string bytes; each is prefixed with its
// length, a uint32 in version 7 and a ULEB128 from version 8. Version 9 adds
// three source-server fields to each file.
//
// Every range is the run of addresses from its start up to the next range's
// start, and maps to one source location: range i to source location
// NumSourceLocations-NumRanges+i. A source location names a function, file
// and line, and the source location it was inlined into, so a lookup
// ([Reader.Lookup]) yields the inline chain innermost first. The sentinel
// [NoSourceLocation] ends a function's last range. Addresses, lines and
// offsets are 32 bits: a SymCache cannot describe code above 4 GiB (relative
// to the image base).
//
// [Parse] reads a SymCache held in memory (and [Open] maps a file); it checks
// the section sizes once, and every lookup checks each index it follows, so
// corrupt files give errors or empty answers, never panics. [Builder] makes
// SymCaches from functions, line records and inlined calls, as symbolic's
// SymCacheConverter does from debug information; [Raw] is a SymCache's
// sections as values, for re-encoding.
package symcache
