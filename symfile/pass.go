package symfile

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// pass is the streaming pass over one chunk of a symbol file, collecting
// records in file order. A file is cut into chunks only at lines that start
// a FUNC, PUBLIC or STACK record, so that a chunk's records do not depend on
// the one before, except for line and INLINE records before the chunk's
// first FUNC or PUBLIC; a chunk meeting one of those gives up (run returns
// false) and the file is parsed in one pass instead.
type pass struct {
	data      []byte
	lo, hi    int // the chunk
	startFunc int // -1 for the first chunk, -3 for others

	module    Module
	hasModule bool
	codeID    CodeID
	hasCodeID bool
	infos     []Info
	files     []named
	origins   []named
	funcs     blocks[span] // aux: index in funcBody
	funcBody  blocks[body]
	publics   blocks[public]
	cfi       blocks[span] // aux: end of the block of delta records directly after the INIT
	deltas    []delta      // delta records outside such blocks or outside their INIT's range
	win       [2]blocks[span]

	// The STACK CFI INIT record whose delta records may follow (nil: none)
	// and the line number of the last STACK CFI record.
	curCFI  *span
	cfiLine int

	// release, when set, gives back the pages of data already parsed (see
	// releaseStep); released is how far that has gone.
	release  func([]byte)
	released int

	errs       []*SyntaxError
	numErrs    int
	numCorrupt int
	lines      int // lines in the chunk

	// skim, when set, makes the pass skip every line starting with
	// "STACK " (records that lookups never read), noting the runs of such
	// lines in stack for a later pass over them alone (see lazyStack).
	skim  bool
	stack []stackRun
}

// stackRun is a run of consecutive lines starting with "STACK " in
// data[lo:hi]; line is the number of its first line (in its chunk during
// the pass, in the file once the chunks are joined).
type stackRun struct {
	lo, hi, line int
}

// stackPrefix reports whether d[i:] starts with "STACK ".
func stackPrefix(d []byte, i int) bool {
	const stac = 'S' | 'T'<<8 | 'A'<<16 | 'C'<<24
	return len(d)-i >= 6 && binary.LittleEndian.Uint32(d[i:]) == stac && d[i+4] == 'K' && d[i+5] == ' '
}

// skipStack skips the run of lines starting with "STACK " at d[off:] (the
// first of which is line lineNo and starts there), notes it, and returns
// the start of the line after it and the run's last line number.
func (ps *pass) skipStack(d []byte, off, lineNo int) (int, int) {
	lo, first := off, lineNo
	for {
		// Up to the next point where pages are given back.
		stop := len(d)
		if ps.release != nil {
			stop = min(stop, ps.released+releaseStep)
		}
		var n int
		var more bool
		off, n, more = stackLines(d, off, stop)
		lineNo += n
		if ps.release != nil && off-ps.released >= releaseStep {
			ps.release(ps.data[ps.released:off])
			ps.released = off
		}
		if !more {
			break
		}
	}
	ps.stack = append(ps.stack, stackRun{lo: lo, hi: off, line: first})
	return off, lineNo
}

// stackLines skips lines starting with "STACK " from d[off:], which is one,
// up to the first line that does not or the first line start at or after
// stop. It returns where it stopped, how many lines after the first it
// skipped, and whether it stopped at stop at the start of a line that
// remains to be looked at. It is the indexing pass's innermost loop when
// STACK records are skipped: one line-end search and one prefix check a
// line. (Finding the line ends eight bytes at a time with bit tricks,
// without a call per line, took as much time and more instructions.)
func stackLines(d []byte, off, stop int) (next, lines int, more bool) {
	for {
		// The line's first 6 bytes are "STACK ", without a line end.
		i := bytes.IndexByte(d[off+6:], '\n')
		if i < 0 {
			return len(d), lines, false
		}
		off += 6 + i + 1
		if !stackPrefix(d, off) {
			return off, lines, false
		}
		lines++
		if off >= stop {
			return off, lines, true
		}
	}
}

func (ps *pass) fail(line int, msg string, counts bool) {
	ps.numErrs++
	if counts {
		ps.numCorrupt++
	}
	if len(ps.errs) < maxErrors {
		ps.errs = append(ps.errs, &SyntaxError{Line: line, Msg: msg})
	}
}

