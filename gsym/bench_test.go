package gsym

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchSize is the size of the synthetic GSYM file of the benchmarks.
const benchSize = 200 << 20

var (
	benchOnce  sync.Once
	benchPath  string
	benchAddrs []uint64
	benchErr   error
)

// benchFile returns a synthetic GSYM file of at least benchSize bytes, made
// on first use in the temp directory and reused, and addresses inside its
// functions. Functions are shaped like optimized C++: 64 bytes to 4 KiB, a
// row every 2 to 16 bytes, inline trees two or three deep.
func benchFile(b *testing.B) (string, []uint64) {
	benchOnce.Do(func() {
		benchPath = filepath.Join(os.TempDir(), fmt.Sprintf("gobreakpad-gsym-bench-%d.gsym", benchSize))
		r := rand.New(rand.NewPCG(1, 2))
		pick := func(start uint64, size uint32) uint64 { return start + r.Uint64N(uint64(size)) }
		w := NewWriter()
		w.BaseAddress = 0x400000
		files := make([]uint32, 2000)
		for i := range files {
			files[i] = w.FilePath(fmt.Sprintf("/build/src/module%d/dir%d/file%d.cc", i%37, i%11, i))
		}
		addr := uint64(0x401000)
		for w.Len() < benchSize {
			size := uint32(64 + r.IntN(4032))
			fi := FunctionInfo{Start: addr, Size: size, Name: w.String(fmt.Sprintf("ns%d::Class%d::method%d(int, char const*)", r.IntN(50), r.IntN(5000), len(w.funcs)))}
			file := files[r.IntN(len(files))]
			line := uint32(10 + r.IntN(5000))
			for a := addr; a < addr+uint64(size); a += uint64(2 + r.IntN(15)) {
				fi.LineTable = append(fi.LineTable, LineEntry{Address: a, File: file, Line: line})
				line = uint32(max(1, int(line)+r.IntN(9)-3))
				if r.IntN(20) == 0 {
					file = files[r.IntN(len(files))]
				}
			}
			if size >= 256 {
				root := &InlineInfo{Ranges: []Range{{addr, addr + uint64(size)}}, Name: fi.Name}
				for c := uint64(addr + 16); c+64 < addr+uint64(size); c += 128 {
					child := InlineInfo{Ranges: []Range{{c, c + 48}}, Name: w.String(fmt.Sprintf("inl%d", r.IntN(20000))), CallFile: file, CallLine: uint32(r.IntN(3000))}
					child.Children = []InlineInfo{{Ranges: []Range{{c + 8, c + 24}}, Name: w.String(fmt.Sprintf("inl%d", r.IntN(20000))), CallFile: file, CallLine: uint32(r.IntN(3000))}}
					root.Children = append(root.Children, child)
				}
				fi.Inline = root
			}
			if err := w.Add(&fi); err != nil {
				benchErr = err
				return
			}
			if len(benchAddrs) < 1<<16 {
				benchAddrs = append(benchAddrs, pick(addr, size))
			} else if j := r.IntN(len(w.funcs)); j < len(benchAddrs) {
				benchAddrs[j] = pick(addr, size)
			}
			addr += uint64(size) + uint64(r.IntN(16))
		}
		if st, err := os.Stat(benchPath); err == nil && st.Size() >= benchSize {
			return // made before, identically
		}
		tmp := benchPath + ".tmp"
		fh, err := os.Create(tmp)
		if err != nil {
			benchErr = err
			return
		}
		bw := bufio.NewWriterSize(fh, 1<<20)
		if _, err := w.WriteTo(bw); err != nil {
			benchErr = err
		} else if err := bw.Flush(); err != nil {
			benchErr = err
		}
		fh.Close()
		if benchErr == nil {
			benchErr = os.Rename(tmp, benchPath)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath, benchAddrs
}

// BenchmarkLookup200MB: random addresses in a file of over 200 MB, mapped.
func BenchmarkLookup200MB(b *testing.B) {
	path, addrs := benchFile(b)
	f, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Lookup(addrs[i%len(addrs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.n.Add(int64(len(p)))
	return c.r.ReadAt(p, off)
}

// BenchmarkLookup200MBReaderAt: the same over an io.ReaderAt, reporting the
// bytes each lookup reads (what a mapped lookup touches, before paging).
func BenchmarkLookup200MBReaderAt(b *testing.B) {
	path, addrs := benchFile(b)
	fh, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	cr := &countingReader{r: fh}
	f, err := NewFile(cr, st.Size())
	if err != nil {
		b.Fatal(err)
	}
	cr.n.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Lookup(addrs[i%len(addrs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cr.n.Load())/float64(b.N), "bytes-read/op")
}

// BenchmarkOpenFirstLookup200MB: Open, one lookup, Close.
func BenchmarkOpenFirstLookup200MB(b *testing.B) {
	path, addrs := benchFile(b)
	b.ReportAllocs()
	times := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Lookup(addrs[i%len(addrs)]); err != nil {
			b.Fatal(err)
		}
		f.Close()
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds())/1e3, "p99-µs")
}
