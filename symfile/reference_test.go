package symfile

import (
	"bufio"
	"bytes"
	"os"
	"reflect"
	"sort"
	"testing"
)

// refModule is a literal, slow model of Breakpad's BasicSourceLineResolver
// module: records stored in file order into maps that behave like Breakpad's
// RangeMap (exclusive), AddressMap and std::map, with linear searches. The
// differential test below checks Table against it on the corpus.
type refModule struct {
	files   map[uint32]string
	funcs   []refFunc // accepted, file order
	publics map[uint64]Public
	inits   []CFIInit
	deltas  map[uint64]string
	wins    [5][]StackWin // by type, accepted (ContainedRangeMap), file order
}

type refFunc struct {
	Func
	lines []Line
}

func overlaps(a0, s0, a1, s1 uint64) bool { return a0 <= a1+s1-1 && a1 <= a0+s0-1 }

func validRange(a, s uint64) bool { return s != 0 && a+s-1 >= a }

func loadRef(data []byte) *refModule {
	m := &refModule{files: map[uint32]string{}, publics: map[uint64]Public{}, deltas: map[uint64]string{}}
	var cur *refFunc
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if len(b) == 0 {
			continue
		}
		s := string(b)
		switch {
		case hasPrefix(b, "FILE "):
			if n, name, msg := parseFileLine(b); msg == "" {
				if _, ok := m.files[n]; !ok {
					m.files[n] = s[name:]
				}
			}
		case hasPrefix(b, "FUNC "):
			cur = nil
			f, msg := parseFuncLine(b)
			if msg != "" {
				continue
			}
			rf := &refFunc{Func: Func{Multiple: f.multiple, Address: f.addr, Size: f.size, ParamSize: f.param, Name: s[f.name:]}}
			cur = rf
			if !validRange(f.addr, f.size) {
				continue
			}
			ok := true
			for _, g := range m.funcs {
				if overlaps(g.Address, g.Size, f.addr, f.size) {
					ok = false
					break
				}
			}
			if ok {
				m.funcs = append(m.funcs, *rf)
				cur = &m.funcs[len(m.funcs)-1]
			}
		case hasPrefix(b, "PUBLIC "):
			cur = nil
			p, msg := parsePublicLine(b)
			if msg != "" || p.addr == 0 {
				continue
			}
			if _, ok := m.publics[p.addr]; !ok {
				m.publics[p.addr] = Public{Multiple: p.multiple, Address: p.addr, ParamSize: p.param, Name: s[p.name:]}
			}
		case isCFILine(b):
			kind, c, msg := parseCFILine(b)
			if msg != "" {
				continue
			}
			if kind == stackCFI {
				m.deltas[c.addr] = s[c.rules:]
				continue
			}
			if !validRange(c.addr, c.size) {
				continue
			}
			ok := true
			for _, g := range m.inits {
				if overlaps(g.Address, g.Size, c.addr, c.size) {
					ok = false
					break
				}
			}
			if ok {
				m.inits = append(m.inits, CFIInit{Address: c.addr, Size: c.size, Rules: s[c.rules:]})
			}
		case hasPrefix(b, "STACK ") && stackWordIs(b, "WIN"):
			_, e := stackWord(b)
			w, prog, msg := parseStackWin(b, e)
			if msg != "" || !validRange(uint64(w.RVA), uint64(w.CodeSize)) {
				continue
			}
			if w.HasProgramString {
				w.ProgramString = s[prog:]
			}
			ok := true
			for _, g := range m.wins[w.Type] {
				a0, s0, a1, s1 := uint64(g.RVA), uint64(g.CodeSize), uint64(w.RVA), uint64(w.CodeSize)
				if !overlaps(a0, s0, a1, s1) {
					continue
				}
				inner := a0 <= a1 && a1+s1 <= a0+s0
				outer := a1 <= a0 && a0+s0 <= a1+s1
				if (a0 == a1 && s0 == s1) || (!inner && !outer) {
					ok = false
					break
				}
			}
			if ok {
				m.wins[w.Type] = append(m.wins[w.Type], w)
			}
		case hasPrefix(b, "MODULE "), hasPrefix(b, "INFO "), hasPrefix(b, "INLINE "), hasPrefix(b, "INLINE_ORIGIN "), hasPrefix(b, "STACK "):
		default:
			if cur == nil {
				continue
			}
			l, msg := parseLineRecord(b)
			if msg != "" || !validRange(l.Address, l.Size) {
				continue
			}
			ok := true
			for _, g := range cur.lines {
				if overlaps(g.Address, g.Size, l.Address, l.Size) {
					ok = false
					break
				}
			}
			if ok {
				cur.lines = append(cur.lines, l)
			}
		}
	}
	return m
}

