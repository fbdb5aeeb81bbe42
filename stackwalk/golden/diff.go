package golden

import (
	"fmt"
	"strconv"
)

// String is the frame as a diff shows it: "module!function file:line
// [trust]" ("module (unloaded)!..." in an unloaded module).
func (f Frame) String() string {
	s := f.Function
	if f.Unloaded {
		s = f.Module + unloadedSuffix + "!" + s
	} else if f.Module != "" {
		s = f.Module + "!" + s
	}
	if f.File != "" {
		s += " " + f.File
		if f.Line != 0 {
			s += ":" + strconv.Itoa(f.Line)
		}
	}
	return s + " [" + f.Trust + "]"
}

// maxLCS bounds the frames compared with a longest-common-subsequence diff;
// longer stacks are compared position by position.
const maxLCS = 2000

// Diff returns the differences of got from want as readable lines (none
// when they are the same): changed fields as "signature: OLD -> NEW", then
// the frames as a unified diff ("-#3 ..." for a frame of want that got does
// not have, "+#3 ..." for one of got, each with its own index).
func Diff(want, got *Record) []string {
	var out []string
	field := func(name, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %q -> %q", name, a, b))
		}
	}
	field("error", want.Error, got.Error)
	field("signature", want.Signature, got.Signature)
	field("reason", want.Reason, got.Reason)
	if want.Crashed != got.Crashed || want.Address != got.Address {
		field("address", addr(want), addr(got))
	}
	if want.Thread != got.Thread {
		field("thread", strconv.Itoa(want.Thread), strconv.Itoa(got.Thread))
	}
	return append(out, diffFrames(want.Frames, got.Frames)...)
}

func addr(r *Record) string {
	if !r.Crashed {
		return "none"
	}
	return "0x" + strconv.FormatUint(r.Address, 16)
}

// diffFrames returns the unified diff of two frame lists (only changed
// lines).
func diffFrames(a, b []Frame) []string {
	var out []string
	if len(a) > maxLCS || len(b) > maxLCS {
		for i := 0; i < max(len(a), len(b)); i++ {
			switch {
			case i >= len(a):
				out = append(out, fmt.Sprintf("+#%d %s", i, b[i]))
			case i >= len(b):
				out = append(out, fmt.Sprintf("-#%d %s", i, a[i]))
			case a[i] != b[i]:
				out = append(out, fmt.Sprintf("-#%d %s", i, a[i]), fmt.Sprintf("+#%d %s", i, b[i]))
			}
		}
		return out
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, fmt.Sprintf("+#%d %s", j, b[j]))
			j++
		default:
			out = append(out, fmt.Sprintf("-#%d %s", i, a[i]))
			i++
		}
	}
	return out
}
