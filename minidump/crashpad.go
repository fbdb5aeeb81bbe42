package minidump

import (
	"cmp"
	"fmt"
	"slices"
)

// CrashpadInfo is the Crashpad info stream (MDRawCrashpadInfo) with the
// annotations it points at.
type CrashpadInfo struct {
	Version           uint32
	ReportID          GUID
	ClientID          GUID
	SimpleAnnotations []Annotation // sorted by key, first of duplicate keys kept
	Modules           []ModuleCrashpadInfo
	Reserved          uint32
	AddressMask       uint64
}

// Annotation is a key and value of a Crashpad simple string dictionary.
type Annotation struct {
	Key, Value string
}

// ModuleCrashpadInfo holds the annotations one module recorded
// (MDRawModuleCrashpadInfo and its link).
type ModuleCrashpadInfo struct {
	// ModuleListIndex is the index of the module in the module list.
	ModuleListIndex   uint32
	Version           uint32
	ListAnnotations   []string
	SimpleAnnotations []Annotation
	AnnotationObjects []AnnotationObject
}

// AnnotationObject is a typed Crashpad annotation (MDRawCrashpadAnnotation).
// Type 1 is a string; other types are opaque bytes.
type AnnotationObject struct {
	Name  string
	Type  uint16
	Value []byte
}

// Crashpad structure sizes.
const (
	crashpadInfoMinSize     = 52 // up to the reserved field
	crashpadModuleLinkSize  = 12
	crashpadModuleInfoSize  = 28
	crashpadAnnotationSize  = 12
	crashpadMaxUTF8StrBytes = 1024 // Breakpad's limit for these strings
)

// CrashpadInfo decodes the Crashpad info stream and its annotations.
func (f *File) CrashpadInfo() (*CrashpadInfo, error) {
	b, err := f.stream(CrashpadInfoStream)
	if err != nil {
		return nil, fmt.Errorf("crashpad info: %w", err)
	}
	if len(b) < crashpadInfoMinSize {
		return nil, fmt.Errorf("crashpad info: %d bytes, want at least %d", len(b), crashpadInfoMinSize)
	}
	c := &CrashpadInfo{Version: le32(b), ReportID: guidAt(b[4:]), ClientID: guidAt(b[20:])}
	simple := LocationDescriptor{le32(b[36:]), le32(b[40:])}
	modules := LocationDescriptor{le32(b[44:]), le32(b[48:])}
	if len(b) >= 56 {
		c.Reserved = le32(b[52:])
		if len(b) >= 64 {
			c.AddressMask = le64(b[56:])
		}
	}
	bud := f.newBudget() // one budget for all the strings this stream decodes
	if simple.DataSize != 0 {
		if c.SimpleAnnotations, err = f.stringDictionary(simple.Rva, bud); err != nil {
			return nil, fmt.Errorf("crashpad info: simple annotations: %w", err)
		}
	}
	if modules.DataSize == 0 {
		return c, nil
	}
	cb, err := f.bytes(uint64(modules.Rva), 4)
	if err != nil {
		return nil, fmt.Errorf("crashpad info: module list: %w", err)
	}
	n := uint64(le32(cb))
	links, err := f.bytes(uint64(modules.Rva)+4, n*crashpadModuleLinkSize)
	if err != nil {
		return nil, fmt.Errorf("crashpad info: module list: %d links: %w", n, err)
	}
	c.Modules = make([]ModuleCrashpadInfo, n)
	for i := range c.Modules {
		l := links[i*crashpadModuleLinkSize:]
		m := &c.Modules[i]
		m.ModuleListIndex = le32(l)
		rva := le32(l[8:])
		mb, err := f.bytes(uint64(rva), crashpadModuleInfoSize)
		if err != nil {
			return nil, fmt.Errorf("crashpad info: module %d: %w", i, err)
		}
		m.Version = le32(mb)
		list := LocationDescriptor{le32(mb[4:]), le32(mb[8:])}
		dict := LocationDescriptor{le32(mb[12:]), le32(mb[16:])}
		objs := LocationDescriptor{le32(mb[20:]), le32(mb[24:])}
		if list.DataSize != 0 {
			if m.ListAnnotations, err = f.stringList(list.Rva, bud); err != nil {
				return nil, fmt.Errorf("crashpad info: module %d: list annotations: %w", i, err)
			}
		}
		if dict.DataSize != 0 {
			if m.SimpleAnnotations, err = f.stringDictionary(dict.Rva, bud); err != nil {
				return nil, fmt.Errorf("crashpad info: module %d: simple annotations: %w", i, err)
			}
		}
		if objs.DataSize != 0 {
			if m.AnnotationObjects, err = f.annotationObjects(objs.Rva, bud); err != nil {
				return nil, fmt.Errorf("crashpad info: module %d: annotation objects: %w", i, err)
			}
		}
	}
	return c, nil
}

