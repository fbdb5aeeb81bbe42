//go:build unix

package blob

import (
	"context"
	"fmt"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/cputime"
)

// BenchmarkDirPut stores 60 KB blobs (a processed crash's size) under
// v1/processed_crash/, durably (Put) and lazily (PutLazy, a Sync every 100),
// reporting the CPU (user + system) per blob: the file system's work shows
// there, and it is steadier than wall time on a shared machine.
func BenchmarkDirPut(b *testing.B) {
	for _, lazy := range []bool{false, true} {
		name := "Put"
		if lazy {
			name = "PutLazy"
		}
		b.Run(name, func(b *testing.B) {
			d, err := OpenDir(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			data := make([]byte, 60_000)
			cpu0 := cputime.Used()
			i := 0
			for b.Loop() {
				key := fmt.Sprintf("v1/processed_crash/%08d", i)
				i++
				if lazy {
					err = d.PutLazy(ctx, key, data)
					if i%100 == 0 {
						d.Sync(ctx)
					}
				} else {
					err = d.Put(ctx, key, data)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Used()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}
