package queue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestSymbolsEvents: every watcher gets every symbols event published
// after it started; the consumers sharing a name get each event once
// between them, again after an error; the event published before a
// consumer was made reaches it.
func TestSymbolsEvents(t *testing.T) {
	symbolsRetryDelay = 200 * time.Millisecond
	q := openT(t, t.TempDir(), Config{AckWait: 5 * time.Second})
	defer q.Close()
	ctx := t.Context()
	if err := q.PublishSymbols(ctx, Symbols{DebugFile: "early.so", DebugID: "E1"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	watched := map[int][]Symbols{}
	handled := map[string]int{}
	failOnce := true
	for i := range 2 {
		stop, err := q.WatchSymbols(ctx, func(ev Symbols) {
			mu.Lock()
			watched[i] = append(watched[i], ev)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		stop2, err := q.ConsumeSymbols(ctx, "reprocess", func(_ context.Context, ev Symbols) error {
			mu.Lock()
			defer mu.Unlock()
			if ev.DebugFile == "b.so" && failOnce {
				failOnce = false
				return errors.New("index away")
			}
			handled[ev.DebugFile]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop2()
	}
	for _, f := range []string{"a.so", "b.so"} {
		if err := q.PublishSymbols(ctx, Symbols{DebugFile: f, DebugID: "ID0"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := len(watched[0]) == 2 && len(watched[1]) == 2 && handled["a.so"] == 1 && handled["b.so"] == 1 && handled["early.so"] == 1
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			t.Fatalf("watched %v, handled %v", watched, handled)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // nothing more comes
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 3 || handled["a.so"] != 1 || handled["b.so"] != 1 || watched[0][0].DebugFile != "a.so" {
		t.Errorf("watched %v, handled %v", watched, handled)
	}
	if _, err := q.ConsumeSymbols(ctx, "a.b", nil); err == nil {
		t.Error("a consumer name with a dot: no error")
	}
}
