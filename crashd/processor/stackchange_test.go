package processor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

// TestStackChange: a crash processed without symbols, its symbols stored,
// then reprocessed through the real processor gets the stack-changed
// mark (previous signature and frames, and the new ones); a reprocess
// that changes nothing keeps the mark; a first processing has none.
func TestStackChange(t *testing.T) {
	dump, err := os.ReadFile(corpus.File(t, "breakpad/processor/linux_null_read_av.dmp"))
	if err != nil {
		t.Fatal(err)
	}
	corpusSyms := corpus.File(t, "breakpad/processor/symbols/null_read_av")
	dir := t.TempDir()
	src, err := symsrc.Open(symsrc.Config{Paths: []string{dir}, LocalMissTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	e := newEnv(t)
	p, err := New(Config{Workers: 1, Symbols: src}, e.store, e.q, e.ix, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	reprocess := func(id crash.ID) crash.ProcessedCrash {
		t.Helper()
		before := e.processed(t, id).CompletedAt
		if err := Reprocess(context.Background(), e.store, e.q, e.ix, id); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			e.wait(t, id, index.Processed)
			if pc := e.processed(t, id); pc.CompletedAt.After(before) {
				return pc
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: not processed again", id)
		return crash.ProcessedCrash{}
	}

	id := e.put(t, dump, map[string]any{"ProductName": "Test", "Version": "1.0"})
	e.wait(t, id, index.Processed)
	first := e.processed(t, id)
	if first.StackChange != nil {
		t.Fatalf("first processing marked: %+v", first.StackChange)
	}
	// Reprocessed with nothing new: no mark.
	if pc := reprocess(id); pc.StackChange != nil {
		t.Fatalf("unchanged reprocess marked: %+v", pc.StackChange)
	}

	// The symbols arrive (as the symbol server stores them: the Breakpad
	// layout), then a reprocess.
	if err := os.CopyFS(filepath.Join(dir, "null_read_av"), os.DirFS(corpusSyms)); err != nil {
		t.Fatal(err)
	}
	pc := reprocess(id)
	c := pc.StackChange
	if c == nil {
		t.Fatalf("reprocess with symbols: no stack change (signature %q, was %q)", pc.Signature, first.Signature)
	}
	if c.PreviousSignature != first.Signature || c.FirstSignature != first.Signature || c.Signature != pc.Signature || c.Signature == c.PreviousSignature ||
		c.FirstDifference != 0 || len(c.Frames) == 0 || len(c.PreviousFrames) == 0 || c.Frames[0] == c.PreviousFrames[0] || !c.At.Equal(pc.CompletedAt) {
		t.Errorf("stack change: %+v (signatures %q → %q)", c, first.Signature, pc.Signature)
	}
	t.Logf("signature %q → %q; frame 0 %q → %q", c.PreviousSignature, c.Signature, c.PreviousFrames[0], c.Frames[0])

	// Once more with the same symbols: the mark is kept as it was.
	again := reprocess(id).StackChange
	if again == nil || !again.At.Equal(c.At) || again.Signature != c.Signature {
		t.Errorf("mark after an unchanged reprocess: %+v, was %+v", again, c)
	}
}
