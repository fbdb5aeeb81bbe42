package signature

import (
	"strconv"
	"strings"
)

// The crash annotations Annotate reads (Mozilla's names, as Socorro takes
// them from a crash report).
const (
	// AnnotationOOMAllocationSize is the size in bytes of the allocation
	// whose failure crashed the process.
	AnnotationOOMAllocationSize = "OOMAllocationSize"
	// AnnotationLargeAllocationFailure is "Reporting" when a large
	// allocation failed and was reported.
	AnnotationLargeAllocationFailure = "JSLargeAllocationFailure"
	// AnnotationAbortMessage is the message of an application abort.
	AnnotationAbortMessage = "AbortMessage"
)

// Annotate sets what the rules read from crash annotations (key → value,
// e.g. a crash report's extra fields; FromProcess gives it the dump's,
// stackwalk.ProcessState.Annotations): the OOM allocation
// size, a reported large allocation failure and the abort message. Other
// keys and malformed values are ignored.
func (c *Crash) Annotate(a map[string]string) {
	if v, ok := a[AnnotationOOMAllocationSize]; ok {
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			c.OOMAllocationSize, c.HasOOMAllocationSize = n, true
		}
	}
	if a[AnnotationLargeAllocationFailure] == "Reporting" {
		c.LargeAllocationFailure = true
	}
	if v := a[AnnotationAbortMessage]; v != "" {
		c.AbortMessage = v
	}
}
