package minidump

import (
	"fmt"
	"strings"

	"github.com/gobreakpad/gobreakpad/moduleid"
)

// CodeView record signatures (the first four bytes of a module's CvRecord).
const (
	CVSignaturePDB70 = 0x53445352 // "RSDS"
	CVSignaturePDB20 = 0x3031424e // "NB10"
	CVSignatureELF   = 0x4270454c // "BpEL", Breakpad's ELF build-id record
)

// Minimum sizes of CodeView and misc records (Breakpad's *_minsize).
const (
	cvPDB70MinSize = 25 // including at least the NUL of the file name
	cvPDB20MinSize = 17
	cvELFMinSize   = 4
	miscMinSize    = 12
	// Breakpad reads at most this many bytes of a CodeView or misc record.
	maxCVBytes   = 32768
	maxMiscBytes = 32768
)

// VSFixedFileInfo is a module's version resource (MDVSFixedFileInfo).
type VSFixedFileInfo struct {
	Signature        uint32
	StructVersion    uint32
	FileVersionHi    uint32
	FileVersionLo    uint32
	ProductVersionHi uint32
	ProductVersionLo uint32
	FileFlagsMask    uint32
	FileFlags        uint32
	FileOS           uint32
	FileType         uint32
	FileSubtype      uint32
	FileDateHi       uint32
	FileDateLo       uint32
}

// Values of VSFixedFileInfo.Signature and the StructVersion bit that make it valid.
const (
	VSFixedFileInfoSignature = 0xfeef04bd
	VSFixedFileInfoVersion   = 0x00010000
)

// RawModule is a module list entry as stored (MDRawModule).
type RawModule struct {
	BaseOfImage   uint64
	SizeOfImage   uint32
	CheckSum      uint32
	TimeDateStamp uint32
	ModuleNameRva uint32
	VersionInfo   VSFixedFileInfo
	CvRecord      LocationDescriptor
	MiscRecord    LocationDescriptor
	Reserved0     uint64
	Reserved1     uint64
}

// Module is a loaded module: the raw entry, its name and its debug records.
type Module struct {
	RawModule
	// Name is the module's file name (the code file).
	Name string
	// CodeView is the raw CodeView record, nil when absent or unreadable
	// (CodeViewErr says why).
	CodeView    []byte
	CodeViewErr error
	// Misc is the raw IMAGE_DEBUG_MISC record, nil when absent or unreadable.
	Misc    []byte
	MiscErr error

	platform      PlatformID // from the system info; platformKnown says whether it is
	platformKnown bool
}

// hasDebugInfo reports whether the debug records the module announces could
// all be read; without that, Breakpad gives no code or debug identity.
func (m *Module) hasDebugInfo() bool { return m.CodeViewErr == nil && m.MiscErr == nil }

// CodeViewPDB70 is a PDB 7.0 CodeView record (MDCVInfoPDB70, "RSDS").
type CodeViewPDB70 struct {
	Signature   GUID
	Age         uint32
	PDBFileName string
}

// CodeViewPDB20 is a PDB 2.0 CodeView record (MDCVInfoPDB20, "NB10").
type CodeViewPDB20 struct {
	Offset      uint32
	Signature   uint32
	Age         uint32
	PDBFileName string
}

// ImageDebugMisc is a module's misc debug record (MDImageDebugMisc).
type ImageDebugMisc struct {
	DataType uint32
	Length   uint32
	Unicode  bool
	Reserved [3]byte
	Data     []byte
}

// ModuleList decodes the module list stream.
func (f *File) ModuleList() ([]Module, error) {
	mods, _, err := f.moduleList(ModuleListStream, "module list", false)
	return mods, err
}

// ModuleListSkipping decodes the module list stream as rust-minidump does:
// a module whose range is empty or whose end (base + size) does not fit in 64
// bits is left out, where ModuleList (as Breakpad) refuses the whole list.
// skipped holds the indices of the modules left out.
func (f *File) ModuleListSkipping() (mods []Module, skipped []int, err error) {
	return f.moduleList(ModuleListStream, "module list", true)
}

