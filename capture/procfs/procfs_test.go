package procfs

import (
	"fmt"
	"os"
	"testing"
)

const sampleMaps = `555555554000-555555555000 r--p 00000000 08:01 1234                       /usr/bin/true
555555555000-555555559000 r-xp 00001000 08:01 1234                       /usr/bin/true
7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0                          [vvar]
7ffff7ff0000-7ffff7ff1000 rw-p 00000000 00:00 0 
7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]
7ffff7dd0000-7ffff7dd1000 r-xp 00000000 08:01 99 /tmp/a b (deleted)
`

func TestParseMaps(t *testing.T) {
	maps, err := ParseMaps([]byte(sampleMaps))
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 6 {
		t.Fatalf("got %d mappings, want 6", len(maps))
	}
	want := Mapping{Start: 0x555555555000, End: 0x555555559000, Perms: "r-xp", Offset: 0x1000, Dev: "08:01", Inode: 1234, Path: "/usr/bin/true"}
	if maps[1] != want {
		t.Errorf("mapping 1 = %+v, want %+v", maps[1], want)
	}
	if !maps[1].Executable() || maps[3].Executable() || !maps[3].Readable() {
		t.Errorf("permission helpers wrong on %+v / %+v", maps[1], maps[3])
	}
	if maps[3].Path != "" || maps[4].Path != "[stack]" {
		t.Errorf("paths %q %q", maps[3].Path, maps[4].Path)
	}
	if maps[5].Path != "/tmp/a b (deleted)" || !maps[5].Deleted() {
		t.Errorf("deleted path %q", maps[5].Path)
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, bad := range []string{
		"5555-4444 r-xp 0 08:01 1 /x",
		"zz-4444 r-xp 0 08:01 1 /x",
		"1000-2000 r-x 0 08:01 1 /x",
		"1000-2000 r-xp 0 08:01",
		"1000-2000 r-xp 0 08:01 x /x",
		"10002000 r-xp 0 08:01 1 /x",
	} {
		if _, err := ParseMaps([]byte("1000-2000 r-xp 0 08:01 1 /ok\n" + bad + "\n")); err == nil {
			t.Errorf("ParseMaps(%q) succeeded", bad)
		} else if want := "maps: line 2: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("ParseMaps(%q) error %q lacks line number", bad, err)
		}
	}
}

func TestFind(t *testing.T) {
	maps, err := ParseMaps([]byte(sampleMaps[:len(sampleMaps)-len("7ffff7dd0000-7ffff7dd1000 r-xp 00000000 08:01 99 /tmp/a b (deleted)\n")]))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr uint64
		want int
	}{{0x555555554000, 0}, {0x555555558fff, 1}, {0x555555559000, -1}, {0x7ffffffde100, 4}, {0, -1}, {^uint64(0), -1}} {
		if got := Find(maps, c.addr); got != c.want {
			t.Errorf("Find(%#x) = %d, want %d", c.addr, got, c.want)
		}
	}
}

func TestOwnMaps(t *testing.T) {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	maps, err := ParseMaps(data)
	if err != nil {
		t.Fatal(err)
	}
	stack := false
	for _, m := range maps {
		stack = stack || m.Path == "[stack]"
	}
	if !stack {
		t.Errorf("no [stack] mapping in %d mappings of this process", len(maps))
	}
}

func TestParseSignalMasks(t *testing.T) {
	st := "Name:\tx\nSigQ:\t0/1\nSigPnd:\t0000000000000000\nSigBlk:\t0000000000000001\nSigIgn:\t0000000000001000\nSigCgt:\t0000000180000400\n"
	s, err := ParseSignalMasks([]byte(st))
	if err != nil {
		t.Fatal(err)
	}
	if !Has(s.Caught, 11) || Has(s.Caught, 6) || !Has(s.Ignored, 13) || !Has(s.Blocked, 1) {
		t.Errorf("masks %+v", s)
	}
	if _, err := ParseSignalMasks([]byte("SigBlk:\t1\n")); err == nil {
		t.Error("missing masks accepted")
	}
	if _, err := ParseSignalMasks([]byte("SigBlk:\tzz\nSigIgn:\t0\nSigCgt:\t0\n")); err == nil {
		t.Error("bad hex accepted")
	}
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte(sampleMaps))
	f.Add([]byte("0-0 ---p 0 0:0 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := ParseMaps(data)
		if err != nil {
			return
		}
		for _, m := range maps {
			if m.End < m.Start || len(m.Perms) != 4 {
				t.Fatalf("accepted bad mapping %+v", m)
			}
		}
	})
}

func FuzzParseSignalMasks(f *testing.F) {
	f.Add([]byte("SigBlk:\t0\nSigIgn:\t0\nSigCgt:\t0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseSignalMasks(data)
	})
}

// BenchmarkParseMaps parses a 400-line maps file, the size of a process
// with a hundred shared libraries.
func BenchmarkParseMaps(b *testing.B) {
	var buf []byte
	for i := range 100 {
		for j, perms := range []string{"r--p", "r-xp", "r--p", "rw-p"} {
			start := uint64(0x7f0000000000 + i*0x100000 + j*0x1000)
			buf = fmt.Appendf(buf, "%x-%x %s %08x fd:01 %d                     /usr/lib/x86_64-linux-gnu/libexample%d.so.1\n", start, start+0x1000, perms, j*0x1000, 1000+i, i)
		}
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseMaps(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseUint(t *testing.T) {
	for _, c := range []struct {
		in   string
		base uint64
		want uint64
		ok   bool
	}{
		{"ffffffffffffffff", 16, ^uint64(0), true},
		{"10000000000000000", 16, 0, false},
		{"18446744073709551615", 10, ^uint64(0), true},
		{"18446744073709551616", 10, 0, false},
		{"7fA0", 16, 0x7fa0, true},
		{"12a", 10, 0, false},
		{"", 16, 0, false},
	} {
		got, err := parseUint([]byte(c.in), c.base)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseUint(%q, %d) = %d, %v", c.in, c.base, got, err)
		}
	}
}