// run parses the chunk; see pass.
func (ps *pass) run() bool {
	data := ps.data
	d := data[:ps.hi]
	var (
		lineNo int
		// curFunc is the index in ps.funcs of the FUNC owning line records;
		// -2: a FUNC not stored; -1: none; -3: not known, this chunk starts
		// inside the file (a child record then makes the chunk fail).
		curFunc = ps.startFunc
		inl     Inline
		bt      bodyTracker
	)
	ps.released = ps.lo
	for off := ps.lo; off < ps.hi; {
		if ps.release != nil && off-ps.released >= releaseStep {
			ps.release(data[ps.released:off])
			ps.released = off
		}
		lineNo++
		start := off
		// Fast paths for the commonest records in the form every writer
		// uses; anything else (and every malformed line) takes the general
		// path below, which gives the same result.
		switch c := data[off]; {
		case c == 'S':
			if ps.skim && stackPrefix(d, off) {
				off, lineNo = ps.skipStack(d, off, lineNo)
				continue
			}
			if kind, addr, size, end, next, ok := cfiAt(d, off); ok {
				if kind == stackCFIInit {
					ps.cfiInit(addr, size, start, end, lineNo)
				} else {
					ps.cfiDelta(addr, start, end, lineNo)
				}
				off = next
				continue
			}
		case c == 'P':
			if addr, _, next, ok := publicAt(d, off); ok {
				curFunc = -1 // PUBLIC records end a function's line records
				ps.public(addr, start)
				off = next
				continue
			}
		case (curFunc >= 0 || curFunc == -2) && hexVal[c] != 0xff:
			if addr, size, end, next, ok := lineRecordAt(d, off); ok {
				if curFunc >= 0 {
					bt.line(start, end, next, addr, size)
				}
				off = next
				continue
			}
		}
		end := ps.hi
		if i := bytes.IndexByte(data[off:ps.hi], '\n'); i >= 0 {
			end = off + i
			off = end + 1
		} else {
			off = end
		}
		b := data[start:end]
		for len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
			end--
		}
		if len(b) == 0 {
			continue
		}
		switch b[0] {
		case 'F':
			if hasPrefix(b, "FUNC ") {
				f, msg := parseFuncLine(b)
				if msg != "" {
					ps.fail(lineNo, msg, true)
					curFunc = -1
					continue
				}
				s, ok := makeSpan(f.addr, f.size, uint32(start), uint32(end))
				if !ok {
					curFunc = -2
					continue
				}
				curFunc = ps.funcs.n
				s.aux = uint32(ps.funcBody.n)
				ps.funcs.add(s)
				ps.funcBody.add(body{end: uint32(end), ordered: true, inlLo: math.MaxUint32})
				bt = bodyTracker{b: ps.funcBody.last(), base: f.addr}
				continue
			}
			if hasPrefix(b, "FILE ") {
				num, name, msg := parseFileLine(b)
				if msg != "" {
					ps.fail(lineNo, msg, true)
					continue
				}
				ps.files = append(ps.files, named{id: num, off: uint32(start + name), n: uint32(len(b) - name)})
				continue
			}
		case 'S':
			if hasPrefix(b, "STACK ") {
				sk, we := stackWord(b)
				switch sk {
				case "CFI":
					kind, c, msg := parseStackCFI(b, we)
					switch {
					case msg != "":
						ps.fail(lineNo, msg, true)
					case kind == stackCFIInit:
						ps.cfiInit(c.addr, c.size, start, end, lineNo)
					default:
						ps.cfiDelta(c.addr, start, end, lineNo)
					}
				case "WIN":
					w, _, msg := parseStackWin(b, we)
					if msg != "" {
						ps.fail(lineNo, msg, true)
						continue
					}
					k := -1
					switch w.Type {
					case WinFrameData:
						k = 0
					case WinFPO:
						k = 1
					}
					if s, ok := makeSpan(uint64(w.RVA), uint64(w.CodeSize), uint32(start), 0); ok && k >= 0 {
						ps.win[k].add(s)
					}
				default:
					ps.fail(lineNo, "STACK: unknown kind", true)
				}
				continue
			}
		case 'P':
			if hasPrefix(b, "PUBLIC ") {
				curFunc = -1 // PUBLIC records end a function's line records
				p, msg := parsePublicLine(b)
				if msg != "" {
					ps.fail(lineNo, msg, true)
					continue
				}
				ps.public(p.addr, start)
				continue
			}
		case 'M':
			if hasPrefix(b, "MODULE ") {
				if !ps.hasModule {
					m, ok := parseModuleLine(b)
					if !ok {
						ps.fail(lineNo, "MODULE: malformed", true)
						continue
					}
					ps.module, ps.hasModule = m, true
				}
				continue
			}
		case 'I':
			if hasPrefix(b, "INFO ") {
				ps.parseInfo(b)
				continue
			}
			if hasPrefix(b, "INLINE ") {
				if curFunc == -3 {
					return false
				}
				if curFunc == -1 {
					ps.fail(lineNo, "INLINE: no FUNC before it", false)
					continue
				}
				inl.Ranges = inl.Ranges[:0]
				if msg := parseInlineLine(b, &inl); msg != "" {
					ps.fail(lineNo, msg, false)
					continue
				}
				if curFunc >= 0 {
					bt.inline(end, off, inl.Ranges)
				}
				continue
			}
			if hasPrefix(b, "INLINE_ORIGIN ") {
				o, msg := parseInlineOriginLine(b)
				if msg != "" {
					ps.fail(lineNo, msg, false)
					continue
				}
				ps.origins = append(ps.origins, named{id: o.id, off: uint32(start + o.name), n: uint32(len(b) - o.name)})
				continue
			}
		}
		// Anything else is a line record of the current function.
		if curFunc == -3 {
			return false
		}
		if curFunc == -1 {
			ps.fail(lineNo, "line record: no FUNC before it", true)
			continue
		}
		l, msg := parseLineRecord(b)
		if msg != "" {
			ps.fail(lineNo, msg, true)
			continue
		}
		if curFunc >= 0 {
			bt.line(start, end, off, l.Address, l.Size)
		}
	}
	ps.lines = lineNo
	if ps.release != nil {
		ps.release(data[ps.released:ps.hi])
		ps.released = ps.hi
	}
	if !slices.IsSortedFunc(ps.deltas, compareDelta) {
		slices.SortFunc(ps.deltas, compareDelta)
	}
	// Each block of STACK CFI INIT records is sorted here, so that the
	// chunks sort at the same time; parse merges the blocks.
	for _, b := range append(ps.cfi.full, ps.cfi.cur) {
		if !slices.IsSortedFunc(b, byStartThenOrder) {
			slices.SortFunc(b, byStartThenOrder)
		}
	}
	return true
}

