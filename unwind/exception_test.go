package unwind_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestExceptionRecordCopy: an in-stack copy of the dump's exception record
// is found field by field in EXCEPTION_RECORD64's layout (the padding word
// after NumberParameters not compared), and a word is said to be in it
// only when every field matches (testdata/truth/wincxx's record, as
// Wine's RaiseException builds it).
func TestExceptionRecordCopy(t *testing.T) {
	rec := &unwind.ExceptionRecord{Code: 0x20474343, Address: 0x7b013d7e, NumberParameters: 1, Parameters: []uint64{0xb93a30}}
	env := unwindtest.New(amd64unwind.Unwinder{}, 0x11fad0)
	// home space, the record (code and flags, chained record, address,
	// count with a padding word of 1, the parameter), then other words.
	base := env.Push(0x11faf0, 0, 0x7b60d6a4, 0,
		0x20474343, 0, 0x7b013d7e, 1|1<<32, 0xb93a30,
		0x21, 0x11fd40)
	at := base + 4*8
	if got := rec.CopySize(); got != 5*8 {
		t.Errorf("CopySize = %d, want 40", got)
	}
	if !rec.CopyAt(env, at) {
		t.Fatal("the copy is not found where it is")
	}
	for _, a := range []uint64{base, at - 8, at + 8} {
		if rec.CopyAt(env, a) {
			t.Errorf("a copy found at %#x", a)
		}
	}
	if a, ok := rec.FindCopy(env, base, base+10*8); !ok || a != at {
		t.Errorf("FindCopy = %#x, %v; want %#x", a, ok, at)
	}
	if _, ok := rec.FindCopy(env, at+8, base+10*8); ok {
		t.Error("FindCopy found a copy above the only one")
	}
	for off := uint64(0); off < 5*8; off += 8 {
		if s, ok := rec.CopyHolding(env, at+off); !ok || s != at {
			t.Errorf("CopyHolding(record+%d) = %#x, %v; want %#x", off, s, ok, at)
		}
	}
	for _, a := range []uint64{at - 8, at + 5*8, base + 2*8} {
		if _, ok := rec.CopyHolding(env, a); ok {
			t.Errorf("CopyHolding(%#x): in the record", a)
		}
	}

	// Any field that differs: no copy.
	for name, other := range map[string]unwind.ExceptionRecord{
		"code":      {Code: 0xe06d7363, Address: 0x7b013d7e, NumberParameters: 1, Parameters: []uint64{0xb93a30}},
		"flags":     {Code: 0x20474343, Flags: 1, Address: 0x7b013d7e, NumberParameters: 1, Parameters: []uint64{0xb93a30}},
		"record":    {Code: 0x20474343, Record: 0x11f000, Address: 0x7b013d7e, NumberParameters: 1, Parameters: []uint64{0xb93a30}},
		"address":   {Code: 0x20474343, Address: 0x7b013d7f, NumberParameters: 1, Parameters: []uint64{0xb93a30}},
		"count":     {Code: 0x20474343, Address: 0x7b013d7e, NumberParameters: 2, Parameters: []uint64{0xb93a30, 0x21}},
		"parameter": {Code: 0x20474343, Address: 0x7b013d7e, NumberParameters: 1, Parameters: []uint64{0xb93a31}},
	} {
		if other.CopyAt(env, at) {
			t.Errorf("%s differs: still a copy", name)
		}
		if _, ok := other.CopyHolding(env, at+2*8); ok {
			t.Errorf("%s differs: the address word still in a copy", name)
		}
	}

	// No record: nothing.
	var none *unwind.ExceptionRecord
	if none.CopyAt(env, at) {
		t.Error("a nil record has a copy")
	}
	if _, ok := none.CopyHolding(env, at); ok {
		t.Error("a nil record holds a word")
	}
	if _, ok := none.FindCopy(env, base, base+80); ok {
		t.Error("a nil record is found")
	}

	// A count past the 15 stored parameters compares the 15.
	many := &unwind.ExceptionRecord{Code: 1, NumberParameters: 99, Parameters: make([]uint64, unwind.MaxExceptionParameters)}
	env = unwindtest.New(amd64unwind.Unwinder{}, 0x10000)
	at = env.Push(append([]uint64{1, 0, 0, 99}, make([]uint64, unwind.MaxExceptionParameters)...)...)
	if got := many.CopySize(); got != (4+15)*8 {
		t.Errorf("CopySize = %d, want %d", got, (4+15)*8)
	}
	if !many.CopyAt(env, at) {
		t.Error("a record claiming 99 parameters: its copy of 15 not found")
	}
	if many.CopyAt(env, at+8) {
		t.Error("a copy past the stack's end found")
	}
}
