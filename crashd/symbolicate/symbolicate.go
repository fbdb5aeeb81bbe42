// Package symbolicate is crashd's symbolication API, as Mozilla's Eliot
// (the symbolication service split out of Tecken) serves it for the Firefox
// Profiler and other tools that have module lists and addresses but no
// dump:
//
//	POST /symbolicate/v5  {"jobs": [{"memoryMap": [[DEBUG_FILE, DEBUG_ID], ...],
//	                                 "stacks": [[[MODULE_INDEX, MODULE_OFFSET], ...], ...]}, ...]}
//	POST /symbolicate/v4  one job, answered {"symbolicatedStacks", "knownModules"}
//
// A v5 answer is {"results": [{"stacks": [[{"frame", "module",
// "module_offset", "function", "function_offset", "file", "line",
// "inlines"}]], "found_modules": {"DEBUG_FILE/DEBUG_ID": true|false|null}}]}
// with offsets as hex strings, as Eliot writes them: a module the stacks
// name is true when its symbols were found, false when not; one they do not
// name is null (never looked for). A frame of a module without symbols keeps
// its module and offset only: nothing is guessed. Errors are Eliot's too:
// {"title": "..."} with status 400.
//
// Symbols come from a symbols.Source (crashd gives the chain of its
// symbol server's store, its symbol paths, upstream servers and cache).
// Every request is bounded: its body, its jobs, the modules of a job, its
// frames and the distinct modules it makes the server look up.
package symbolicate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/gobreakpad/gobreakpad/symbols"
)

// The default bounds of a request (Config).
const (
	// DefaultMaxBody bounds a request's body in bytes.
	DefaultMaxBody = 8 << 20
	// DefaultMaxJobs bounds the jobs of a request (Eliot's MAX_JOBS).
	DefaultMaxJobs = 10
	// DefaultMaxModules bounds the memory map of one job.
	DefaultMaxModules = 4096
	// DefaultMaxFrames bounds the frames of all a request's stacks.
	DefaultMaxFrames = 200_000
	// DefaultMaxLookups bounds the distinct modules a request makes the
	// server look up (each may be a download from an upstream server).
	DefaultMaxLookups = 512
)

// Config configures the service.
type Config struct {
	// Source finds modules' symbols by debug file and id.
	Source symbols.Source
	// SymFile, when set, returns the Breakpad .sym file holding a module's
	// symbols (symsrc.Sources.File): its INFO CODE_ID line names a Windows
	// module's PE file, the module name Eliot answers for it.
	SymFile func(symbols.Module) (string, error)
	// The bounds of a request; 0 is the Default.
	MaxBody                                    int64
	MaxJobs, MaxModules, MaxFrames, MaxLookups int
}

// Service answers symbolication requests.
type Service struct {
	cfg Config
}

// New returns the service over cfg.Source.
func New(cfg Config) *Service {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	def(&cfg.MaxJobs, DefaultMaxJobs)
	def(&cfg.MaxModules, DefaultMaxModules)
	def(&cfg.MaxFrames, DefaultMaxFrames)
	def(&cfg.MaxLookups, DefaultMaxLookups)
	return &Service{cfg: cfg}
}

// Job is one symbolication job: a memory map of modules and stacks of
// (module index, module offset) pairs. A module index of -1 is an address
// in no module.
type Job struct {
	MemoryMap [][2]string
	Stacks    [][][2]int64
}

// Frame is one symbolicated frame, as Eliot writes it.
type Frame struct {
	Frame          int      `json:"frame"`
	Module         string   `json:"module"`
	ModuleOffset   string   `json:"module_offset"`
	Function       string   `json:"function,omitempty"`
	FunctionOffset string   `json:"function_offset,omitempty"`
	File           string   `json:"file,omitempty"`
	Line           int      `json:"line,omitempty"`
	Inlines        []Inline `json:"inlines,omitempty"`
}

// Inline is an inlined call at a frame's address, innermost first.
type Inline struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// Result is the answer to one job. FoundModules maps "DEBUG_FILE/DEBUG_ID"
// of each module of the memory map to true (symbols found), false (not
// found) or nil (not named by the stacks, not looked for).
type Result struct {
	Stacks       [][]Frame        `json:"stacks"`
	FoundModules map[string]*bool `json:"found_modules"`
}

