package cfi

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/internal/testkit/corpus"
)

var amd64Names = []string{"$rax", "$rdx", "$rcx", "$rbx", "$rsi", "$rdi", "$rbp", "$rsp",
	"$r8", "$r9", "$r10", "$r11", "$r12", "$r13", "$r14", "$r15", "$rip"}

var x86Names = []string{"$eax", "$ecx", "$edx", "$ebx", "$esp", "$ebp", "$esi", "$edi", "$eip",
	".cbCalleeParams", ".cbSavedRegs", ".cbLocals", ".cbParams", ".raSearchStart", ".raSearch"}

// A typical amd64 frame: INIT rules plus two deltas, as symfile hands them
// over, with $rbx and $rbp saved.
const (
	benchInit   = ".cfa: $rsp 8 + .ra: .cfa -8 + ^"
	benchDelta1 = ".cfa: $rsp 16 + $rbp: .cfa -16 + ^"
	benchDelta2 = ".cfa: $rsp 24 + $rbx: .cfa -24 + ^"
)

func benchFrame(b *testing.B) (*Evaluator, Registers, Memory) {
	ev := mustEvaluator(b, 8, amd64Names...)
	var regs Registers
	for i := range amd64Names {
		regs.Set(i, 0x7fff0000+0x100*uint64(i)) // all pointing into the stack
	}
	rsp, _ := ev.Index("$rsp")
	regs.Set(rsp, 0x7fff0000)
	words := make([]uint64, 1024) // 8 KiB of stack above $rsp
	for i := range words {
		words[i] = 0x7fff0000 + uint64(i)*16
	}
	return ev, regs, newStack(0x7fff0000, 8, words...)
}

// BenchmarkFindCallerRegs is the hot path of one CFI frame with a warm
// cache: look the rule set up by its texts and evaluate it.
func BenchmarkFindCallerRegs(b *testing.B) {
	ev, callee, mem := benchFrame(b)
	var caller Registers
	b.ReportAllocs()
	for b.Loop() {
		rs, err := ev.RuleSet(benchInit, benchDelta1, benchDelta2)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := rs.FindCallerRegs(&callee, mem, &caller); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindCallerRegsEvalOnly is the evaluation alone.
func BenchmarkFindCallerRegsEvalOnly(b *testing.B) {
	ev, callee, mem := benchFrame(b)
	rs, err := ev.RuleSet(benchInit, benchDelta1, benchDelta2)
	if err != nil {
		b.Fatal(err)
	}
	var caller Registers
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := rs.FindCallerRegs(&callee, mem, &caller); err != nil {
			b.Fatal(err)
		}
	}
}

const benchWin = "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + = $L $T0 .cbSavedRegs - = $P $T0 8 + .cbParams + = $ebx $T0 28 - ^ ="

// BenchmarkProgramRun is one STACK WIN frame with a warm cache.
func BenchmarkProgramRun(b *testing.B) {
	ev := mustEvaluator(b, 4, x86Names...)
	var callee Registers
	set(b, ev, &callee, map[string]uint64{"$ebp": 0x1020, "$esp": 0x1000, ".cbSavedRegs": 4, ".cbParams": 8})
	mem := newStack(0x1000, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	b.ReportAllocs()
	for b.Loop() {
		p, err := ev.Program(benchWin)
		if err != nil {
			b.Fatal(err)
		}
		regs := callee
		if _, err := p.Run(&regs, mem); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileRuleSet compiles a distinct STACK CFI INIT rule text per
// iteration (a cold cache): the cost per distinct rule text.
func BenchmarkCompileRuleSet(b *testing.B) {
	ev := mustEvaluator(b, 8, amd64Names...)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		n := strconv.Itoa(i)
		i++
		if _, err := ev.RuleSet(".cfa: $rsp " + n + " + .ra: .cfa -8 + ^ $rbp: .cfa -" + n + " + ^"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileProgram compiles a distinct STACK WIN program per
// iteration.
func BenchmarkCompileProgram(b *testing.B) {
	ev := mustEvaluator(b, 4, x86Names...)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := ev.Program(benchWin + " $T1 " + strconv.Itoa(i) + " ="); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// libcSym is the symbol file of Debian 12's x86-64 libc in the corpus.
const libcSym = "generated/syslib-symbols/libc.so.6/EC61AC938E5A39B16F9FBD350E3169A50/libc.so.6.sym"

// BenchmarkCompileCorpusRules compiles, with a cold cache, every distinct
// STACK CFI rule text of a real libc symbol file from the shared corpus,
// and reports the cost per distinct text.
func BenchmarkCompileCorpusRules(b *testing.B) {
	path := corpus.File(b, libcSym)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	seen := map[string]bool{}
	var texts []string
	for _, line := range strings.Split(string(data), "\n") {
		n := 0
		switch {
		case strings.HasPrefix(line, "STACK CFI INIT "):
			n = 5
		case strings.HasPrefix(line, "STACK CFI "):
			n = 3
		default:
			continue
		}
		if t, ok := afterFields(line, n); ok && !seen[t] {
			seen[t] = true
			texts = append(texts, t)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		ev := mustEvaluator(b, 8, amd64Names...)
		for _, t := range texts {
			if _, err := ev.RuleSet(t); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(texts)), "µs/text")
	b.ReportMetric(float64(len(texts)), "texts")
}

// corpusFrames returns the rule texts in force at the end of the first n
// STACK CFI INIT records of a real libc symbol file: what a walk of n
// frames through it would compile and evaluate.
func corpusFrames(b *testing.B, n int) [][]string {
	path := corpus.File(b, libcSym)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var frames [][]string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "STACK CFI INIT ") {
			if len(frames) == n {
				break
			}
			t, _ := afterFields(line, 5)
			frames = append(frames, []string{t})
		} else if strings.HasPrefix(line, "STACK CFI ") && len(frames) > 0 {
			t, _ := afterFields(line, 3)
			frames[len(frames)-1] = append(frames[len(frames)-1], t)
		}
	}
	if len(frames) < n {
		b.Fatalf("only %d STACK CFI INIT records", len(frames))
	}
	return frames
}

// BenchmarkWalk30Cold is the CFI cost of a 30-frame walk through libc with
// a cold cache: every frame's rule texts compiled, then evaluated.
func BenchmarkWalk30Cold(b *testing.B) { benchmarkWalk(b, true) }

// BenchmarkWalk30Warm is the same walk with a warm cache.
func BenchmarkWalk30Warm(b *testing.B) { benchmarkWalk(b, false) }

func benchmarkWalk(b *testing.B, cold bool) {
	frames := corpusFrames(b, 30)
	_, callee, mem := benchFrame(b)
	var caller Registers
	ev := mustEvaluator(b, 8, amd64Names...)
	b.ReportAllocs()
	for b.Loop() {
		if cold {
			ev = mustEvaluator(b, 8, amd64Names...)
		}
		for _, texts := range frames {
			rs, err := ev.RuleSet(texts...)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := rs.FindCallerRegs(&callee, mem, &caller); err != nil && rs.Err() == nil {
				b.Fatal(err)
			}
		}
	}
}
