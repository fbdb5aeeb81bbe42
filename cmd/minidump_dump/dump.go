package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
)

// Limits of Breakpad's reader that change what minidump_dump prints.
const (
	maxStreams      = 128
	maxThreads      = 4096
	maxRegions      = 4096
	maxRegionBytes  = 64 << 20 // a memory region larger than this prints "No memory"
	hexdumpWidth    = 16
	memoryInfoSize  = 48
	memoryInfoHdr   = 16
	memoryDescSize  = 16
	threadEntrySize = 48
	threadNameSize  = 12
)

// dumper prints a minidump in Breakpad's minidump_dump format. Its checks
// mirror Breakpad's: a stream Breakpad would refuse is not printed.
type dumper struct {
	w       io.Writer
	f       *minidump.File
	hexdump bool
	log     func(error)
	errors  int
}

func (d *dumper) printf(format string, a ...any) { fmt.Fprintf(d.w, format, a...) }

// fail counts an error that makes minidump_dump exit with status 1.
func (d *dumper) fail(err error) {
	d.errors++
	d.log(err)
}

func (d *dumper) dump() bool {
	f := d.f
	if f.Header.StreamCount > maxStreams {
		d.log(fmt.Errorf("stream count %d exceeds %d", f.Header.StreamCount, maxStreams))
		return false
	}
	if dup := f.DuplicateStreams(); len(dup) > 0 {
		d.log(fmt.Errorf("several streams of type %s", dup[0]))
		return false
	}
	d.header()

	show(d, d.threadList, d.printThreads)
	showIf(d.threadNames, d.printThreadNames)
	show(d, d.moduleList, d.printModules)
	show(d, d.memoryList, d.printMemoryList)
	showIf(f.Exception, d.printException)
	showIf(f.AssertionInfo, d.printAssertion)
	show(d, f.SystemInfo, d.printSystemInfo)
	show(d, f.MiscInfo, d.printMiscInfo)
	showIf(f.BreakpadInfo, d.printBreakpadInfo)
	show(d, d.memoryInfoList, d.printMemoryInfoList)
	showIf(f.CrashpadInfo, d.printCrashpadInfo)
	for _, t := range []minidump.StreamType{minidump.LinuxCmdLine, minidump.LinuxEnviron,
		minidump.LinuxLSBRelease, minidump.LinuxProcStatus, minidump.LinuxCPUInfo, minidump.LinuxMaps} {
		d.rawStream(t)
	}
	return d.errors == 0
}

// show prints a stream that Breakpad requires, or counts why it cannot be
// read.
func show[T any](d *dumper, read func() (T, error), print func(T)) {
	if v, err := read(); err != nil {
		d.fail(err)
	} else {
		print(v)
	}
}

// showIf prints an optional stream when it can be read.
func showIf[T any](read func() (T, error), print func(T)) {
	if v, err := read(); err == nil {
		print(v)
	}
}

// span is an inclusive address range [lo, hi].
type span struct{ lo, hi uint64 }

// firstOverlap sorts spans by start and returns the first two that overlap.
func firstOverlap(spans []span) (a, b span, ok bool) {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo <= spans[i-1].hi {
			return spans[i-1], spans[i], true
		}
	}
	return span{}, span{}, false
}

// utc formats a time_t as Breakpad's TimeTToUTCString.
func utc(t uint32) string {
	return time.Unix(int64(t), 0).UTC().Format("2006-01-02 15:04:05")
}

// cstr cuts s at its first NUL, as printf("%s") would.
func cstr(s string) string {
	if i := bytes.IndexByte([]byte(s), 0); i >= 0 {
		return s[:i]
	}
	return s
}

func streamName(t minidump.StreamType) string {
	if n := t.Name(); n != "" {
		return n
	}
	return "unknown"
}

func (d *dumper) header() {
	h := d.f.Header
	d.printf("MDRawHeader\n")
	d.printf("  signature            = 0x%x\n", h.Signature)
	d.printf("  version              = 0x%x\n", h.Version)
	d.printf("  stream_count         = %d\n", int32(h.StreamCount))
	d.printf("  stream_directory_rva = 0x%x\n", h.StreamDirectoryRva)
	d.printf("  checksum             = 0x%x\n", h.CheckSum)
	d.printf("  time_date_stamp      = 0x%x %s\n", h.TimeDateStamp, utc(h.TimeDateStamp))
	d.printf("  flags                = 0x%x\n", h.Flags)
	d.printf("\n")
	index := map[minidump.StreamType]int{}
	for i, e := range d.f.Directory {
		d.printf("mDirectory[%d]\n", i)
		d.printf("MDRawDirectory\n")
		d.printf("  stream_type        = 0x%x (%s)\n", uint32(e.StreamType), streamName(e.StreamType))
		d.printf("  location.data_size = %d\n", int32(e.Location.DataSize))
		d.printf("  location.rva       = 0x%x\n", e.Location.Rva)
		d.printf("\n")
		index[e.StreamType] = i
	}
	types := make([]minidump.StreamType, 0, len(index))
	for t := range index {
		types = append(types, t)
	}
	slices.Sort(types)
	d.printf("Streams:\n")
	for _, t := range types {
		d.printf("  stream type 0x%x (%s) at index %d\n", uint32(t), streamName(t), index[t])
	}
	d.printf("\n")
}

