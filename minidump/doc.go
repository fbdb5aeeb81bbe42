// Package minidump reads minidump files: the crash dumps written by Windows,
// Google Breakpad and Crashpad clients.
//
// # Opening
//
// Open memory-maps a file (a full-memory dump costs address space, not RAM);
// NewFile reads from any io.ReaderAt and NewFileBytes from a byte slice.
// Opening reads only the Header and the stream Directory. A File is safe for
// concurrent use; Close unmaps it.
//
// # Streams
//
// Each stream has its own accessor returning (value, error), so one damaged
// stream never hides the others. A missing stream gives an error wrapping
// ErrNoStream. Errors name the stream and the field or entry at fault.
//
//	ThreadList()          []Thread: ids, stack MemoryDescriptor, decoded *Context
//	ThreadNames()         []ThreadName
//	ThreadInfoList()      []ThreadInfo
//	ModuleList()          []Module: raw MDRawModule fields, Name, CodeView and misc
//	                      records; CodeFile, CodeIdentifier, DebugFile,
//	                      DebugIdentifier and Version exactly as Breakpad prints them
//	UnloadedModuleList()  []UnloadedModule
//	MemoryList()          []MemoryDescriptor
//	Memory64List()        *Memory64List
//	Memory()              *Memory over both lists: ReadMemory(addr, n)
//	Exception()           *Exception: thread id, ExceptionRecord, decoded *Context
//	SystemInfo()          *SystemInfo: CPU (arch.CPU), CPUName, OSName, CSDVersion,
//	                      CPUVendor, CPUFamily/Model/Stepping
//	MiscInfo()            *MiscInfo (all versions, see SizeOfInfo and Flags1)
//	BreakpadInfo()        *BreakpadInfo: dump and requesting thread ids
//	AssertionInfo()       *AssertionInfo
//	MemoryInfoList()      *MemoryInfoList
//	HandleData()          []HandleDescriptor
//	CrashpadInfo()        *CrashpadInfo: ids, simple annotations, per-module list and
//	                      simple annotations and annotation objects
//	LinuxMaps()           []MapsEntry parsed from /proc/PID/maps (ParseMaps for text)
//	LinuxMapCount()       how many entries LinuxMaps gives, without building them
//	                      (CountMaps for text)
//	LinuxCmdLine(), LinuxEnviron(), LinuxProcStatus(), LinuxLSBRelease(),
//	LinuxCPUInfo(), LinuxAuxv(), LinuxDSODebug()
//	Stream(t)             raw bytes of any stream; Location(l) of any location
//
// Where Breakpad's reader rejects something (a context of the wrong size, a
// string of more than 1024 units, a module of size 0, ...), this package
// rejects it too, so that the tools built on it give Breakpad's answers; see
// docs/minidump.md for the list.
//
// Breakpad's processor applies further limits that only change whether a
// list is used at all (at most MaxStreams streams, MaxThreads threads and
// MaxMemoryRegions regions, no repeated thread id, no overlapping memory
// ranges, ...). The plain accessors stay lenient; CheckStreams, the Strict*
// accessors (StrictThreadList, StrictThreadNames, StrictModuleList,
// StrictMemoryList, StrictMemoryInfoList) and RegionBytes apply them, for
// callers that want Breakpad's answers, such as package minidump/dumptext.
//
// # Memory
//
// (*Memory).ReadMemory(addr uint64, n int) ([]byte, error) is the project's
// one way to read the crashed process's memory (see docs/design.md): it looks
// the address up by binary search over the sorted ranges of MemoryList and
// Memory64List and returns a slice that aliases the mapped file, which must
// not be modified.
//
// # Contexts
//
// CPU contexts decode into Context, which holds exactly one of the raw
// per-CPU contexts of packages arch/x86, arch/amd64, arch/arm and arch/arm64
// (the old arm64 layout is converted, and kept in ARM64Old). The CPU is
// recognized as Breakpad does: amd64 by size, the old arm64 layout by size and
// its 64-bit flags, others by the CPU bits of the context flags, falling back
// to the system info's CPU.
//
// # Hostile input
//
// Every count is checked against the bytes its stream actually has before
// anything is allocated, so no list allocates more than the file's size, and
// every offset is checked against the file's size.
//
// # Writing
//
// Writer encodes minidumps (used by the capture package and by
// minidump/synth, the builder for unit tests): thread, module, memory and
// Memory64 lists, CodeView records, exception, system, misc and Breakpad
// info, memory info, and raw streams.
package minidump