// RequestError is a request Eliot would answer 400: its Error is the
// answer's title.
type RequestError struct{ Title string }

func (e *RequestError) Error() string { return e.Title }

func badRequest(format string, args ...any) error {
	return &RequestError{fmt.Sprintf(format, args...)}
}

// hex writes an offset as Python's hex() does (Eliot's form): 0x3e8, -0x1.
func hex(v int64) string {
	if v < 0 {
		return "-0x" + strconv.FormatUint(uint64(-v), 16)
	}
	return "0x" + strconv.FormatUint(uint64(v), 16)
}

// found is what a request learnt of one module.
type found struct {
	lookup symbols.Lookuper
	name   string
}

// Symbolicate answers jobs (already checked by Parse, or made by a caller
// within the service's bounds).
func (s *Service) Symbolicate(jobs []Job) ([]Result, error) {
	type key struct{ file, id string }
	mods := map[key]*found{}
	frames := 0
	for _, j := range jobs {
		for _, st := range j.Stacks {
			frames += len(st)
			for _, f := range st {
				if f[0] < 0 || int(f[0]) >= len(j.MemoryMap) {
					continue
				}
				m := j.MemoryMap[f[0]]
				if m[0] == "" || m[1] == "" {
					continue
				}
				mods[key{m[0], m[1]}] = nil
			}
		}
	}
	if frames > s.cfg.MaxFrames {
		return nil, badRequest("please limit number of frames in a single request to <= %d", s.cfg.MaxFrames)
	}
	if len(mods) > s.cfg.MaxLookups {
		return nil, badRequest("please limit number of distinct modules in the stacks of a single request to <= %d", s.cfg.MaxLookups)
	}
	for k := range mods {
		mods[k] = s.load(k.file, k.id)
	}
	out := make([]Result, len(jobs))
	for i, j := range jobs {
		r := Result{Stacks: make([][]Frame, len(j.Stacks)), FoundModules: make(map[string]*bool, len(j.MemoryMap))}
		for si, st := range j.Stacks {
			fs := make([]Frame, len(st))
			for fi, f := range st {
				fr := Frame{Frame: fi, Module: "<unknown>", ModuleOffset: hex(f[1])}
				if f[0] >= 0 && int(f[0]) < len(j.MemoryMap) {
					m := j.MemoryMap[f[0]]
					if m[0] != "" {
						fr.Module = m[0]
					}
					if fm := mods[key{m[0], m[1]}]; fm != nil {
						fr.Module = fm.name
						if f[1] >= 0 {
							describe(&fr, fm.lookup, uint64(f[1]))
						}
					}
				}
				fs[fi] = fr
			}
			r.Stacks[si] = fs
		}
		for _, m := range j.MemoryMap {
			k := key{m[0], m[1]}
			var v *bool
			if fm, looked := mods[k]; looked {
				ok := fm != nil
				v = &ok
			}
			r.FoundModules[m[0]+"/"+m[1]] = v
		}
		out[i] = r
	}
	return out, nil
}

// describe fills a frame from its module's symbols: the outer function
// and its position, the inlined calls innermost first. A line is given only
// with a file, as Eliot does.
func describe(fr *Frame, l symbols.Lookuper, rel uint64) {
	sym, ok := l.Lookup(rel, true)
	if !ok {
		return
	}
	fr.Function = sym.Function
	fr.FunctionOffset = hex(int64(rel - sym.FunctionBase))
	fr.File = sym.File
	if fr.File != "" {
		fr.Line = sym.Line
	}
	for _, in := range sym.Inlines {
		x := Inline{Function: in.Function, File: in.File}
		if x.File != "" {
			x.Line = in.Line
		}
		fr.Inlines = append(fr.Inlines, x)
	}
}

