package unwindinfo

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxChain bounds how many unwind information structures one function's
// chain may visit (indirect RUNTIME_FUNCTION references and chained unwind
// information together); longer chains, and chains that loop, are errors.
const MaxChain = 32

// ErrNoExceptionDirectory is returned by [New] for an image whose exception
// directory is empty.
var ErrNoExceptionDirectory = errors.New("no exception directory")

// Table is an x64 image's exception directory with access to the unwind
// information its entries point to.
type Table struct {
	// Functions are the RUNTIME_FUNCTION entries in the directory's order.
	Functions []RuntimeFunction
	img       *image
}

// New reads the exception directory of an x64 PE image (IMAGE_FILE_MACHINE_AMD64,
// PE32+). Other machines' exception directories have other layouts and give
// an error.
func New(f *pe.File) (*Table, error) {
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		return nil, fmt.Errorf("unwind info: machine %#x is not x64", f.Machine)
	}
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok {
		return nil, errors.New("unwind info: not a PE32+ image")
	}
	if len(oh.DataDirectory) <= pe.IMAGE_DIRECTORY_ENTRY_EXCEPTION {
		return nil, ErrNoExceptionDirectory
	}
	dir := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXCEPTION]
	if dir.VirtualAddress == 0 || dir.Size == 0 {
		return nil, ErrNoExceptionDirectory
	}
	img := newImage(f)
	b, err := img.slice(dir.VirtualAddress, dir.Size)
	if err != nil {
		return nil, fmt.Errorf("unwind info: exception directory: %w", err)
	}
	t := &Table{img: img, Functions: make([]RuntimeFunction, len(b)/12)}
	for i := range t.Functions {
		t.Functions[i] = readRuntimeFunction(b[i*12:])
	}
	return t, nil
}

func readRuntimeFunction(b []byte) RuntimeFunction {
	return RuntimeFunction{
		Begin:      binary.LittleEndian.Uint32(b),
		End:        binary.LittleEndian.Uint32(b[4:]),
		UnwindInfo: binary.LittleEndian.Uint32(b[8:]),
	}
}

// Info returns the unwind information of rf, following indirect entries
// (UnwindInfo with bit 0 set) to the RUNTIME_FUNCTION they name. It does not
// follow chained unwind information: that is in the result's Chained field.
func (t *Table) Info(rf RuntimeFunction) (*Info, error) {
	for n := 0; rf.UnwindInfo&1 != 0; n++ {
		if n >= MaxChain {
			return nil, fmt.Errorf("indirect unwind info: more than %d steps (a loop?)", MaxChain)
		}
		b, err := t.img.slice(rf.UnwindInfo&^1, 12)
		if err != nil {
			return nil, fmt.Errorf("indirect unwind info at %#x: %w", rf.UnwindInfo&^1, err)
		}
		rf = readRuntimeFunction(b)
	}
	b, err := t.img.rest(rf.UnwindInfo)
	if err != nil {
		return nil, fmt.Errorf("unwind info at %#x: %w", rf.UnwindInfo, err)
	}
	info, err := ParseInfo(b)
	if err != nil {
		return nil, fmt.Errorf("unwind info at %#x: %w", rf.UnwindInfo, err)
	}
	return info, nil
}

// Chain returns the unwind information of rf followed by the chained unwind
// information it links to, primary last. It fails on chains longer than
// [MaxChain] (loops included).
func (t *Table) Chain(rf RuntimeFunction) ([]*Info, error) {
	var chain []*Info
	for {
		if len(chain) >= MaxChain {
			return nil, fmt.Errorf("chained unwind info: more than %d entries (a loop?)", MaxChain)
		}
		info, err := t.Info(rf)
		if err != nil {
			return nil, err
		}
		chain = append(chain, info)
		if info.Chained == nil {
			return chain, nil
		}
		rf = *info.Chained
	}
}

// ParseInfo decodes an UNWIND_INFO structure at the start of b (the bytes
// after it, up to the end of its section, may follow).
func ParseInfo(b []byte) (*Info, error) {
	if len(b) < 4 {
		return nil, errors.New("truncated header")
	}
	info := &Info{
		Version:     b[0] & 7,
		Flags:       b[0] >> 3,
		PrologSize:  b[1],
		FrameReg:    b[3] & 15,
		FrameOffset: uint32(b[3]>>4) * 16,
	}
	if info.Version != 1 && info.Version != 2 {
		return nil, fmt.Errorf("unsupported version %d", info.Version)
	}
	n := int(b[2])
	slots := n
	if slots%2 != 0 {
		slots++
	}
	if len(b) < 4+2*n {
		return nil, fmt.Errorf("%d unwind codes: truncated", n)
	}
	codes, err := parseCodes(b[4:4+2*n], info.Version)
	if err != nil {
		return nil, err
	}
	info.Codes = codes
	tail := b[min(len(b), 4+2*slots):]
	switch {
	case info.Flags&FlagChainInfo != 0:
		if len(tail) < 12 {
			return nil, errors.New("chained RUNTIME_FUNCTION: truncated")
		}
		rf := readRuntimeFunction(tail)
		info.Chained = &rf
	case info.Flags&(FlagEHandler|FlagUHandler) != 0:
		if len(tail) < 4 {
			return nil, errors.New("handler address: truncated")
		}
		info.Handler = binary.LittleEndian.Uint32(tail)
	}
	return info, nil
}

