package symfile

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	const text = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 my lib.so\r\n" +
		"INFO CODE_ID 0123456789abcdef my lib.so\n" +
		"INFO GENERATOR test 1\n" +
		"FILE 0 a.c\n" +
		"\n" +
		"INLINE_ORIGIN 1 inlined\n" +
		"FUNC m 1000 20 8 f(int)\n" +
		"INLINE 0 7 0 1 1004 4\n" +
		"1000 10 5 0\n" +
		"FUNC garbage\n" +
		"PUBLIC 2000 0 pub\n" +
		"STACK WIN 4 1000 20 0 0 8 0 0 0 1 $T0 $ebp =\n" +
		"STACK CFI INIT 1000 20 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n" +
		"STACK CFI 1004 .cfa: $rsp 16 +\n"
	r := NewReader(strings.NewReader(text))
	var got []Record
	var syntax []*SyntaxError
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		var se *SyntaxError
		if errors.As(err, &se) {
			syntax = append(syntax, se)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec)
	}
	if len(syntax) != 1 || syntax[0].Line != 10 {
		t.Errorf("syntax errors %v, want one on line 10", syntax)
	}
	want := []Record{
		Module{OS: "Linux", Arch: "x86_64", ID: "0123456789ABCDEF0123456789ABCDEF0", Name: "my lib.so"},
		CodeID{ID: "0123456789abcdef", File: "my lib.so"},
		Info{Key: "GENERATOR", Value: "test 1"},
		File{Number: 0, Name: "a.c"},
		InlineOrigin{ID: 1, Name: "inlined"},
		Func{Multiple: true, Address: 0x1000, Size: 0x20, ParamSize: 8, Name: "f(int)"},
		Inline{Depth: 0, CallLine: 7, CallFile: 0, HasCallFile: true, Origin: 1, Ranges: []Range{{0x1004, 4}}},
		Line{Address: 0x1000, Size: 0x10, Line: 5, File: 0},
		Public{Address: 0x2000, Name: "pub"},
		StackWin{Type: WinFrameData, RVA: 0x1000, CodeSize: 0x20, ParamSize: 8, HasProgramString: true, ProgramString: "$T0 $ebp ="},
		CFIInit{Address: 0x1000, Size: 0x20, Rules: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"},
		CFI{Address: 0x1004, Rules: ".cfa: $rsp 16 +"},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d: %#v", len(got), len(want), got)
	}
	var a, b bytes.Buffer
	wa, wb := NewWriter(&a), NewWriter(&b)
	for i := range want {
		if err := wa.WriteRecord(got[i]); err != nil {
			t.Fatal(err)
		}
		wb.WriteRecord(want[i])
	}
	wa.Flush()
	wb.Flush()
	if a.String() != b.String() {
		t.Errorf("records read:\n%s\nwant:\n%s", a.String(), b.String())
	}
}

func TestReaderLongLine(t *testing.T) {
	r := NewReader(io.MultiReader(strings.NewReader("FUNC 0 1 0 "), &endless{}))
	if _, err := r.Read(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("endless line: err = %v, want a line-length error", err)
	}
}

// endless yields 'x' bytes until MaxLineLength+1 have been read, then EOF.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n > MaxLineLength {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("MODULE Linux x86 ID n\nFUNC 1 2 3 f\n1 1 1 0\nSTACK CFI INIT 1 2 .cfa: $esp 4 +\n"))
	f.Add([]byte("INLINE 0 1 2 3 4 5 6\nSTACK WIN 4 0 0 0 0 0 0 0 0 0 1\nINFO\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b))
		var out bytes.Buffer
		w := NewWriter(&out)
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			var se *SyntaxError
			if errors.As(err, &se) {
				continue
			}
			if err != nil {
				break
			}
			if err := w.WriteRecord(rec); err != nil {
				t.Fatalf("record %#v read but not writable: %v", rec, err)
			}
		}
	})
}
