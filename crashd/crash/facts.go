package crash

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Annotations a report reads facts from (Socorro's names; docs/crashd.md,
// "Report page").
const (
	// BuildIDAnnotation is the product's build id (Firefox: a
	// YYYYMMDDHHMMSS timestamp; Socorro's processed "build").
	BuildIDAnnotation = "BuildID"
	// CommentsAnnotation is the user's comment sent with the crash
	// (Socorro's processed "user_comments"): personal, shown only to
	// readers who may see personal data whatever the collector's
	// configuration restricts.
	CommentsAnnotation = "Comments"
)

// maxAge bounds the ages read from annotations (uptime, install age):
// larger values are not believed.
const maxAge = 100 * 365 * 24 * time.Hour

// epoch reads an annotation holding seconds since 1970 (Socorro reads the
// first 10 characters of CrashTime as an integer).
func (r *RawCrash) epoch(name string) (int64, bool) {
	s := strings.TrimSpace(r.Annotation(name))
	if s == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// crashTime is the crash's time in seconds since 1970, as Socorro takes
// it: the CrashTime annotation, else the submission time; and its source.
func (r *RawCrash) crashTime() (int64, string, bool) {
	if t, ok := r.epoch("CrashTime"); ok {
		return t, "CrashTime", true
	}
	if !r.SubmittedTimestamp.IsZero() {
		return r.SubmittedTimestamp.Unix(), "submitted_timestamp", true
	}
	return 0, "", false
}

// Uptime returns how long the crashed process had run, and the
// annotations it was read from: UptimeTS (Firefox, seconds as a decimal
// number), else CrashTime minus StartupTime (Socorro's uptime; seconds
// since 1970 both), else ptime (Chromium's Breakpad client on Linux and
// Electron's, milliseconds). ok is false when none says, or the value is
// negative or beyond a century. (The minidump's own process times, the
// walk's process_uptime, are the caller's fallback.)
func (r *RawCrash) Uptime() (d time.Duration, source string, ok bool) {
	if s := strings.TrimSpace(r.Annotation("UptimeTS")); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && f >= 0 && f <= maxAge.Seconds() {
			return time.Duration(f * float64(time.Second)), "UptimeTS", true
		}
	}
	if start, ok := r.epoch("StartupTime"); ok {
		if ct, src, ok := r.crashTime(); ok {
			if diff := ct - start; diff >= 0 && diff <= int64(maxAge/time.Second) {
				return time.Duration(diff) * time.Second, src + " - StartupTime", true
			}
		}
	}
	if s := strings.TrimSpace(r.Annotation("ptime")); s != "" {
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 && ms <= maxAge.Milliseconds() {
			return time.Duration(ms) * time.Millisecond, "ptime", true
		}
	}
	return 0, "", false
}

// InstallAge returns how long the product's version had been installed
// when it crashed, as Socorro's install_age: CrashTime (else the
// submission time) minus InstallTime (seconds since 1970), and its
// source; ok is false without InstallTime or for a negative age.
func (r *RawCrash) InstallAge() (d time.Duration, source string, ok bool) {
	inst, ok := r.epoch("InstallTime")
	if !ok {
		return 0, "", false
	}
	ct, src, ok := r.crashTime()
	if !ok || ct < inst || ct-inst > int64(maxAge/time.Second) {
		return 0, "", false
	}
	return time.Duration(ct-inst) * time.Second, src + " - InstallTime", true
}
