package crash

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// antennaRE is Antenna's CRASH_ID_RE.
var antennaRE = regexp.MustCompile(`^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{6}[0-9]{6}$`)

func TestNew(t *testing.T) {
	now := time.Date(2016, 9, 18, 23, 59, 0, 0, time.FixedZone("x", -3600)) // 2016-09-19 UTC
	seen := map[ID]bool{}
	for range 1000 {
		id := New(now, ThrottleAccept)
		if !antennaRE.MatchString(string(id)) || !Valid(string(id)) {
			t.Fatalf("New = %q: not in Antenna's form", id)
		}
		if !strings.HasSuffix(string(id), "0160919") {
			t.Fatalf("New = %q: want throttle 0 and date 160919", id)
		}
		if id[14] != '4' {
			t.Fatalf("New = %q: not a version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("New repeated %q", id)
		}
		seen[id] = true
		if id.DateString() != "20160919" || id.Throttle() != 0 {
			t.Fatalf("%q: date %q throttle %d", id, id.DateString(), id.Throttle())
		}
	}
	if id := New(now, ThrottleDefer); id.Throttle() != 1 || !Valid(string(id)) {
		t.Errorf("defer id %q", id)
	}
	if id := New(now, ThrottleFakeAccept); id.Throttle() != 3 || Valid(string(id)) {
		t.Errorf("fake-accept id %q: throttle %d, valid %v", id, id.Throttle(), Valid(string(id)))
	}
}

func TestParse(t *testing.T) {
	good := "de1bb258-cbbf-4589-a673-34f800160918"
	for _, s := range []string{good, "bp-" + good, " bp-" + good + "\n"} {
		id, err := Parse(s)
		if err != nil || string(id) != good {
			t.Errorf("Parse(%q) = %q, %v", s, id, err)
		}
	}
	d, err := ID(good).Date()
	if err != nil || !d.Equal(time.Date(2016, 9, 18, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Date = %v, %v", d, err)
	}
	for _, s := range []string{
		"", "456", strings.ToUpper(good), "de1bb258-cbbf-4589-a673-34f803160918",
		"de1bb258-cbbf-4589-a673-34f8001609a8", "de1bb258xcbbf-4589-a673-34f800160918",
		good + "0", "../../../etc/passwd/xxxxxxxxxxxxxxxxx",
	} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func TestKeys(t *testing.T) {
	id := ID("de1bb258-cbbf-4589-a673-34f800160918")
	for got, want := range map[string]string{
		RawCrashKey(id):                     "v1/raw_crash/20160918/de1bb258-cbbf-4589-a673-34f800160918",
		DumpNamesKey(id):                    "v1/dump_names/de1bb258-cbbf-4589-a673-34f800160918",
		DumpKey(id, "upload_file_minidump"): "v1/dump/de1bb258-cbbf-4589-a673-34f800160918",
		DumpKey(id, "upload_file_browser"):  "v1/upload_file_browser/de1bb258-cbbf-4589-a673-34f800160918",
		ProcessedCrashKey(id):               "v1/processed_crash/de1bb258-cbbf-4589-a673-34f800160918",
		QueuedKey(id):                       "v1/queued/20160918/de1bb258-cbbf-4589-a673-34f800160918",
		LegacyQueuedKey(id):                 "v1/queued/de1bb258-cbbf-4589-a673-34f800160918",
	} {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
	if got, ok := IDFromKey(RawCrashKey(id)); !ok || got != id {
		t.Errorf("IDFromKey = %q, %v", got, ok)
	}
	if _, ok := IDFromKey("v1/raw_crash/20160918/x"); ok {
		t.Error("IDFromKey accepted a bad id")
	}
}

func TestDumpName(t *testing.T) {
	for _, c := range []struct {
		in, name string
		ok       bool
	}{
		{"upload_file_minidump", "upload_file_minidump", true},
		{"upload_file_minidump_flash1", "upload_file_minidump_flash1", true},
		{"../../etc/passwd", "etcpasswd", true},
		{"a-b.c d", "abcd", true},
		{"é", "", true},
		{strings.Repeat("x", 40), strings.Repeat("x", 30), true},
		{"processed_crash", "processed_crash", false},
		{"raw_crash", "raw_crash", false},
		{"dump_names", "dump_names", false},
		{"raw-crash", "rawcrash", true},
		{"raw_crash.", "raw_crash", false},
		{"queued", "queued", false},
	} {
		name, ok := DumpName(c.in)
		if name != c.name || ok != c.ok {
			t.Errorf("DumpName(%q) = %q, %v; want %q, %v", c.in, name, ok, c.name, c.ok)
		}
	}
	if DumpFileName("") != "dump" || DumpFileName("upload_file_minidump") != "dump" || DumpFileName("x") != "x" {
		t.Error("DumpFileName")
	}
}

func TestRawCrashJSON(t *testing.T) {
	id := ID("de1bb258-cbbf-4589-a673-34f800160918")
	ts := time.Date(2016, 9, 18, 10, 11, 12, 123456000, time.UTC)
	r := &RawCrash{
		Annotations: map[string]any{"ProductName": "Firefox", "Version": "1.0", "uuid": "sent", "Num": json.Number("3"), "Email": "a@b"},
		Metadata: Metadata{
			Payload: "multipart", PayloadCompressed: "0", PayloadSize: 632, UserAgent: "None",
			ThrottleRule: "accept_everything", Restricted: []string{"Email"}, CollectorNotes: []string{"a <b> & c"},
		},
		SubmittedTimestamp: ts, UUID: id, Version: RawCrashVersion,
	}
	b, err := r.MarshalJSON() // json.Marshal would escape <, > and & again
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Email":"a@b","Num":3,"ProductName":"Firefox","Version":"1.0","metadata":{"collector_notes":["a <b> & c"],"dump_checksums":{},"payload":"multipart","payload_compressed":"0","payload_size":632,"restricted_annotations":["Email"],"throttle_rule":"accept_everything","user_agent":"None"},"submitted_timestamp":"2016-09-18T10:11:12.123456+00:00","uuid":"de1bb258-cbbf-4589-a673-34f800160918","version":2}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var back RawCrash
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.UUID != id || !back.SubmittedTimestamp.Equal(ts) || back.Version != 2 || back.Annotation("ProductName") != "Firefox" ||
		back.Annotation("Num") != "3" || back.Metadata.PayloadSize != 632 || len(back.Annotations) != 4 {
		t.Errorf("round trip: %+v", back)
	}
	if p := back.Public(); p.Annotation("Email") != "" || p.Annotation("ProductName") != "Firefox" || back.Annotation("Email") != "a@b" {
		t.Errorf("Public: %+v", p.Annotations)
	}
	// Antenna's own form (Python's json.dumps separators) reads too.
	antenna := `{"ProductName": "Firefox", "metadata": {"collector_notes": [], "dump_checksums": {"upload_file_minidump": "e9"}, "payload": "multipart", "payload_compressed": "0", "payload_size": 632, "throttle_rule": "is_nightly", "user_agent": "x"}, "submitted_timestamp": "2016-09-18T10:11:12.123456+00:00", "uuid": "de1bb258-cbbf-4589-a673-34f800160918", "version": 2}`
	if err := json.Unmarshal([]byte(antenna), &back); err != nil || back.Metadata.DumpChecksums["upload_file_minidump"] != "e9" {
		t.Errorf("Antenna's raw crash: %v %+v", err, back)
	}
}

func TestProduct(t *testing.T) {
	for _, c := range []struct {
		a             map[string]any
		product, vers string
	}{
		{map[string]any{"ProductName": "Firefox", "Version": "1.0", "prod": "x", "ver": "y"}, "Firefox", "1.0"},
		{map[string]any{"prod": "Chrome_Linux", "ver": "120.0"}, "Chrome_Linux", "120.0"},
		{map[string]any{"_productName": "App", "_version": "3", "prod": "Electron", "ver": "30.0.1"}, "App", "3"},
		{map[string]any{}, "", ""},
	} {
		r := &RawCrash{Annotations: c.a}
		if r.ProductName() != c.product || r.ProductVersion() != c.vers {
			t.Errorf("%v: %q %q", c.a, r.ProductName(), r.ProductVersion())
		}
	}
}

// FuzzParse: ids from URLs and command lines never panic Parse, and an
// accepted id makes keys that stay inside the store.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"de1bb258-cbbf-4589-a673-34f800160918", "bp-de1bb258-cbbf-4589-a673-34f800160918", "../../x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			return
		}
		if !Valid(string(id)) || len(id.DateString()) != 8 || id.Throttle() > 1 {
			t.Fatalf("Parse(%q) = %q", s, id)
		}
		for _, k := range []string{RawCrashKey(id), DumpKey(id, "upload_file_minidump"), ProcessedCrashKey(id), QueuedKey(id)} {
			if strings.Contains(k, "..") || strings.Count(k, "/") > 3 {
				t.Fatalf("key %q", k)
			}
		}
		if got, ok := IDFromKey(RawCrashKey(id)); !ok || got != id {
			t.Fatalf("IDFromKey(%q) = %q", RawCrashKey(id), got)
		}
	})
}