// threadList reads the thread list with Breakpad's limits.
func (d *dumper) threadList() ([]minidump.Thread, error) {
	b, err := d.f.Stream(minidump.ThreadListStream)
	if err != nil {
		return nil, err
	}
	if len(b) >= 4 {
		if n := binary.LittleEndian.Uint32(b); n > maxThreads && len(b) >= 4+int(n)*threadEntrySize {
			return nil, fmt.Errorf("thread list: %d threads exceeds %d", n, maxThreads)
		}
	}
	threads, err := d.f.ThreadList()
	if err != nil {
		return nil, err
	}
	seen := make(map[uint32]bool, len(threads))
	for i, t := range threads {
		if seen[t.ThreadID] {
			return nil, fmt.Errorf("thread list: thread %d repeats id %#x", i, t.ThreadID)
		}
		seen[t.ThreadID] = true
	}
	return threads, nil
}

func (d *dumper) printThreads(threads []minidump.Thread) {
	d.printf("MinidumpThreadList\n")
	d.printf("  thread_count = %d\n", len(threads))
	d.printf("\n")
	for i := range threads {
		t := &threads[i]
		d.printf("thread[%d]\n", i)
		d.printf("MDRawThread\n")
		d.printf("  thread_id                   = 0x%x\n", t.ThreadID)
		d.printf("  suspend_count               = %d\n", int32(t.SuspendCount))
		d.printf("  priority_class              = 0x%x\n", t.PriorityClass)
		d.printf("  priority                    = 0x%x\n", t.Priority)
		d.printf("  teb                         = 0x%x\n", t.Teb)
		d.printf("  stack.start_of_memory_range = 0x%x\n", t.Stack.StartOfMemoryRange)
		d.printf("  stack.memory.data_size      = 0x%x\n", t.Stack.Memory.DataSize)
		d.printf("  stack.memory.rva            = 0x%x\n", t.Stack.Memory.Rva)
		d.printf("  thread_context.data_size    = 0x%x\n", t.ThreadContext.DataSize)
		d.printf("  thread_context.rva          = 0x%x\n", t.ThreadContext.Rva)
		d.context(t.Context)
		s := t.Stack
		if s.Memory.Rva == 0 || s.Memory.DataSize == 0 || uint64(s.Memory.DataSize) > ^uint64(0)-s.StartOfMemoryRange {
			d.printf("No stack\n")
		} else {
			d.printf("Stack\n")
			d.memory(s.Memory)
		}
		d.printf("\n")
	}
}

// context prints a decoded context as DumpContext::Print, or "(no context)".
func (d *dumper) context(c *minidump.Context) {
	if c == nil {
		d.printf("  (no context)\n")
		d.printf("\n")
		return
	}
	d.printf("\n")
	switch {
	case c.X86 != nil:
		d.x86(c.X86)
	case c.AMD64 != nil:
		d.amd64(c.AMD64)
	case c.ARM != nil:
		d.arm(c.ARM)
	case c.ARM64 != nil:
		d.arm64(c.ARM64)
	}
}

func (d *dumper) x86(c *x86.Context) {
	d.printf("MDRawContextX86\n")
	d.printf("  context_flags                = 0x%x\n", c.ContextFlags)
	d.printf("  dr0                          = 0x%x\n", c.Dr0)
	d.printf("  dr1                          = 0x%x\n", c.Dr1)
	d.printf("  dr2                          = 0x%x\n", c.Dr2)
	d.printf("  dr3                          = 0x%x\n", c.Dr3)
	d.printf("  dr6                          = 0x%x\n", c.Dr6)
	d.printf("  dr7                          = 0x%x\n", c.Dr7)
	fs := &c.FloatSave
	d.printf("  float_save.control_word      = 0x%x\n", fs.ControlWord)
	d.printf("  float_save.status_word       = 0x%x\n", fs.StatusWord)
	d.printf("  float_save.tag_word          = 0x%x\n", fs.TagWord)
	d.printf("  float_save.error_offset      = 0x%x\n", fs.ErrorOffset)
	d.printf("  float_save.error_selector    = 0x%x\n", fs.ErrorSelector)
	d.printf("  float_save.data_offset       = 0x%x\n", fs.DataOffset)
	d.printf("  float_save.data_selector     = 0x%x\n", fs.DataSelector)
	d.printf("  float_save.register_area[%2d] = 0x%x\n", len(fs.RegisterArea), fs.RegisterArea[:])
	d.printf("  float_save.cr0_npx_state     = 0x%x\n", fs.Cr0NpxState)
	d.printf("  gs                           = 0x%x\n", c.Gs)
	d.printf("  fs                           = 0x%x\n", c.Fs)
	d.printf("  es                           = 0x%x\n", c.Es)
	d.printf("  ds                           = 0x%x\n", c.Ds)
	d.printf("  edi                          = 0x%x\n", c.Edi)
	d.printf("  esi                          = 0x%x\n", c.Esi)
	d.printf("  ebx                          = 0x%x\n", c.Ebx)
	d.printf("  edx                          = 0x%x\n", c.Edx)
	d.printf("  ecx                          = 0x%x\n", c.Ecx)
	d.printf("  eax                          = 0x%x\n", c.Eax)
	d.printf("  ebp                          = 0x%x\n", c.Ebp)
	d.printf("  eip                          = 0x%x\n", c.Eip)
	d.printf("  cs                           = 0x%x\n", c.Cs)
	d.printf("  eflags                       = 0x%x\n", c.EFlags)
	d.printf("  esp                          = 0x%x\n", c.Esp)
	d.printf("  ss                           = 0x%x\n", c.Ss)
	d.printf("  extended_registers[%3d]      = 0x%x\n", len(c.ExtendedRegisters), c.ExtendedRegisters[:])
	d.printf("\n")
}

