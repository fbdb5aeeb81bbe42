package macho

import (
	"fmt"
	"testing"
)

// TestBreakpadMD5 checks bpMD5 against the digests Breakpad's md5.cc
// gives (Breakpad 418aacd6's source built with g++ on this host; message
// bytes i*7), written in one piece and in 13-byte pieces. Lengths 60 and
// 4153 pad two blocks (the quirk's other branch); 0 is MD5's own digest
// (the count 0 writes zeros where zeros are).
func TestBreakpadMD5(t *testing.T) {
	want := map[int]string{
		0:    "D41D8CD98F00B204E9800998ECF8427E",
		60:   "B533F8E85AC070D2ABC138C73299E242",
		200:  "4989D99076A9C1098078D35B751B7E94",
		4153: "88B3F427AB4ECD0BABF10A7236B6B30F",
	}
	for n, w := range want {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i * 7)
		}
		a, b := newBPMD5(), newBPMD5()
		a.Write(msg)
		for i := 0; i < n; i += 13 {
			b.Write(msg[i:min(i+13, n)])
		}
		if got := fmt.Sprintf("%X", a.Sum()); got != w {
			t.Errorf("%d bytes: %s, Breakpad's %s", n, got, w)
		}
		if got := fmt.Sprintf("%X", b.Sum()); got != w {
			t.Errorf("%d bytes in pieces: %s, Breakpad's %s", n, got, w)
		}
	}
	h := newBPMD5()
	h.Write([]byte("abc"))
	if got := fmt.Sprintf("%X", h.Sum()); got != "DBD859A0FAE25B9F9F460EAFBE7C1A67" {
		t.Errorf("abc: %s", got)
	}
}
