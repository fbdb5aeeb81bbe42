package jsonout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// TestEvil: Socorro's raw crash JSON (--evil-json) gives modules their
// certificate subjects, in both of the shapes rust-minidump accepts, and
// the CPU microcode version when the dump has none.
func TestEvil(t *testing.T) {
	st := &stackwalk.ProcessState{RequestingThread: -1, MainModule: 0,
		System: stackwalk.SystemInfo{OS: "Windows NT", OSShort: "windows", CPU: "x86"},
		Modules: []*stackwalk.Module{
			{Base: 0x1000, Size: 0x1000, CodeFile: `C:\Program Files\Mozilla Firefox\firefox.exe`},
			{Base: 0x4000, Size: 0x1000, CodeFile: `C:\Windows\System32\ntdll.dll`},
		},
		UnloadedModules: []*stackwalk.Module{{Base: 0x8000, Size: 0x1000, CodeFile: "old.dll"}},
	}
	for _, raw := range []string{
		`{"ProductName":"Firefox","ModuleSignatureInfo":{"Mozilla Corporation":["firefox.exe","old.dll"]},"CPUMicrocodeVersion":"0xF0"}`,
		`{"ModuleSignatureInfo":"{\"Mozilla Corporation\":[\"firefox.exe\",\"old.dll\"]}","CPUMicrocodeVersion":"0xf0"}`,
	} {
		ev, err := ReadEvil(strings.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteWith(&buf, st, Options{Evil: ev}); err != nil {
			t.Fatal(err)
		}
		var doc document
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if !doc.ModulesContainsCertInfo {
			t.Error("modules_contains_cert_info is false")
		}
		if c := doc.Modules[0].CertSubject; c == nil || *c != "Mozilla Corporation" {
			t.Errorf("firefox.exe cert_subject = %v", c)
		}
		if c := doc.Modules[1].CertSubject; c != nil {
			t.Errorf("ntdll.dll cert_subject = %q, want null", *c)
		}
		if c := doc.UnloadedModules[0].CertSubject; c == nil || *c != "Mozilla Corporation" {
			t.Errorf("old.dll cert_subject = %v", c)
		}
		if v := doc.SystemInfo.CPUMicrocodeVersion; v == nil || *v != "0xf0" {
			t.Errorf("cpu_microcode_version = %v, want 0xf0", v)
		}
	}
	// The dump's microcode wins over the annotation.
	st.System.HasCPUMicrocode, st.System.CPUMicrocode = true, 0x12
	ev, _ := ReadEvil(strings.NewReader(`{"CPUMicrocodeVersion":"0xf0"}`))
	var buf bytes.Buffer
	WriteWith(&buf, st, Options{Evil: ev})
	if !strings.Contains(buf.String(), `"cpu_microcode_version":"0x12"`) || strings.Contains(buf.String(), `"modules_contains_cert_info":true`) {
		t.Errorf("dump's microcode or no certificates: %s", buf.String())
	}
	if _, err := ReadEvil(strings.NewReader(`[1]`)); err == nil {
		t.Error("a JSON array was read as evil json")
	}
	if ev, err := ReadEvil(strings.NewReader(`{"ModuleSignatureInfo":3}`)); err == nil || ev == nil {
		t.Errorf("a bad ModuleSignatureInfo: %v, %v", ev, err)
	}
}