func guidAt(b []byte) GUID {
	return GUID{le32(b), le16(b[4:]), le16(b[6:]), [8]byte(b[8:16])}
}

// utf8String reads a Crashpad string: a 32-bit byte length and UTF-8 bytes.
func (f *File) utf8String(rva uint32, bud *budget) (string, error) {
	lb, err := f.bytes(uint64(rva), 4)
	if err != nil {
		return "", fmt.Errorf("string at %#x: %w", rva, err)
	}
	n := le32(lb)
	if n > crashpadMaxUTF8StrBytes {
		return "", fmt.Errorf("string at %#x: %d bytes exceeds %d", rva, n, crashpadMaxUTF8StrBytes)
	}
	b, err := f.bytes(uint64(rva)+4, uint64(n))
	if err != nil {
		return "", fmt.Errorf("string at %#x: %w", rva, err)
	}
	if err := bud.take(len(b)); err != nil {
		return "", err
	}
	return string(b), nil
}

// counted reads a 32-bit count at rva and the count entries of size each
// that follow it, failing before allocating when they are not in the file.
func (f *File) counted(rva uint32, size uint64) (uint32, []byte, error) {
	cb, err := f.bytes(uint64(rva), 4)
	if err != nil {
		return 0, nil, err
	}
	n := le32(cb)
	b, err := f.bytes(uint64(rva)+4, uint64(n)*size)
	if err != nil {
		return 0, nil, fmt.Errorf("%d entries: %w", n, err)
	}
	return n, b, nil
}

func (f *File) stringList(rva uint32, bud *budget) ([]string, error) {
	n, b, err := f.counted(rva, 4)
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		if out[i], err = f.utf8String(le32(b[4*i:]), bud); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return out, nil
}

func (f *File) stringDictionary(rva uint32, bud *budget) ([]Annotation, error) {
	n, b, err := f.counted(rva, 8)
	if err != nil {
		return nil, err
	}
	out := make([]Annotation, 0, n)
	seen := make(map[string]bool, n)
	for i := range int(n) {
		k, err := f.utf8String(le32(b[8*i:]), bud)
		if err != nil {
			return nil, fmt.Errorf("entry %d: key: %w", i, err)
		}
		v, err := f.utf8String(le32(b[8*i+4:]), bud)
		if err != nil {
			return nil, fmt.Errorf("entry %d: value: %w", i, err)
		}
		if seen[k] {
			continue // Breakpad keeps the first value of a key
		}
		seen[k] = true
		out = append(out, Annotation{k, v})
	}
	slices.SortFunc(out, func(a, b Annotation) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}

func (f *File) annotationObjects(rva uint32, bud *budget) ([]AnnotationObject, error) {
	n, b, err := f.counted(rva, crashpadAnnotationSize)
	if err != nil {
		return nil, err
	}
	out := make([]AnnotationObject, n)
	for i := range out {
		e := b[i*crashpadAnnotationSize:]
		o := &out[i]
		if o.Name, err = f.utf8String(le32(e), bud); err != nil {
			return nil, fmt.Errorf("entry %d: name: %w", i, err)
		}
		o.Type = le16(e[4:])
		vrva := le32(e[8:])
		lb, err := f.bytes(uint64(vrva), 4)
		if err != nil {
			return nil, fmt.Errorf("entry %d: value: %w", i, err)
		}
		if o.Value, err = f.bytes(uint64(vrva)+4, uint64(le32(lb))); err != nil {
			return nil, fmt.Errorf("entry %d: value: %w", i, err)
		}
		if err := bud.take(len(o.Value)); err != nil {
			return nil, fmt.Errorf("entry %d: value: %w", i, err)
		}
	}
	return out, nil
}
