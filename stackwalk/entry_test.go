package stackwalk_test

import (
	"encoding/binary"
	"testing"

	"github.com/gobreakpad/gobreakpad/arch"
	"github.com/gobreakpad/gobreakpad/arch/amd64"
	"github.com/gobreakpad/gobreakpad/arch/arm"
	"github.com/gobreakpad/gobreakpad/arch/arm64"
	"github.com/gobreakpad/gobreakpad/arch/x86"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/minidump/synth"
)

// auxv encodes an auxiliary vector holding AT_ENTRY = entry.
func auxv(ptr int, entry uint64) []byte {
	var b []byte
	for _, v := range []uint64{minidump.AuxvEntryPoint, entry, 0, 0} {
		if ptr == 4 {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		} else {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	return b
}

// The entry function at 0x3000 has no symbol but CFI that would unwind
// on to a stale return address into main (0x401025); the leaf at 0x2000
// returns into it.
const entrySymsTail = `FUNC 1000 100 0 main
FUNC 2000 80 0 leaf
`

// TestEntryPointEndsWalk checks on every CPU that the walk ends at the
// entry point named by AT_ENTRY, even without a symbol for it and with CFI
// that would go on.
func TestEntryPointEndsWalk(t *testing.T) {
	const entry = 0x403000
	cases := []struct {
		name string
		cpu  arch.CPU
		ptr  int
		syms string
		ctx  func(sp uint64) *minidump.Context
		want []string
	}{
		{"amd64", arch.AMD64, 8, "MODULE Linux x86_64 ID app\n" + entrySymsTail +
			"STACK CFI INIT 2000 80 .cfa: $rsp 8 + .ra: .cfa -8 + ^\nSTACK CFI INIT 3000 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n",
			func(sp uint64) *minidump.Context {
				return synth.AMD64(&amd64.Context{ContextFlags: amd64.ContextFull, Rip: 0x402010, Rsp: sp})
			},
			[]string{"0|0|app|leaf|||0x10 given as instruction pointer in context", "0|1|app||||0x3021 call frame info"}},
		{"x86", arch.X86, 4, "MODULE Linux x86 ID app\n" + entrySymsTail +
			"STACK CFI INIT 2000 80 .cfa: $esp 4 + .ra: .cfa -4 + ^\nSTACK CFI INIT 3000 40 .cfa: $esp 4 + .ra: .cfa -4 + ^\n",
			func(sp uint64) *minidump.Context {
				return synth.X86(&x86.Context{ContextFlags: x86.ContextFull, Eip: 0x402010, Esp: uint32(sp)})
			},
			[]string{"0|0|app|leaf|||0x10 given as instruction pointer in context", "0|1|app||||0x3021 call frame info"}},
		{"arm64", arch.ARM64, 8, "MODULE Linux arm64 ID app\n" + entrySymsTail +
			"STACK CFI INIT 2000 80 .cfa: sp 0 + .ra: x30\nSTACK CFI INIT 3000 40 .cfa: sp 16 + .ra: .cfa -16 + ^\n",
			func(sp uint64) *minidump.Context {
				c := &arm64.Context{ContextFlags: arm64.ContextFull}
				c.Iregs[arm64.RegPC], c.Iregs[arm64.RegSP], c.Iregs[arm64.RegLR] = 0x402010, sp, 0x403024
				return synth.ARM64(c)
			},
			[]string{"0|0|app|leaf|||0x10 given as instruction pointer in context", "0|1|app||||0x3020 call frame info"}},
		{"arm", arch.ARM, 4, "MODULE Linux arm ID app\n" + entrySymsTail +
			"STACK CFI INIT 2000 80 .cfa: sp 0 + .ra: lr\nSTACK CFI INIT 3000 40 .cfa: sp 16 + .ra: .cfa -16 + ^\n",
			func(sp uint64) *minidump.Context {
				c := &arm.Context{ContextFlags: arm.ContextFull}
				c.Iregs[15], c.Iregs[13], c.Iregs[14] = 0x402010, uint32(sp), 0x403024
				return synth.ARM(c)
			},
			[]string{"0|0|app|leaf|||0x10 given as instruction pointer in context", "0|1|app||||0x3022 call frame info"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, withEntry := range []bool{true, false} {
				b := synth.New(c.cpu, minidump.PlatformLinux)
				const sp = 0x7fff0000
				st := synth.NewStack(sp, c.ptr)
				if c.cpu == arch.AMD64 || c.cpu == arch.X86 {
					st.Ptr(entry + 0x21) // return into the entry function
				}
				st.Ptr(0x401025) // a stale return address
				st.Zeros(64)
				b.AddThread(1, c.ctx(sp), st)
				b.AddELFModule("/bin/app", 0x400000, 0x10000, []byte("0123456789abcdef"))
				b.SetException(1, 11, 0, c.ctx(sp))
				if withEntry {
					b.AddStream(minidump.LinuxAuxv, auxv(c.ptr, entry))
				}
				p := walkSynth(t, b, c.syms)
				got := frames(t, p)
				if withEntry {
					expectFrames(t, got, c.want...)
				} else if len(got) <= len(c.want) {
					t.Errorf("without AT_ENTRY the CFI walk should go on past the entry function: %q", got)
				}
			}
		})
	}
}
