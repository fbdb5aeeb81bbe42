package symbfile

import (
	"bytes"
	"testing"
)

// deepFile writes a symbfile of one function holding n ranges each nested in
// the last (depth d: [0x1000+d, 0x1000+2n-d)), all covering 0x1000+n-1, and a
// return pad of n frames there.
func deepFile(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for d := 0; d < n; d++ {
		start := uint64(0x1000 + d)
		w.AddRange(Range{Start: start, Length: uint64(2*n - 2*d), Func: "f", File: "a.c", CallLine: uint32(d),
			Depth: uint32(d), Lines: []LineEntry{{Addr: start, Line: uint32(d + 1)}}})
	}
	pad := ReturnPad{Addr: 0x1000 + 2*uint64(n)}
	for d := 0; d < n; d++ {
		pad.Frames = append(pad.Frames, PadFrame{Func: "f", File: "a.c", Line: uint32(d)})
	}
	w.AddRange(Range{Start: pad.Addr, Length: 1, Func: "padded"})
	w.AddReturnPad(pad)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDeepNesting: a lookup inside ranges nested far deeper than
// MaxInlineDepth, or at a return pad of as many frames, returns the function
// and its outermost MaxInlineDepth inlined calls.
func TestDeepNesting(t *testing.T) {
	const n = 5000
	tab, err := Parse(deepFile(t, n))
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Ranges) != n+1 {
		t.Fatalf("%d ranges read, want %d", len(tab.Ranges), n+1)
	}
	for _, a := range []uint64{0x1000 + n - 1, 0x1000 + 2*n} {
		fs := tab.Lookup(a)
		if len(fs) != MaxInlineDepth+1 {
			t.Fatalf("Lookup(%#x): %d frames, want %d", a, len(fs), MaxInlineDepth+1)
		}
		if out := fs[len(fs)-1]; out.Func != "f" {
			t.Errorf("Lookup(%#x): outermost frame %+v", a, out)
		}
	}
	if c := tab.Covering(0x1000 + n - 1); len(c) != MaxInlineDepth+1 {
		t.Errorf("Covering: %d ranges, want %d", len(c), MaxInlineDepth+1)
	}
	// Within the cap, lookups are unchanged.
	small, err := Parse(deepFile(t, 10))
	if err != nil {
		t.Fatal(err)
	}
	fs := small.Lookup(0x1000 + 9)
	if len(fs) != 10 || fs[0].Line != 10 || fs[1].Line != 9 || fs[9].Line != 1 {
		t.Errorf("10 deep: %+v", fs)
	}
	if fs := small.Lookup(0x1000 + 20); len(fs) != 10 || fs[0].Line != 9 || fs[9].Line != 0 {
		t.Errorf("10-frame return pad: %+v", fs)
	}
}
