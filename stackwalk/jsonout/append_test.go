package jsonout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// encodeStd is what encoding/json writes for v without HTML escaping.
func encodeStd(t testing.TB, v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

var trickyStrings = []string{"", "plain", `q"uo\te`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<a&b>", "é中\u2028\u2029x",
	"bad\xffutf8\xc3", "\xed\xa0\x80", "end\\"}

func TestAppendStringAsEncoder(t *testing.T) {
	for _, s := range trickyStrings {
		if got, want := string(appendString(nil, s)), encodeStd(t, s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(3) == 0 {
				b[i] = byte(r.IntN(0x30))
			}
		}
		if got, want := string(appendString(nil, string(b))), encodeStd(t, string(b)); got != want {
			t.Fatalf("%q: got %s, want %s", b, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), encodeStd(t, s); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestAppendHexAsFmt(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xabc, 0xffffffff, 0x100000000, 0xdeadbeefcafe, ^uint64(0)} {
		for _, f := range []formatter{{bits32: true}, {}} {
			want := fmt.Sprintf("0x%016x", v)
			if f.bits32 {
				want = fmt.Sprintf("0x%08x", v)
			}
			if got := f.addr(v); got != want {
				t.Errorf("%#x bits32=%v: %s, want %s", v, f.bits32, got, want)
			}
		}
	}
}

func TestAppendFrameAsEncoder(t *testing.T) {
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	frames := []frame{
		{Offset: "0x0", Trust: "context"},
		{File: s("a.c"), Frame: 3, Function: s(`f<"x">`), FunctionOffset: s("0x10"), Inlines: []inline{}, Line: n(0),
			MissingSymbols: true, Module: s("m\x01.so"), ModuleOffset: s("0x20"), Offset: "0x30",
			Registers: registerMap{"rip": "0x1", "eflags": "0x2", "rax": "0x3"}, Trust: "cfi",
			UnloadedModules: []unloadedHits{}},
		{Inlines: []inline{{}, {File: s("i.h"), Function: s("g"), Line: n(-7)}}, Registers: registerMap{},
			UnloadedModules: []unloadedHits{{Module: "u.dll"}, {Module: "v\u2028", Offsets: []string{"0x1", "0x2"}}, {Module: "w", Offsets: []string{}}}},
	}
	for i := range frames {
		if got, want := string(appendFrame(nil, &frames[i])), encodeStd(t, &frames[i]); got != want {
			t.Errorf("frame %d:\ngot  %s\nwant %s", i, got, want)
		}
	}
	// And a slot of them as the encoder writes the slice.
	var b bytes.Buffer
	slot := frameSlot{list: frames, first: registerMap{"pc": "0x9"}}
	if err := slot.write(&b, false, "", nil); err != nil {
		t.Fatal(err)
	}
	f0 := frames[0]
	f0.Registers = slot.first
	want := encodeStd(t, append([]frame{f0}, frames[1:]...))
	if b.String() != want {
		t.Errorf("slot:\ngot  %s\nwant %s", b.String(), want)
	}
}