// parseCodes decodes the UNWIND_CODE slots b.
func parseCodes(b []byte, version uint8) ([]Code, error) {
	codes := make([]Code, 0, len(b)/2)
	slot := func(i int) uint32 { return uint32(binary.LittleEndian.Uint16(b[2*i:])) }
	n := len(b) / 2
	for i := 0; i < n; {
		c := Code{PrologOffset: b[2*i], Op: Op(b[2*i+1] & 15), Info: b[2*i+1] >> 4}
		extra := 0
		switch c.Op {
		case OpPushNonvol, OpSetFPReg:
		case OpAllocLarge:
			switch c.Info {
			case 0:
				extra = 1
			case 1:
				extra = 2
			default:
				return nil, fmt.Errorf("code %d: %v with op info %d", len(codes), c.Op, c.Info)
			}
		case OpAllocSmall:
			c.Value = uint32(c.Info)*8 + 8
		case OpSaveNonvol, OpSaveXMM128:
			extra = 1
		case OpSaveNonvolFar, OpSaveXMM128Far, OpSpareCode:
			extra = 2
		case OpEpilog:
			if version == 1 { // UWOP_SAVE_XMM
				extra = 1
			}
		case OpPushMachframe:
			if c.Info > 1 {
				return nil, fmt.Errorf("code %d: %v with op info %d", len(codes), c.Op, c.Info)
			}
		default:
			return nil, fmt.Errorf("code %d: unknown operation %d", len(codes), c.Op)
		}
		if i+extra >= n {
			return nil, fmt.Errorf("code %d: %v: operand past the last slot", len(codes), c.Op)
		}
		switch {
		case c.Op == OpAllocLarge && c.Info == 0, c.Op == OpSaveNonvol:
			c.Value = slot(i+1) * 8
		case c.Op == OpSaveXMM128, c.Op == OpEpilog && extra == 1:
			c.Value = slot(i+1) * 16
		case extra == 2:
			c.Value = slot(i+1) | slot(i+2)<<16
		}
		codes = append(codes, c)
		i += 1 + extra
	}
	return codes, nil
}

// image maps relative virtual addresses to the bytes of the sections that
// hold them, loading each section once.
type image struct {
	secs []*pe.Section
	data [][]byte
	errs []error
}

func newImage(f *pe.File) *image {
	return &image{secs: f.Sections, data: make([][]byte, len(f.Sections)), errs: make([]error, len(f.Sections))}
}

// rest returns the bytes of the section holding rva from rva to the
// section's end (its raw data; the zero fill beyond is not addressable).
func (m *image) rest(rva uint32) ([]byte, error) {
	for i, s := range m.secs {
		vsize := max(s.VirtualSize, s.Size)
		if rva < s.VirtualAddress || rva-s.VirtualAddress >= vsize {
			continue
		}
		if m.data[i] == nil && m.errs[i] == nil {
			m.data[i], m.errs[i] = s.Data()
		}
		if m.errs[i] != nil {
			return nil, fmt.Errorf("section %s: %w", s.Name, m.errs[i])
		}
		off := rva - s.VirtualAddress
		if uint64(off) >= uint64(len(m.data[i])) {
			return nil, fmt.Errorf("rva %#x: past the raw data of section %s", rva, s.Name)
		}
		return m.data[i][off:], nil
	}
	return nil, fmt.Errorf("rva %#x: in no section", rva)
}

// size returns the raw size of the image's sections.
func (m *image) size() int64 {
	var n int64
	for _, s := range m.secs {
		n += int64(s.Size)
	}
	return n
}

// slice returns n bytes at rva, all in one section.
func (m *image) slice(rva, n uint32) ([]byte, error) {
	b, err := m.rest(rva)
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(len(b)) {
		return nil, fmt.Errorf("rva %#x: %d bytes past the end of the section", rva, n)
	}
	return b[:n], nil
}