func (f *File) moduleList(t StreamType, name string, skip bool) ([]Module, []int, error) {
	b, n, err := f.countedList(t, name, moduleSize)
	if err != nil {
		return nil, nil, err
	}
	var platform PlatformID
	known := false
	if si, err := f.SystemInfo(); err == nil {
		platform, known = si.PlatformID, true
	}
	mods := make([]Module, n)
	bud := f.newBudget()
	var skipped []int
	k := 0
	for i := range n {
		m := &mods[k]
		m.RawModule = decodeRawModule(b[i*moduleSize:])
		m.platform, m.platformKnown = platform, known
		if m.SizeOfImage == 0 || uint64(m.SizeOfImage) > ^uint64(0)-m.BaseOfImage {
			if skip {
				skipped = append(skipped, int(i))
				continue
			}
			// Breakpad rejects the whole list for one such module.
			return nil, nil, fmt.Errorf("%s: module %d: bad range %#x+%#x", name, i, m.BaseOfImage, m.SizeOfImage)
		}
		k++
		if m.Name, err = f.String(m.ModuleNameRva); err != nil {
			return nil, nil, fmt.Errorf("%s: module %d: name: %w", name, i, err)
		}
		if err := bud.take(len(m.Name) + int(m.CvRecord.DataSize) + int(m.MiscRecord.DataSize)); err != nil {
			return nil, nil, fmt.Errorf("%s: module %d: %w", name, i, err)
		}
		m.CodeView, m.CodeViewErr = f.cvRecord(m.CvRecord)
		if m.CodeViewErr != nil {
			m.CodeViewErr = fmt.Errorf("%s: module %d (%s): CodeView record: %w", name, i, m.Name, m.CodeViewErr)
		}
		m.Misc, m.MiscErr = f.miscRecord(m.MiscRecord)
		if m.MiscErr != nil {
			m.MiscErr = fmt.Errorf("%s: module %d (%s): misc record: %w", name, i, m.Name, m.MiscErr)
		}
	}
	return mods[:k], skipped, nil
}

func decodeRawModule(e []byte) RawModule {
	var m RawModule
	m.BaseOfImage = le64(e)
	m.SizeOfImage = le32(e[8:])
	m.CheckSum = le32(e[12:])
	m.TimeDateStamp = le32(e[16:])
	m.ModuleNameRva = le32(e[20:])
	v := e[24:]
	m.VersionInfo = VSFixedFileInfo{le32(v), le32(v[4:]), le32(v[8:]), le32(v[12:]), le32(v[16:]),
		le32(v[20:]), le32(v[24:]), le32(v[28:]), le32(v[32:]), le32(v[36:]), le32(v[40:]),
		le32(v[44:]), le32(v[48:])}
	m.CvRecord = LocationDescriptor{le32(e[76:]), le32(e[80:])}
	m.MiscRecord = LocationDescriptor{le32(e[84:]), le32(e[88:])}
	m.Reserved0 = le64(e[92:])
	m.Reserved1 = le64(e[100:])
	return m
}

// cvRecord reads and checks a CodeView record the way Breakpad does.
func (f *File) cvRecord(l LocationDescriptor) ([]byte, error) {
	if l.DataSize == 0 {
		return nil, nil
	}
	if l.DataSize > maxCVBytes {
		return nil, fmt.Errorf("%d bytes exceeds %d", l.DataSize, maxCVBytes)
	}
	b, err := f.location(l)
	if err != nil {
		return nil, err
	}
	if len(b) <= 4 {
		return b, nil // too short for a signature: an unknown record, as Breakpad keeps it
	}
	switch sig := le32(b); sig {
	case CVSignaturePDB70, CVSignaturePDB20:
		min := cvPDB70MinSize
		if sig == CVSignaturePDB20 {
			min = cvPDB20MinSize
		}
		if len(b) < min {
			return nil, fmt.Errorf("%d bytes, want at least %d", len(b), min)
		}
		if b[len(b)-1] != 0 {
			return nil, fmt.Errorf("PDB file name is not NUL-terminated")
		}
	}
	return b, nil
}

