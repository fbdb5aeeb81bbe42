package elfimage_test

import (
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
	"github.com/gobreakpad/gobreakpad/symbols/symtest"
)

// TestVDSO reads the i386 vDSO that core2md saved whole in
// testdata/signal/x86-native-abort: its functions and CFI, under the
// module's identifier.
func TestVDSO(t *testing.T) {
	f, err := minidump.Open("../../testdata/signal/x86-native-abort/crash.dmp")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mods, err := f.ModuleList()
	if err != nil {
		t.Fatal(err)
	}
	mem, err := f.Memory()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		if !strings.Contains(m.Name, "linux-gate") {
			continue
		}
		image, err := mem.ReadMemory(m.BaseOfImage, int(m.SizeOfImage))
		if err != nil {
			t.Fatalf("vDSO image not in the dump: %v", err)
		}
		sm := symbols.Module{CodeFile: m.Name, DebugID: m.DebugIdentifier()}
		s, err := elfimage.Load(image, sm)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for rel := uint64(0); rel < uint64(m.SizeOfImage); rel += 4 {
			if sym, ok := s.Lookup.Lookup(rel, false); ok {
				if sym.Function == "__kernel_vsyscall" && !names[sym.Function] {
					if _, ok := s.CFI.CFIRules(rel, nil); !ok {
						t.Errorf("no CFI at __kernel_vsyscall (%#x)", rel)
					}
				}
				names[sym.Function] = true
			}
		}
		for _, n := range []string{"__kernel_vsyscall", "__kernel_sigreturn", "__kernel_rt_sigreturn"} {
			if !names[n] {
				t.Errorf("%s not found; functions %v", n, names)
			}
		}
		sm.DebugID = "000000000000000000000000000000000"
		if _, err := elfimage.Load(image, sm); err == nil {
			t.Error("image loaded under another module's identifier")
		}
		return
	}
	t.Fatal("no vDSO module in the dump")
}

// imageSource reads a module's symbols from its image, as the walker does
// with Options.ImageSymbols.
type imageSource map[string][]byte

func (s imageSource) Load(m symbols.Module) (*symbols.Symbols, error) {
	return elfimage.Load(s[m.CodeFile], m)
}

// TestConcurrent reads the vDSO's symbols from several goroutines at once
// (run with -race; the walker reads images from the walks of several
// threads): the same answers.
func TestConcurrent(t *testing.T) {
	f, err := minidump.Open("../../testdata/signal/x86-native-abort/crash.dmp")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mods, err := f.ModuleList()
	if err != nil {
		t.Fatal(err)
	}
	mem, err := f.Memory()
	if err != nil {
		t.Fatal(err)
	}
	src := imageSource{}
	var sms []symbols.Module
	for _, m := range mods {
		if strings.Contains(m.Name, "linux-gate") {
			image, err := mem.ReadMemory(m.BaseOfImage, int(m.SizeOfImage))
			if err != nil {
				t.Fatal(err)
			}
			src[m.Name] = image
			sms = append(sms, symbols.Module{CodeFile: m.Name, DebugID: m.DebugIdentifier()})
		}
	}
	if len(sms) == 0 {
		t.Fatal("no vDSO in the dump")
	}
	first := symtest.Concurrent(t, src, sms, []uint64{0x400, 0x410, 0x420})
	if first[0].Empty() {
		t.Error("no symbols")
	}
}
