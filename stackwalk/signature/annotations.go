package signature

import (
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
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
// e.g. a crash report's extra fields or DumpAnnotations): the OOM allocation
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

// DumpAnnotations returns the annotations a dump carries in its Crashpad
// info stream: the process's simple annotations, then each module's simple
// annotations and string annotation objects (the first value of a key
// wins). It returns nil for a dump without that stream or with an
// unreadable one.
func DumpAnnotations(f *minidump.File) map[string]string {
	if f == nil {
		return nil
	}
	info, err := f.CrashpadInfo()
	if err != nil || info == nil {
		return nil
	}
	out := map[string]string{}
	add := func(k, v string) {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	for _, a := range info.SimpleAnnotations {
		add(a.Key, a.Value)
	}
	for _, m := range info.Modules {
		for _, a := range m.SimpleAnnotations {
			add(a.Key, a.Value)
		}
		for _, o := range m.AnnotationObjects {
			if o.Type == 1 { // a string
				add(o.Name, string(o.Value))
			}
		}
	}
	return out
}

// ProcessDump returns the signature of a walked process, with what its dump
// f says in annotations (DumpAnnotations) taken into account: Process for
// callers that still have the dump.
func (g *Generator) ProcessDump(st *stackwalk.ProcessState, f *minidump.File) Result {
	if st == nil {
		return g.Generate(Crash{})
	}
	c := FromProcess(st)
	c.Annotate(DumpAnnotations(f))
	return g.Generate(c)
}
