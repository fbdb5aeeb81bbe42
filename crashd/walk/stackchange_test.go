package walk

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

func stackOf(sig string, fns ...string) *crash.ProcessedCrash {
	var fr []string
	for i, f := range fns {
		if f == "" {
			fr = append(fr, fmt.Sprintf(`{"module":"m.so","module_offset":"0x%016x","offset":"0x1"}`, i))
			continue
		}
		fr = append(fr, fmt.Sprintf(`{"module":"m.so","function":%q,"function_offset":"0x0000000000000004","offset":"0x1"}`, f))
	}
	ct := 1
	return &crash.ProcessedCrash{Signature: sig, CrashingThread: &ct,
		JSONDump: json.RawMessage(`{"threads":[{"frames":[]},{"frames":[` + strings.Join(fr, ",") + `]}]}`)}
}

// TestCompareStacks: the whole crashing thread is compared; the frames
// kept are the top ones, or those around a deep first difference.
func TestCompareStacks(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	a := stackOf("a", "", "g", "h")
	b := stackOf("f", "f", "g", "h")
	c, err := CompareStacks(a, b, at)
	if err != nil || c == nil || c.FirstDifference != 0 || c.PreviousSignature != "a" || c.Signature != "f" || c.FirstSignature != "a" ||
		strings.Join(c.PreviousFrames, " ") != "m.so+0x0 m.so!g+0x4 m.so!h+0x4" || strings.Join(c.Frames, " ") != "m.so!f+0x4 m.so!g+0x4 m.so!h+0x4" {
		t.Fatalf("%+v %v", c, err)
	}
	if c, err := CompareStacks(b, stackOf("f", "f", "g", "h"), at); c != nil || err != nil {
		t.Errorf("same stack: %+v %v", c, err)
	}
	// A change kept through an unchanged reprocess.
	b.StackChange = &crash.StackChange{Signature: "kept"}
	if c, _ := CompareStacks(b, stackOf("f", "f", "g", "h"), at); c == nil || c.Signature != "kept" {
		t.Errorf("kept change: %+v", c)
	}
	deep := make([]string, 30)
	for i := range deep {
		deep[i] = fmt.Sprintf("f%d", i)
	}
	changed := append([]string(nil), deep...)
	changed[20] = "other"
	c, _ = CompareStacks(stackOf("s", deep...), stackOf("s", changed...), at)
	if c == nil || c.FirstDifference != 20 || c.FramesFrom != 18 || len(c.Frames) != crash.MaxChangeFrames || c.Frames[2] != "m.so!other+0x4" {
		t.Errorf("deep change: %+v", c)
	}
	// Changes in a row keep the first signature.
	b2 := stackOf("f2", "f2", "g", "h")
	b.StackChange = &crash.StackChange{Signature: "f", FirstSignature: "a"}
	if c, _ := CompareStacks(b, b2, at); c == nil || c.FirstSignature != "a" || c.PreviousSignature != "f" || c.Signature != "f2" {
		t.Errorf("second change: %+v", c)
	}
	// No walk before: a stack now is a change.
	if c, _ := CompareStacks(&crash.ProcessedCrash{}, b, at); c == nil || len(c.PreviousFrames) != 0 {
		t.Errorf("from no walk: %+v", c)
	}
	if _, err := CompareStacks(&crash.ProcessedCrash{JSONDump: json.RawMessage(`{`)}, b, at); err == nil {
		t.Error("bad json_dump: no error")
	}
}

// BenchmarkCompareStacks: what a reprocess adds to a crash's processing
// (both json_dumps read again) for a crashing thread of 200 frames.
func BenchmarkCompareStacks(b *testing.B) {
	fns := make([]string, 200)
	for i := range fns {
		fns[i] = fmt.Sprintf("ns::Class::method%d(int, char const*)", i)
	}
	prev, cur := stackOf("a", fns...), stackOf("a", fns...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CompareStacks(prev, cur, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}