// miscRecord reads and checks a misc debug record the way Breakpad does.
func (f *File) miscRecord(l LocationDescriptor) ([]byte, error) {
	if l.DataSize == 0 {
		return nil, nil
	}
	if l.DataSize > maxMiscBytes {
		return nil, fmt.Errorf("%d bytes exceeds %d", l.DataSize, maxMiscBytes)
	}
	if l.DataSize < miscMinSize {
		return nil, fmt.Errorf("%d bytes, want at least %d", l.DataSize, miscMinSize)
	}
	b, err := f.location(l)
	if err != nil {
		return nil, err
	}
	if n := le32(b[4:]); n != l.DataSize {
		return nil, fmt.Errorf("length field %d, record has %d bytes", n, l.DataSize)
	}
	return b, nil
}

// CVSignature returns the signature of the CodeView record, 0 without one
// (or when the record is too short to have one).
func (m *Module) CVSignature() uint32 {
	if len(m.CodeView) <= 4 {
		return 0
	}
	return le32(m.CodeView)
}

// PDB70 returns the module's RSDS CodeView record.
func (m *Module) PDB70() (CodeViewPDB70, bool) {
	r, ok := moduleid.ParseRSDS(m.CodeView)
	if !ok {
		return CodeViewPDB70{}, false
	}
	return CodeViewPDB70{GUID(r.GUID), r.Age, r.PDBFileName}, true
}

// PDB20 returns the module's NB10 CodeView record.
func (m *Module) PDB20() (CodeViewPDB20, bool) {
	r, ok := moduleid.ParseNB10(m.CodeView)
	if !ok {
		return CodeViewPDB20{}, false
	}
	return CodeViewPDB20{r.Offset, r.Signature, r.Age, r.PDBFileName}, true
}

// BuildID returns the ELF build id of the module's BpEL CodeView record.
func (m *Module) BuildID() ([]byte, bool) {
	if m.CVSignature() != CVSignatureELF {
		return nil, false
	}
	return m.CodeView[cvELFMinSize:], true
}

// DebugMisc returns the module's misc debug record.
func (m *Module) DebugMisc() (ImageDebugMisc, bool) {
	if len(m.Misc) < miscMinSize {
		return ImageDebugMisc{}, false
	}
	b := m.Misc
	return ImageDebugMisc{le32(b), le32(b[4:]), b[8] != 0, [3]byte{b[9], b[10], b[11]}, b[12:]}, true
}

// CodeFile returns the module's file name, as Breakpad's code_file().
func (m *Module) CodeFile() string { return m.Name }

// CodeIdentifier returns the identifier of the module's code file as
// Breakpad's code_identifier() does: for Windows, the time stamp and image
// size ("%08X%x"); for Linux, Android and Fuchsia the ELF build id in
// lower-case hex; "id" for other known systems and for ELF modules without a
// build id; "" when the system is unknown or the dump has no system info.
func (m *Module) CodeIdentifier() string {
	if !m.platformKnown || !m.hasDebugInfo() {
		return ""
	}
	switch m.platform {
	case PlatformWin32NT, PlatformWin32Windows:
		return moduleid.PECodeID(m.TimeDateStamp, m.SizeOfImage)
	case PlatformAndroid, PlatformFuchsia, PlatformLinux:
		if id, ok := m.BuildID(); ok {
			return moduleid.ELFCodeID(id)
		}
		return "id"
	case PlatformMacOSX, PlatformIOS, PlatformSolaris, PlatformNaCl, PlatformPS3:
		return "id"
	}
	return ""
}

