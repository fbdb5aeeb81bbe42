package walk

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// stackJSON is what CrashingFrames reads of json_dump.
type stackJSON struct {
	CrashingThread *struct {
		Frames []frameKeyJSON `json:"frames"`
	} `json:"crashing_thread"`
	Threads []struct {
		Frames []frameKeyJSON `json:"frames"`
	} `json:"threads"`
}

type frameKeyJSON struct {
	Module         *string `json:"module"`
	Function       *string `json:"function"`
	FunctionOffset *string `json:"function_offset"`
	ModuleOffset   *string `json:"module_offset"`
	Offset         string  `json:"offset"`
}

func (f frameKeyJSON) key() string {
	mod := ""
	if f.Module != nil {
		mod = *f.Module
	}
	switch {
	case f.Function != nil:
		s := mod + "!" + *f.Function
		if f.FunctionOffset != nil {
			s += "+" + short(*f.FunctionOffset)
		}
		return s
	case f.Module != nil && f.ModuleOffset != nil:
		return mod + "+" + short(*f.ModuleOffset)
	}
	return short(f.Offset)
}

// short drops the leading zeros of a hexadecimal "0x..." offset, as
// Crash Stats shows them.
func short(hex string) string {
	digits, ok := strings.CutPrefix(hex, "0x")
	if !ok {
		return hex
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		digits = "0"
	}
	return "0x" + digits
}

// CrashingFrames returns the frames of pc's crashing thread, each as
// "module!function+offset" (with symbols), "module+0xoffset" (without)
// or its address: the thread at pc.CrashingThread in json_dump's threads,
// else json_dump's crashing_thread. None for a crash without a walk.
func CrashingFrames(pc *crash.ProcessedCrash) ([]string, error) {
	if pc == nil || len(pc.JSONDump) == 0 {
		return nil, nil
	}
	var d stackJSON
	if err := json.Unmarshal(pc.JSONDump, &d); err != nil {
		return nil, fmt.Errorf("processed crash %s: json_dump: %w", pc.CrashID, err)
	}
	var frames []frameKeyJSON
	switch {
	case pc.CrashingThread != nil && *pc.CrashingThread >= 0 && *pc.CrashingThread < len(d.Threads):
		frames = d.Threads[*pc.CrashingThread].Frames
	case d.CrashingThread != nil:
		frames = d.CrashingThread.Frames
	}
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.key()
	}
	return out, nil
}

// CompareStacks returns what changed of the crashing thread's stack from
// prev (the processed crash a reprocess replaces) to cur, at the time at;
// nil when the frames are the same (whole thread, module, function and
// offset of each frame). A change recorded on prev is kept when nothing
// changed since.
func CompareStacks(prev, cur *crash.ProcessedCrash, at time.Time) (*crash.StackChange, error) {
	before, err := CrashingFrames(prev)
	if err != nil {
		return nil, err
	}
	after, err := CrashingFrames(cur)
	if err != nil {
		return nil, err
	}
	if slices.Equal(before, after) {
		return prev.StackChange, nil
	}
	first := 0
	for first < len(before) && first < len(after) && before[first] == after[first] {
		first++
	}
	// The top frames, or those around the first difference when it is
	// deeper.
	from := 0
	if first >= crash.MaxChangeFrames {
		from = first - 2
	}
	firstSig := prev.Signature
	if c := prev.StackChange; c != nil {
		firstSig = c.FirstSignature
	}
	return &crash.StackChange{At: at.UTC(), PreviousSignature: prev.Signature, Signature: cur.Signature, FirstSignature: firstSig, FirstDifference: first,
		FramesFrom: from, PreviousFrames: window(before, from), Frames: window(after, from)}, nil
}

// window returns at most crash.MaxChangeFrames frames from index from.
func window(frames []string, from int) []string {
	if from >= len(frames) {
		return []string{}
	}
	return frames[from:min(len(frames), from+crash.MaxChangeFrames)]
}
