package procfs

import (
	"bytes"
	"fmt"
	"strconv"
)

// SignalMasks holds the per-process signal sets of /proc/PID/status: bit
// (sig-1) is set when signal sig is in the set.
type SignalMasks struct {
	Blocked, Ignored, Caught uint64 // SigBlk, SigIgn, SigCgt
}

// Has reports whether signal sig (1-64) is in set.
func Has(set uint64, sig int) bool { return sig >= 1 && sig <= 64 && set&(1<<(sig-1)) != 0 }

// ParseSignalMasks reads SigBlk, SigIgn and SigCgt from the contents of a
// /proc/PID/status file.
func ParseSignalMasks(status []byte) (SignalMasks, error) {
	var s SignalMasks
	found := 0
	for line := range bytes.Lines(status) {
		key, val, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "SigBlk":
			dst = &s.Blocked
		case "SigIgn":
			dst = &s.Ignored
		case "SigCgt":
			dst = &s.Caught
		default:
			continue
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 16, 64)
		if err != nil {
			return s, fmt.Errorf("status: %s: %w", key, err)
		}
		*dst = v
		found++
	}
	if found < 3 {
		return s, fmt.Errorf("status: signal masks missing (found %d of SigBlk, SigIgn, SigCgt)", found)
	}
	return s, nil
}