// cfiInit records a STACK CFI INIT record.
func (ps *pass) cfiInit(addr, size uint64, start, end, lineNo int) {
	ps.curCFI = nil
	if s, ok := makeSpan(addr, size, uint32(start), uint32(end)); ok {
		ps.cfi.add(s)
		ps.curCFI = ps.cfi.last()
	}
	ps.cfiLine = lineNo
}

// cfiDelta records a STACK CFI delta record.
func (ps *pass) cfiDelta(addr uint64, start, end, lineNo int) {
	if c := ps.curCFI; c != nil && ps.cfiLine == lineNo-1 {
		// A delta in the block after its INIT record. Those outside the
		// INIT's range may apply to other INIT records, as Breakpad keeps
		// all deltas in one map.
		c.aux = uint32(end)
		ps.cfiLine = lineNo
		if c.contains(addr) {
			return
		}
	}
	ps.deltas = append(ps.deltas, delta{addr: addr, off: uint32(start)})
}

// public records a PUBLIC record.
func (ps *pass) public(addr uint64, start int) {
	// Breakpad ignores PUBLIC records at address 0 (seen in ntdll).
	if addr != 0 {
		ps.publics.add(public{addr: addr, off: uint32(start)})
	}
}

// parallelMin is the size from which a file is parsed in chunks at once.
const parallelMin = 4 << 20

// chunkMin is the smallest chunk a file is cut into, and chunksPerCPU how
// many chunks a CPU gets (more than one, so that a CPU finishing early takes
// another: the records of a file are not spread evenly).
const (
	chunkMin     = 1 << 20
	chunksPerCPU = 4
)

