package unwind_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
)

// TestX86FrameState decodes x86-64 functions from their start to a pc:
// pushes and constant adjustments of rsp are followed; anything that
// leaves the straight path or moves rsp otherwise gives up; the usual
// frame-pointer prologue says Framed.
func TestX86FrameState(t *testing.T) {
	for _, c := range []struct {
		name   string
		code   []byte
		ok     bool
		cfa    uint64
		framed bool
	}{
		{"at the start", nil, true, 8, false},
		{"push rbx; sub rsp, 0x20", []byte{0x53, 0x48, 0x83, 0xec, 0x20}, true, 48, false},
		{"sub then add", []byte{0x48, 0x83, 0xec, 0x20, 0x48, 0x83, 0xc4, 0x20}, true, 8, false},
		{"call keeps rsp", []byte{0x53, 0xe8, 0, 0, 0, 0}, true, 16, false},
		{"push rbp; mov rbp, rsp", []byte{0x55, 0x48, 0x89, 0xe5}, true, 16, true},
		{"mov rbp, rsp after push rbx", []byte{0x53, 0x48, 0x89, 0xe5}, false, 0, false},
		{"ret before pc", []byte{0xc3, 0x53}, false, 0, false},
		{"jmp before pc", []byte{0xeb, 0x00, 0x53}, false, 0, false},
		{"and rsp, -16", []byte{0x48, 0x83, 0xe4, 0xf0}, false, 0, false},
		{"lea rsp", []byte{0x48, 0x8d, 0x64, 0x24, 0x08}, false, 0, false},
		{"leave", []byte{0xc9}, false, 0, false},
		{"truncated", []byte{0x53, 0x0f}, false, 0, false},
		{"unrecognized", []byte{0x53, 0xff, 0xff}, false, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := unwindtest.New(amd64unwind.Unwinder{}, 0x7fff0000)
			env.Modules = []unwindtest.Module{{Base: 0x400000, Size: 0x10000, HasSymbols: true, Funcs: [][2]uint64{{0x401000, 0x401100}}}}
			env.Code = map[uint64][]byte{0x401000: c.code}
			st, ok := unwind.X86FrameState(env, 0x401000+uint64(len(c.code)), true, 64, nil)
			if ok != c.ok || ok && (st.CFA != c.cfa || st.Framed != c.framed) {
				t.Errorf("ok %v cfa %d framed %v; want %v %d %v", ok, st.CFA, st.Framed, c.ok, c.cfa, c.framed)
			}
		})
	}
	if s := unwind.TrustPrologue.String(); s != "the callee's code decoded up to its pc" {
		t.Errorf("TrustPrologue prints %q", s)
	}
}
