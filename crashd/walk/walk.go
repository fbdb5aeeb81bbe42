// Package walk makes a stored crash's processed crash: it reads the raw
// crash and the dumps from the blob store, walks every dump with package
// stackwalk and a symbol source (symbols/symsrc's chain, as
// minidump_stackwalk builds it), makes the signature of the minidump's walk
// (stackwalk/signature, Socorro's rules, as --signature) and fills in a
// crash.ProcessedCrash whose json_dump is exactly what minidump_stackwalk
// --json writes for the dump with the same symbols. Marshal writes it as
// stored at v1/processed_crash/<id>.
//
// It is crashd/processor's work on one crash without the queue, the index
// or the metrics around it, so that it can be fuzzed and benchmarked in a
// test binary that does not link them (their coverage instrumentation
// makes every fuzzing execution milliseconds long).
package walk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/minidump"
	"github.com/gobreakpad/gobreakpad/stackwalk"
	"github.com/gobreakpad/gobreakpad/stackwalk/jsonout"
	"github.com/gobreakpad/gobreakpad/stackwalk/signature"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/elfimage"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// Walker makes processed crashes. Its zero value walks without symbols with
// the default signature rules; it is safe for concurrent use once set up.
type Walker struct {
	// Symbols finds the modules' symbols (a *symsrc.Sources); nil walks
	// without symbols, as minidump_stackwalk without symbol paths.
	Symbols symbols.Source
	// Prefetch is stackwalk.Options.Prefetch (symsrc.Sources.Prefetch).
	Prefetch int
	// Jobs is how many threads of one dump are walked at once
	// (stackwalk.Options.Workers); 0 or 1: one.
	Jobs int
	// Signature makes the signatures; nil: signature.Default().
	Signature *signature.Generator
	// Now is the clock of the processed crash's dates and timings; nil:
	// time.Now.
	Now func() time.Time
}

func (w *Walker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Walker) signatures() *signature.Generator {
	if w.Signature != nil {
		return w.Signature
	}
	return signature.Default()
}

// ReadRaw reads crash id's raw crash from the store. A raw crash that is
// not JSON gives an empty one (the dumps may be fine); a missing one an
// error matching blob.ErrNotExist.
func ReadRaw(ctx context.Context, store blob.Store, id crash.ID) (*crash.RawCrash, error) {
	b, err := store.Get(ctx, crash.RawCrashKey(id))
	if err != nil {
		return nil, fmt.Errorf("raw crash: %w", err)
	}
	var raw crash.RawCrash
	if err := json.Unmarshal(b, &raw); err != nil {
		return &crash.RawCrash{UUID: id}, nil
	}
	return &raw, nil
}

// Process reads crash id's dumps from the store and walks them into a
// processed crash (not stored). raw is its raw crash (nil: read from the
// store). Errors are those of the store; what is wrong with the dumps is
// said in the processed crash's notes. A panic in the walk of an
// additional dump is recovered and noted; one in the minidump's walk
// propagates (the caller recovers it and fails the attempt). missing is
// the modules of the minidump's walk that had no symbols.
func (w *Walker) Process(ctx context.Context, store blob.Store, id crash.ID, raw *crash.RawCrash) (pc *crash.ProcessedCrash, missing []crash.Module, err error) {
	start := w.now()
	if raw == nil {
		var err error
		if raw, err = ReadRaw(ctx, store, id); err != nil {
			return nil, nil, err
		}
	}
	pc = &crash.ProcessedCrash{
		CrashID: id, UUID: id,
		ProductName:    raw.ProductName(),
		Version:        raw.ProductVersion(),
		ReleaseChannel: raw.Annotation("ReleaseChannel"),
		ProcessType:    raw.Annotation("ProcessType"),
		ProcessorNotes: []string{},
		StartedAt:      start.UTC(),
		Timings:        map[string]float64{},
	}
	if pc.ProcessType == "" {
		pc.ProcessType = raw.Annotation("process_type")
	}
	names, err := dumpNames(ctx, store, id)
	if err != nil {
		return nil, nil, err
	}
	annotations := map[string]string{}
	for k, v := range raw.Annotations {
		annotations[k] = crash.AnnotationString(v)
	}
	seenMain := false
	for _, name := range names {
		t0 := w.now()
		b, err := store.Get(ctx, crash.DumpKey(id, name))
		if errors.Is(err, blob.ErrNotExist) {
			pc.ProcessorNotes = append(pc.ProcessorNotes, fmt.Sprintf("dump %s: listed but not in the store", name))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("dump %s: %w", name, err)
		}
		main := crash.DumpFileName(name) == crash.MinidumpFile
		d, err := w.walkOne(b, main, annotations)
		pc.Timings["walk_"+crash.DumpFileName(name)] = w.now().Sub(t0).Seconds()
		if err != nil {
			pc.ProcessorNotes = append(pc.ProcessorNotes, fmt.Sprintf("dump %s: %v", name, err))
			continue
		}
		for _, n := range d.notes {
			pc.ProcessorNotes = append(pc.ProcessorNotes, fmt.Sprintf("dump %s: %s", name, n))
		}
		if !main {
			if pc.AdditionalDumps == nil {
				pc.AdditionalDumps = map[string]json.RawMessage{}
			}
			pc.AdditionalDumps[name] = d.json
			continue
		}
		seenMain = true
		pc.Success = true
		pc.JSONDump = d.json
		pc.Signature = d.signature
		st := d.st
		pc.CrashReason = st.CrashReason
		if st.Crashed {
			pc.CrashAddress = fmt.Sprintf("0x%x", st.CrashAddress)
		}
		if st.RequestingThread >= 0 && st.RequestingThread < len(st.Threads) {
			ct := st.RequestingThread
			pc.CrashingThread = &ct
		}
		pc.OSName, pc.OSVersion, pc.CPUArch = st.System.OS, st.System.OSVersion, st.System.CPU
		pc.CPUInfo = st.System.CPUInfo
		if v := st.System.CPUVendor; v != "" && !strings.HasPrefix(pc.CPUInfo, v) {
			pc.CPUInfo = v + " " + pc.CPUInfo
		}
		for _, m := range st.Modules {
			code := symstore.BaseName(m.CodeFile)
			pc.Modules = append(pc.Modules, code)
			if m.Version != "" {
				pc.ModuleVersions = append(pc.ModuleVersions, crash.ModuleVersion{Name: code, Version: m.Version})
			}
			if m.MissingSymbols {
				pc.ModulesMissingSymbols = append(pc.ModulesMissingSymbols, symstore.BaseName(m.DebugFile)+"/"+m.DebugID)
				missing = append(missing, crash.Module{
					DebugFile: symstore.BaseName(m.DebugFile), DebugID: m.DebugID,
					CodeFile: symstore.BaseName(m.CodeFile), CodeID: m.CodeID,
				})
			}
		}
	}
	if !seenMain {
		pc.ProcessorNotes = append(pc.ProcessorNotes, "no minidump walked (upload_file_minidump missing or unreadable)")
		pc.Signature = w.signatures().Process(nil).Signature
	}
	pc.CompletedAt = w.now().UTC()
	pc.Timings["total"] = pc.CompletedAt.Sub(start).Seconds()
	return pc, missing, nil
}

