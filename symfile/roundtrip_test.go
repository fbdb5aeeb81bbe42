package symfile

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"
)

// writeRecord parses one line with the package's record parsers and writes
// it back with w, reporting false for lines it does not know.
func writeRecord(w *Writer, b []byte) bool {
	s := string(b)
	switch {
	case hasPrefix(b, "MODULE "):
		m, ok := parseModuleLine(b)
		return ok && w.WriteModule(m) == nil
	case hasPrefix(b, "INFO CODE_ID "):
		f := strings.SplitN(s[len("INFO CODE_ID "):], " ", 2)
		c := CodeID{ID: f[0]}
		if len(f) == 2 {
			c.File = f[1]
		}
		return w.WriteCodeID(c) == nil
	case hasPrefix(b, "INFO "):
		f := strings.SplitN(s[len("INFO "):], " ", 2)
		i := Info{Key: f[0]}
		if len(f) == 2 {
			i.Value = f[1]
		}
		return w.WriteInfo(i) == nil
	case hasPrefix(b, "FILE "):
		n, name, msg := parseFileLine(b)
		return msg == "" && w.WriteFile(File{Number: n, Name: s[name:]}) == nil
	case hasPrefix(b, "INLINE_ORIGIN "):
		o, msg := parseInlineOriginLine(b)
		return msg == "" && w.WriteInlineOrigin(InlineOrigin{ID: o.id, HasFile: o.hasFile, File: o.file, Name: s[o.name:]}) == nil
	case hasPrefix(b, "INLINE "):
		var in Inline
		return parseInlineLine(b, &in) == "" && w.WriteInline(in) == nil
	case hasPrefix(b, "FUNC "):
		f, msg := parseFuncLine(b)
		return msg == "" && w.WriteFunc(Func{Multiple: f.multiple, Address: f.addr, Size: f.size, ParamSize: f.param, Name: s[f.name:]}) == nil
	case hasPrefix(b, "PUBLIC "):
		p, msg := parsePublicLine(b)
		return msg == "" && w.WritePublic(Public{Multiple: p.multiple, Address: p.addr, ParamSize: p.param, Name: s[p.name:]}) == nil
	case hasPrefix(b, "STACK CFI "):
		kind, c, msg := parseStackCFI(b, len("STACK CFI"))
		if msg != "" {
			return false
		}
		if kind == stackCFIInit {
			return w.WriteCFIInit(CFIInit{Address: c.addr, Size: c.size, Rules: s[c.rules:]}) == nil
		}
		return w.WriteCFI(CFI{Address: c.addr, Rules: s[c.rules:]}) == nil
	case hasPrefix(b, "STACK WIN "):
		sw, prog, msg := parseStackWin(b, len("STACK WIN"))
		if sw.HasProgramString {
			sw.ProgramString = s[prog:]
		}
		return msg == "" && w.WriteStackWin(sw) == nil
	}
	l, msg := parseLineRecord(b)
	return msg == "" && w.WriteLine(l) == nil
}

// TestWriterReproducesCorpus parses every line of the corpus's symbol files
// and writes it back: the Writer must reproduce Breakpad's text byte for byte.
func TestWriterReproducesCorpus(t *testing.T) {
	var lines, files int
	for _, p := range corpusSymFiles(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		bad := 0
		for n := 1; sc.Scan(); n++ {
			b := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
			out.Reset()
			if !writeRecord(w, b) || w.Flush() != nil {
				t.Errorf("%s:%d: cannot parse %q", p, n, b)
				bad++
			} else if got := bytes.TrimSuffix(out.Bytes(), []byte("\n")); !bytes.Equal(got, b) {
				t.Errorf("%s:%d: wrote\n%q\nwant\n%q", p, n, got, b)
				bad++
			}
			if bad > 3 {
				break
			}
			lines++
		}
		files++
	}
	t.Logf("%d lines of %d files reproduced", lines, files)
}
