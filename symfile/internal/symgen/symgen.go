// Package symgen writes large synthetic Breakpad symbol files for benchmarks,
// shaped like real C++ ones: FILE and INLINE_ORIGIN tables, then functions
// with INLINE and line records, PUBLIC records, and STACK CFI INIT records each
// followed by a few deltas. The output depends only on the arguments.
package symgen

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/gobreakpad/gobreakpad/symfile"
)

// Info describes a generated file, for checking lookups against it.
type Info struct {
	Funcs     int    // number of FUNC records
	FuncStart uint64 // address of the first FUNC
	FuncEnd   uint64 // end of the last FUNC
}

// Write writes a symbol file of about size bytes (at least size, give or
// take the writer's 64 KiB buffer) to w, using seed for all random choices.
func Write(w io.Writer, size int64, seed uint64) (Info, error) {
	cw := &countingWriter{w: w}
	sw := symfile.NewWriter(cw)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	sw.WriteModule(symfile.Module{OS: "Linux", Arch: "x86_64", ID: "0123456789ABCDEF0123456789ABCDEF0", Name: "libbig.so"})
	sw.WriteCodeID(symfile.CodeID{ID: "efcdab8967452301efcdab8967452301"})
	const nFiles, nOrigins = 4000, 20000
	for i := range nFiles {
		sw.WriteFile(symfile.File{Number: uint32(i), Name: fmt.Sprintf("/build/src/component%d/module%d/file_%d.cc", i%37, i%101, i)})
	}
	for i := range nOrigins {
		sw.WriteInlineOrigin(symfile.InlineOrigin{ID: uint32(i), Name: fmt.Sprintf("ns%d::Class%d::inlined_method_%d(int, char const*)", i%13, i%211, i)})
	}
	// Functions take 85% of the bytes, CFI the rest; PUBLICs are sprinkled in.
	funcBytes := size * 85 / 100
	info := Info{FuncStart: 0x10000}
	addr := info.FuncStart
	var cfi []symfile.Range
	var ranges [4]symfile.Range
	for cw.n < funcBytes {
		fsize := uint64(0x40 + r.IntN(0x400))
		sw.WriteFunc(symfile.Func{Address: addr, Size: fsize, ParamSize: 0, Name: fmt.Sprintf("ns%d::Class%d::method_%d(std::vector<int, std::allocator<int> > const&, unsigned long)", r.IntN(50), r.IntN(5000), info.Funcs)})
		// A few inlined calls, nested two deep.
		for d := 0; d < 2 && r.IntN(2) == 0; d++ {
			off := uint64(8 * (d + 1))
			ranges[0] = symfile.Range{Address: addr + off, Size: fsize / 4}
			sw.WriteInline(symfile.Inline{Depth: uint32(d), CallLine: uint32(1 + r.IntN(3000)), CallFile: int32(r.IntN(nFiles)), HasCallFile: true, Origin: uint32(r.IntN(nOrigins)), Ranges: ranges[:1]})
		}
		file := uint32(r.IntN(nFiles))
		line := int64(1 + r.IntN(5000))
		for a := addr; a < addr+fsize; {
			n := uint64(1 + r.IntN(12))
			if a+n > addr+fsize {
				n = addr + fsize - a
			}
			sw.WriteLine(symfile.Line{Address: a, Size: n, Line: line, File: file})
			line += int64(r.IntN(4)) - 1
			if line < 1 {
				line = 1
			}
			a += n
		}
		if r.IntN(8) == 0 {
			sw.WritePublic(symfile.Public{Address: addr, Name: fmt.Sprintf("_ZN2ns5Class6methodEv%d", info.Funcs)})
		}
		cfi = append(cfi, symfile.Range{Address: addr, Size: fsize})
		info.Funcs++
		addr += fsize + uint64(r.IntN(16))
	}
	info.FuncEnd = addr
	for i := 0; cw.n < size; i++ {
		c := cfi[i%len(cfi)]
		// Past the functions' own entries, describe more code above them.
		c.Address += uint64(i/len(cfi)) * (addr - info.FuncStart)
		sw.WriteCFIInit(symfile.CFIInit{Address: c.Address, Size: c.Size, Rules: ".cfa: $rsp 8 + .ra: .cfa -8 + ^"})
		sw.WriteCFI(symfile.CFI{Address: c.Address + 1, Rules: ".cfa: $rsp 16 + $rbp: .cfa -16 + ^"})
		sw.WriteCFI(symfile.CFI{Address: c.Address + 4, Rules: ".cfa: $rbp 16 +"})
		sw.WriteCFI(symfile.CFI{Address: c.Address + c.Size - 1, Rules: ".cfa: $rsp 8 +"})
	}
	return info, sw.Flush()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