func (d *dumper) amd64(c *amd64.Context) {
	d.printf("MDRawContextAMD64\n")
	for _, r := range []struct {
		name string
		v    uint64
	}{
		{"p1_home", c.P1Home}, {"p2_home", c.P2Home}, {"p3_home", c.P3Home},
		{"p4_home", c.P4Home}, {"p5_home", c.P5Home}, {"p6_home", c.P6Home},
		{"context_flags", uint64(c.ContextFlags)}, {"mx_csr", uint64(c.MxCsr)},
		{"cs", uint64(c.Cs)}, {"ds", uint64(c.Ds)}, {"es", uint64(c.Es)},
		{"fs", uint64(c.Fs)}, {"gs", uint64(c.Gs)}, {"ss", uint64(c.Ss)},
		{"eflags", uint64(c.EFlags)},
		{"dr0", c.Dr0}, {"dr1", c.Dr1}, {"dr2", c.Dr2}, {"dr3", c.Dr3}, {"dr6", c.Dr6}, {"dr7", c.Dr7},
		{"rax", c.Rax}, {"rcx", c.Rcx}, {"rdx", c.Rdx}, {"rbx", c.Rbx},
		{"rsp", c.Rsp}, {"rbp", c.Rbp}, {"rsi", c.Rsi}, {"rdi", c.Rdi},
		{"r8", c.R8}, {"r9", c.R9}, {"r10", c.R10}, {"r11", c.R11},
		{"r12", c.R12}, {"r13", c.R13}, {"r14", c.R14}, {"r15", c.R15},
		{"rip", c.Rip},
	} {
		d.printf("  %-13s = 0x%x\n", r.name, r.v)
	}
	d.printf("\n")
}

var armRegNames = [16]string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7",
	"r8", "r9", "r10", "r11", "r12", "sp", "lr", "pc"}

func (d *dumper) arm(c *arm.Context) {
	d.printf("MDRawContextARM\n")
	d.printf("  context_flags        = 0x%x\n", c.ContextFlags)
	for i, v := range c.Iregs {
		d.printf("  %-3s                  = 0x%x\n", armRegNames[i], v)
	}
	d.printf("  cpsr                 = 0x%x\n", c.Cpsr)
	d.printf("  float_save.fpscr     = 0x%x\n", c.FloatSave.Fpscr)
	for i, v := range c.FloatSave.Regs {
		d.printf("  float_save.regs[%2d]  = 0x%x\n", i, v)
	}
	for i, v := range c.FloatSave.Extra {
		d.printf("  float_save.extra[%2d] = 0x%x\n", i, v)
	}
}

func (d *dumper) arm64(c *arm64.Context) {
	d.printf("MDRawContextARM64\n")
	d.printf("  context_flags       = 0x%x\n", c.ContextFlags)
	for i, v := range c.Iregs {
		d.printf("  iregs[%2d]            = 0x%x\n", i, v)
	}
	d.printf("  cpsr                = 0x%x\n", c.Cpsr)
	d.printf("  float_save.fpsr     = 0x%x\n", c.FloatSave.Fpsr)
	d.printf("  float_save.fpcr     = 0x%x\n", c.FloatSave.Fpcr)
	for i, v := range c.FloatSave.Regs {
		// Breakpad prints the two halves without padding the low one.
		d.printf("  float_save.regs[%2d]            = 0x%x%x\n", i, v.High, v.Low)
	}
}

// memory prints a memory region's bytes as MinidumpMemoryRegion::Print.
func (d *dumper) memory(l minidump.LocationDescriptor) {
	if l.DataSize == 0 || l.DataSize > maxRegionBytes {
		d.printf("No memory\n")
		return
	}
	b, err := d.f.Location(l)
	if err != nil {
		d.printf("No memory\n")
		return
	}
	if !d.hexdump {
		// Stream the hex: a region may be tens of megabytes.
		d.printf("0x")
		hex.NewEncoder(d.w).Write(b)
		d.printf("\n")
		return
	}
	for off := 0; off < len(b); off += hexdumpWidth {
		line := b[off:min(off+hexdumpWidth, len(b))]
		d.printf("%08x  ", off)
		for i := range hexdumpWidth {
			if i < len(line) {
				d.printf("%02x ", line[i])
			} else {
				d.printf("   ")
			}
			if (i+1)%8 == 0 {
				d.printf(" ")
			}
		}
		d.printf("|")
		for i := range hexdumpWidth {
			switch {
			case i >= len(line):
				d.printf(" ")
			case line[i] >= 0x20 && line[i] < 0x7f:
				d.printf("%c", line[i])
			default:
				d.printf(".")
			}
		}
		d.printf("|\n")
	}
}

