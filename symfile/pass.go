package symfile

import (
	"bytes"
	"math"
	"runtime"
	"slices"
	"sync"
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
	funcs     []span // aux: index in funcBody
	funcBody  []body
	publics   []public
	cfi       []span  // aux: end of the block of delta records directly after the INIT
	deltas    []delta // delta records outside such blocks or outside their INIT's range
	win       [2][]span

	// release, when set, gives back the pages of data already parsed (see
	// releaseStep); released is how far that has gone.
	release  func([]byte)
	released int

	errs       []*SyntaxError
	numErrs    int
	numCorrupt int
	lines      int // lines in the chunk
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
	var (
		lineNo int
		// curFunc is the index in ps.funcs of the FUNC owning line records;
		// -2: a FUNC not stored; -1: none; -3: not known, this chunk starts
		// inside the file (a child record then makes the chunk fail).
		curFunc = ps.startFunc
		curCFI  = -1 // index in ps.cfi of the STACK CFI INIT whose delta records may follow
		cfiLine int  // line number of the last STACK CFI record
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
		ps.lines = lineNo
		start := off
		if (curFunc >= 0 || curFunc == -2) && hexVal[data[off]] != 0xff {
			if addr, size, end, next, ok := lineRecordAt(data[:ps.hi], off); ok {
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
				curFunc = len(ps.funcs)
				s.aux = uint32(len(ps.funcBody))
				ps.funcs = append(ps.funcs, s)
				ps.funcBody = append(ps.funcBody, body{end: uint32(end), ordered: true, inlLo: math.MaxUint32})
				bt = bodyTracker{b: &ps.funcBody[len(ps.funcBody)-1], base: f.addr}
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
						curCFI = -1
						if s, ok := makeSpan(c.addr, c.size, uint32(start), uint32(end)); ok {
							curCFI = len(ps.cfi)
							ps.cfi = append(ps.cfi, s)
						}
						cfiLine = lineNo
					case curCFI >= 0 && cfiLine == lineNo-1:
						// A delta in the block after its INIT record. Those
						// outside the INIT's range may apply to other INIT
						// records, as Breakpad keeps all deltas in one map.
						ps.cfi[curCFI].aux = uint32(end)
						cfiLine = lineNo
						if !ps.cfi[curCFI].contains(c.addr) {
							ps.deltas = append(ps.deltas, delta{addr: c.addr, off: uint32(start)})
						}
					default:
						ps.deltas = append(ps.deltas, delta{addr: c.addr, off: uint32(start)})
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
						ps.win[k] = append(ps.win[k], s)
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
				// Breakpad ignores PUBLIC records at address 0 (seen in ntdll).
				if p.addr != 0 {
					ps.publics = append(ps.publics, public{addr: p.addr, off: uint32(start)})
				}
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
	if !slices.IsSortedFunc(ps.deltas, compareDelta) {
		slices.SortFunc(ps.deltas, compareDelta)
	}
	return true
}

// parallelMin is the size from which a file is parsed in two chunks at once.
const parallelMin = 4 << 20

// splitPoint returns the start of the first line at or after the middle of
// data that begins a FUNC, PUBLIC, STACK CFI INIT or STACK WIN record, or 0.
// (A STACK CFI delta record would belong to the INIT record before it.)
func splitPoint(data []byte) int {
	for off := len(data) / 2; off < len(data); {
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
const releaseStep = 4 << 20

// passes parses data, in two chunks at once when it has at least
// parallelMin bytes and there is more than one CPU, and returns the chunks'
// passes in order. A non-nil release is called on parsed parts of data (see
// pass).
func passes(data []byte, parallelMin int, release func([]byte)) []*pass {
	if len(data) >= parallelMin && runtime.GOMAXPROCS(0) > 1 {
		if mid := splitPoint(data); mid > 0 {
			ps := []*pass{
				{data: data, lo: 0, hi: mid, startFunc: -1, release: release},
				{data: data, lo: mid, hi: len(data), startFunc: -3, release: release},
			}
			var ok1 bool
			var wg sync.WaitGroup
			wg.Go(func() { ok1 = ps[1].run() })
			ps[0].run()
			wg.Wait()
			if ok1 {
				return ps
			}
		}
	}
	ps := &pass{data: data, lo: 0, hi: len(data), startFunc: -1, release: release}
	ps.run()
	return []*pass{ps}
}