// FuzzDumpName: any field name gives a name of at most 30 letters, digits
// and underscores.
func FuzzDumpName(f *testing.F) {
	f.Add("upload_file_minidump")
	f.Add("../raw_crash")
	f.Fuzz(func(t *testing.T, field string) {
		name, ok := DumpName(field)
		if len(name) > 30 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			t.Fatalf("DumpName(%q) = %q", field, name)
		}
		if ok && (name == "raw_crash" || name == "dump_names" || name == "processed_crash" || name == "queued") {
			t.Fatalf("DumpName(%q) = %q accepted", field, name)
		}
	})
}

// TestFacts: uptime and install age from the annotations Socorro reads
// (CrashTime, StartupTime, InstallTime, UptimeTS) and Chromium's ptime,
// in that order, and nothing from values that cannot be.
func TestFacts(t *testing.T) {
	sub := time.Unix(1_700_000_100, 0)
	for _, c := range []struct {
		ann           map[string]any
		up            time.Duration
		upSrc         string
		age           time.Duration
		ageSrc        string
		hasUp, hasAge bool
	}{
		{map[string]any{"UptimeTS": "12.5", "CrashTime": "1700000000", "StartupTime": "1699999000", "InstallTime": "1699000000"},
			12500 * time.Millisecond, "UptimeTS", 1_000_000 * time.Second, "CrashTime - InstallTime", true, true},
		{map[string]any{"CrashTime": "1700000000", "StartupTime": "1699999000"}, 1000 * time.Second, "CrashTime - StartupTime", 0, "", true, false},
		{map[string]any{"StartupTime": "1700000000", "InstallTime": "1700000000"}, 100 * time.Second, "submitted_timestamp - StartupTime", 100 * time.Second, "submitted_timestamp - InstallTime", true, true},
		{map[string]any{"ptime": "2500"}, 2500 * time.Millisecond, "ptime", 0, "", true, false},
		{map[string]any{"UptimeTS": "NaN", "StartupTime": "1800000000", "ptime": "-1", "InstallTime": "1800000000"}, 0, "", 0, "", false, false},
		{map[string]any{"UptimeTS": "1e300", "InstallTime": "x"}, 0, "", 0, "", false, false},
	} {
		r := &RawCrash{Annotations: c.ann, SubmittedTimestamp: sub}
		up, upSrc, hasUp := r.Uptime()
		age, ageSrc, hasAge := r.InstallAge()
		if up != c.up || upSrc != c.upSrc || hasUp != c.hasUp || age != c.age || ageSrc != c.ageSrc || hasAge != c.hasAge {
			t.Errorf("%v: uptime %v %q %v, install age %v %q %v", c.ann, up, upSrc, hasUp, age, ageSrc, hasAge)
		}
	}
}

// TestCommentsPersonal: the user's comments are personal whatever the
// collector marked.
func TestCommentsPersonal(t *testing.T) {
	r := &RawCrash{Annotations: map[string]any{CommentsAnnotation: "my words", "Version": "1"}}
	if !r.IsRestricted(CommentsAnnotation) || r.IsRestricted("Version") {
		t.Error("IsRestricted")
	}
	if _, ok := r.Public().Annotations[CommentsAnnotation]; ok {
		t.Error("Public keeps the comments")
	}
}
