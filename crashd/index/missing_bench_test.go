package index

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkMissingSymbols fills an index with 20,000 processed crashes,
// each walked without 5 of 200 modules (100,000 rows), then measures the
// queries /api/missing-symbols and a symbol upload make.
func BenchmarkMissingSymbols(b *testing.B) {
	ctx := context.Background()
	ix, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "index.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const crashes, mods, per = 20000, 200, 5
	start := time.Now()
	for i := range crashes {
		id := fmt.Sprintf("crash-%06d", i)
		at := t0.Add(time.Duration(i) * time.Minute)
		if err := ix.Processed(ctx, Crash{ID: id, ReceivedAt: at}); err != nil {
			b.Fatal(err)
		}
		var ms []Module
		for j := range per {
			k := (i*7 + j*31) % mods
			ms = append(ms, Module{DebugFile: fmt.Sprintf("lib%d.so", k), DebugID: fmt.Sprintf("%032X0", k), CodeFile: fmt.Sprintf("lib%d.so", k), CodeID: fmt.Sprintf("%040x", k)})
		}
		if err := ix.SetMissingSymbols(ctx, id, at, ms); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("filled: %d crashes, %d rows in %v (Processed + SetMissingSymbols: %.2f ms per crash)", crashes, crashes*per, time.Since(start), float64(time.Since(start).Microseconds())/1000/crashes)
	b.Run("list-all", func(b *testing.B) {
		for b.Loop() {
			if _, n, err := ix.MissingSymbols(ctx, MissingQuery{Limit: 1000}); err != nil || n != mods {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("list-last-day", func(b *testing.B) {
		since := t0.Add((crashes - 1440) * time.Minute)
		for b.Loop() {
			if _, _, err := ix.MissingSymbols(ctx, MissingQuery{Since: since, Limit: 1000}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("crashes-missing-100", func(b *testing.B) {
		for b.Loop() {
			if ids, err := ix.CrashesMissing(ctx, "lib7.so", fmt.Sprintf("%032X0", 7), 100); err != nil || len(ids) != 100 {
				b.Fatal(len(ids), err)
			}
		}
	})
}

// BenchmarkProcessedWrites is the processor's index writes per crash:
// Processed alone, and with SetMissingSymbols (5 modules).
func BenchmarkProcessedWrites(b *testing.B) {
	ctx := context.Background()
	for _, withMissing := range []bool{false, true} {
		b.Run(fmt.Sprintf("missing=%v", withMissing), func(b *testing.B) {
			ix, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "index.sqlite"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			i := 0
			for b.Loop() {
				id := fmt.Sprintf("crash-%06d", i)
				i++
				if err := ix.Processed(ctx, Crash{ID: id, ReceivedAt: at}); err != nil {
					b.Fatal(err)
				}
				if withMissing {
					ms := make([]Module, 5)
					for j := range ms {
						ms[j] = Module{DebugFile: fmt.Sprintf("lib%d.so", j), DebugID: fmt.Sprintf("%032X0", j)}
					}
					if err := ix.SetMissingSymbols(ctx, id, at, ms); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
