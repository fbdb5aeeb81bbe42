package golden

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobreakpad/gobreakpad/stackwalk/batch"
)

// Status is what a run found of a dump.
type Status string

// The statuses of a dump.
const (
	Unchanged Status = "unchanged" // its record is its golden file's
	Changed   Status = "changed"   // its record differs from its golden file's (Result.Diff)
	New       Status = "new"       // it has no golden file
	Missing   Status = "missing"   // a golden file of a dump under the paths walked that is gone
	Written   Status = "written"   // Update wrote its golden file
	Removed   Status = "removed"   // Update removed the golden file of a missing dump
	Walked    Status = "walked"    // walked, not compared
	Failed    Status = "failed"    // could not be walked, not compared (Record.Error says why)
)

// Result is one dump's outcome in a run.
type Result struct {
	// Dump names the dump (Record.Dump).
	Dump   string
	Status Status
	// Record is this walk's record (nil for a missing dump).
	Record *Record
	// Golden is the golden file's record, when there is one.
	Golden *Record
	// Diff is Diff(Golden, Record) of a changed dump.
	Diff []string
}

// FromWalk makes the Record of a dump walked by batch.Walk, named by its
// key. A dump that could not be read or walked gives a record with Error
// set, the dump's path in the error's text replaced by its key (so that
// records do not depend on how the dump was reached).
func FromWalk(w batch.Walked) *Record {
	if w.Err != nil {
		return &Record{Dump: w.Dump.Key, Error: strings.ReplaceAll(w.Err.Error(), w.Dump.Path, w.Dump.Key), Thread: -1}
	}
	return FromProcess(w.Dump.Key, w.State, w.Signature.Signature)
}

// Path is the golden file of a dump in the golden directory dir:
// DIR/DUMP.golden, with an absolute name's drive colon and leading slash
// dropped.
func Path(dir, dump string) string {
	k := strings.TrimLeft(strings.ReplaceAll(dump, ":", ""), "/")
	return filepath.Join(dir, filepath.FromSlash(k)+".golden")
}

// Compare sets the status of each result (Unchanged, Changed with its Diff,
// or New) from its golden file in dir, and returns the missing dumps: the
// golden files in dir of dumps named by or under roots (batch.Find's) that
// are not among the results.
func Compare(dir string, results []*Result, roots []string) ([]*Result, error) {
	return compare(dir, results, roots, false)
}

// Update writes the golden file of each result into dir (status Written),
// and removes those of the dumps named by or under roots that are not among
// the results (returned, status Removed).
func Update(dir string, results []*Result, roots []string) ([]*Result, error) {
	return compare(dir, results, roots, true)
}

func compare(dir string, results []*Result, roots []string, update bool) ([]*Result, error) {
	read := map[string]*Record{} // the golden files compared, by path: not read again below
	for _, r := range results {
		path := Path(dir, r.Dump)
		if update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, r.Record.Marshal(), 0o644); err != nil {
				return nil, err
			}
			r.Status = Written
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			r.Status = New
			continue
		}
		if err != nil {
			return nil, err
		}
		old, err := Parse(bytes.NewReader(data), path)
		if err != nil {
			return nil, err
		}
		r.Golden = old
		read[path] = old
		if r.Diff = Diff(old, r.Record); len(r.Diff) == 0 {
			r.Status = Unchanged
		} else {
			r.Status = Changed
		}
	}

	walked := map[string]bool{}
	for _, r := range results {
		walked[r.Dump] = true
	}
	var missing []*Result
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".golden") {
			return nil
		}
		old := read[p]
		if old == nil {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if old, err = Parse(bytes.NewReader(data), p); err != nil {
				return err
			}
		}
		if walked[old.Dump] || !under(old.Dump, roots) {
			return nil
		}
		r := &Result{Dump: old.Dump, Status: Missing, Golden: old}
		if update {
			if err := os.Remove(p); err != nil {
				return err
			}
			r.Status = Removed
		}
		missing = append(missing, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("golden files: %w", err)
	}
	return missing, nil
}

// under tells whether a dump key is one of the roots or lies below one.
func under(key string, roots []string) bool {
	for _, r := range roots {
		if key == r || r == "." || strings.HasPrefix(key, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}
