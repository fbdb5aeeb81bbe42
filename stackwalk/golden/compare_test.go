package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/stackwalk/batch"
)

func TestPath(t *testing.T) {
	for key, want := range map[string]string{
		"a/crash.dmp":        "g/a/crash.dmp.golden",
		"/abs/dir/crash.dmp": "g/abs/dir/crash.dmp.golden",
		"C:/dumps/x.dmp":     "g/C/dumps/x.dmp.golden",
	} {
		if got := filepath.ToSlash(Path("g", key)); got != want {
			t.Errorf("Path(g, %q) = %q, want %q", key, got, want)
		}
	}
}

// TestFromWalk: an error names the dump by its key, not its path.
func TestFromWalk(t *testing.T) {
	w := batch.Walked{Dump: batch.Dump{Key: "d/x.dmp", Path: "/tmp/run/d/x.dmp"}, Err: errors.New("open /tmp/run/d/x.dmp: bad header")}
	r := FromWalk(w)
	if want := (&Record{Dump: "d/x.dmp", Error: "open d/x.dmp: bad header", Thread: -1}); !reflect.DeepEqual(r, want) {
		t.Errorf("FromWalk = %+v, want %+v", r, want)
	}
}

func rec(dump, sig string) *Record {
	return &Record{Dump: dump, Signature: sig, Thread: 0, Frames: []Frame{{Module: "app", Function: sig, Trust: "context"}}}
}

func results(recs ...*Record) []*Result {
	var out []*Result
	for _, r := range recs {
		out = append(out, &Result{Dump: r.Dump, Status: Walked, Record: r})
	}
	return out
}

func statuses(rs ...[]*Result) map[string]Status {
	m := map[string]Status{}
	for _, l := range rs {
		for _, r := range l {
			m[r.Dump] = r.Status
		}
	}
	return m
}

// TestCompareUpdate: the statuses of Compare and Update; only golden files
// of dumps under the roots are missing (and removed by Update).
func TestCompareUpdate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "golden")
	if m, err := Compare(dir, nil, []string{"."}); err != nil || m != nil {
		t.Errorf("no golden directory: %v, %v", m, err)
	}
	first := results(rec("a/1.dmp", "f"), rec("a/2.dmp", "g"), rec("b/3.dmp", "h"), rec("/abs/4.dmp", "k"))
	missing, err := Update(dir, first, []string{"a", "b", "/abs/4.dmp"})
	if err != nil || len(missing) != 0 {
		t.Fatalf("Update: %v, %v", missing, err)
	}
	for _, r := range first {
		if r.Status != Written {
			t.Errorf("%s: %s", r.Dump, r.Status)
		}
		if _, err := os.Stat(Path(dir, r.Dump)); err != nil {
			t.Error(err)
		}
	}

	later := results(rec("a/1.dmp", "f"), rec("a/2.dmp", "g2"), rec("a/5.dmp", "m"))
	missing, err = Compare(dir, later, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"a/1.dmp": Unchanged, "a/2.dmp": Changed, "a/5.dmp": New}
	if got := statuses(later); !reflect.DeepEqual(got, want) || len(missing) != 0 {
		t.Errorf("Compare under a: %v, missing %v", got, missing)
	}
	if d := later[1].Diff; len(d) == 0 || d[0] != `signature: "g" -> "g2"` || later[1].Golden.Signature != "g" {
		t.Errorf("changed: diff %q, golden %+v", d, later[1].Golden)
	}
	missing, err = Compare(dir, results(rec("a/1.dmp", "f")), []string{"."})
	if got := statuses(missing); err != nil || !reflect.DeepEqual(got, map[string]Status{"a/2.dmp": Missing, "b/3.dmp": Missing, "/abs/4.dmp": Missing}) {
		t.Errorf("Compare under .: missing %v, %v", got, err)
	}
	if missing[0].Record != nil || missing[0].Golden == nil {
		t.Errorf("missing dump: %+v", missing[0])
	}

	missing, err = Update(dir, results(rec("a/1.dmp", "f")), []string{"a"})
	if got := statuses(missing); err != nil || !reflect.DeepEqual(got, map[string]Status{"a/2.dmp": Removed}) {
		t.Errorf("Update under a: removed %v, %v", got, err)
	}
	if _, err := os.Stat(Path(dir, "a/2.dmp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("golden file of a removed dump: %v", err)
	}

	if err := os.WriteFile(Path(dir, "b/3.dmp"), []byte("frame\tx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(dir, results(rec("b/3.dmp", "h")), []string{"b"}); err == nil {
		t.Errorf("a bad golden file: no error")
	}
	if _, err := Compare(dir, nil, []string{"b"}); err == nil || !strings.HasPrefix(err.Error(), "golden files: ") {
		t.Errorf("a bad golden file of a missing dump: %v", err)
	}
}

// TestReport: the text and JSON reports of each status, an unreadable
// dump and a changed signature.
func TestReport(t *testing.T) {
	rs := []*Result{
		{Dump: "z.dmp", Status: Changed, Record: rec("z.dmp", "new\tsig"), Golden: rec("z.dmp", "old"), Diff: []string{`signature: "old" -> "new\tsig"`}},
		{Dump: "b.dmp", Status: Unchanged, Record: rec("b.dmp", "f"), Golden: rec("b.dmp", "f")},
		{Dump: "a.dmp", Status: New, Record: rec("a.dmp", "f")},
		{Dump: "c.dmp", Status: Missing, Golden: rec("c.dmp", "gone")},
		{Dump: "e.dmp", Status: New, Record: &Record{Dump: "e.dmp", Error: "minidump: bad\nheader", Thread: -1}},
	}
	rep := NewReport(rs)
	if !rep.Differs() {
		t.Errorf("Differs: false")
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := `new        a.dmp
unchanged  b.dmp
missing    c.dmp
new        e.dmp
    error: minidump: bad\nheader
changed    z.dmp
    signature: "old" -> "new\tsig"

dumps  signature
2      f
1      (dump could not be walked)
1      new\tsig

5 dumps: 1 unchanged, 1 changed, 2 new, 1 missing; 3 signatures
`
	if text.String() != want {
		t.Errorf("text report:\n%s\nwant:\n%s", text.String(), want)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Dumps      []map[string]any `json:"dumps"`
		Signatures []struct {
			Signature string
			Count     int
			Dumps     []string
		} `json:"signatures"`
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("%v\n%s", err, js.String())
	}
	if len(back.Dumps) != 5 || back.Dumps[2]["old_signature"] != "gone" || back.Dumps[4]["old_signature"] != "old" || back.Dumps[1]["old_signature"] != nil ||
		back.Counts["new"] != 2 || back.Signatures[0].Count != 2 || !reflect.DeepEqual(back.Signatures[0].Dumps, []string{"a.dmp", "b.dmp"}) {
		t.Errorf("JSON report:\n%s", js.String())
	}
	if NewReport(results(rec("x.dmp", "f"))).Differs() {
		t.Errorf("walked only: Differs")
	}
}
