package index

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkProcessed is the index write of each processed crash: one
// Processed upsert of a crash the collector recorded as received.
func BenchmarkProcessed(b *testing.B) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "index.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("bench-%09d", i)
		i++
		if err := s.Received(ctx, Crash{ID: id, ReceivedAt: now, Product: "P", Version: "1"}); err != nil {
			b.Fatal(err)
		}
		if err := s.Processed(ctx, Crash{ID: id, ReceivedAt: now, ProcessedAt: now, Product: "P", Version: "1",
			OS: "Linux", CPU: "amd64", Signature: "sig", CrashReason: "SIGSEGV", Attempts: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
