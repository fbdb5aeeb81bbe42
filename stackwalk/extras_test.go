package stackwalk

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"
)

func TestParseLinuxText(t *testing.T) {
	l := parseLSB([]byte("DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=16.04\nDISTRIB_CODENAME=xenial\nDISTRIB_DESCRIPTION=\"Ubuntu 16.04.3 LTS\"\n"))
	if *l != (LSBRelease{ID: "Ubuntu", Release: "16.04", Codename: "xenial", Description: "Ubuntu 16.04.3 LTS"}) {
		t.Errorf("lsb = %+v", *l)
	}
	if p, ok := parsePID([]byte("Name:\tcrash\nState:\tR\nPid:\t1304\nPPid:\t1\n")); !ok || p != 1304 {
		t.Errorf("pid = %v, %v", p, ok)
	}
	if m, ok := parseMicrocode([]byte("processor\t: 0\nmicrocode\t: 0x1000065\nmicrocode\t: 0x7\n")); !ok || m != 0x1000065 {
		t.Errorf("microcode = %#x, %v", m, ok)
	}
	if m, ok := parseMicrocode([]byte("model name\t: x\n")); ok {
		t.Errorf("microcode without a field = %#x", m)
	}
	if p, ok := parsePID([]byte("Pid:\tx\n")); ok {
		t.Errorf("pid of garbage = %v", p)
	}
}

// TestParseLSBRust holds rust-minidump's test_linux_lsb_release
// (minidump-processor/tests/test_processor.rs) and the quoting cases of its
// linux_list_iter: keys in quotes count, one pair of quotes is stripped from
// a key or value after trimming, a quote without its pair is kept.
func TestParseLSBRust(t *testing.T) {
	for _, c := range []struct {
		in   string
		want LSBRelease
	}{
		{"\nDISTRIB_ID=\"hello\"\n\"DISTRIB_RELEASE\"  =there\n\"DISTRIB_CODENAME\" =   \"very long string\"\nDISTRIB_DESCRIPTION= wow long string!!!\n",
			LSBRelease{ID: "hello", Release: "there", Codename: "very long string", Description: "wow long string!!!"}},
		{"\nID=\"hello\"\n\"VERSION_ID\"  =there\n\"VERSION_CODENAME\" =   \"very long string\"\nPRETTY_NAME= wow long string!!!\n",
			LSBRelease{ID: "hello", Release: "there", Codename: "very long string", Description: "wow long string!!!"}},
		// Unbalanced quotes are kept (Trim(`"`) took them all).
		{"DISTRIB_ID=\"Ubuntu\nDISTRIB_RELEASE=22.04\"\nDISTRIB_CODENAME=\"\"jammy\"\"\nDISTRIB_DESCRIPTION=\"\n",
			LSBRelease{ID: `"Ubuntu`, Release: `22.04"`, Codename: `"jammy"`, Description: `"`}},
		// Only ASCII white space is trimmed; the last line of a key wins.
		{"ID=\t\"a\" \r\nID=\v\"b\"\n", LSBRelease{ID: "\v\"b\""}},
	} {
		if got := *parseLSB([]byte(c.in)); got != c.want {
			t.Errorf("parseLSB(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// checkLinuxText checks that the in-place scans agree with the
// bufio.Scanner ones they replaced.
func checkLinuxText(t *testing.T, b []byte) {
	t.Helper()
	if got, want := *parseLSB(b), *bufioParseLSB(b); got != want {
		t.Fatalf("parseLSB = %+v, want %+v", got, want)
	}
	p, ok := parsePID(b)
	if wp, wok := bufioParsePID(b); p != wp || ok != wok {
		t.Fatalf("parsePID = %d, %v; want %d, %v", p, ok, wp, wok)
	}
	m, ok := parseMicrocode(b)
	if wm, wok := bufioParseMicrocode(b); m != wm || ok != wok {
		t.Fatalf("parseMicrocode = %#x, %v; want %#x, %v", m, ok, wm, wok)
	}
}

// TestParseLinuxTextLongLines checks lines around bufio.Scanner's 64 KiB
// token limit. They were seeds of FuzzParseLinuxText, where mutating 64 KiB
// inputs made a minute explore 15,504 inputs; fuzzed inputs stay small.
func TestParseLinuxTextLongLines(t *testing.T) {
	for _, n := range []int{4095, 4096, 65535, 65536, 65537, 70000} {
		for _, eol := range []string{"\n", "\r\n"} {
			checkLinuxText(t, []byte(strings.Repeat("x", n)+eol+"Pid: 3"+eol+"microcode : 0x1"+eol))
			checkLinuxText(t, []byte("ID=a"+eol+strings.Repeat("y", n)+eol+"DISTRIB_ID=b"+eol))
		}
	}
}

func FuzzParseLinuxText(f *testing.F) {
	f.Add([]byte("DISTRIB_ID=Ubuntu\nPid:\t12\n"))
	f.Add([]byte("ID=\"debian\"\nVERSION_ID=\"12\"\nmicrocode : 0x12\n"))
	f.Add([]byte("Pid:\t12\r\nmicrocode\t:\t0x1f\r\nPRETTY_NAME=\"a\"\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) { checkLinuxText(t, b) })
}

// bufioParseMicrocode is the bufio.Scanner form parseMicrocode replaced (the reference of FuzzParseLinuxText): it reads the first "microcode" field of /proc/cpuinfo text, a
// hex number.
func bufioParseMicrocode(b []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "microcode" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(v), "0x"), 16, 64)
		return n, err == nil
	}
	return 0, false
}

// bufioParsePID is the bufio.Scanner form parsePID replaced: it finds the "Pid:" line of /proc/PID/status text.
func bufioParsePID(b []byte) (uint32, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "Pid" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
		return uint32(n), err == nil
	}
	return 0, false
}

// bufioParseLSB is the bufio.Scanner form parseLSB replaced (the reference
// of its line splitting): it reads KEY=value lines of lsb-release or
// os-release text.
func bufioParseLSB(b []byte) *LSBRelease {
	var l LSBRelease
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = string(stripQuotes([]byte(v)))
		switch string(stripQuotes([]byte(k))) {
		case "DISTRIB_ID", "ID":
			l.ID = v
		case "DISTRIB_RELEASE", "VERSION_ID":
			l.Release = v
		case "DISTRIB_CODENAME", "VERSION_CODENAME":
			l.Codename = v
		case "DISTRIB_DESCRIPTION", "PRETTY_NAME":
			l.Description = v
		}
	}
	return &l
}
