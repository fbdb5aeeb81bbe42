package stackwalk

import "testing"

func TestParseLinuxText(t *testing.T) {
	l := parseLSB([]byte("DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=16.04\nDISTRIB_CODENAME=xenial\nDISTRIB_DESCRIPTION=\"Ubuntu 16.04.3 LTS\"\n"))
	if *l != (LSBRelease{ID: "Ubuntu", Release: "16.04", Codename: "xenial", Description: "Ubuntu 16.04.3 LTS"}) {
		t.Errorf("lsb = %+v", *l)
	}
	if p, ok := parsePID([]byte("Name:\tcrash\nState:\tR\nPid:\t1304\nPPid:\t1\n")); !ok || p != 1304 {
		t.Errorf("pid = %v, %v", p, ok)
	}
	if m, ok := parseMicrocode([]byte("processor\t: 0\nmicrocode\t: 0x1000065\nmicrocode\t: 0x7\n")); !ok || m != 0x1000065 {
		t.Errorf("microcode = %#x, %v", m, ok)
	}
	if m, ok := parseMicrocode([]byte("model name\t: x\n")); ok {
		t.Errorf("microcode without a field = %#x", m)
	}
	if p, ok := parsePID([]byte("Pid:\tx\n")); ok {
		t.Errorf("pid of garbage = %v", p)
	}
}

func FuzzParseLinuxText(f *testing.F) {
	f.Add([]byte("DISTRIB_ID=Ubuntu\nPid:\t12\n"))
	f.Add([]byte("ID=\"debian\"\nVERSION_ID=\"12\"\nmicrocode : 0x12\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseLSB(b)
		parsePID(b)
		parseMicrocode(b)
	})
}
