package batch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// The captured dumps of the test data.
func captured(t *testing.T) []Dump {
	t.Helper()
	dumps, _, err := Find([]string{filepath.Join("..", "..", "testdata", "capture")})
	if err != nil || len(dumps) < 2 {
		t.Fatalf("test data: %d dumps, %v", len(dumps), err)
	}
	return dumps
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFind: directories searched for *.dmp, files taken as they are, keys
// relative to the working directory inside it and absolute outside, sorted
// and without repeats; a path that does not exist is an error.
func TestFind(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "o.dmp"), "x")
	wd := t.TempDir()
	t.Chdir(wd)
	for _, p := range []string{"b/crash.dmp", "a/crash.dmp", "a/deep/x.dmp", "a/notes.txt", "named.bin"} {
		writeFile(t, p, "x")
	}
	abs := filepath.ToSlash(filepath.Join(outside, "o.dmp"))
	dumps, roots, err := Find([]string{"b", "a", "./a/crash.dmp", "named.bin", filepath.Join(outside, "o.dmp")})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, d := range dumps {
		keys = append(keys, d.Key)
	}
	// An absolute key ("/..." or "C:/...") sorts before relative ones.
	want := []string{abs, "a/crash.dmp", "a/deep/x.dmp", "b/crash.dmp", "named.bin"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if wantRoots := []string{"b", "a", "a/crash.dmp", "named.bin", abs}; !reflect.DeepEqual(roots, wantRoots) {
		t.Errorf("roots %q, want %q", roots, wantRoots)
	}
	if k := Key(filepath.Join(wd, "a", "..", "b", "crash.dmp")); k != "b/crash.dmp" {
		t.Errorf("Key of an absolute path inside the working directory: %q", k)
	}
	if _, _, err := Find([]string{"none"}); err == nil {
		t.Errorf("a missing path: no error")
	}
}

// TestWalk: every dump walked once, results in the order of the dumps
// whatever the number of workers; a file that is not a dump gives its
// error; the progress counts each dump.
func TestWalk(t *testing.T) {
	dumps := captured(t)
	bad := filepath.Join(t.TempDir(), "bad.dmp")
	writeFile(t, bad, "not a minidump")
	dumps = append(dumps, Dump{Key: "bad.dmp", Path: bad})
	var first []string
	for _, workers := range []int{0, 1, 3, 20} {
		var calls atomic.Int32
		var log bytes.Buffer
		got, err := Walk(context.Background(), dumps, Options{Workers: workers, Progress: NewProgress(&log, "test", len(dumps))}, func(w Walked) string {
			calls.Add(1)
			if w.Err != nil {
				if w.State != nil {
					t.Errorf("%s: error %v with a state", w.Dump.Key, w.Err)
				}
				return w.Dump.Key + " error " + w.Err.Error()
			}
			return w.Dump.Key + " " + w.State.CrashReason + " " + w.Signature.Signature
		})
		if err != nil || int(calls.Load()) != len(dumps) || len(got) != len(dumps) {
			t.Fatalf("-j %d: %d calls, %d results, %v", workers, calls.Load(), len(got), err)
		}
		for i, l := range got {
			if !strings.HasPrefix(l, dumps[i].Key+" ") {
				t.Errorf("-j %d: result %d is %q, of dump %s", workers, i, l, dumps[i].Key)
			}
		}
		if l := got[len(got)-1]; !strings.Contains(l, " error ") || !strings.Contains(l, bad) {
			t.Errorf("not a dump: %q", l)
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Errorf("-j %d: %q, with one worker %q", workers, got, first)
		}
		if !strings.HasSuffix(log.String(), "test: walked 7/7 dumps\n") || strings.Count(log.String(), "\n") != 7 {
			t.Errorf("-j %d: progress %q", workers, log.String())
		}
	}
}

// TestWalkCancelled: no walk starts once the context is done.
func TestWalkCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := Walk(ctx, captured(t), Options{Workers: 2}, func(w Walked) *Walked { return &w })
	if err != context.Canceled {
		t.Errorf("error %v", err)
	}
	for i, w := range got {
		if w != nil {
			t.Errorf("dump %d walked", i)
		}
	}
}

// TestProgress: a line per tenth of the dumps, the last one always; nil
// and empty progress say nothing.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, "prog", 25)
	for range 25 {
		p.Done()
	}
	p.Finish()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 10 || lines[0] != "prog: walked 3/25 dumps" || lines[9] != "prog: walked 25/25 dumps" {
		t.Errorf("progress:\n%s", b.String())
	}
	var none *Progress
	none.Done()
	none.Finish()
	b.Reset()
	p = NewProgress(&b, "prog", 0)
	p.Done()
	p.Finish()
	if b.Len() != 0 {
		t.Errorf("no dumps: %q", b.String())
	}
}
