package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/api"
	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/sourcelink"
)

// dumpJSON is what the pages read of a walk (rust-minidump's JSON,
// stackwalk/jsonout).
type dumpJSON struct {
	CrashInfo struct {
		Type    *string `json:"type"`
		Address *string `json:"address"`
	} `json:"crash_info"`
	CrashingThread *threadJSON   `json:"crashing_thread"`
	Threads        []threadJSON  `json:"threads"`
	Modules        []moduleJSON  `json:"modules"`
	SystemInfo     systemInfoRaw `json:"system_info"`
	// ProcessUptime is the minidump's process age in seconds (MiscInfo).
	ProcessUptime *uint32 `json:"process_uptime"`
}

type systemInfoRaw struct {
	OS       string  `json:"os"`
	OSVer    *string `json:"os_ver"`
	CPUArch  string  `json:"cpu_arch"`
	CPUInfo  *string `json:"cpu_info"`
	CPUCount int     `json:"cpu_count"`
}

type threadJSON struct {
	ThreadID     uint32      `json:"thread_id"`
	ThreadName   *string     `json:"thread_name"`
	ThreadsIndex *int        `json:"threads_index"`
	Frames       []frameJSON `json:"frames"`
}

type frameJSON struct {
	Frame          int     `json:"frame"`
	Module         *string `json:"module"`
	Function       *string `json:"function"`
	FunctionOffset *string `json:"function_offset"`
	File           *string `json:"file"`
	Line           *int    `json:"line"`
	Offset         string  `json:"offset"`
	ModuleOffset   *string `json:"module_offset"`
	Trust          string  `json:"trust"`
	MissingSymbols bool    `json:"missing_symbols"`
	Inlines        []struct {
		Function *string `json:"function"`
		File     *string `json:"file"`
		Line     *int    `json:"line"`
	} `json:"inlines"`
}