// load finds a module's symbols; nil when there are none that look
// addresses up.
func (s *Service) load(file, id string) *found {
	if s.cfg.Source == nil {
		return nil
	}
	m := symbols.Module{DebugFile: file, DebugID: strings.ToUpper(id)}
	syms, err := s.cfg.Source.Load(m)
	if err != nil || syms == nil || syms.Lookup == nil {
		return nil
	}
	f := &found{lookup: syms.Lookup, name: file}
	if s.cfg.SymFile != nil {
		if p, err := s.cfg.SymFile(m); err == nil {
			if n := peName(p); n != "" {
				f.name = n
			}
		}
	}
	return f
}

// peName returns the PE file an INFO CODE_ID line of a .sym's header names
// (INFO CODE_ID ID NAME), or "" when the header has none: the records
// before the first FILE, FUNC or PUBLIC line are read, at most 64 KiB.
func peName(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("INFO")):
			if parts := strings.Split(string(line), " "); len(parts) == 4 {
				return strings.TrimSpace(parts[3])
			}
			return ""
		case bytes.HasPrefix(line, []byte("FILE")), bytes.HasPrefix(line, []byte("PUBLIC")), bytes.HasPrefix(line, []byte("FUNC")):
			return ""
		}
	}
	return ""
}

// debugFileRe and debugIDRe are the names Eliot accepts.
var (
	debugFileRe = regexp.MustCompile(`^[A-Za-z0-9_.+{}@<> ~-]*$`)
	debugIDRe   = regexp.MustCompile(`^[A-Fa-f0-9]*$`)
)

// Parse reads a request's body: v5's {"jobs": [...]} or a single job
// (v4, and v5 without "jobs"), checked as Eliot checks it and within the
// service's bounds. Its errors are *RequestError.
func (s *Service) Parse(body []byte, v4 bool) ([]Job, error) {
	var payload map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&payload); err != nil || payload == nil {
		return nil, badRequest("Payload is not valid JSON")
	}
	raws := []json.RawMessage{body}
	if js, ok := payload["jobs"]; ok && !v4 {
		raws = nil
		if err := json.Unmarshal(js, &raws); err != nil {
			return nil, badRequest("jobs must be a list")
		}
	}
	if len(raws) > s.cfg.MaxJobs {
		return nil, badRequest("please limit number of jobs in a single request to <= %d", s.cfg.MaxJobs)
	}
	jobs := make([]Job, len(raws))
	for i, raw := range raws {
		var job map[string]json.RawMessage
		if json.Unmarshal(raw, &job) != nil || job == nil {
			return nil, badRequest("job %d is invalid", i)
		}
		stacks, ok := job["stacks"]
		if !ok {
			return nil, badRequest("job %d is invalid: no stacks specified", i)
		}
		mm, ok := job["memoryMap"]
		if !ok {
			return nil, badRequest("job %d is invalid: no memoryMap specified", i)
		}
		var err error
		if jobs[i].MemoryMap, err = s.modules(mm); err != nil {
			return nil, badRequest("job %d has invalid modules: %v", i, err)
		}
		if jobs[i].Stacks, err = stacksOf(stacks, len(jobs[i].MemoryMap)); err != nil {
			return nil, badRequest("job %d has invalid stacks: %v", i, err)
		}
	}
	return jobs, nil
}

func (s *Service) modules(raw json.RawMessage) ([][2]string, error) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, errors.New("modules must be a list")
	}
	if len(list) > s.cfg.MaxModules {
		return nil, fmt.Errorf("more than %d modules", s.cfg.MaxModules)
	}
	out := make([][2]string, len(list))
	for i, item := range list {
		var pair []json.RawMessage
		if json.Unmarshal(item, &pair) != nil || len(pair) != 2 {
			return nil, fmt.Errorf("module index %d does not have a debug_filename and debug_id", i)
		}
		var file, id string
		if json.Unmarshal(pair[0], &file) != nil || !debugFileRe.MatchString(file) {
			return nil, fmt.Errorf("module index %d has an invalid debug_filename", i)
		}
		if json.Unmarshal(pair[1], &id) != nil || !debugIDRe.MatchString(id) {
			return nil, fmt.Errorf("module index %d has an invalid debug_id", i)
		}
		out[i] = [2]string{file, id}
	}
	return out, nil
}

// integer reads a JSON integer (not a float, string or boolean): the
// literal itself, without a decoder per number (a request holds up to
// MaxFrames pairs).
func integer(raw json.RawMessage) (int64, bool) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return v, err == nil
}

