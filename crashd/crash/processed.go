package crash

import (
	"encoding/json"
	"time"
)

// Processing states of a crash, as the index and the API report them.
const (
	// StatusReceived: stored by the collector, not (yet) processed.
	StatusReceived = "received"
	// StatusProcessed: walked; its processed crash is stored.
	StatusProcessed = "processed"
	// StatusFailed: processing failed as many times as allowed (dead letter).
	StatusFailed = "failed"
)

// ProcessedCrash is the processed crash JSON stored at ProcessedCrashKey:
// the walk of the crash's minidump and what is derived from it. Field names
// follow Socorro's processed crash where it has one.
type ProcessedCrash struct {
	// CrashID is the crash id (crash_id); UUID repeats it as Socorro names it (uuid).
	CrashID ID `json:"crash_id"`
	UUID    ID `json:"uuid"`

	// ProductName, Version and ReleaseChannel are copied from the annotations.
	ProductName    string `json:"product"`
	Version        string `json:"version"`
	ReleaseChannel string `json:"release_channel,omitempty"`

	// ProcessType is the crashed process's type, from the annotation
	// ProcessType (Breakpad, Firefox) or process_type (Crashpad, Electron);
	// empty when neither is there.
	ProcessType string `json:"process_type,omitempty"`

	// Signature is the crash signature (Socorro's rules).
	Signature string `json:"signature"`
	// CrashReason is the crash reason string ("EXCEPTION_ACCESS_VIOLATION_READ", "SIGSEGV /SEGV_MAPERR", ...).
	CrashReason string `json:"crash_reason,omitempty"`
	// CrashAddress is the crash address, hexadecimal ("0x...").
	CrashAddress string `json:"crash_address,omitempty"`
	// CrashingThread is the index of the crashing thread, nil if unknown.
	CrashingThread *int `json:"crashing_thread"`
	// OSName, OSVersion and CPUArch describe the crashed system.
	OSName    string `json:"os_name,omitempty"`
	OSVersion string `json:"os_version,omitempty"`
	CPUArch   string `json:"cpu_arch,omitempty"`
	// ModulesMissingSymbols names the modules (debug file/debug id) the walk found no symbols for.
	ModulesMissingSymbols []string `json:"modules_missing_symbols,omitempty"`

	// Modules are the base names of the minidump's modules, for the
	// index (not stored: json_dump has them).
	Modules []string `json:"-"`
	// CPUInfo is the CPU's vendor, family, model and stepping
	// ("GenuineIntel family 6 model 158 stepping 10": Breakpad's cpu info
	// with the vendor of amd64 dumps too) and ModuleVersions the modules
	// with a version, for the index's correlations (not stored: json_dump
	// has them).
	CPUInfo        string          `json:"-"`
	ModuleVersions []ModuleVersion `json:"-"`

	// JSONDump is the walk of the minidump in rust-minidump's JSON schema
	// (minidump_stackwalk --json), as stackwalk/jsonout writes it.
	JSONDump json.RawMessage `json:"json_dump,omitempty"`
	// AdditionalDumps holds the walks of the other dumps, by dump name, in the same schema.
	AdditionalDumps map[string]json.RawMessage `json:"additional_minidumps,omitempty"`

	// ProcessorNotes are the processor's remarks (Socorro: processor_notes).
	ProcessorNotes []string `json:"processor_notes"`
	// StartedAt and CompletedAt bound the processing (Socorro: started_datetime, completed_datetime).
	StartedAt   time.Time `json:"started_datetime"`
	CompletedAt time.Time `json:"completed_datetime"`
	// Timings are the seconds spent in each step of processing, by step name.
	Timings map[string]float64 `json:"timings,omitempty"`
	// Success is whether the minidump was walked (Socorro: success).
	Success bool `json:"success"`

	// StackChange, set by a reprocess, says that the crashing thread's
	// frames differ from those of the processing before (new symbols, a
	// better walker); a later reprocess that changes nothing keeps it.
	StackChange *StackChange `json:"stack_change,omitempty"`
}

// ModuleVersion is a module's base name and its version ("a.b.c.d", from
// a Windows version resource).
type ModuleVersion struct {
	Name, Version string
}

// StackChange is what a reprocess changed of the crashing thread's stack.
// Frames are written "module!function+offset" (with symbols) or
// "module+0xoffset" (without); the whole thread is compared, at most
// MaxChangeFrames of each side kept.
type StackChange struct {
	// At is when the reprocess that changed the stack completed.
	At time.Time `json:"at"`
	// PreviousSignature and Signature are the signatures before and after
	// (equal when only frames below the signature's changed).
	PreviousSignature string `json:"previous_signature"`
	Signature         string `json:"signature"`
	// FirstSignature is the signature before the first change recorded
	// (changes in a row, as symbol files arrive one by one, each replace
	// the last: this one is kept).
	FirstSignature string `json:"first_signature"`
	// FirstDifference is the index of the first frame that differs.
	FirstDifference int `json:"first_difference"`
	// PreviousFrames and Frames are frames before and after from index
	// FramesFrom: 0 (the top frames) unless the first difference is
	// deeper than MaxChangeFrames.
	FramesFrom     int      `json:"frames_from"`
	PreviousFrames []string `json:"previous_frames"`
	Frames         []string `json:"frames"`
}

// MaxChangeFrames is how many frames of each side a StackChange keeps.
const MaxChangeFrames = 10

// Module names a module by its symbol file (DebugFile, DebugID) and its
// code file (CodeFile, CodeID), as the walk's json_dump does: file names
// without their directories. The processor records those walked without
// symbols in the index (crashd/index's missing symbols).
type Module struct {
	DebugFile string `json:"debug_file"`
	DebugID   string `json:"debug_id"`
	CodeFile  string `json:"code_file"`
	CodeID    string `json:"code_id"`
}