// RustCodeIdentifier returns the code identifier rust-minidump gives the
// module (its MinidumpModule::code_identifier, lower-cased as its CodeId),
// "" where it has none: for a PDB 7.0 or 2.0 CodeView record, the time stamp
// and image size as on Windows (also on Linux, where Breakpad says "id"),
// but the record's GUID on macOS and iOS; the ELF build id unless it is all
// zeros; the time stamp and image size for a Windows module without a
// CodeView record. Breakpad's placeholder "id" never appears.
func (m *Module) RustCodeIdentifier() string {
	if m.CodeViewErr != nil {
		return ""
	}
	mac := m.platformKnown && (m.platform == PlatformMacOSX || m.platform == PlatformIOS)
	windows := m.platformKnown && (m.platform == PlatformWin32NT || m.platform == PlatformWin32Windows)
	if r, ok := m.PDB70(); ok {
		if mac {
			return strings.ToLower(moduleid.DebugID(moduleid.GUID(r.Signature), 0)[:32])
		}
		return strings.ToLower(moduleid.PECodeID(m.TimeDateStamp, m.SizeOfImage))
	}
	if _, ok := m.PDB20(); ok {
		return strings.ToLower(moduleid.PECodeID(m.TimeDateStamp, m.SizeOfImage))
	}
	if id, ok := m.BuildID(); ok {
		if allZero(id) {
			return ""
		}
		return moduleid.ELFCodeID(id)
	}
	if len(m.CodeView) == 0 && windows {
		return strings.ToLower(moduleid.PECodeID(m.TimeDateStamp, m.SizeOfImage))
	}
	return ""
}

// RustDebugIdentifier returns the debug identifier rust-minidump gives the
// module (its MinidumpModule::debug_identifier in Breakpad's form), "" where
// it has none: as DebugIdentifier, but none for an RSDS record whose GUID is
// all zeros, an ELF build id of zeros, or a module without CodeView record
// (rust-minidump does not read the misc record).
func (m *Module) RustDebugIdentifier() string {
	if m.CodeViewErr != nil {
		return ""
	}
	if r, ok := m.PDB70(); ok {
		if r.Signature == (GUID{}) {
			return ""
		}
		return moduleid.DebugID(moduleid.GUID(r.Signature), r.Age)
	}
	if r, ok := m.PDB20(); ok {
		return moduleid.PDB20DebugID(r.Signature, r.Age)
	}
	if id, ok := m.BuildID(); ok {
		if allZero(id) {
			return ""
		}
		return moduleid.ELFDebugID(id)
	}
	return ""
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// DebugFile returns the name of the module's debug file as Breakpad's
// debug_file(): the PDB name of an RSDS or NB10 record, the code file for a
// BpEL record, else the misc record's data.
func (m *Module) DebugFile() string {
	if !m.hasDebugInfo() {
		return ""
	}
	var file string
	if r, ok := m.PDB70(); ok {
		file = r.PDBFileName
	} else if r, ok := m.PDB20(); ok {
		file = r.PDBFileName
	} else if _, ok := m.BuildID(); ok {
		file = m.Name
	}
	if file == "" {
		if misc, ok := m.DebugMisc(); ok {
			if !misc.Unicode {
				file = string(misc.Data)
			} else if len(misc.Data)%2 == 0 {
				file, _ = decodeUTF16(misc.Data) // "" when invalid, as in Breakpad
			}
		}
	}
	return file
}

// DebugIdentifier returns the identifier of the module's debug file as
// Breakpad's debug_identifier(): GUID and age in upper-case hex for RSDS,
// signature and age for NB10, and for BpEL the first 16 bytes of the build id
// read as a little-endian GUID followed by age 0 (package moduleid has the
// rules). "" without a usable record.
func (m *Module) DebugIdentifier() string {
	if !m.hasDebugInfo() {
		return ""
	}
	if r, ok := m.PDB70(); ok {
		return moduleid.DebugID(moduleid.GUID(r.Signature), r.Age)
	}
	if r, ok := m.PDB20(); ok {
		return moduleid.PDB20DebugID(r.Signature, r.Age)
	}
	if id, ok := m.BuildID(); ok {
		return moduleid.ELFDebugID(id)
	}
	return ""
}

// Version returns the file version "a.b.c.d" from a valid version resource,
// else "" (Breakpad's version()).
func (m *Module) Version() string {
	v := &m.VersionInfo
	if v.Signature != VSFixedFileInfoSignature || v.StructVersion&VSFixedFileInfoVersion != VSFixedFileInfoVersion {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d.%d", v.FileVersionHi>>16, v.FileVersionHi&0xffff, v.FileVersionLo>>16, v.FileVersionLo&0xffff)
}