// threadNames reads the thread name list as Breakpad accepts it: no
// padding after the count, at most 4096 names, every name readable.
func (d *dumper) threadNames() ([]minidump.ThreadName, error) {
	b, err := d.f.Stream(minidump.ThreadNamesStream)
	if err != nil {
		return nil, err
	}
	names, err := d.f.ThreadNames()
	if err != nil {
		return nil, err
	}
	if len(b) != 4+threadNameSize*len(names) || len(names) > maxThreads {
		return nil, fmt.Errorf("thread name list: %d bytes for %d names", len(b), len(names))
	}
	for _, n := range names {
		if n.NameErr != nil {
			return nil, n.NameErr
		}
	}
	return names, nil
}

func (d *dumper) printThreadNames(names []minidump.ThreadName) {
	d.printf("MinidumpThreadNameList\n")
	d.printf("  thread_name_count = %d\n", len(names))
	d.printf("\n")
	for i, n := range names {
		d.printf("thread_name[%d]\n", i)
		d.printf("MDRawThreadName\n")
		d.printf("  thread_id                   = 0x%x\n", n.ThreadID)
		d.printf("  thread_name_rva             = 0x%x\n", n.ThreadNameRva)
		d.printf("  thread_name                 = \"%s\"\n", cstr(n.Name))
		d.printf("\n")
	}
}

// moduleList reads the module list and applies Breakpad's range checks:
// outside Linux and Android, a module overlapping an earlier one (other than
// an exact duplicate) makes the list unreadable.
func (d *dumper) moduleList() ([]minidump.Module, error) {
	mods, err := d.f.ModuleList()
	if err != nil {
		return nil, err
	}
	linux := false
	if si, err := d.f.SystemInfo(); err == nil {
		linux = si.PlatformID == minidump.PlatformLinux || si.PlatformID == minidump.PlatformAndroid
	}
	if linux {
		return mods, nil
	}
	var stored []span
	for i := range mods {
		m := &mods[i]
		lo, hi := m.BaseOfImage, m.BaseOfImage+uint64(m.SizeOfImage)-1
		overlap := -1
		for j, s := range stored {
			if lo <= s.hi && s.lo <= hi {
				overlap = j
				break
			}
		}
		if overlap >= 0 {
			if dupOf(mods, i) {
				continue
			}
			return nil, fmt.Errorf("module list: module %d (%s) overlaps another", i, m.Name)
		}
		stored = append(stored, span{lo, hi})
	}
	return mods, nil
}

// dupOf reports whether module i repeats an earlier module exactly.
func dupOf(mods []minidump.Module, i int) bool {
	m := &mods[i]
	for j := range i {
		o := &mods[j]
		if o.BaseOfImage == m.BaseOfImage && o.SizeOfImage == m.SizeOfImage &&
			o.Name == m.Name && o.CodeIdentifier() == m.CodeIdentifier() {
			return true
		}
	}
	return false
}

func (d *dumper) printModules(mods []minidump.Module) {
	d.printf("MinidumpModuleList\n")
	d.printf("  module_count = %d\n", len(mods))
	d.printf("\n")
	for i := range mods {
		m := &mods[i]
		v := &m.VersionInfo
		d.printf("module[%d]\n", i)
		d.printf("MDRawModule\n")
		d.printf("  base_of_image                   = 0x%x\n", m.BaseOfImage)
		d.printf("  size_of_image                   = 0x%x\n", m.SizeOfImage)
		d.printf("  checksum                        = 0x%x\n", m.CheckSum)
		d.printf("  time_date_stamp                 = 0x%x %s\n", m.TimeDateStamp, utc(m.TimeDateStamp))
		d.printf("  module_name_rva                 = 0x%x\n", m.ModuleNameRva)
		d.printf("  version_info.signature          = 0x%x\n", v.Signature)
		d.printf("  version_info.struct_version     = 0x%x\n", v.StructVersion)
		d.printf("  version_info.file_version       = 0x%x:0x%x\n", v.FileVersionHi, v.FileVersionLo)
		d.printf("  version_info.product_version    = 0x%x:0x%x\n", v.ProductVersionHi, v.ProductVersionLo)
		d.printf("  version_info.file_flags_mask    = 0x%x\n", v.FileFlagsMask)
		d.printf("  version_info.file_flags         = 0x%x\n", v.FileFlags)
		d.printf("  version_info.file_os            = 0x%x\n", v.FileOS)
		d.printf("  version_info.file_type          = 0x%x\n", v.FileType)
		d.printf("  version_info.file_subtype       = 0x%x\n", v.FileSubtype)
		d.printf("  version_info.file_date          = 0x%x:0x%x\n", v.FileDateHi, v.FileDateLo)
		d.printf("  cv_record.data_size             = %d\n", int32(m.CvRecord.DataSize))
		d.printf("  cv_record.rva                   = 0x%x\n", m.CvRecord.Rva)
		d.printf("  misc_record.data_size           = %d\n", int32(m.MiscRecord.DataSize))
		d.printf("  misc_record.rva                 = 0x%x\n", m.MiscRecord.Rva)
		d.printf("  (code_file)                     = \"%s\"\n", cstr(m.CodeFile()))
		d.printf("  (code_identifier)               = \"%s\"\n", m.CodeIdentifier())
		d.cvRecord(m)
		if misc, ok := m.DebugMisc(); ok && m.MiscErr == nil {
			d.printf("  (misc_record).data_type         = 0x%x\n", misc.DataType)
			d.printf("  (misc_record).length            = 0x%x\n", misc.Length)
			d.printf("  (misc_record).unicode           = %d\n", m.Misc[8])
			var data string
			if misc.Unicode {
				data = minidump.UTF16Buffer(misc.Data)
			} else {
				data = cstr(string(misc.Data))
			}
			d.printf("  (misc_record).data              = \"%s\"\n", data)
		} else {
			d.printf("  (misc_record)                   = (null)\n")
		}
		d.printf("  (debug_file)                    = \"%s\"\n", cstr(m.DebugFile()))
		d.printf("  (debug_identifier)              = \"%s\"\n", m.DebugIdentifier())
		d.printf("  (version)                       = \"%s\"\n", m.Version())
		d.printf("\n")
	}
}

