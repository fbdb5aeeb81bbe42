// Command fixdump is the fixture step of mkcrash.sh: it rewrites the
// minidump Wine's MiniDumpWriteDump wrote into one Breakpad's processor
// (and ours) can walk, changing only two things:
//
//   - the modules' CodeView records, which Wine leaves empty, are filled
//     from the PE files named on the command line (their RSDS records:
//     PDB GUID, age and name), so that the dump names the PDB;
//   - the memory list keeps only the threads' stacks: Wine saves some 7000
//     small regions besides them, past the 4096 regions Breakpad's
//     MinidumpMemoryList accepts (which would leave the walk without
//     stack memory).
//
// Threads, contexts, the exception, system and misc info and the module
// list's other fields are copied as they are.
//
//	go run ./cmd/dump_syms/testdata/wincrash/fixdump IN.dmp OUT.dmp PE...
package main

import (
	"debug/pe"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/moduleid"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: fixdump IN.dmp OUT.dmp PE...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "fixdump:", err)
		os.Exit(1)
	}
}

// rsds returns the CodeView record of a PE's debug directory.
func rsds(path string) (moduleid.RSDS, error) {
	f, err := pe.Open(path)
	if err != nil {
		return moduleid.RSDS{}, err
	}
	defer f.Close()
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok {
		return moduleid.RSDS{}, fmt.Errorf("%s: not a PE32+ image", path)
	}
	dd := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
	for _, s := range f.Sections {
		if dd.VirtualAddress < s.VirtualAddress || dd.VirtualAddress >= s.VirtualAddress+s.VirtualSize {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return moduleid.RSDS{}, err
		}
		dir := data[dd.VirtualAddress-s.VirtualAddress:]
		for i := 0; i+28 <= int(dd.Size) && i+28 <= len(dir); i += 28 {
			e := dir[i:]
			if binary.LittleEndian.Uint32(e[12:]) != 2 { // CodeView
				continue
			}
			size, rva := binary.LittleEndian.Uint32(e[16:]), binary.LittleEndian.Uint32(e[20:])
			for _, t := range f.Sections {
				if rva >= t.VirtualAddress && rva+size <= t.VirtualAddress+t.VirtualSize {
					b, err := t.Data()
					if err != nil {
						return moduleid.RSDS{}, err
					}
					if r, ok := moduleid.ParseRSDS(b[rva-t.VirtualAddress : rva-t.VirtualAddress+size]); ok {
						return r, nil
					}
				}
			}
		}
	}
	return moduleid.RSDS{}, fmt.Errorf("%s: no RSDS record", path)
}

func run(in, out string, pes []string) error {
	f, err := minidump.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	cv := map[string][]byte{}
	for _, p := range pes {
		r, err := rsds(p)
		if err != nil {
			return err
		}
		cv[strings.ToLower(filepath.Base(p))] = minidump.CodeViewPDB70Record(minidump.GUID(r.GUID), r.Age, r.PDBFileName)
	}
	w := minidump.NewWriter()
	w.TimeDateStamp = f.Header.TimeDateStamp
	w.Flags = f.Header.Flags
	si, err := f.SystemInfo()
	if err != nil {
		return err
	}
	w.SystemInfo(si)
	if mi, err := f.MiscInfo(); err == nil {
		w.MiscInfo(mi)
	}
	threads, err := f.ThreadList()
	if err != nil {
		return err
	}
	var td []minidump.ThreadData
	for _, t := range threads {
		stack, err := f.Location(t.Stack.Memory)
		if err != nil {
			return fmt.Errorf("thread %d: stack: %w", t.ThreadID, err)
		}
		td = append(td, minidump.ThreadData{ThreadID: t.ThreadID, SuspendCount: t.SuspendCount, PriorityClass: t.PriorityClass,
			Priority: t.Priority, Teb: t.Teb, StackStart: t.Stack.StartOfMemoryRange, Stack: stack, Context: t.Context})
	}
	w.ThreadList(td)
	mods, err := f.ModuleList()
	if err != nil {
		return err
	}
	var md []minidump.ModuleData
	filled := 0
	for _, m := range mods {
		d := minidump.ModuleData{BaseOfImage: m.BaseOfImage, SizeOfImage: m.SizeOfImage, CheckSum: m.CheckSum,
			TimeDateStamp: m.TimeDateStamp, Name: m.Name, VersionInfo: m.VersionInfo, CodeView: m.CodeView, Misc: m.Misc}
		base := m.Name[strings.LastIndexAny(m.Name, `\/`)+1:]
		if rec, ok := cv[strings.ToLower(base)]; ok && len(d.CodeView) == 0 {
			d.CodeView = rec
			filled++
		}
		md = append(md, d)
	}
	if filled != len(pes) {
		return fmt.Errorf("%d of the %d PEs named are modules of the dump", filled, len(pes))
	}
	w.ModuleList(md)
	ex, err := f.Exception()
	if err != nil {
		return err
	}
	w.Exception(ex.ThreadID, ex.ExceptionRecord, ex.Context)
	b, err := w.Bytes()
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