type moduleJSON struct {
	Filename       string  `json:"filename"`
	Version        *string `json:"version"`
	DebugFile      string  `json:"debug_file"`
	DebugID        string  `json:"debug_id"`
	CodeID         string  `json:"code_id"`
	BaseAddr       string  `json:"base_addr"`
	EndAddr        string  `json:"end_addr"`
	LoadedSymbols  bool    `json:"loaded_symbols"`
	MissingSymbols bool    `json:"missing_symbols"`
	CorruptSymbols bool    `json:"corrupt_symbols"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// frameName is a frame as a common stack lists it: module!function, or
// module+offset without symbols.
func frameName(f frameJSON) string {
	switch {
	case f.Function != nil:
		return str(f.Module) + "!" + *f.Function
	case f.Module != nil:
		return *f.Module + "+" + str(f.ModuleOffset)
	}
	return f.Offset
}

// Report is a crash's report page and GET /api/report/{id}.
type Report struct {
	CrashID        crash.ID  `json:"crash_id"`
	Status         string    `json:"status"`
	ReceivedAt     time.Time `json:"received_at,omitzero"`
	ProcessedAt    time.Time `json:"processed_at,omitzero"`
	Product        string    `json:"product"`
	Version        string    `json:"version"`
	ReleaseChannel string    `json:"release_channel,omitempty"`
	ProcessType    string    `json:"process_type,omitempty"`
	OS             string    `json:"os,omitempty"`
	OSVersion      string    `json:"os_version,omitempty"`
	CPU            string    `json:"cpu,omitempty"`
	CPUInfo        string    `json:"cpu_info,omitempty"`
	Signature      string    `json:"signature"`
	CrashReason    string    `json:"crash_reason"`
	CrashAddress   string    `json:"crash_address,omitempty"`
	Error          string    `json:"error,omitempty"`
	// Crashing is the crashing thread; Threads the others.
	Crashing *Thread  `json:"crashing_thread"`
	Threads  []Thread `json:"threads"`
	Modules  []Module `json:"modules"`
	// Annotations are those the reader may see; Hidden counts those
	// marked personal left out.
	Annotations []Annotation `json:"annotations"`
	Hidden      int          `json:"hidden_annotations"`
	Notes       []string     `json:"notes"`
	// MoreAnnotations, MoreThreads, MoreModules and MoreNotes count what
	// was folded away past maxPageAnnotations, maxPageThreads,
	// maxPageModules and maxPageNotes (a crash of 300,000 annotations made
	// a 14 MB page).
	MoreAnnotations int `json:"more_annotations,omitempty"`
	MoreThreads     int `json:"more_threads,omitempty"`
	MoreModules     int `json:"more_modules,omitempty"`
	MoreNotes       int `json:"more_notes,omitempty"`
	// Dumps are the crash's dump names (downloads).
	Dumps []string `json:"dumps"`
	// The crash's facts from its annotations (docs/crashd.md, "Report
	// page"): BuildID; UptimeSeconds and InstallAgeSeconds with the
	// annotations they were read from; UserComments (Comments) only for
	// readers with view_pii.
	BuildID           string   `json:"build_id,omitempty"`
	UptimeSeconds     *float64 `json:"uptime_seconds,omitempty"`
	UptimeSource      string   `json:"uptime_source,omitempty"`
	InstallAgeSeconds *float64 `json:"install_age_seconds,omitempty"`
	InstallAgeSource  string   `json:"install_age_source,omitempty"`
	UserComments      string   `json:"user_comments,omitempty"`
	// StackChange says that a reprocess changed the crashing thread's
	// frames, and how (crash.StackChange); nil if none did.
	StackChange *crash.StackChange `json:"stack_change,omitempty"`
	// What the reader may do.
	CanDownload  bool `json:"can_download"`
	CanReprocess bool `json:"can_reprocess"`
}

// Thread is a thread's stack.
type Thread struct {
	Index  int     `json:"index"`
	ID     uint32  `json:"thread_id"`
	Name   string  `json:"name,omitempty"`
	Frames []Frame `json:"frames"`
}

// Frame is a stack frame, with the functions inlined into it (innermost
// first), each a Frame of its own with Inline set.
type Frame struct {
	N              int     `json:"frame"`
	Inline         bool    `json:"inline,omitempty"`
	Module         string  `json:"module,omitempty"`
	Function       string  `json:"function,omitempty"`
	FunctionOffset string  `json:"function_offset,omitempty"`
	File           string  `json:"file,omitempty"`
	Line           int     `json:"line,omitempty"`
	Offset         string  `json:"offset,omitempty"`
	ModuleOffset   string  `json:"module_offset,omitempty"`
	Trust          string  `json:"trust,omitempty"`
	Inlines        []Frame `json:"inlines,omitempty"`
	// FileShown is File as the page shows it when that differs (the path
	// of a source-server path); SourceLink the link to File's Line
	// (crashd/sourcelink), Crash Stats' name.
	FileShown  string `json:"file_shown,omitempty"`
	SourceLink string `json:"source_link,omitempty"`
}

// Module is a loaded module and its symbols' status: found, missing,
// corrupt, or unused (no frame needed them).
type Module struct {
	Filename  string `json:"filename"`
	Version   string `json:"version,omitempty"`
	DebugFile string `json:"debug_file"`
	DebugID   string `json:"debug_id"`
	CodeID    string `json:"code_id,omitempty"`
	Base      string `json:"base_addr"`
	End       string `json:"end_addr"`
	Symbols   string `json:"symbols"`
}

// Annotation is one annotation.
type Annotation struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Personal: marked personal (shown with view_pii).
	Personal bool `json:"personal,omitempty"`
}

// TrustWords says how a frame was found, as Socorro's report page.
var TrustWords = map[string]string{
	"context": "context", "cfi": "call frame info", "cfi_scan": "call frame info with scanning",
	"frame_pointer": "frame pointer", "scan": "stack scanning", "prewalked": "prewalked", "inline": "inlined", "none": "unknown",
}

func convertFrame(f frameJSON) Frame {
	fr := Frame{N: f.Frame, Module: str(f.Module), Function: str(f.Function), FunctionOffset: str(f.FunctionOffset),
		File: str(f.File), Offset: f.Offset, ModuleOffset: str(f.ModuleOffset), Trust: f.Trust}
	if f.Line != nil {
		fr.Line = *f.Line
	}
	for _, in := range f.Inlines {
		i := Frame{N: f.Frame, Inline: true, Module: fr.Module, Function: str(in.Function), File: str(in.File), Trust: "inline"}
		if in.Line != nil {
			i.Line = *in.Line
		}
		fr.Inlines = append(fr.Inlines, i)
	}
	return fr
}

func convertThread(i int, t threadJSON) Thread {
	th := Thread{Index: i, ID: t.ThreadID, Name: str(t.ThreadName), Frames: []Frame{}}
	for _, f := range t.Frames {
		th.Frames = append(th.Frames, convertFrame(f))
	}
	return th
}

func (w *Web) report(r *http.Request, p *principal) (any, error) {
	id, err := crashID(r)
	if err != nil {
		return nil, err
	}
	rec, err := api.Load(r.Context(), w.store, w.ix, id)
	if err != nil {
		var e *api.Error
		errors.As(err, &e)
		return nil, httpErr(e.Status, "%s", e.Message)
	}
	rep := &Report{CrashID: id, Status: crash.StatusReceived, Threads: []Thread{}, Modules: []Module{}, Annotations: []Annotation{}, Notes: []string{}, Dumps: []string{},
		CanDownload: p.Can(auth.ScopeViewRawDump), CanReprocess: p.Can(auth.ScopeReprocess)}
	if c := rec.Index; c != nil {
		rep.Status, rep.ReceivedAt, rep.ProcessedAt, rep.Error = string(c.Status), c.ReceivedAt, c.ProcessedAt, c.Error
		rep.Product, rep.Version, rep.OS, rep.CPU, rep.Signature, rep.CrashReason = c.Product, c.Version, c.OS, c.CPU, c.Signature, c.CrashReason
	}
	if raw := rec.Raw; raw != nil {
		if rep.ReceivedAt.IsZero() {
			rep.ReceivedAt = raw.SubmittedTimestamp
		}
		if rep.Product == "" {
			rep.Product, rep.Version = raw.ProductName(), raw.ProductVersion()
		}
		var shown map[string]any
		shown, rep.Hidden = rec.Annotations(p)
		for name, v := range shown {
			rep.Annotations = append(rep.Annotations, Annotation{Name: name, Value: crash.AnnotationString(v), Personal: raw.IsRestricted(name)})
		}
		slices.SortFunc(rep.Annotations, func(a, b Annotation) int { return strings.Compare(a.Name, b.Name) })
		for _, n := range raw.Metadata.CollectorNotes {
			rep.Notes = append(rep.Notes, "collector: "+n)
		}
		rep.facts(raw, p)
	}
	if rec.Dumps != nil {
		rep.Dumps = rec.Dumps
	}
	if pc := rec.Processed; pc != nil {
		if rec.Index == nil {
			rep.Status = crash.StatusProcessed
		}
		rep.Product, rep.Version, rep.ReleaseChannel, rep.ProcessType = pc.ProductName, pc.Version, pc.ReleaseChannel, pc.ProcessType
		rep.OS, rep.OSVersion, rep.CPU = pc.OSName, pc.OSVersion, pc.CPUArch
		rep.Signature, rep.CrashReason, rep.CrashAddress = pc.Signature, pc.CrashReason, pc.CrashAddress
		if rep.ProcessedAt.IsZero() {
			rep.ProcessedAt = pc.CompletedAt
		}
		rep.Notes = append(rep.Notes, pc.ProcessorNotes...)
		var d *dumpJSON
		if len(pc.JSONDump) > 0 {
			if err := json.Unmarshal(pc.JSONDump, &d); err != nil {
				return nil, fmt.Errorf("processed crash %s: json_dump: %w", id, err)
			}
		}
		rep.StackChange = pc.StackChange
		if d != nil {
			rep.CPUInfo = str(d.SystemInfo.CPUInfo)
			if up := d.ProcessUptime; up != nil && rep.UptimeSeconds == nil {
				s := float64(*up)
				rep.UptimeSeconds, rep.UptimeSource = &s, "minidump process times"
			}
			ct := -1
			if pc.CrashingThread != nil {
				ct = *pc.CrashingThread
			}
			for i, t := range d.Threads {
				if i == ct {
					th := convertThread(i, t)
					rep.Crashing = &th
					continue
				}
				rep.Threads = append(rep.Threads, convertThread(i, t))
			}
			if rep.Crashing == nil && d.CrashingThread != nil {
				th := convertThread(-1, *d.CrashingThread)
				rep.Crashing = &th
			}
			for _, m := range d.Modules {
				st := "unused"
				switch {
				case m.CorruptSymbols:
					st = "corrupt"
				case m.MissingSymbols:
					st = "missing"
				case m.LoadedSymbols:
					st = "found"
				}
				rep.Modules = append(rep.Modules, Module{Filename: m.Filename, Version: str(m.Version), DebugFile: m.DebugFile, DebugID: m.DebugID,
					CodeID: m.CodeID, Base: m.BaseAddr, End: m.EndAddr, Symbols: st})
			}
		}
	}
	rep.fold()
	rep.link(w.cfg.SourceLinks)
	return rep, nil
}

// facts fills the report's facts read from the raw crash's annotations.
func (rep *Report) facts(raw *crash.RawCrash, p *principal) {
	rep.BuildID = raw.Annotation(crash.BuildIDAnnotation)
	if d, src, ok := raw.Uptime(); ok {
		s := d.Seconds()
		rep.UptimeSeconds, rep.UptimeSource = &s, src
	}
	if d, src, ok := raw.InstallAge(); ok {
		s := d.Seconds()
		rep.InstallAgeSeconds, rep.InstallAgeSource = &s, src
	}
	if p.Can(auth.ScopeViewPII) {
		rep.UserComments = raw.Annotation(crash.CommentsAnnotation)
	}
}

// link gives the frames of the report (those shown: after fold) their
// source links.
func (rep *Report) link(l *sourcelink.Linker) {
	threads := rep.Threads
	if rep.Crashing != nil {
		threads = append([]Thread{*rep.Crashing}, threads...)
	}
	for _, th := range threads {
		for i := range th.Frames {
			f := &th.Frames[i]
			f.linkTo(l, rep.Product, rep.Version)
			for j := range f.Inlines {
				f.Inlines[j].linkTo(l, rep.Product, rep.Version)
			}
		}
	}
}

func (f *Frame) linkTo(l *sourcelink.Linker, product, version string) {
	if f.File == "" {
		return
	}
	shown, href := l.Link(sourcelink.Frame{File: f.File, Line: f.Line, Product: product, Version: version})
	if shown != f.File {
		f.FileShown = shown
	}
	f.SourceLink = href
}

// The most of each list a report shows; what is past it is counted
// (Report.More*), not shown. Each row is bounded by clip.
const (
	maxPageAnnotations = 500
	maxPageThreads     = 200
	maxPageModules     = 1000
	maxPageNotes       = 200
)

// fold cuts the report's long lists to their bounds.
func (rep *Report) fold() {
	if n := len(rep.Annotations); n > maxPageAnnotations {
		rep.MoreAnnotations, rep.Annotations = n-maxPageAnnotations, rep.Annotations[:maxPageAnnotations]
	}
	if n := len(rep.Threads); n > maxPageThreads {
		rep.MoreThreads, rep.Threads = n-maxPageThreads, rep.Threads[:maxPageThreads]
	}
	if n := len(rep.Modules); n > maxPageModules {
		rep.MoreModules, rep.Modules = n-maxPageModules, rep.Modules[:maxPageModules]
	}
	if n := len(rep.Notes); n > maxPageNotes {
		rep.MoreNotes, rep.Notes = n-maxPageNotes, rep.Notes[:maxPageNotes]
	}
}

func (w *Web) dump(rw http.ResponseWriter, r *http.Request) {
	id, err := crashID(r)
	if err != nil {
		auth.WriteJSON(rw, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	name := r.URL.Query().Get("name")
	if name == "" {
		name = crash.MinidumpField
	}
	if clean, ok := crash.DumpName(name); !ok || clean != name {
		auth.WriteJSON(rw, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("name=%q: not a dump name", name)})
		return
	}
	b, err := w.getBlob(r.Context(), crash.DumpKey(id, name), "dump "+name+" of "+string(id))
	if err != nil {
		w.writeErr(rw, err)
		return
	}
	rw.Header().Set("Content-Type", "application/octet-stream")
	rw.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", string(id)+"."+crash.DumpFileName(name)+".dmp"))
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = rw.Write(b)
}

func (w *Web) processedJSON(rw http.ResponseWriter, r *http.Request) {
	id, err := crashID(r)
	if err != nil {
		auth.WriteJSON(rw, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	b, err := w.getBlob(r.Context(), crash.ProcessedCrashKey(id), "processed crash "+string(id))
	if err != nil {
		w.writeErr(rw, err)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", string(id)+".json"))
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = rw.Write(b)
}

// writeErr answers err as JSON {"error"} with its status (statusOf).
func (w *Web) writeErr(rw http.ResponseWriter, err error) {
	auth.WriteJSON(rw, statusOf(err), map[string]string{"error": err.Error()})
}

func (w *Web) reprocessPage(rw http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(rw, r.Body, 1<<16)
	p := who(r)
	if !checkCSRF(r, p) {
		auth.WriteJSON(rw, http.StatusForbidden, map[string]string{"error": "the form's csrf field does not match the session"})
		return
	}
	id, err := crashID(r)
	if err != nil {
		w.writeErr(rw, err)
		return
	}
	res, err := api.Reprocess(r.Context(), w.store, w.q, w.ix, id)
	if err != nil {
		var e *api.Error
		errors.As(err, &e)
		auth.WriteJSON(rw, e.Status, map[string]string{"error": e.Message})
		return
	}
	name := ""
	if p != nil {
		name = p.Name
	}
	w.log.Info("web: reprocess", "crash_id", string(id), "status", res.Status, "token", name)
	http.Redirect(rw, r, "/report/"+string(id)+"?reprocess="+res.Status, http.StatusSeeOther)
}