func (d *dumper) cvRecord(m *minidump.Module) {
	if m.CodeView == nil || m.CodeViewErr != nil {
		d.printf("  (cv_record)                     = (null)\n")
		return
	}
	if r, ok := m.PDB70(); ok {
		d.printf("  (cv_record).cv_signature        = 0x%x\n", m.CVSignature())
		d.printf("  (cv_record).signature           = %s\n", r.Signature)
		d.printf("  (cv_record).age                 = %d\n", int32(r.Age))
		d.printf("  (cv_record).pdb_file_name       = \"%s\"\n", r.PDBFileName)
		return
	}
	if r, ok := m.PDB20(); ok {
		d.printf("  (cv_record).cv_header.signature = 0x%x\n", m.CVSignature())
		d.printf("  (cv_record).cv_header.offset    = 0x%x\n", r.Offset)
		d.printf("  (cv_record).signature           = 0x%x %s\n", r.Signature, utc(r.Signature))
		d.printf("  (cv_record).age                 = %d\n", int32(r.Age))
		d.printf("  (cv_record).pdb_file_name       = \"%s\"\n", r.PDBFileName)
		return
	}
	if id, ok := m.BuildID(); ok {
		d.printf("  (cv_record).cv_signature        = 0x%x\n", m.CVSignature())
		d.printf("  (cv_record).build_id            = %x\n", id)
		return
	}
	d.printf("  (cv_record)                     = %x\n", m.CodeView)
}

// memoryList reads the memory list with Breakpad's checks: at most 4096
// regions, none empty or wrapping, none overlapping another.
func (d *dumper) memoryList() ([]minidump.MemoryDescriptor, error) {
	list, err := d.f.MemoryList()
	if err != nil {
		return nil, err
	}
	if len(list) > maxRegions {
		return nil, fmt.Errorf("memory list: %d regions exceeds %d", len(list), maxRegions)
	}
	spans := make([]span, 0, len(list))
	for i, r := range list {
		size := uint64(r.Memory.DataSize)
		if size == 0 || size > ^uint64(0)-r.StartOfMemoryRange {
			return nil, fmt.Errorf("memory list: region %d: bad range %#x+%#x", i, r.StartOfMemoryRange, size)
		}
		spans = append(spans, span{r.StartOfMemoryRange, r.StartOfMemoryRange + size - 1})
	}
	if a, b, ok := firstOverlap(spans); ok {
		return nil, fmt.Errorf("memory list: regions at %#x and %#x overlap", a.lo, b.lo)
	}
	return list, nil
}

func (d *dumper) printMemoryList(list []minidump.MemoryDescriptor) {
	d.printf("MinidumpMemoryList\n")
	d.printf("  region_count = %d\n", len(list))
	d.printf("\n")
	for i, r := range list {
		d.printf("region[%d]\n", i)
		d.printf("MDMemoryDescriptor\n")
		d.printf("  start_of_memory_range = 0x%x\n", r.StartOfMemoryRange)
		d.printf("  memory.data_size      = 0x%x\n", r.Memory.DataSize)
		d.printf("  memory.rva            = 0x%x\n", r.Memory.Rva)
		d.printf("Memory\n")
		d.memory(r.Memory)
		d.printf("\n")
	}
}

func (d *dumper) printException(e *minidump.Exception) {
	r := &e.ExceptionRecord
	d.printf("MDException\n")
	d.printf("  thread_id                                  = 0x%x\n", e.ThreadID)
	d.printf("  exception_record.exception_code            = 0x%x\n", r.ExceptionCode)
	d.printf("  exception_record.exception_flags           = 0x%x\n", r.ExceptionFlags)
	d.printf("  exception_record.exception_record          = 0x%x\n", r.ExceptionRecord)
	d.printf("  exception_record.exception_address         = 0x%x\n", r.ExceptionAddress)
	d.printf("  exception_record.number_parameters         = %d\n", int32(r.NumberParameters))
	for i := uint32(0); i < r.NumberParameters; i++ {
		var v uint64
		if i < minidump.MaxExceptionParameters {
			v = r.ExceptionInformation[i]
		} else {
			// Breakpad reads past the array, into the context location.
			v = exceptionOverflowParam(e, i)
		}
		d.printf("  exception_record.exception_information[%2d] = 0x%x\n", i, v)
	}
	d.printf("  thread_context.data_size                   = %d\n", int32(e.ThreadContext.DataSize))
	d.printf("  thread_context.rva                         = 0x%x\n", e.ThreadContext.Rva)
	d.context(e.Context)
}

