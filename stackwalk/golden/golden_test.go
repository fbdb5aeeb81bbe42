package golden

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func sample() *Record {
	return &Record{
		Dump: "dumps/a b.dmp", Signature: "raise | abort | Parse", Crashed: true,
		Reason: "SIGABRT", Address: 0x1234, Thread: 0,
		Frames: []Frame{
			{Module: "libc.so.6", Function: "raise", File: "/build/raise.c", Line: 51, Trust: "context"},
			{Module: "app", Function: "Parse(char\t*)", File: `c:\src\100%\p.cc`, Line: 9, Trust: "cfi"},
			{Module: "app", Function: "+0x1f26", Trust: "scan"},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, r := range []*Record{sample(), {Dump: "x.dmp", Error: "minidump: bad\nheader", Thread: -1}, {Dump: "y.dmp", Signature: "EMPTY: no crashing thread identified", Thread: -1}} {
		text := r.Marshal()
		got, err := Parse(bytes.NewReader(text), "test")
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip:\n%s\ngave %+v, want %+v", text, got, r)
		}
		if d := Diff(r, got); len(d) != 0 {
			t.Errorf("diff of equal records: %q", d)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{
		"",
		"signature\tx\n",
		"dump\tx\nframe\t0\tm\n",
		"dump\tx\nframe\t0\tm\tf\tfile\tl\tcfi\n",
		"dump\tx\nthread\tq\n",
		"dump\tx\nsomething\ty\n",
	} {
		if _, err := Parse(strings.NewReader(text), "g"); err == nil {
			t.Errorf("Parse(%q): no error", text)
		}
	}
}

func TestDiff(t *testing.T) {
	a, b := sample(), sample()
	b.Frames[1].Line = 10
	b.Frames = append(b.Frames, Frame{Module: "app", Function: "main", Trust: "scan"})
	b.Signature = "raise | Parse"
	got := Diff(a, b)
	want := []string{
		`signature: "raise | abort | Parse" -> "raise | Parse"`,
		"-#1 app!Parse(char\t*) c:\\src\\100%\\p.cc:9 [cfi]",
		"+#1 app!Parse(char\t*) c:\\src\\100%\\p.cc:10 [cfi]",
		"+#3 app!main [scan]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A dropped frame in the middle is one "-" line.
	c := sample()
	c.Frames = append(c.Frames[:1:1], c.Frames[2:]...)
	if got := Diff(a, c); len(got) != 1 || !strings.HasPrefix(got[0], "-#1 app!Parse") {
		t.Errorf("dropped frame: %q", got)
	}
}
