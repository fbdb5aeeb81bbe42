package dumptext

import (
	"bytes"

	"github.com/gobreakpad/gobreakpad/minidump"
)

// linuxStreams prints the Linux text streams Breakpad's minidump_dump
// prints, in its order.
func (d *dumper) linuxStreams() {
	for _, t := range []minidump.StreamType{minidump.LinuxCmdLine, minidump.LinuxEnviron,
		minidump.LinuxLSBRelease, minidump.LinuxProcStatus, minidump.LinuxCPUInfo, minidump.LinuxMaps} {
		d.rawStream(t)
	}
}

// rawStream prints a Linux text stream as Breakpad's DumpRawStream: the text
// with each NUL shown as "\0" and a line break. The bytes are printed as
// they are, not escaped like names (textsafe): the stream is the process's
// own multi-line text, Breakpad's references hold binary bytes in it
// (rm-invalid-range's /proc/self/environ), and its length is bounded by the
// stream's.
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
			d.Write(b)
			break
		}
		d.Write(b[:j])
		d.printf("\\0\n")
		b = b[j+1:]
	}
	d.printf("\n\n")
}