// exceptionOverflowParam returns what Breakpad prints for a parameter index
// past the 15 stored: the first one overlays the context location; beyond
// it the values are unknown, and are printed as 0.
func exceptionOverflowParam(e *minidump.Exception, i uint32) uint64 {
	if i == minidump.MaxExceptionParameters {
		return uint64(e.ThreadContext.DataSize) | uint64(e.ThreadContext.Rva)<<32
	}
	return 0
}

func (d *dumper) printAssertion(a *minidump.AssertionInfo) {
	d.printf("MDAssertion\n")
	d.printf("  expression                                 = %s\n", cstr(minidump.UTF16String(a.Expression[:])))
	d.printf("  function                                   = %s\n", cstr(minidump.UTF16String(a.Function[:])))
	d.printf("  file                                       = %s\n", cstr(minidump.UTF16String(a.File[:])))
	d.printf("  line                                       = %d\n", a.Line)
	d.printf("  type                                       = %d\n", a.Type)
	d.printf("\n")
}

func (d *dumper) printSystemInfo(si *minidump.SystemInfo) {
	x86info := si.ProcessorArchitecture == minidump.ArchX86 || si.ProcessorArchitecture == minidump.ArchX86Win64
	d.printf("MDRawSystemInfo\n")
	d.printf("  processor_architecture                     = 0x%x (%s)\n", uint16(si.ProcessorArchitecture), si.CPUName())
	d.printf("  processor_level                            = %d\n", si.ProcessorLevel)
	d.printf("  processor_revision                         = 0x%x\n", si.ProcessorRevision)
	d.printf("  number_of_processors                       = %d\n", si.NumberOfProcessors)
	d.printf("  product_type                               = %d\n", si.ProductType)
	d.printf("  major_version                              = %d\n", int32(si.MajorVersion))
	d.printf("  minor_version                              = %d\n", int32(si.MinorVersion))
	d.printf("  build_number                               = %d\n", int32(si.BuildNumber))
	d.printf("  platform_id                                = 0x%x (%s)\n", uint32(si.PlatformID), si.OSName())
	d.printf("  csd_version_rva                            = 0x%x\n", si.CSDVersionRva)
	d.printf("  suite_mask                                 = 0x%x\n", si.SuiteMask)
	if x86info {
		d.printf("  cpu.x86_cpu_info (valid):\n")
	} else {
		d.printf("  cpu.x86_cpu_info (invalid):\n")
	}
	xi := si.X86CPUInfo()
	for i, v := range xi.VendorID {
		d.printf("  cpu.x86_cpu_info.vendor_id[%d]              = 0x%x\n", i, v)
	}
	d.printf("  cpu.x86_cpu_info.version_information       = 0x%x\n", xi.VersionInformation)
	d.printf("  cpu.x86_cpu_info.feature_information       = 0x%x\n", xi.FeatureInformation)
	d.printf("  cpu.x86_cpu_info.amd_extended_cpu_features = 0x%x\n", xi.AMDExtendedCPUFeatures)
	if !x86info {
		d.printf("  cpu.other_cpu_info (valid):\n")
		for i, v := range si.OtherCPUInfo() {
			d.printf("  cpu.other_cpu_info.processor_features[%d]   = 0x%x\n", i, v)
		}
	}
	if si.CSDVersionErr != nil {
		d.printf("  (csd_version)                              = (null)\n")
	} else {
		d.printf("  (csd_version)                              = \"%s\"\n", cstr(si.CSDVersion))
	}
	if x86info {
		d.printf("  (cpu_vendor)                               = \"%s\"\n", cstr(vendorString(xi.VendorID)))
	} else {
		d.printf("  (cpu_vendor)                               = (null)\n")
	}
	d.printf("\n")
}

