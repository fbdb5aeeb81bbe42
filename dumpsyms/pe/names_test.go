package pe

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/pdb"
)

// typeStream builds a TPI stream of the given records (kind, body), the
// first at index 0x1000.
func typeStream(t *testing.T, recs ...any) *pdb.TypeStream {
	t.Helper()
	le := binary.LittleEndian
	var data []byte
	for i := 0; i < len(recs); i += 2 {
		body := recs[i+1].([]byte)
		data = le.AppendUint16(data, uint16(len(body)+2))
		data = le.AppendUint16(data, uint16(recs[i].(pdb.LeafKind)))
		data = append(data, body...)
	}
	hdr := make([]byte, 56)
	le.PutUint32(hdr[4:], 56)
	le.PutUint32(hdr[8:], 0x1000)
	le.PutUint32(hdr[12:], 0x1000+uint32(len(recs)/2))
	le.PutUint32(hdr[16:], uint32(len(data)))
	ts, err := pdb.ParseTypeStream(append(hdr, data...))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func u32s(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

const ptrAttrs = 0xc | 8<<13 // near64 pointer, 8 bytes

func TestFormatFunction(t *testing.T) {
	ts := typeStream(t,
		pdb.LF_MODIFIER, append(u32s(0x70), 1, 0), // 0x1000 const char
		pdb.LF_POINTER, u32s(0x1000, ptrAttrs), // 0x1001 char const*
		pdb.LF_ARGLIST, u32s(2, 0x74, 0x1001), // 0x1002 (int, char const*)
		pdb.LF_PROCEDURE, append(u32s(0x74), 0, 0, 2, 0, 0x02, 0x10, 0, 0), // 0x1003
		pdb.LF_POINTER, u32s(0x1004, ptrAttrs), // 0x1004: a pointer to itself
		pdb.LF_ARGLIST, u32s(1, 0x1004), // 0x1005
		pdb.LF_PROCEDURE, append(u32s(0x74), 0, 0, 1, 0, 0x05, 0x10, 0, 0), // 0x1006
		pdb.LF_MODIFIER, append(u32s(0x1008), 1, 0), // 0x1007 ↔ 0x1008: a cycle
		pdb.LF_MODIFIER, append(u32s(0x1007), 1, 0), // 0x1008
		pdb.LF_ARGLIST, u32s(1, 0x1007), // 0x1009
		pdb.LF_PROCEDURE, append(u32s(0x74), 0, 0, 1, 0, 0x09, 0x10, 0, 0), // 0x100a
		pdb.LF_ARGLIST, u32s(0xffffffff, 1), // 0x100b: 2^32-1 arguments
		pdb.LF_PROCEDURE, append(u32s(0x74), 0, 0, 1, 0, 0x0b, 0x10, 0, 0), // 0x100c
	)
	f := &formatter{tpi: ts, ptrSize: 8, fwd: map[string]uint64{}}
	if got := f.function("f", 0x1003); got != "f(int, char const*)" {
		t.Errorf("f: %q", got)
	}
	for _, ti := range []pdb.TypeIndex{0x1006, 0x100a, 0x100c, 0x7fffffff} {
		// Cycles, absurd counts and missing types end in the bare name
		// or a placeholder, never a hang.
		if got := f.function("g", ti); got == "" {
			t.Errorf("type %#x: empty name", ti)
		}
	}
}

func TestParseWinName(t *testing.T) {
	for _, c := range []struct {
		in, name string
		size     uint32
	}{
		{"_f@12", "f", 12}, {"@g@8", "g", 8}, {"_h", "h", 0}, {"__CRT_INIT@12", "_CRT_INIT", 12},
		{"?f@@YAXXZ", "?f@@YAXXZ", 0}, {"ns::f", "ns::f", 0}, {"plain", "plain", 0},
	} {
		name, size, _ := parseWinName(c.in, true)
		if name != c.name || size != c.size {
			t.Errorf("parseWinName(%q) = %q, %d; want %q, %d", c.in, name, size, c.name, c.size)
		}
		// No other machine decorates C names.
		if name, size, _ := parseWinName(c.in, false); name != c.in || size != 0 {
			t.Errorf("parseWinName(%q, x64) = %q, %d; want it as it is", c.in, name, size)
		}
	}
}
