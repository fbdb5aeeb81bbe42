package dumptext

import (
	"encoding/hex"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// hexdumpWidth is the number of bytes per line of the -x hex dump.
const hexdumpWidth = 16

// printMemoryList prints MinidumpMemoryList::Print: each region and its
// bytes.
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

// printMemoryInfoList prints MinidumpMemoryInfoList::Print.
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

// hex writes b in lower-case hex through one scratch buffer for all
// regions (hex.NewEncoder made a 1 KB one per region: half of the heap
// of a 401-thread dump's print).
func (d *dumper) hex(b []byte) {
	const chunk = 4096
	if d.hexbuf == nil {
		d.hexbuf = make([]byte, 2*chunk)
	}
	for len(b) > 0 && d.werr == nil {
		n := min(len(b), chunk)
		d.Write(d.hexbuf[:hex.Encode(d.hexbuf, b[:n])])
		b = b[n:]
	}
}

// memory prints a memory region's bytes as MinidumpMemoryRegion::Print.
func (d *dumper) memory(l minidump.LocationDescriptor) {
	b, err := d.f.RegionBytes(l)
	if err != nil {
		d.printf("No memory\n")
		return
	}
	if !d.hexdump {
		// Stream the hex: a region may be tens of megabytes.
		d.printf("0x")
		d.hex(b)
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