func stacksOf(raw json.RawMessage, nmods int) ([][][2]int64, error) {
	var stacks []json.RawMessage
	if json.Unmarshal(raw, &stacks) != nil {
		return nil, errors.New("stacks must be a list of lists")
	}
	if len(stacks) == 0 {
		return nil, errors.New("no stacks specified")
	}
	out := make([][][2]int64, len(stacks))
	for i, st := range stacks {
		var frames []json.RawMessage
		if json.Unmarshal(st, &frames) != nil {
			return nil, fmt.Errorf("stack %d is not a list", i)
		}
		out[i] = make([][2]int64, len(frames))
		for fi, fr := range frames {
			var pair []json.RawMessage
			if json.Unmarshal(fr, &pair) != nil || len(pair) != 2 {
				return nil, fmt.Errorf("stack %d frame %d is not a list of two items", i, fi)
			}
			idx, ok := integer(pair[0])
			if !ok {
				return nil, fmt.Errorf("stack %d frame %d has an invalid module_index", i, fi)
			}
			if idx < -1 || idx >= int64(nmods) {
				return nil, fmt.Errorf("stack %d frame %d has a module_index that isn't in modules", i, fi)
			}
			off, ok := integer(pair[1])
			if !ok || off < -1 {
				return nil, fmt.Errorf("stack %d frame %d has an invalid module_offset", i, fi)
			}
			out[i][fi] = [2]int64{idx, off}
		}
	}
	return out, nil
}

// corsHeaders lets browser tools (the Firefox Profiler) call the API
// from their own origin, as Eliot does; no cookie is ever honoured here.
var corsHeaders = "accept, accept-encoding, authorization, content-type, dnt, origin, user-agent, x-csrftoken, x-requested-with"

func cors(h http.Header) {
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Expose-Headers", corsHeaders)
}

// Preflight answers a CORS preflight (OPTIONS) of either version.
func (s *Service) Preflight(w http.ResponseWriter, r *http.Request) {
	cors(w.Header())
	w.Header().Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusOK)
}

// ServeV5 answers POST /symbolicate/v5.
func (s *Service) ServeV5(w http.ResponseWriter, r *http.Request) { s.serve(w, r, false) }

// ServeV4 answers POST /symbolicate/v4 (Eliot's deprecated shape).
func (s *Service) ServeV4(w http.ResponseWriter, r *http.Request) { s.serve(w, r, true) }

func (s *Service) serve(w http.ResponseWriter, r *http.Request, v4 bool) {
	cors(w.Header())
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"title": "405 Method Not Allowed"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"title": fmt.Sprintf("please limit a request's body to %d bytes", s.cfg.MaxBody)})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"title": "Payload is not valid JSON"})
		return
	}
	jobs, err := s.Parse(body, v4)
	var res []Result
	if err == nil {
		res, err = s.Symbolicate(jobs)
	}
	if err != nil {
		var re *RequestError
		if errors.As(err, &re) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"title": re.Title})
			return
		}
		writeJSON(w, http.StatusInternalServerError, map[string]string{"title": "symbolication failed"})
		return
	}
	if !v4 {
		writeJSON(w, http.StatusOK, map[string]any{"results": res})
		return
	}
	writeJSON(w, http.StatusOK, v4Answer(jobs[0], res[0]))
}

// v4Answer is Eliot's v4 shape of one job's result: each frame as
// "FUNCTION (in MODULE)" (the offset in hex without a function), and per
// module of the memory map whether its symbols were found.
func v4Answer(j Job, r Result) map[string]any {
	stacks := make([][]string, len(r.Stacks))
	for i, st := range r.Stacks {
		stacks[i] = make([]string, len(st))
		for fi, f := range st {
			fn := f.Function
			if fn == "" {
				fn = f.ModuleOffset
			}
			stacks[i][fi] = fn + " (in " + f.Module + ")"
		}
	}
	known := make([]*bool, len(j.MemoryMap))
	for i, m := range j.MemoryMap {
		known[i] = r.FoundModules[m[0]+"/"+m[1]]
	}
	return map[string]any{"symbolicatedStacks": stacks, "knownModules": known}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
