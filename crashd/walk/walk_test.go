package walk

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// FuzzProcess processes a crash whose dump, dump name list and raw crash
// are arbitrary bytes (what a client sent, as the collector stored it):
// Process must not panic and must give a processed crash that marshals.
//
// It lives here, not in crashd/processor, because a fuzzing test binary
// instruments every package it links for coverage: crashd/processor's
// links SQLite (modernc.org/sqlite) and the NATS server, and there each
// execution cost 3 to 6 ms of coverage bookkeeping (an empty fuzz function
// ran ~300 times a second against ~50,000 in a bare module), so that the
// minimization of each new interesting input (thousands of executions,
// bounded by -fuzzminimizetime, 60 s by default) stalled the fuzzer for
// up to a minute. Minimization's cost grows with the input too (it tries
// removing every byte), so the seed is a small synthetic dump (~1 KB: a
// thread with a stack, a module, an exception), not a 20 KB corpus dump,
// whose mutations each took a 60 s minimization even here.
func FuzzProcess(f *testing.F) {
	f.Add(seedDump(f), []byte(`["upload_file_minidump"]`), []byte(`{"ProductName":"F"}`))
	f.Add([]byte("MDMP\x93\xa7\x00\x00"), []byte(`["upload_file_minidump","other"]`), []byte(`{}`))
	f.Add([]byte{}, []byte(`not json`), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, dump, names, raw []byte) {
		ctx := context.Background()
		store := blob.NewMem()
		id := crash.New(time.Unix(1700000000, 0), 0)
		store.Put(ctx, crash.RawCrashKey(id), raw)
		store.Put(ctx, crash.DumpNamesKey(id), names)
		store.Put(ctx, crash.DumpKey(id, crash.MinidumpField), dump)
		store.Put(ctx, crash.DumpKey(id, "other"), dump)
		var w Walker
		pc, _, err := w.Process(ctx, store, id, nil)
		if err != nil {
			return // the dump name list is not JSON: a store-level error
		}
		b, err := Marshal(pc)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("processed crash is not JSON: %.200s", b)
		}
	})
}

// seedDump is a small x86 Windows minidump: one thread whose stack holds a
// return address into the one module, an access violation.
func seedDump(tb testing.TB) []byte {
	b := synth.New(arch.X86, minidump.PlatformWin32NT)
	s := synth.NewStack(0x12f000, 4)
	ret := s.Ptr(0x401234)
	s.Ptr(0x12f020)
	s.Ptr(0x401300)
	ctx := &x86.Context{ContextFlags: x86.ContextFull, Eip: 0x401000, Esp: uint32(ret), Ebp: 0x12f010}
	b.AddThread(0xbf4, synth.X86(ctx), s)
	b.AddPDBModule("app.exe", 0x400000, 0x2d000, minidump.GUID{Data1: 0x5a9832e5}, 1, "app.pdb").TimeDateStamp = 0x45d35f6c
	b.SetException(0xbf4, 0xc0000005, 0x45, synth.X86(ctx))
	b.SetBreakpadInfo(minidump.BreakpadInfo{Validity: 3, DumpThreadID: 1, RequestingThreadID: 0xbf4})
	d, err := b.Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestMarshal(t *testing.T) {
	ct := 2
	pc := &crash.ProcessedCrash{CrashID: "x", Signature: "a <b> & c", CrashingThread: &ct, ProcessorNotes: []string{},
		JSONDump:        json.RawMessage(`{"k":"<v>"}`),
		AdditionalDumps: map[string]json.RawMessage{"z": json.RawMessage(`{}`), "a": json.RawMessage(`[1]`)}}
	b, err := Marshal(pc)
	if err != nil {
		t.Fatal(err)
	}
	var back crash.ProcessedCrash
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if back.Signature != pc.Signature || string(back.JSONDump) != `{"k":"<v>"}` || string(back.AdditionalDumps["a"]) != "[1]" ||
		*back.CrashingThread != 2 || !bytes.Contains(b, []byte("a <b> & c")) {
		t.Errorf("round trip: %s", b)
	}
	pc.JSONDump, pc.AdditionalDumps = nil, nil
	b, _ = Marshal(pc)
	if err := json.Unmarshal(b, &back); err != nil || bytes.Contains(b, []byte("json_dump")) {
		t.Errorf("without dumps: %s %v", b, err)
	}
}

// TestCorrelationFields: a walked amd64 dump gives the index the CPU's
// vendor with its family, model and stepping (Breakpad's cpu info names
// the vendor for x86 only) and the versions of the modules that have one.
func TestCorrelationFields(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformWin32NT)
	b.SystemInfo.ProcessorLevel, b.SystemInfo.ProcessorRevision = 6, 158<<8|10
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x401000, Rsp: 0x12f000}
	b.AddThread(1, synth.AMD64(ctx), nil)
	m := b.AddPDBModule(`C:\app\xul.dll`, 0x400000, 0x2d000, minidump.GUID{Data1: 1}, 1, "xul.pdb")
	m.VersionInfo = minidump.VSFixedFileInfo{Signature: minidump.VSFixedFileInfoSignature, StructVersion: minidump.VSFixedFileInfoVersion,
		FileVersionHi: 120<<16 | 0, FileVersionLo: 1<<16 | 8686}
	b.AddPDBModule(`C:\app\noversion.dll`, 0x500000, 0x1000, minidump.GUID{Data1: 2}, 1, "noversion.pdb")
	b.SetException(1, 0xc0000005, 0x45, synth.AMD64(ctx))
	dump, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	store := blob.NewMem()
	bg := context.Background()
	id := crash.New(time.Unix(1700000000, 0), 0)
	store.Put(bg, crash.RawCrashKey(id), []byte(`{"ProductName":"F"}`))
	store.Put(bg, crash.DumpKey(id, crash.MinidumpField), dump)
	var w Walker
	pc, _, err := w.Process(bg, store, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pc.CPUInfo != "GenuineIntel family 6 model 158 stepping 10" {
		t.Errorf("CPUInfo %q", pc.CPUInfo)
	}
	if len(pc.ModuleVersions) != 1 || pc.ModuleVersions[0] != (crash.ModuleVersion{Name: "xul.dll", Version: "120.0.1.8686"}) {
		t.Errorf("ModuleVersions %+v", pc.ModuleVersions)
	}
}
