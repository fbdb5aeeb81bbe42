package minidump

import "fmt"

// StreamType identifies a stream in the minidump directory (MDStreamType).
type StreamType uint32

// Stream types. The MD_* names of Breakpad are given by StreamType.Name.
const (
	UnusedStream              StreamType = 0
	ThreadListStream          StreamType = 3
	ModuleListStream          StreamType = 4
	MemoryListStream          StreamType = 5
	ExceptionStream           StreamType = 6
	SystemInfoStream          StreamType = 7
	ThreadExListStream        StreamType = 8
	Memory64ListStream        StreamType = 9
	CommentStreamA            StreamType = 10
	CommentStreamW            StreamType = 11
	HandleDataStream          StreamType = 12
	FunctionTableStream       StreamType = 13
	UnloadedModuleListStream  StreamType = 14
	MiscInfoStream            StreamType = 15
	MemoryInfoListStream      StreamType = 16
	ThreadInfoListStream      StreamType = 17
	HandleOperationListStream StreamType = 18
	TokenStream               StreamType = 19
	JavaScriptDataStream      StreamType = 20
	SystemMemoryInfoStream    StreamType = 21
	ProcessVMCountersStream   StreamType = 22
	IptTraceStream            StreamType = 23
	ThreadNamesStream         StreamType = 24
	LastReservedStream        StreamType = 0x0000ffff

	// Breakpad extensions.
	BreakpadInfoStream  StreamType = 0x47670001
	AssertionInfoStream StreamType = 0x47670002
	LinuxCPUInfo        StreamType = 0x47670003 // /proc/cpuinfo
	LinuxProcStatus     StreamType = 0x47670004 // /proc/PID/status
	LinuxLSBRelease     StreamType = 0x47670005 // /etc/lsb-release
	LinuxCmdLine        StreamType = 0x47670006 // /proc/PID/cmdline
	LinuxEnviron        StreamType = 0x47670007 // /proc/PID/environ
	LinuxAuxv           StreamType = 0x47670008 // /proc/PID/auxv
	LinuxMaps           StreamType = 0x47670009 // /proc/PID/maps
	LinuxDSODebug       StreamType = 0x4767000a // r_debug and link_map entries

	// Crashpad extension.
	CrashpadInfoStream StreamType = 0x43500001

	// Mozilla extensions.
	MozMacosCrashInfoStream StreamType = 0x4d7a0001
	MozMacosBootargsStream  StreamType = 0x4d7a0002
	MozLinuxLimits          StreamType = 0x4d7a0003
	MozSoftErrors           StreamType = 0x4d7a0004
	MozMacosTaskDyldInfo    StreamType = 0x4d7a0005
)