// splitPoint returns the start of the first line at or after off in data
// that begins a FUNC, PUBLIC, STACK CFI INIT or STACK WIN record, or 0.
// (A STACK CFI delta record would belong to the INIT record before it.)
func splitPoint(data []byte, off int) int {
	for off < len(data) {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return 0
		}
		off += i + 1
		b := data[off:]
		if hasPrefix(b, "FUNC ") || hasPrefix(b, "PUBLIC ") || hasPrefix(b, "STACK CFI INIT ") || hasPrefix(b, "STACK WIN ") {
			return off
		}
	}
	return 0
}

// releaseStep is how many bytes a pass parses between two calls of its
// release function: small enough to keep little of a mapped file resident,
// large enough that the calls cost nothing.
const releaseStep = 1 << 20

// passes parses data in chunks, on all CPUs at once, and returns the
// chunks' passes in order: in as many chunks as asked, or with chunks 0 as
// suits the file (one pass under parallelMin bytes or on one CPU). A
// non-nil release is called on parsed parts of data (see pass); skim makes
// the passes skip STACK records (see pass.skim).
func passes(data []byte, chunks int, release func([]byte), skim bool) []*pass {
	cpus := runtime.GOMAXPROCS(0)
	n := chunks
	if n == 0 {
		n = 1
		if len(data) >= parallelMin && cpus > 1 {
			n = min(cpus*chunksPerCPU, max(2, len(data)/chunkMin))
		}
	}
	if n > 1 {
		ps := []*pass{{data: data, lo: 0, startFunc: -1, release: release, skim: skim}}
		for k := 1; k < n; k++ {
			lo := ps[len(ps)-1].lo
			at := splitPoint(data, max(lo, len(data)/n*k))
			if at <= lo {
				continue
			}
			ps[len(ps)-1].hi = at
			ps = append(ps, &pass{data: data, lo: at, startFunc: -3, release: release, skim: skim})
		}
		ps[len(ps)-1].hi = len(data)
		if len(ps) > 1 && runPasses(ps) {
			return ps
		}
	}
	ps := &pass{data: data, lo: 0, hi: len(data), startFunc: -1, release: release, skim: skim}
	ps.run()
	return []*pass{ps}
}

// runPasses runs the passes on all CPUs at once, each CPU taking the next
// pass not yet taken, and reports whether all of them succeeded (it stops
// taking passes once one has failed).
func runPasses(ps []*pass) bool {
	var next, failed atomic.Int32
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(ps))) {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= len(ps) || failed.Load() != 0 {
					return
				}
				if !ps[k].run() {
					failed.Store(1)
				}
			}
		})
	}
	wg.Wait()
	return failed.Load() == 0
}

// stackPasses parses the runs of STACK records a skimming pass skipped
// (runs, in file order), in chunks on all CPUs when they are large, and
// returns the passes in file order with the file's line number of each
// pass's first line. A pass over STACK records alone never fails.
func stackPasses(data []byte, runs []stackRun, chunks int, release func([]byte)) ([]*pass, []int) {
	total := 0
	for _, r := range runs {
		total += r.hi - r.lo
	}
	step := total
	if chunks > 0 {
		step = total / chunks
	} else if cpus := runtime.GOMAXPROCS(0); total >= parallelMin && cpus > 1 {
		step = max(chunkMin, total/(cpus*chunksPerCPU))
	}
	step = max(step, 1)
	var ps []*pass
	var runOf []int
	for k, r := range runs {
		lo := r.lo
		for lo < r.hi {
			hi := r.hi
			if r.hi-lo > step {
				if at := splitPoint(data[:r.hi], lo+step); at > lo {
					hi = at
				}
			}
			ps = append(ps, &pass{data: data, lo: lo, hi: hi, startFunc: -1, release: release})
			runOf = append(runOf, k)
			lo = hi
		}
	}
	runPasses(ps)
	first := make([]int, len(ps))
	for i := range ps {
		if i == 0 || runOf[i] != runOf[i-1] {
			first[i] = runs[runOf[i]].line
		} else {
			first[i] = first[i-1] + ps[i-1].lines
		}
	}
	return ps, first
}
