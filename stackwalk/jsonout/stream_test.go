package jsonout

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// wholeEncoding encodes the document in one piece, frames included (the
// way WriteWith wrote it before it streamed the frames).
func wholeEncoding(t *testing.T, st *stackwalk.ProcessState, pretty bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(build(st)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestStreamedFrames: WriteWith, which writes the frames one at a time in
// the place of placeholders, gives the bytes of the whole document encoded
// at once, compact and indented, on corpus dumps (threads without frames,
// the crashing thread's copy with its registers, names with < > &).
func TestStreamedFrames(t *testing.T) {
	for _, name := range []string{"breakpad/processor/minidump2.dmp", "hostile/dump-module-name-newline.dmp", "hostile/dump-4096threads-crash-in-last.dmp"} {
		path := filepath.Join(corpus.Path(), name)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s: %v", name, err)
		}
		f, err := minidump.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := stackwalk.Process(f, stackwalk.Options{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Threads) > 0 {
			st.Threads[0].ThreadName = `<a & "b">` + "\x00"
		}
		for _, pretty := range []bool{false, true} {
			var got bytes.Buffer
			if err := Write(&got, st, pretty); err != nil {
				t.Fatal(err)
			}
			if want := wholeEncoding(t, st, pretty); !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s (pretty %v): the streamed frames differ from the whole encoding", name, pretty)
			}
		}
	}
}