var streamNames = map[StreamType]string{
	UnusedStream:              "MD_UNUSED_STREAM",
	1:                         "MD_RESERVED_STREAM_0",
	2:                         "MD_RESERVED_STREAM_1",
	ThreadListStream:          "MD_THREAD_LIST_STREAM",
	ModuleListStream:          "MD_MODULE_LIST_STREAM",
	MemoryListStream:          "MD_MEMORY_LIST_STREAM",
	ExceptionStream:           "MD_EXCEPTION_STREAM",
	SystemInfoStream:          "MD_SYSTEM_INFO_STREAM",
	ThreadExListStream:        "MD_THREAD_EX_LIST_STREAM",
	Memory64ListStream:        "MD_MEMORY_64_LIST_STREAM",
	CommentStreamA:            "MD_COMMENT_STREAM_A",
	CommentStreamW:            "MD_COMMENT_STREAM_W",
	HandleDataStream:          "MD_HANDLE_DATA_STREAM",
	FunctionTableStream:       "MD_FUNCTION_TABLE_STREAM",
	UnloadedModuleListStream:  "MD_UNLOADED_MODULE_LIST_STREAM",
	MiscInfoStream:            "MD_MISC_INFO_STREAM",
	MemoryInfoListStream:      "MD_MEMORY_INFO_LIST_STREAM",
	ThreadInfoListStream:      "MD_THREAD_INFO_LIST_STREAM",
	HandleOperationListStream: "MD_HANDLE_OPERATION_LIST_STREAM",
	TokenStream:               "MD_TOKEN_STREAM",
	JavaScriptDataStream:      "MD_JAVASCRIPT_DATA_STREAM",
	SystemMemoryInfoStream:    "MD_SYSTEM_MEMORY_INFO_STREAM",
	ProcessVMCountersStream:   "MD_PROCESS_VM_COUNTERS_STREAM",
	IptTraceStream:            "MD_IPT_TRACE_STREAM",
	ThreadNamesStream:         "MD_THREAD_NAME_LIST_STREAM",
	LastReservedStream:        "MD_LAST_RESERVED_STREAM",
	BreakpadInfoStream:        "MD_BREAKPAD_INFO_STREAM",
	AssertionInfoStream:       "MD_ASSERTION_INFO_STREAM",
	LinuxCPUInfo:              "MD_LINUX_CPU_INFO",
	LinuxProcStatus:           "MD_LINUX_PROC_STATUS",
	LinuxLSBRelease:           "MD_LINUX_LSB_RELEASE",
	LinuxCmdLine:              "MD_LINUX_CMD_LINE",
	LinuxEnviron:              "MD_LINUX_ENVIRON",
	LinuxAuxv:                 "MD_LINUX_AUXV",
	LinuxMaps:                 "MD_LINUX_MAPS",
	LinuxDSODebug:             "MD_LINUX_DSO_DEBUG",
	CrashpadInfoStream:        "MD_CRASHPAD_INFO_STREAM",
}

// Name returns Breakpad's MD_* name of the stream type, or "" when it has none.
func (t StreamType) Name() string { return streamNames[t] }

// String returns the MD_* name, or the number in hex for unnamed types.
func (t StreamType) String() string {
	if n := streamNames[t]; n != "" {
		return n
	}
	return fmt.Sprintf("stream type %#x", uint32(t))
}

// Signature and version of a minidump header (MD_HEADER_SIGNATURE, MD_HEADER_VERSION).
const (
	HeaderSignature = 0x504d444d // "MDMP"
	HeaderVersion   = 0x0000a793
)

// Sizes of fixed-size records in the file.
const (
	headerSize           = 32
	directorySize        = 12
	threadSize           = 48
	moduleSize           = 108
	memoryDescriptorSize = 16
	exceptionStreamSize  = 168
	systemInfoSize       = 56
	breakpadInfoSize     = 12
)

// Header is the file header (MDRawHeader).
type Header struct {
	Signature          uint32
	Version            uint32
	StreamCount        uint32
	StreamDirectoryRva uint32
	CheckSum           uint32
	TimeDateStamp      uint32
	Flags              uint64
}

// LocationDescriptor locates data in the file (MDLocationDescriptor).
type LocationDescriptor struct {
	DataSize uint32
	Rva      uint32
}

// Directory is one entry of the stream directory (MDRawDirectory).
type Directory struct {
	StreamType StreamType
	Location   LocationDescriptor
}

// MemoryDescriptor is a range of the crashed process's memory and where its
// bytes are in the file (MDMemoryDescriptor).
type MemoryDescriptor struct {
	StartOfMemoryRange uint64
	Memory             LocationDescriptor
}

// GUID is a Windows GUID as stored in CodeView records (MDGUID).
type GUID struct {
	Data1 uint32
	Data2 uint16
	Data3 uint16
	Data4 [8]byte
}

// String formats the GUID as Breakpad's minidump_dump does:
// 8-4-4-4-12 lower-case hex digits.
func (g GUID) String() string {
	return fmt.Sprintf("%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		g.Data1, g.Data2, g.Data3, g.Data4[0], g.Data4[1], g.Data4[2], g.Data4[3],
		g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7])
}
