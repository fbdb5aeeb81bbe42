package dumptext

import (
	"slices"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// streamName is the stream type's MD_* name, or "unknown".
func streamName(t minidump.StreamType) string {
	if n := t.Name(); n != "" {
		return n
	}
	return "unknown"
}

// header prints the MDRawHeader, every directory entry, and the index of
// the last entry of each stream type.
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
