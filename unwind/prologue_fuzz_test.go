package unwind_test

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/unwind"
	amd64unwind "github.com/gobreakpad/gobreakpad/unwind/amd64"
	arm64unwind "github.com/gobreakpad/gobreakpad/unwind/arm64"
	"github.com/gobreakpad/gobreakpad/unwind/unwindtest"
	x86unwind "github.com/gobreakpad/gobreakpad/unwind/x86"
)

// FuzzFrameState walks arbitrary code bytes (a function starting at
// 0x401000, the context's pc off bytes into it) and stack words with each
// CPU's unwinder: decoding a function's code from the dump must never
// panic or hang, whatever it holds.
func FuzzFrameState(f *testing.F) {
	f.Add([]byte{0x55, 0x48, 0x89, 0xe5, 0x90}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, uint16(4))
	f.Add([]byte{0xf3, 0x7b, 0xbf, 0xa9, 0x1f, 0x20, 0x03, 0xd5}, []byte{0x54, 0x20, 0x40, 0, 0, 0, 0, 0}, uint16(4))
	f.Add([]byte{0x53, 0x83, 0xec, 0x08, 0x90}, []byte{0x50, 0x20, 0x40, 0}, uint16(4))
	f.Fuzz(func(t *testing.T, code, stack []byte, off uint16) {
		if len(code) > 4096 || len(stack) > 4096 {
			return
		}
		for _, cpu := range []unwind.CPU{amd64unwind.Unwinder{}, x86unwind.Unwinder{}, &arm64unwind.Unwinder{}} {
			env := unwindtest.New(cpu, 0x7fff0000)
			env.Modules = []unwindtest.Module{{Base: 0x400000, Size: 0x10000, HasSymbols: true,
				Funcs: [][2]uint64{{0x401000, 0x402000}, {0x402000, 0x403000}}}}
			env.Code = map[uint64][]byte{0x401000: code}
			env.Stack = stack
			first := &unwind.Frame{Trust: unwind.TrustContext}
			first.Set(cpu.PC(), 0x401000+uint64(off)%0x1000)
			first.Set(cpu.SP(), 0x7fff0000)
			unwindtest.Walk(cpu, env, first, 8)
		}
	})
}
