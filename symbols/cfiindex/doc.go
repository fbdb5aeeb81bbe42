// Package cfiindex reads and writes a compact, memory-mappable index of the
// unwind records of a Breakpad symbol file: its STACK CFI INIT records with
// the delta records in force within each, its STACK WIN records and its FUNC
// records' parameter sizes (the STACK WIN fallback of Breakpad's x86
// walker), as the symbol file's lookups resolve them (overlaps settled,
// repeated deltas dropped). An Index answers symbols.CFIRuler and
// symbols.WinRuler queries in O(log n) without parsing anything when it is
// opened, so a walker needs not read a large .sym again to unwind.
//
// The file (docs/symcache.md), all integers little-endian:
//
//	header (64 bytes):
//	  0  magic "GBPCFIX\x00"
//	  8  version u32 (1)
//	  12 flags u32 (FlagHasCFI, FlagCorrupt, FlagNoLookups)
//	  16 source size u64, 24 source modification time u64 (Unix ns)
//	  32 INIT count u32, 36 delta count u32, 40 WIN count u32, 44 FUNC count u32
//	  48 string area size u64, 56 reserved u64
//	INIT records (32 bytes): first address u64, last address u64,
//	  rules offset u32, rules length u32, first delta u32, delta count u32;
//	  sorted by address, not overlapping
//	delta records (16 bytes): address u64, rules offset u32, rules length u32;
//	  each INIT's deltas consecutive and sorted by address
//	WIN records (40 bytes): first u64, last u64, parameter size u32, saved
//	  register size u32, local size u32, program offset u32, program length
//	  u32, type u8, flags u8 (1: allocates base pointer, 2: has a program),
//	  2 bytes zero; ranges over which the STACK WIN answer is one record,
//	  sorted, not overlapping
//	FUNC records (24 bytes): first u64, last u64, parameter size u32, zero
//	  u32; sorted, not overlapping
//	string area: rule texts and programs (each distinct text once)
//
// Every record size is a multiple of 8, so each section is 8-byte aligned.
// The sizes in the header must add up to the file's size; records are
// checked when a lookup reads them, so a hostile file gives wrong answers or
// none, never a panic.
package cfiindex
