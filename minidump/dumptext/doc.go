// Package dumptext prints a minidump the way Google Breakpad's
// minidump_dump does: the header, the stream directory, and every stream
// Breakpad knows, field by field, in the same format and order, byte for
// byte.
//
//	err := dumptext.Write(w, f, dumptext.Options{Hexdump: false})
//
// Write prints what can be read and carries on past damaged streams. Where
// Breakpad's minidump_dump exits with status 1 (a required stream missing or
// damaged, a dump Breakpad refuses as a whole), Write returns Problems, one
// error per cause in the order met; cmd/minidump_dump prints each and exits
// 1.
//
// The checks that decide what Breakpad refuses (its limits on streams,
// threads and memory regions, repeated thread ids, overlapping ranges) are
// the reader's: the Strict* accessors, CheckStreams and RegionBytes of
// package minidump. This package only formats.
//
// One file per stream family: header.go (header and directory), threads.go
// (threads and thread names), context.go (CPU contexts), modules.go,
// memory.go (memory lists, memory info, memory bytes), exception.go,
// sysinfo.go (system and misc info), breakpad.go (Breakpad info and
// assertion), crashpad.go, linux.go (raw Linux text streams).
package dumptext
