package symstore

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// hostile are names from dumps and servers that must never become paths.
var hostile = []string{
	"", ".", "..", "../x", `..\x`, "a/b", `a\b`, "/etc/passwd", `\\server\share`,
	"c:", `c:\x`, "x:stream", "a\x00b", "a\nb", "\x7f", "\t", strings.Repeat("x", 256),
}

func TestCheckName(t *testing.T) {
	for _, bad := range hostile {
		if err := CheckName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", bad, err)
		}
	}
	for _, good := range []string{"xul.pdb", "5A9832E5287241C1838ED98914E9B7FF1", "libc.so.6", "a..b", "...", ".build-id",
		"file.ptr", "NAME.pd_", "ünïcode.so", " space", strings.Repeat("x", 255)} {
		if err := CheckName(good); err != nil {
			t.Errorf("CheckName(%q) = %v", good, err)
		}
	}
}

func TestBaseName(t *testing.T) {
	for _, c := range [][2]string{
		{"", ""},
		{"libc.so.6", "libc.so.6"},
		{"/usr/lib/libc.so.6", "libc.so.6"},
		{`C:\Windows\System32\ntdll.dll`, "ntdll.dll"},
		{`c:/mixed\path/x.pdb`, "x.pdb"},
		{`\\server\share\y.dll`, "y.dll"},
		{"dir/", ""},
		{`dir\`, ""},
		{"/", ""},
		{"..", ".."},
		{"a/..", ".."},
	} {
		if got := BaseName(c[0]); got != c[1] {
			t.Errorf("BaseName(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

func TestBreakpadPath(t *testing.T) {
	for _, c := range []struct {
		file, id, ext string
		want          []string
	}{
		{"libc.so.6", "ID", ".sym", []string{"libc.so.6", "ID", "libc.so.6.sym"}},
		{`C:\build\app.pdb`, "GUID1", ".sym", []string{"app.pdb", "GUID1", "app.sym"}},
		{"APP.PDB", "G", ".gsym", []string{"APP.PDB", "G", "APP.gsym"}},
		{"x.Pdb", "G", ".symc", []string{"x.Pdb", "G", "x.symc"}},
		{"lib.so", "B", ".symbfile.zst", []string{"lib.so", "B", "lib.so.symbfile.zst"}},
		{".pdb", "G", ".sym", []string{".pdb", "G", ".pdb.sym"}}, // nothing before the extension: kept
		{"../../etc/passwd", "ID", ".sym", []string{"passwd", "ID", "passwd.sym"}},
		{"/a/b:c.so", "ID", ".sym", []string{"b:c.so", "ID", "b:c.so.sym"}}, // a Unix name Breakpad finds
	} {
		got, err := BreakpadPath(c.file, c.id, c.ext)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("BreakpadPath(%q, %q, %q) = %q, %v; want %q", c.file, c.id, c.ext, got, err, c.want)
		}
	}
	for _, bad := range [][2]string{{"..", "ID"}, {"a/..", "ID"}, {"", "ID"}, {"dir/", "ID"}, {"x\x00y", "ID"}, {"app.pdb", ".."},
		{"app.pdb", "../ID"}, {"app.pdb", `a\b`}, {"app.pdb", ""}, {"app.pdb", "."}, {`c:\dir\..`, "ID"}, {"a", "b\x00"}} {
		if got, err := BreakpadPath(bad[0], bad[1], ".sym"); !errors.Is(err, ErrBadName) {
			t.Errorf("BreakpadPath(%q, %q) = %q, %v; want ErrBadName", bad[0], bad[1], got, err)
		}
	}
}

func TestMicrosoftPath(t *testing.T) {
	for _, c := range []struct {
		name, id string
		form     Form
		want     []string
	}{
		{"xul.pdb", "GUIDAGE", Plain, []string{"xul.pdb", "GUIDAGE", "xul.pdb"}},
		{"xul.pdb", "GUIDAGE", Packed, []string{"xul.pdb", "GUIDAGE", "xul.pd_"}},
		{"xul.pdb", "GUIDAGE", Pointer, []string{"xul.pdb", "GUIDAGE", "file.ptr"}},
		{"app.exe", "5AB380779000", Packed, []string{"app.exe", "5AB380779000", "app.ex_"}},
	} {
		got, err := MicrosoftPath(c.name, c.id, c.form)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("MicrosoftPath(%q, %q, %d) = %q, %v; want %q", c.name, c.id, c.form, got, err, c.want)
		}
	}
	for _, bad := range hostile {
		if got, err := MicrosoftPath(bad, "ID", Plain); !errors.Is(err, ErrBadName) {
			t.Errorf("MicrosoftPath(%q, ID) = %q, %v", bad, got, err)
		}
		if got, err := MicrosoftPath("a.pdb", bad, Packed); !errors.Is(err, ErrBadName) {
			t.Errorf("MicrosoftPath(a.pdb, %q) = %q, %v", bad, got, err)
		}
	}
	if _, err := MicrosoftPath("a", "b", Form(9)); err == nil {
		t.Error("an unknown form gave no error")
	}
}

func TestPackedNames(t *testing.T) {
	for _, c := range [][2]string{{"a.pdb", "a.pd_"}, {"A.EXE", "A.EX_"}, {"b.dll", "b.dl_"}, {"x", "_"}, {"", ""}} {
		if got := PackedName(c[0]); got != c[1] {
			t.Errorf("PackedName(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	for _, c := range [][2]string{{"a.pd_", "a.pdb"}, {"A.PD_", "A.pdb"}, {"b.ex_", "b.exe"}, {"c.Dl_", "c.dll"}, {"d.db_", "d.dbg"},
		{"e.pdb", "e.pdb"}, {"noext", "noext"}, {"", ""}, {"x.y_", "x.y_"}} {
		if got := UnpackedName(c[0]); got != c[1] {
			t.Errorf("UnpackedName(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// FuzzCheckName checks that every name CheckName accepts is one local path
// element on this system and in Unix and Windows forms, and that the store
// paths built from any names stay inside their root.
func FuzzCheckName(f *testing.F) {
	for _, s := range append(hostile, "xul.pdb", "libc.so.6", "a..b", "GUID1") {
		f.Add(s, "ID")
	}
	f.Fuzz(func(t *testing.T, name, id string) {
		if CheckName(name) == nil {
			if !filepath.IsLocal(name) || strings.ContainsAny(name, `/\:`) || filepath.Base(name) != name {
				t.Fatalf("CheckName accepted %q", name)
			}
			if len(name) > maxName || strings.IndexByte(name, 0) >= 0 {
				t.Fatalf("CheckName accepted %q", name)
			}
		}
		if elems, err := BreakpadPath(name, id, ".sym"); err == nil {
			if len(elems) != 3 {
				t.Fatalf("BreakpadPath(%q, %q) = %q", name, id, elems)
			}
			for _, e := range elems {
				if !filepath.IsLocal(e) || strings.ContainsAny(e, "/\\\x00") {
					t.Fatalf("BreakpadPath(%q, %q) = %q leaves the root", name, id, elems)
				}
			}
		}
		for _, form := range []Form{Plain, Packed, Pointer} {
			if elems, err := MicrosoftPath(name, id, form); err == nil {
				for _, e := range elems {
					if CheckName(e) != nil && e != PackedName(name) {
						t.Fatalf("MicrosoftPath(%q, %q) = %q", name, id, elems)
					}
					if !filepath.IsLocal(e) {
						t.Fatalf("MicrosoftPath(%q, %q) = %q leaves the root", name, id, elems)
					}
				}
			}
		}
	})
}
