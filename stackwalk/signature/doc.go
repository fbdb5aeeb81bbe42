// Package signature makes crash signatures: one line naming a crash by the
// top frames of its crashing thread, so that crashes of one bug group
// together across builds and machines. It follows Mozilla Socorro's
// signature generation (the facts of its rules; the code and the default
// lists are gobreakpad's own), for C/C++, Rust and Go frames of Linux,
// Windows and macOS dumps.
//
// # Use
//
//	st, err := stackwalk.Process(dump, stackwalk.Options{Symbols: syms})
//	sig := signature.Of(st) // e.g. "crash_here | main"
//
// or, with lists loaded from a directory (Socorro's siglists directory works
// as it is):
//
//	l := signature.DefaultLists()
//	err := l.LoadDir("my-lists", true) // extend the defaults
//	g, err := signature.New(l)
//	res := g.Process(st) // res.Signature, res.Frames, res.Notes
//
// # Rules
//
// Each of the crashing thread's first MaxFrames frames (inline frames
// count as frames) is normalized: a function name by the C++ rules
// (template arguments to <T>, parameter lists, return types, static and
// cv/ref qualifiers dropped, `anonymous namespace' spelled (anonymous
// namespace)), by the Rust rules when its file ends in .rs (generics to
// <T> but trait casts kept, the ::h0123 hash dropped) or by the Go rule for
// .go files (type arguments to [...]); without a function, FILE#LINE; without
// symbols, module@0xOFFSET (Generator.BareModules: the module alone, as
// current Socorro); outside modules "(unloaded NAME)" or "@0xADDRESS".
//
// The signature starts at the first sentinel frame present, skips frames
// matching the irrelevant list, keeps frames matching the prefix list and
// goes on, and ends with the first frame matching neither. Markers are put
// in front: "OOM | small", "OOM | large | ", "OOM | unknown | " (an
// out-of-memory crash reason, or an out-of-memory frame in or above the
// signature), "stackoverflow | " (EXCEPTION_STACK_OVERFLOW), "bad hardware
// | ", "Abort | MESSAGE | ". Signatures are at most MaxLength bytes of
// printable ASCII. docs/signature.md has the details and the list format.
package signature