// dumpNames returns the crash's dump names, the minidump first.
func dumpNames(ctx context.Context, store blob.Store, id crash.ID) ([]string, error) {
	b, err := store.Get(ctx, crash.DumpNamesKey(id))
	if errors.Is(err, blob.ErrNotExist) {
		return []string{crash.MinidumpField}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dump names: %w", err)
	}
	var names crash.DumpNames
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("dump names: %w", err)
	}
	slices.SortStableFunc(names, func(a, b string) int {
		am, bm := crash.DumpFileName(a) == crash.MinidumpFile, crash.DumpFileName(b) == crash.MinidumpFile
		switch {
		case am && !bm:
			return -1
		case bm && !am:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names, nil
}

// walked is one dump's walk.
type walked struct {
	st        *stackwalk.ProcessState
	json      json.RawMessage
	signature string
	notes     []string
}

// walkOne walks one dump as minidump_stackwalk --json does. A panic in an
// additional dump's walk is an error of that dump; in the minidump's it
// propagates.
func (w *Walker) walkOne(b []byte, main bool, annotations map[string]string) (d walked, err error) {
	if !main {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic in the walk: %v", r)
			}
		}()
	}
	f, err := minidump.NewFileBytes(b)
	if err != nil {
		if errors.Is(err, minidump.ErrNotMinidump) {
			return d, err // says "not a minidump: ..." itself
		}
		return d, fmt.Errorf("not a minidump: %w", err)
	}
	defer f.Close()
	opt := stackwalk.Options{Workers: max(w.Jobs, 1)}
	if w.Symbols != nil {
		opt.Symbols = w.Symbols
		opt.Prefetch = w.Prefetch
		opt.ImageSymbols = elfimage.Load
	}
	st, err := stackwalk.Process(f, opt)
	if err != nil {
		return d, fmt.Errorf("walk: %w", err)
	}
	for _, e := range st.Problems {
		d.notes = append(d.notes, stackwalk.Escape(e.Error()))
	}
	var buf bytes.Buffer
	if err := jsonout.Write(&buf, st, false); err != nil {
		return d, err
	}
	d.st, d.json = st, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if main {
		c := signature.FromProcess(st)
		c.Annotate(annotations)
		r := w.signatures().Generate(c)
		d.signature = r.Signature
		for _, n := range r.Notes {
			d.notes = append(d.notes, "signature: "+n)
		}
	}
	return d, nil
}

// Marshal writes a processed crash as stored: JSON without HTML escaping
// (json_dump as minidump_stackwalk --json writes it). The walks' JSON
// texts (json_dump, additional_minidumps) are spliced in as they are,
// after the other keys, not parsed and compacted again as encoding/json
// does with a json.RawMessage: they come from jsonout.
func Marshal(pc *crash.ProcessedCrash) ([]byte, error) {
	c := *pc
	c.JSONDump, c.AdditionalDumps = nil, nil
	var buf bytes.Buffer
	// Room for the walks' texts too: they are appended in place.
	n := 2048 + len(pc.JSONDump)
	for name, d := range pc.AdditionalDumps {
		n += len(name) + len(d) + 8
	}
	buf.Grow(n)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("processed crash %s: %w", pc.CrashID, err)
	}
	b := bytes.TrimSuffix(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("}"))
	if len(pc.JSONDump) > 0 {
		b = append(append(b, `,"json_dump":`...), pc.JSONDump...)
	}
	if len(pc.AdditionalDumps) > 0 {
		b = append(b, `,"additional_minidumps":{`...)
		names := slices.Sorted(maps.Keys(pc.AdditionalDumps))
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(name)
			b = append(append(append(b, k...), ':'), pc.AdditionalDumps[name]...)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}
