package minidump

import "fmt"

// Sizes of the successive versions of MiscInfo (MD_MISCINFO*_SIZE).
const (
	MiscInfoSize  = 24
	MiscInfo2Size = 44
	MiscInfo3Size = 232
	MiscInfo4Size = 832
	MiscInfo5Size = 1364
)

// MiscInfo.Flags1 bits saying which fields are valid.
const (
	MiscInfoProcessID          = 0x00000001
	MiscInfoProcessTimes       = 0x00000002
	MiscInfoProcessorPowerInfo = 0x00000004
	MiscInfoProcessIntegrity   = 0x00000010
	MiscInfoProcessExecuteFlag = 0x00000020
	MiscInfoTimezone           = 0x00000040
	MiscInfoProtectedProcess   = 0x00000080
	MiscInfoBuildString        = 0x00000100
	MiscInfoProcessCookie      = 0x00000200
)

// SystemTime is a Windows SYSTEMTIME (MDSystemTime).
type SystemTime struct {
	Year, Month, DayOfWeek, Day, Hour, Minute, Second, Milliseconds uint16
}

// TimeZoneInformation is a Windows TIME_ZONE_INFORMATION (MDTimeZoneInformation).
type TimeZoneInformation struct {
	Bias         int32
	StandardName [32]uint16
	StandardDate SystemTime
	StandardBias int32
	DaylightName [32]uint16
	DaylightDate SystemTime
	DaylightBias int32
}

// XStateFeature locates one XSAVE feature in a context (MDXStateFeature).
type XStateFeature struct {
	Offset, Size uint32
}

// XStateConfigFeatureMscInfo describes the XSAVE layout (MDXStateConfigFeatureMscInfo).
type XStateConfigFeatureMscInfo struct {
	SizeOfInfo      uint32
	ContextSize     uint32
	EnabledFeatures uint64
	Features        [64]XStateFeature
}

// MiscInfo is the misc info stream (MDRawMiscInfo, all versions). Only the
// fields inside SizeOfInfo are present; Flags1 says which hold values.
type MiscInfo struct {
	SizeOfInfo        uint32
	Flags1            uint32
	ProcessID         uint32
	ProcessCreateTime uint32 // time_t
	ProcessUserTime   uint32 // seconds
	ProcessKernelTime uint32 // seconds

	// Version 2.
	ProcessorMaxMhz           uint32
	ProcessorCurrentMhz       uint32
	ProcessorMhzLimit         uint32
	ProcessorMaxIdleState     uint32
	ProcessorCurrentIdleState uint32

	// Version 3.
	ProcessIntegrityLevel uint32
	ProcessExecuteFlags   uint32
	ProtectedProcess      uint32
	TimeZoneID            uint32
	TimeZone              TimeZoneInformation

	// Version 4.
	BuildString [260]uint16
	DbgBldStr   [40]uint16

	// Version 5.
	XStateData    XStateConfigFeatureMscInfo
	ProcessCookie uint32
}

// MiscInfo decodes the misc info stream. Its size must be one of the known
// versions' sizes (a larger stream is read as the largest known version).
func (f *File) MiscInfo() (*MiscInfo, error) {
	b, err := f.stream(MiscInfoStream)
	if err != nil {
		return nil, fmt.Errorf("misc info: %w", err)
	}
	if len(b) < MiscInfoSize {
		return nil, fmt.Errorf("misc info: %d bytes, want at least %d", len(b), MiscInfoSize)
	}
	switch len(b) {
	case MiscInfoSize, MiscInfo2Size, MiscInfo3Size, MiscInfo4Size, MiscInfo5Size:
	default:
		if len(b) < MiscInfo5Size {
			return nil, fmt.Errorf("misc info: %d bytes is not the size of a known version", len(b))
		}
	}
	var full [MiscInfo5Size]byte
	copy(full[:], b) // fields past the stream's version read as zero
	m := decodeMiscInfo(&full)
	if uint64(m.SizeOfInfo) != uint64(len(b)) {
		return nil, fmt.Errorf("misc info: size_of_info %d, stream has %d bytes", m.SizeOfInfo, len(b))
	}
	return m, nil
}

// UTF16String decodes a fixed-size, NUL-terminated UTF-16 buffer such as
// TimeZoneInformation.StandardName or MiscInfo.BuildString, as Breakpad
// does ("" when the text has unpaired surrogates).
func UTF16String(u []uint16) string {
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return utf16String(b)
}

// ProcessUptime returns how long the process had run when the dump was
// written (dumpTime, the header's TimeDateStamp, minus ProcessCreateTime),
// as Breakpad's stackwalker prints "Process uptime". It is false when the
// process times are not valid or the creation time is after dumpTime.
func (m *MiscInfo) ProcessUptime(dumpTime uint32) (seconds uint32, ok bool) {
	if m.Flags1&MiscInfoProcessTimes == 0 || m.ProcessCreateTime > dumpTime {
		return 0, false
	}
	return dumpTime - m.ProcessCreateTime, true
}

// decodeMiscInfo decodes the largest version of the structure.
func decodeMiscInfo(b *[MiscInfo5Size]byte) *MiscInfo {
	off := 0
	u16 := func() uint16 { v := le16(b[off:]); off += 2; return v }
	u32 := func() uint32 { v := le32(b[off:]); off += 4; return v }
	u64 := func() uint64 { v := le64(b[off:]); off += 8; return v }
	systemTime := func() SystemTime {
		return SystemTime{u16(), u16(), u16(), u16(), u16(), u16(), u16(), u16()}
	}
	m := &MiscInfo{SizeOfInfo: u32(), Flags1: u32(), ProcessID: u32(), ProcessCreateTime: u32(),
		ProcessUserTime: u32(), ProcessKernelTime: u32()}
	m.ProcessorMaxMhz, m.ProcessorCurrentMhz, m.ProcessorMhzLimit = u32(), u32(), u32()
	m.ProcessorMaxIdleState, m.ProcessorCurrentIdleState = u32(), u32()
	m.ProcessIntegrityLevel, m.ProcessExecuteFlags, m.ProtectedProcess, m.TimeZoneID = u32(), u32(), u32(), u32()
	tz := &m.TimeZone
	tz.Bias = int32(u32())
	for i := range tz.StandardName {
		tz.StandardName[i] = u16()
	}
	tz.StandardDate = systemTime()
	tz.StandardBias = int32(u32())
	for i := range tz.DaylightName {
		tz.DaylightName[i] = u16()
	}
	tz.DaylightDate = systemTime()
	tz.DaylightBias = int32(u32())
	for i := range m.BuildString {
		m.BuildString[i] = u16()
	}
	for i := range m.DbgBldStr {
		m.DbgBldStr[i] = u16()
	}
	x := &m.XStateData
	x.SizeOfInfo, x.ContextSize, x.EnabledFeatures = u32(), u32(), u64()
	for i := range x.Features {
		x.Features[i] = XStateFeature{u32(), u32()}
	}
	m.ProcessCookie = u32()
	return m
}