// lookup follows BasicSourceLineResolver::LookupAddress (without inlines).
func (m *refModule) lookup(a uint64) (Symbol, bool) {
	var near *refFunc
	for i := range m.funcs {
		f := &m.funcs[i]
		if f.Address <= a && (near == nil || f.Address > near.Address) {
			near = f
		}
	}
	if near != nil && a-near.Address < near.Size {
		sym := Symbol{Name: near.Name, Address: near.Address, Size: near.Size, ParamSize: near.ParamSize, Multiple: near.Multiple}
		for _, l := range near.lines {
			if l.Address <= a && a-l.Address < l.Size {
				sym.HasLine, sym.Line, sym.LineAddress, sym.File = true, l.Line, l.Address, m.files[l.File]
			}
		}
		return sym, true
	}
	var best *Public
	for _, p := range m.publics {
		if p.Address <= a && (best == nil || p.Address > best.Address) {
			p := p
			best = &p
		}
	}
	if best == nil || (near != nil && best.Address <= near.Address) {
		return Symbol{}, false
	}
	return Symbol{Name: best.Name, Address: best.Address, ParamSize: best.ParamSize, Multiple: best.Multiple, Public: true}, true
}

// cfi follows FindCFIFrameInfo: the covering INIT, then the global deltas
// from its address up to a.
func (m *refModule) cfi(a uint64) (CFIRules, bool) {
	for _, c := range m.inits {
		if c.Address <= a && a-c.Address < c.Size {
			r := CFIRules{Address: c.Address, Size: c.Size, Init: c.Rules}
			var addrs []uint64
			for d := range m.deltas {
				if d >= c.Address && d <= a {
					addrs = append(addrs, d)
				}
			}
			sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
			for _, d := range addrs {
				r.Deltas = append(r.Deltas, CFI{Address: d, Rules: m.deltas[d]})
			}
			return r, true
		}
	}
	return CFIRules{}, false
}

// win follows FindWindowsFrameInfo: innermost FrameData, else innermost FPO.
func (m *refModule) win(a uint64) (StackWin, bool) {
	for _, typ := range []WinType{WinFrameData, WinFPO} {
		var best *StackWin
		for i := range m.wins[typ] {
			w := &m.wins[typ][i]
			if uint64(w.RVA) <= a && a-uint64(w.RVA) < uint64(w.CodeSize) && (best == nil || w.CodeSize < best.CodeSize) {
				best = w
			}
		}
		if best != nil {
			return *best, true
		}
	}
	return StackWin{}, false
}

// TestAgainstReference compares Table's lookups with the literal model at
// the edges of every record of the corpus's smaller symbol files.
func TestAgainstReference(t *testing.T) {
	var files, probes int
	for _, p := range corpusSymFiles(t) {
		if st, err := os.Stat(p); err != nil || st.Size() > 1<<20 {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tab, _ := Parse(data)
		ref := loadRef(data)
		var addrs []uint64
		edges := func(a, s uint64) { addrs = append(addrs, a-1, a, a+1, a+s/2, a+s-1, a+s) }
		for _, f := range ref.funcs {
			edges(f.Address, f.Size)
			for _, l := range f.lines {
				edges(l.Address, l.Size)
			}
		}
		for _, pb := range ref.publics {
			edges(pb.Address, 1)
		}
		for _, c := range ref.inits {
			edges(c.Address, c.Size)
		}
		for d := range ref.deltas {
			edges(d, 1)
		}
		for _, ws := range ref.wins {
			for _, w := range ws {
				edges(uint64(w.RVA), uint64(w.CodeSize))
			}
		}
		// Probe a deterministic sample: the model is linear per lookup.
		if step := len(addrs) / 400; step > 1 {
			for i := range len(addrs) / step {
				addrs[i] = addrs[i*step]
			}
			addrs = addrs[:len(addrs)/step]
		}
		bad := 0
		for _, a := range addrs {
			probes++
			got, ok := tab.Lookup(a)
			got.Inlines = nil
			want, wok := ref.lookup(a)
			if ok != wok || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Lookup(%#x) = %+v, %v; reference %+v, %v", p, a, got, ok, want, wok)
				bad++
			}
			gc, ok := tab.CFIRules(a)
			wc, wok := ref.cfi(a)
			if ok != wok || !reflect.DeepEqual(gc, wc) {
				t.Errorf("%s: CFIRules(%#x) = %+v, %v; reference %+v, %v", p, a, gc, ok, wc, wok)
				bad++
			}
			gw, ok := tab.StackWin(a)
			ww, wok := ref.win(a)
			if ok != wok || gw != ww {
				t.Errorf("%s: StackWin(%#x) = %+v, %v; reference %+v, %v", p, a, gw, ok, ww, wok)
				bad++
			}
			if bad > 5 {
				break
			}
		}
		files++
	}
	t.Logf("%d addresses in %d files agree with the reference model", probes, files)
}

func stackWordIs(b []byte, w string) bool {
	got, _ := stackWord(b)
	return got == w
}
