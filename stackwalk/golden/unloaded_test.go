package golden

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// TestUnloadedModule records a Windows amd64 crash at a pc outside the
// loaded modules, in old.dll's former range: the frame names old.dll as
// unloaded with its offset, as minidump_stackwalk's outputs do.
func TestUnloadedModule(t *testing.T) {
	b := synth.New(arch.AMD64, minidump.PlatformWin32NT)
	st := synth.NewStack(0x120000, 8)
	st.Ptr(0x401050) // return into app.exe
	st.Zeros(32)
	ctx := &amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x7ff000001234, Rsp: 0x120000}
	b.AddThread(1, synth.AMD64(ctx), st)
	b.AddPDBModule(`c:\app\app.exe`, 0x400000, 0x10000, minidump.GUID{Data1: 1}, 2, `c:\app\app.pdb`)
	b.AddUnloadedModule(`C:\Windows\System32\old.dll`, 0x7ff000000000, 0x10000)
	b.SetExceptionRecord(1, minidump.ExceptionRecord{ExceptionCode: 0xc0000005, NumberParameters: 2,
		ExceptionInformation: [15]uint64{0, 0x10}}, synth.AMD64(ctx))
	f, err := b.File()
	if err != nil {
		t.Fatal(err)
	}
	p, err := stackwalk.Process(f, stackwalk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := FromProcess("unloaded.dmp", p, "")
	if len(r.Frames) == 0 {
		t.Fatal("no frames")
	}
	want := Frame{Module: "old.dll", Unloaded: true, Function: "+0x1234", Trust: "context"}
	if r.Frames[0] != want {
		t.Errorf("frame 0 = %+v, want %+v", r.Frames[0], want)
	}
	text := r.Marshal()
	if !bytes.Contains(text, []byte("\nframe\t0\told.dll (unloaded)\t+0x1234\t\t\tcontext\n")) {
		t.Errorf("golden text:\n%s", text)
	}
	got, err := Parse(bytes.NewReader(text), "test")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip:\n%s\ngave %+v, want %+v", text, got, r)
	}
	if s := want.String(); s != "old.dll (unloaded)!+0x1234 [context]" {
		t.Errorf("String() = %q", s)
	}

	// A record written before unloaded modules were recorded: the frame
	// outside the loaded modules has no module; it reads as it did, and
	// differs from today's record in that frame only.
	old := "dump\tunloaded.dmp\nsignature\t\nreason\t" + r.Reason + "\naddress\t0x10\nthread\t0\n" +
		"frame\t0\t\t0x7ff000001234\t\t\tcontext\n"
	for i, f := range r.Frames[1:] { // frames in app.exe, without symbols
		old += "frame\t" + strconv.Itoa(i+1) + "\t" + f.Module + "\t" + f.Function + "\t\t\t" + f.Trust + "\n"
	}
	or, err := Parse(strings.NewReader(old), "old")
	if err != nil {
		t.Fatal(err)
	}
	if f := or.Frames[0]; f != (Frame{Function: "0x7ff000001234", Trust: "context"}) {
		t.Errorf("old frame 0 = %+v", f)
	}
	d := Diff(or, r)
	if wantD := []string{"-#0 0x7ff000001234 [context]", "+#0 old.dll (unloaded)!+0x1234 [context]"}; !reflect.DeepEqual(d, wantD) {
		t.Errorf("Diff(old, new) = %q, want %q", d, wantD)
	}
}

// TestModuleNamedUnloaded checks that a loaded module whose name ends as
// an unloaded one's column does reads back as loaded.
func TestModuleNamedUnloaded(t *testing.T) {
	r := &Record{Dump: "d.dmp", Thread: 0, Frames: []Frame{
		{Module: "x (unloaded)", Function: "+0x10", Trust: "context"},
		{Module: "x", Unloaded: true, Function: "+0x20", Trust: "scan"},
		{Module: "100%20", Function: "f%20", Trust: "cfi"},
	}}
	text := r.Marshal()
	if !bytes.Contains(text, []byte("\tx%20(unloaded)\t")) || !bytes.Contains(text, []byte("\tx (unloaded)\t")) {
		t.Errorf("text:\n%s", text)
	}
	got, err := Parse(bytes.NewReader(text), "test")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip:\n%s\ngave %+v, want %+v", text, got, r)
	}
}