func vendorString(v [3]uint32) string {
	b := make([]byte, 0, 12)
	for _, w := range v {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return string(b)
}

// valueOrInvalid formats a field that Flags1 may mark invalid.
func valueOrInvalid(valid bool, hex bool, v uint32) string {
	switch {
	case !valid:
		return "(invalid)"
	case hex:
		return fmt.Sprintf("0x%x", v)
	}
	return fmt.Sprintf("%d", int32(v))
}

func systemTime(t minidump.SystemTime) string {
	return fmt.Sprintf("%04d-%02d-%02d (%d) %02d:%02d:%02d.%03d",
		t.Year, t.Month, t.Day, t.DayOfWeek, t.Hour, t.Minute, t.Second, t.Milliseconds)
}

func (d *dumper) printMiscInfo(m *minidump.MiscInfo) {
	f := m.Flags1
	d.printf("MDRawMiscInfo\n")
	d.printf("  size_of_info                 = %d\n", int32(m.SizeOfInfo))
	d.printf("  flags1                       = 0x%x\n", f)
	d.printf("  process_id                   = %s\n", valueOrInvalid(f&minidump.MiscInfoProcessID != 0, false, m.ProcessID))
	if f&minidump.MiscInfoProcessTimes != 0 {
		d.printf("  process_create_time          = 0x%x %s\n", m.ProcessCreateTime, utc(m.ProcessCreateTime))
	} else {
		d.printf("  process_create_time          = (invalid)\n")
	}
	times := f&minidump.MiscInfoProcessTimes != 0
	d.printf("  process_user_time            = %s\n", valueOrInvalid(times, false, m.ProcessUserTime))
	d.printf("  process_kernel_time          = %s\n", valueOrInvalid(times, false, m.ProcessKernelTime))
	if m.SizeOfInfo > minidump.MiscInfoSize {
		power := f&minidump.MiscInfoProcessorPowerInfo != 0
		d.printf("  processor_max_mhz            = %s\n", valueOrInvalid(power, false, m.ProcessorMaxMhz))
		d.printf("  processor_current_mhz        = %s\n", valueOrInvalid(power, false, m.ProcessorCurrentMhz))
		d.printf("  processor_mhz_limit          = %s\n", valueOrInvalid(power, false, m.ProcessorMhzLimit))
		d.printf("  processor_max_idle_state     = %s\n", valueOrInvalid(power, false, m.ProcessorMaxIdleState))
		d.printf("  processor_current_idle_state = %s\n", valueOrInvalid(power, false, m.ProcessorCurrentIdleState))
	}
	if m.SizeOfInfo > minidump.MiscInfo2Size {
		d.printf("  process_integrity_level      = %s\n", valueOrInvalid(f&minidump.MiscInfoProcessIntegrity != 0, true, m.ProcessIntegrityLevel))
		d.printf("  process_execute_flags        = %s\n", valueOrInvalid(f&minidump.MiscInfoProcessExecuteFlag != 0, true, m.ProcessExecuteFlags))
		d.printf("  protected_process            = %s\n", valueOrInvalid(f&minidump.MiscInfoProtectedProcess != 0, false, m.ProtectedProcess))
		tz := f&minidump.MiscInfoTimezone != 0
		d.printf("  time_zone_id                 = %s\n", valueOrInvalid(tz, false, m.TimeZoneID))
		if tz {
			z := &m.TimeZone
			d.printf("  time_zone.bias               = %d\n", z.Bias)
			d.printf("  time_zone.standard_name      = %s\n", cstr(minidump.UTF16String(z.StandardName[:])))
			d.printf("  time_zone.standard_date      = %s\n", systemTime(z.StandardDate))
			d.printf("  time_zone.standard_bias      = %d\n", z.StandardBias)
			d.printf("  time_zone.daylight_name      = %s\n", cstr(minidump.UTF16String(z.DaylightName[:])))
			d.printf("  time_zone.daylight_date      = %s\n", systemTime(z.DaylightDate))
			d.printf("  time_zone.daylight_bias      = %d\n", z.DaylightBias)
		} else {
			for _, n := range []string{"bias         ", "standard_name", "standard_date", "standard_bias",
				"daylight_name", "daylight_date", "daylight_bias"} {
				d.printf("  time_zone.%s      = (invalid)\n", n)
			}
		}
	}
	if m.SizeOfInfo > minidump.MiscInfo3Size {
		if f&minidump.MiscInfoBuildString != 0 {
			d.printf("  build_string                 = %s\n", cstr(minidump.UTF16String(m.BuildString[:])))
			d.printf("  dbg_bld_str                  = %s\n", cstr(minidump.UTF16String(m.DbgBldStr[:])))
		} else {
			d.printf("  build_string                 = (invalid)\n")
			d.printf("  dbg_bld_str                  = (invalid)\n")
		}
	}
	if m.SizeOfInfo > minidump.MiscInfo4Size {
		if f&minidump.MiscInfoProcessCookie != 0 {
			x := &m.XStateData
			d.printf("  xstate_data.size_of_info     = %d\n", int32(x.SizeOfInfo))
			d.printf("  xstate_data.context_size     = %d\n", int32(x.ContextSize))
			d.printf("  xstate_data.enabled_features = 0x%x\n", x.EnabledFeatures)
			for i, ft := range x.Features {
				if x.EnabledFeatures>>i&1 != 0 {
					d.printf("  xstate_data.features[%02d]     = { %d, %d }\n", i, int32(ft.Offset), int32(ft.Size))
				}
			}
			if x.EnabledFeatures == 0 {
				d.printf("  xstate_data.features[]       = (empty)\n")
			}
			d.printf("  process_cookie               = %d\n", int32(m.ProcessCookie))
		} else {
			d.printf("  xstate_data.size_of_info     = (invalid)\n")
			d.printf("  xstate_data.context_size     = (invalid)\n")
			d.printf("  xstate_data.enabled_features = (invalid)\n")
			d.printf("  xstate_data.features[]       = (invalid)\n")
			d.printf("  process_cookie               = (invalid)\n")
		}
	}
	d.printf("\n")
}

func (d *dumper) printBreakpadInfo(b *minidump.BreakpadInfo) {
	d.printf("MDRawBreakpadInfo\n")
	d.printf("  validity             = 0x%x\n", b.Validity)
	d.printf("  dump_thread_id       = %s\n", valueOrInvalid(b.Validity&minidump.BreakpadInfoValidDumpThreadID != 0, true, b.DumpThreadID))
	d.printf("  requesting_thread_id = %s\n", valueOrInvalid(b.Validity&minidump.BreakpadInfoValidRequestingThreadID != 0, true, b.RequestingThreadID))
	d.printf("\n")
}

// memoryInfoList reads the memory info list with Breakpad's stricter checks:
// exact header and entry sizes, no empty, wrapping or overlapping region.
func (d *dumper) memoryInfoList() (*minidump.MemoryInfoList, error) {
	b, err := d.f.Stream(minidump.MemoryInfoListStream)
	if err != nil {
		return nil, err
	}
	l, err := d.f.MemoryInfoList()
	if err != nil {
		return nil, err
	}
	if l.SizeOfHeader != memoryInfoHdr || l.SizeOfEntry != memoryInfoSize {
		return nil, fmt.Errorf("memory info list: header %d and entry %d bytes, want %d and %d", l.SizeOfHeader, l.SizeOfEntry, memoryInfoHdr, memoryInfoSize)
	}
	if len(b) != memoryInfoHdr+memoryInfoSize*len(l.Entries) {
		return nil, fmt.Errorf("memory info list: %d bytes for %d entries", len(b), len(l.Entries))
	}
	spans := make([]span, 0, len(l.Entries))
	for i, e := range l.Entries {
		if e.RegionSize == 0 || e.RegionSize > ^uint64(0)-e.BaseAddress {
			return nil, fmt.Errorf("memory info list: entry %d: bad range %#x+%#x", i, e.BaseAddress, e.RegionSize)
		}
		spans = append(spans, span{e.BaseAddress, e.BaseAddress + e.RegionSize - 1})
	}
	if _, _, ok := firstOverlap(spans); ok {
		return nil, errors.New("memory info list: overlapping regions")
	}
	return l, nil
}

func (d *dumper) printMemoryInfoList(l *minidump.MemoryInfoList) {
	d.printf("MinidumpMemoryInfoList\n")
	d.printf("  info_count = %d\n", len(l.Entries))
	d.printf("\n")
	for i, e := range l.Entries {
		d.printf("info[%d]\n", i)
		d.printf("MDRawMemoryInfo\n")
		d.printf("  base_address          = 0x%x\n", e.BaseAddress)
		d.printf("  allocation_base       = 0x%x\n", e.AllocationBase)
		d.printf("  allocation_protection = 0x%x\n", e.AllocationProtect)
		d.printf("  region_size           = 0x%x\n", e.RegionSize)
		d.printf("  state                 = 0x%x\n", e.State)
		d.printf("  protection            = 0x%x\n", e.Protect)
		d.printf("  type                  = 0x%x\n", e.Type)
		d.printf("\n")
	}
}

func (d *dumper) printCrashpadInfo(c *minidump.CrashpadInfo) {
	d.printf("MDRawCrashpadInfo\n")
	d.printf("  version = %d\n", int32(c.Version))
	d.printf("  report_id = %s\n", c.ReportID)
	d.printf("  client_id = %s\n", c.ClientID)
	for _, a := range c.SimpleAnnotations {
		d.printf("  simple_annotations[\"%s\"] = %s\n", cstr(a.Key), cstr(a.Value))
	}
	for i, m := range c.Modules {
		d.printf("  module_list[%d].minidump_module_list_index = %d\n", i, int32(m.ModuleListIndex))
		d.printf("  module_list[%d].version = %d\n", i, int32(m.Version))
		for j, s := range m.ListAnnotations {
			d.printf("  module_list[%d].list_annotations[%d] = %s\n", i, j, cstr(s))
		}
		for _, a := range m.SimpleAnnotations {
			d.printf("  module_list[%d].simple_annotations[\"%s\"] = %s\n", i, cstr(a.Key), cstr(a.Value))
		}
		for _, o := range m.AnnotationObjects {
			var v string
			if o.Type == 1 {
				v = cstr(string(o.Value))
			} else {
				v = fmt.Sprintf("%X", o.Value)
			}
			d.printf("  module_list[%d].crashpad_annotations[\"%s\"] (type = %d) = %s\n", i, cstr(o.Name), o.Type, v)
		}
		d.printf("  address_mask = %d\n", c.AddressMask)
	}
	d.printf("\n")
}

// rawStream prints a Linux text stream as Breakpad's DumpRawStream: the text
// with each NUL shown as "\0" and a line break.
func (d *dumper) rawStream(t minidump.StreamType) {
	i := d.f.StreamIndex(t)
	if i < 0 {
		return
	}
	d.printf("Stream %s:\n", t.Name())
	if d.f.Directory[i].Location.DataSize == 0 {
		d.printf("\n")
		return
	}
	b, err := d.f.Stream(t)
	if err != nil {
		d.fail(err)
		return
	}
	for len(b) > 0 {
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			d.w.Write(b)
			break
		}
		d.w.Write(b[:j])
		d.printf("\\0\n")
		b = b[j+1:]
	}
	d.printf("\n\n")
}
