package symfile

import (
	"bufio"
	"bytes"
	"os"
	"testing"
)

// writeRecord parses one line with the package's record parsers (as Reader
// does) and writes it back with w, reporting false for lines it does not know.
func writeRecord(w *Writer, b []byte) bool {
	rec, msg := parseRecord(b)
	return msg == "" && w.WriteRecord(rec) == nil
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
