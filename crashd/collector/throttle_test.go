package collector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"
)

// Antenna's throttler tests (tests/test_throttler.py), translated: its rule
// set MOZILLA_RULES written as crashd rules (testdata/antenna_mozilla_rules.json)
// and each case's crash and expected (result, rule). Antenna's percentages
// are not compared: crashd does not report them.

// mozillaRules reads Antenna's MOZILLA_RULES as crashd rules; without
// products (Antenna's ALL_PRODUCTS, its tests' default) the
// unsupported_product rule is left out, without package names
// (ALL_PRODUCT_PACKAGENAMES) the unsupported_packagename rules.
func mozillaRules(t testing.TB, products, packageNames bool) []Rule {
	t.Helper()
	b, err := os.ReadFile("testdata/antenna_mozilla_rules.json")
	if err != nil {
		t.Fatal(err)
	}
	var rules []Rule
	if err := json.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(rules, func(r Rule) bool {
		return (!products && r.Name == "unsupported_product") || (!packageNames && r.Name == "unsupported_packagename")
	})
}

// testThrottler compiles rules with a fixed random number and clock.
func testThrottler(t testing.TB, rules []Rule, random float64, now time.Time) *throttler {
	t.Helper()
	th, err := newThrottler(rules)
	if err != nil {
		t.Fatal(err)
	}
	th.rand = func() float64 { return random }
	th.now = func() time.Time { return now }
	return th
}

// telemetry is a TelemetryEnvironment annotation for a Windows build.
func telemetry(build any) string {
	b, _ := json.Marshal(map[string]any{"system": map[string]any{"os": map[string]any{"name": "Windows_NT", "windowsBuildNumber": build}}})
	return string(b)
}

func TestThrottleAntennaMozillaRules(t *testing.T) {
	now := time.Date(2020, 5, 27, 12, 0, 0, 0, time.UTC) // freeze_time of test_valid_buildis
	type want struct{ result, rule string }
	accept := func(rule string) want { return want{ResultAccept, rule} }
	reject := func(rule string) want { return want{ResultReject, rule} }
	everything := accept("accept_everything")
	for _, c := range []struct {
		name           string
		products       bool // Antenna's MOZILLA_PRODUCTS (else ALL_PRODUCTS)
		noPackageNames bool // ALL_PRODUCT_PACKAGENAMES
		random         float64
		now            time.Time
		crash          map[string]any
		want           want
	}{
		{name: "test_bad_data", crash: map[string]any{"ProductName": nil, "Version": nil, "BuildID": nil, "ReleaseChannel": nil}, want: everything},
		{name: "test_old_buildid", crash: map[string]any{"ProductName": "FireSquid", "BuildID": "20170505000000"}, want: reject("has_old_buildid")},
		{name: "test_hangid", crash: map[string]any{"ProductName": "FireSquid", "Version": "99", "ProcessType": "browser", "HangID": "xyz"}, want: reject("has_hangid_and_browser")},
		{name: "test_hangid without ProcessType (browser by default)", crash: map[string]any{"ProductName": "FireSquid", "HangID": "xyz"}, want: reject("has_hangid_and_browser")},
		{name: "test_hangid content", crash: map[string]any{"ProductName": "FireSquid", "ProcessType": "content", "HangID": "xyz"}, want: everything},
		{name: "test_infobar", now: time.Date(2019, 5, 27, 12, 0, 0, 0, time.UTC),
			crash: map[string]any{"ProductName": "Firefox", "SubmittedFromInfobar": "true", "Version": "52.0.2", "BuildID": "20171223222554"}, want: reject("infobar_is_true")},
		{name: "test_productname_reject empty", products: true, crash: map[string]any{"ProductName": ""}, want: reject("unsupported_product")},
		{name: "test_productname_reject firefox", products: true, crash: map[string]any{"ProductName": "firefox"}, want: reject("unsupported_product")},
		{name: "test_productname_reject testproduct", products: true, crash: map[string]any{"ProductName": "testproduct"}, want: reject("unsupported_product")},
		{name: "test_productname_reject missing", products: true, crash: map[string]any{}, want: reject("unsupported_product")},
		{name: "test_productname_none_reject", products: true, crash: map[string]any{"ProductName": nil}, want: reject("unsupported_product")},
		{name: "test_productname_fakeaccept", products: true, crash: map[string]any{"ProductName": "b2g"}, want: want{ResultFakeAccept, "b2g"}},
		{name: "test_productname_no_unsupported_products", crash: map[string]any{"ProductName": "testproduct"}, want: everything},
		{name: "test_packagename_accept Fenix", products: true, crash: map[string]any{"ProductName": "Fenix", "Android_PackageName": "org.mozilla.firefox"}, want: everything},
		{name: "test_packagename_accept Focus", products: true, crash: map[string]any{"ProductName": "Focus", "Android_PackageName": "org.mozilla.focus"}, want: everything},
		{name: "test_packagename_accept ReferenceBrowser", products: true, crash: map[string]any{"ProductName": "ReferenceBrowser", "Android_PackageName": "org.mozilla.reference.browser"}, want: everything},
		{name: "test_packagename_accept Thunderbird", products: true, crash: map[string]any{"ProductName": "Thunderbird", "Android_PackageName": "org.example.fork"}, want: everything},
		{name: "test_packagename_reject empty", products: true, crash: map[string]any{"ProductName": "Fenix", "Android_PackageName": ""}, want: reject("unsupported_packagename")},
		{name: "test_packagename_reject Fenix fork", products: true, crash: map[string]any{"ProductName": "Fenix", "Android_PackageName": "org.example.fork"}, want: reject("unsupported_packagename")},
		{name: "test_packagename_reject Focus fork", products: true, crash: map[string]any{"ProductName": "Focus", "Android_PackageName": "org.example.fork"}, want: reject("unsupported_packagename")},
		{name: "test_packagename_reject_no_packagename", products: true, crash: map[string]any{"ProductName": "Fenix"}, want: reject("unsupported_packagename")},
		{name: "test_packagename_no_unsupported_packagenames", noPackageNames: true, crash: map[string]any{"ProductName": "Fenix"}, want: everything},
		{name: "test_packagename_no_unsupported_packagenames fork", noPackageNames: true, crash: map[string]any{"ProductName": "Fenix", "Android_PackageName": "org.example.fork"}, want: everything},
		{name: "test_throttleable 0", crash: map[string]any{"ProductName": "Test", "Throttleable": "0"}, want: accept("throttleable_0")},
		{name: "test_throttleable 1", crash: map[string]any{"ProductName": "Test", "Throttleable": "1"}, want: everything},
		{name: "test_throttleable foo", crash: map[string]any{"ProductName": "Test", "Throttleable": "foo"}, want: everything},
		{name: "test_comments", crash: map[string]any{"ProductName": "Test", "Comments": "foo bar baz"}, want: accept("has_comments")},
		{name: "test_phc", crash: map[string]any{"ProductName": "Test", "PHCKind": "some value"}, want: accept("has_phc")},
		{name: "test_background none", crash: map[string]any{"ProductName": "BarTest"}, want: everything},
		{name: "test_background content", crash: map[string]any{"ProductName": "BarTest", "ProcessType": "content"}, want: everything},
		{name: "test_background gpu", crash: map[string]any{"ProductName": "BarTest", "ProcessType": "gpu"}, want: accept("is_background")},
		{name: "test_background rdd", crash: map[string]any{"ProductName": "BarTest", "ProcessType": "rdd"}, want: accept("is_background")},
		{name: "test_background plugin", crash: map[string]any{"ProductName": "BarTest", "ProcessType": "plugin"}, want: accept("is_background")},
		{name: "test_background utility", crash: map[string]any{"ProductName": "BarTest", "ProcessType": "utility"}, want: accept("is_background")},
		{name: "test_background socket", crash: map[string]any{"ProductName": "BarTest", "ProcessType": "socket"}, want: accept("is_background")},
		{name: "test_is_shutdownkill 0.9", random: 0.9, crash: map[string]any{"ProductName": "Test", "ipc_channel_error": "ShutDownKill"}, want: reject("is_shutdownkill")},
		{name: "test_is_shutdownkill 0.09", random: 0.09, crash: map[string]any{"ProductName": "Test", "ipc_channel_error": "ShutDownKill"}, want: everything},
		{name: "test_is_firefox_esr_unsupported_windows 0.30", random: 0.30,
			crash: map[string]any{"ProductName": "Firefox", "ReleaseChannel": "esr", "TelemetryEnvironment": telemetry(9600)}, want: reject("is_firefox_esr_unsupported_windows")},
		{name: "test_is_firefox_esr_unsupported_windows 0.20", random: 0.20,
			crash: map[string]any{"ProductName": "Firefox", "ReleaseChannel": "esr", "TelemetryEnvironment": telemetry(9600)}, want: accept("is_alpha_beta_esr")},
		{name: "esr on Windows 10", random: 0.30,
			crash: map[string]any{"ProductName": "Firefox", "ReleaseChannel": "esr", "TelemetryEnvironment": telemetry(10240)}, want: accept("is_alpha_beta_esr")},
		{name: "test_is_alpha_beta_esr aurora", crash: map[string]any{"ProductName": "Test", "ReleaseChannel": "aurora"}, want: accept("is_alpha_beta_esr")},
		{name: "test_is_alpha_beta_esr beta", crash: map[string]any{"ProductName": "Test", "ReleaseChannel": "beta"}, want: accept("is_alpha_beta_esr")},
		{name: "test_is_alpha_beta_esr esr", crash: map[string]any{"ProductName": "Test", "ReleaseChannel": "esr"}, want: accept("is_alpha_beta_esr")},
		{name: "test_is_nightly nightly", crash: map[string]any{"ProductName": "Test", "ReleaseChannel": "nightly"}, want: accept("is_nightly")},
		{name: "test_is_nightly nightlyfoo", crash: map[string]any{"ProductName": "Test", "ReleaseChannel": "nightlyfoo"}, want: accept("is_nightly")},
		{name: "test_is_firefox 0.09", random: 0.09, crash: map[string]any{"ProductName": "Firefox", "ReleaseChannel": "release"}, want: accept("is_firefox_desktop")},
		{name: "test_is_firefox 0.9", random: 0.9, crash: map[string]any{"ProductName": "Firefox", "ReleaseChannel": "release"}, want: reject("is_firefox_desktop")},
		{name: "test_is_nothing", crash: map[string]any{}, want: everything},
		// test_breakpad_resource.py's test_get_throttle_result, with the default configuration.
		{name: "test_get_throttle_result", products: true, crash: map[string]any{"ProductName": "Firefox", "ReleaseChannel": "nightly"}, want: accept("is_nightly")},
	} {
		at := now
		if !c.now.IsZero() {
			at = c.now
		}
		th := testThrottler(t, mozillaRules(t, c.products, !c.noPackageNames), c.random, at)
		result, rule := th.throttle(c.crash)
		if (want{result, rule}) != c.want {
			t.Errorf("%s: (%s, %s), want (%s, %s)", c.name, result, rule, c.want.result, c.want.rule)
		}
	}
}

// Antenna's tests of its condition functions, as crashd conditions.
func TestThrottleAntennaConditions(t *testing.T) {
	now := time.Date(2020, 5, 27, 12, 0, 0, 0, time.UTC)
	rule := func(when ...Condition) []Rule {
		return []Rule{{Name: "hit", When: when, Result: ResultReject}, {Name: "miss", Result: ResultAccept}}
	}
	mozilla := mozillaRules(t, false, true)
	find := func(name string) []Rule {
		for _, r := range mozilla {
			if r.Name == name {
				return rule(r.When...)
			}
		}
		t.Fatalf("no rule %s", name)
		return nil
	}
	check := func(what string, rules []Rule, crash map[string]any, hit bool) {
		t.Helper()
		_, got := testThrottler(t, rules, 0, now).throttle(crash)
		if (got == "hit") != hit {
			t.Errorf("%s %v: matched %v, want %v", what, crash, got == "hit", hit)
		}
	}

	// Test_match_old_buildid.
	old := find("has_old_buildid")
	check("no buildid", old, map[string]any{}, false)
	for _, id := range []any{"", "None", nil, "abc", "20220404", "11111111111111", "20171301000000"} {
		check("bad buildid", old, map[string]any{"BuildID": id}, false)
	}
	for id, want := range map[string]bool{"20170101000000": true, "20180101000000": true, "20180528000000": true,
		"20180529000000": false, "20180530000000": false, "20200527000000": false} {
		check("buildid", old, map[string]any{"BuildID": id}, want)
	}

	// Test_match_infobar_true.
	infobar := find("infobar_is_true")
	crash := func(drop string, set ...string) map[string]any {
		c := map[string]any{"ProductName": "Firefox", "SubmittedFromInfobar": "true", "BuildID": "20171128222554", "Version": "57.0"}
		delete(c, drop)
		for i := 0; i+1 < len(set); i += 2 {
			c[set[i]] = set[i+1]
		}
		return c
	}
	for v, want := range map[string]bool{"51.0": false, "60.0": false, "59.0": true, "58.0": true, "57.0": true, "57.0.2": true,
		"56.0": true, "55.0": true, "54.0": true, "53.0": true, "52.0": true} {
		check("infobar version", infobar, crash("", "Version", v), want)
	}
	check("infobar no product", infobar, crash("ProductName"), false)
	check("infobar FishSplat", infobar, crash("", "ProductName", "FishSplat"), false)
	check("infobar not submitted", infobar, crash("SubmittedFromInfobar"), false)
	check("infobar false", infobar, crash("", "SubmittedFromInfobar", "false"), false)
	check("infobar no buildid", infobar, crash("BuildID"), false)
	check("infobar empty buildid", infobar, crash("", "BuildID", ""), false)
	check("infobar buildid in range", infobar, crash(""), true)
	check("infobar buildid after range", infobar, crash("", "BuildID", "20171226003912"), false)

	// Test_match_unsupported_windows (the JSON conditions of
	// is_firefox_esr_unsupported_windows).
	var windows []Condition
	for _, r := range mozilla {
		if r.Name == "is_firefox_esr_unsupported_windows" {
			windows = r.When[2:]
		}
	}
	win := rule(windows...)
	for _, env := range []string{"", "{}", `{"system":{}}`, `{"system":{"os":{}}}`, `{"system":{"os":{"name":""}}}`,
		`{"system":{"os":{"name":"Windows_NT"}}}`, `{"system":{"os":{"name":"Windows_NT","windowsBuildNumber":""}}}`,
		`{"system":{"os":{"name":"Windows_NT","windowsBuildNumber":null}}}`, `{"system":{"os":{"name":"Windows_NT","windowsBuildNumber":"7601"}}}`,
		`not json`, `null`, `[1]`, `{"system":"os"}`} {
		check("windows missing data", win, map[string]any{"TelemetryEnvironment": env}, false)
	}
	check("windows no annotation", win, map[string]any{}, false)
	for build, want := range map[int]bool{7601: true, 9200: true, 9600: true, 10240: false} {
		check(fmt.Sprintf("windows %d", build), win, map[string]any{"TelemetryEnvironment": telemetry(build)}, want)
	}
	// A JSON object annotation (from a JSON "extra" part) is read as it is.
	var obj map[string]any
	json.Unmarshal([]byte(telemetry(7601)), &obj)
	check("windows object annotation", win, map[string]any{"TelemetryEnvironment": obj}, true)

	// TestRule: test_condition_function_value, on a value (a prefix).
	bar := rule(Condition{Field: "Foo", Prefix: ptr("bar")})
	check("prefix", bar, map[string]any{"Foo": "bar"}, true)
	check("prefix", bar, map[string]any{"Foo": "piano"}, false)
	check("prefix", bar, map[string]any{"Foo": nil}, false)
	// Text annotations holding numbers, array indexes.
	check("at_least text", rule(Condition{Field: "N", AtLeast: ptr(3.0)}), map[string]any{"N": " 4 "}, true)
	check("at_least text", rule(Condition{Field: "N", AtLeast: ptr(3.0)}), map[string]any{"N": "two"}, false)
	check("json index", rule(Condition{Field: "J", JSON: "a.1", Equals: ptr("y")}), map[string]any{"J": `{"a":["x","y"]}`}, true)
	check("json index", rule(Condition{Field: "J", JSON: "a.2", Equals: ptr("y")}), map[string]any{"J": `{"a":["x","y"]}`}, false)
	// Defaults of one absent annotation differ between conditions: each reads its own.
	check("json defaults", rule(Condition{Field: "J", Default: ptr(`{"a":1}`), JSON: "a", Equals: ptr("1")},
		Condition{Field: "J", Default: ptr(`{"a":2}`), JSON: "a", Equals: ptr("2")}), map[string]any{}, true)

	// TestRule.test_percentage and TestACCEPT_ALL.
	half := []Rule{{Name: "test", When: []Condition{{Field: "ProductName", Equals: ptr("test")}}, Percent: ptr(50.0), Result: ResultAccept, Otherwise: ResultReject}}
	if r, n := testThrottler(t, half, 0.45, now).throttle(map[string]any{"ProductName": "test"}); r != ResultAccept || n != "test" {
		t.Errorf("percentage 0.45: %s %s", r, n)
	}
	if r, n := testThrottler(t, half, 0.55, now).throttle(map[string]any{"ProductName": "test"}); r != ResultReject || n != "test" {
		t.Errorf("percentage 0.55: %s %s", r, n)
	}
	if r, n := testThrottler(t, nil, 0, now).throttle(map[string]any{"ProductName": "Test"}); r != ResultAccept || n != "accept_everything" {
		t.Errorf("ACCEPT_ALL: %s %s", r, n)
	}

	// Bad conditions are configuration errors.
	for _, bad := range []Condition{{Field: "J", JSON: "a..b"}, {Field: "B", BuildIDOlderThanDays: ptr(-1)}} {
		if _, err := newThrottler(rule(bad)); err == nil {
			t.Errorf("condition %+v accepted", bad)
		}
	}
}

// TestSubmitAntennaMozillaRules: test_breakpad_resource.py's
// test_submit_crash_report under Antenna's default rules: a nightly crash
// is stored with throttle_rule is_nightly; a crash of an old build is
// refused with Discarded=rule_has_old_buildid and not stored.
func TestSubmitAntennaMozillaRules(t *testing.T) {
	e := newEnv(t, Config{Throttle: mozillaRules(t, true, true)}, nil)
	body, ct := form(map[string]any{"ProductName": "Firefox", "Version": "60.0a1", "ReleaseChannel": "nightly", "upload_file_minidump": dump})
	status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false)
	if status != 200 {
		t.Fatalf("status %d: %q", status, got)
	}
	raw, _, dumps := stored(t, e.store, answerID(t, got, "0"))
	if raw.Metadata.ThrottleRule != "is_nightly" || raw.Metadata.PayloadSize != 632 || string(dumps["upload_file_minidump"]) != "abcd1234" {
		t.Errorf("metadata %+v", raw.Metadata)
	}
	before := len(keys(t, e.store))
	body, ct = form(map[string]any{"ProductName": "Firefox", "Version": "50.0", "BuildID": "20161001000000", "upload_file_minidump": dump})
	if status, got, _ := e.post(t, "/submit", body, http.Header{"Content-Type": {ct}}, false); status != 200 || got != "Discarded=rule_has_old_buildid" {
		t.Errorf("old build: %d %q", status, got)
	}
	if n := len(keys(t, e.store)); n != before {
		t.Errorf("a refused crash stored %d keys", n-before)
	}
}

// FuzzThrottle runs Antenna's rules over crashes with one hostile
// annotation value (text, and the same read as a JSON annotation): no
// panic, and always a decision by a known rule.
func FuzzThrottle(f *testing.F) {
	f.Add("TelemetryEnvironment", telemetry(9600))
	f.Add("BuildID", "20180528000000")
	f.Add("TelemetryEnvironment", `{"system":{"os":[{"name":1e999}]}}`)
	f.Add("ProductName", "B2G")
	th := testThrottler(f, mozillaRules(f, true, true), 0.5, time.Now())
	names := map[string]bool{}
	for _, r := range th.rules {
		names[r.Name] = true
	}
	f.Fuzz(func(t *testing.T, field, value string) {
		crash := map[string]any{"ProductName": "Firefox", "ReleaseChannel": "esr", field: value}
		for _, c := range []map[string]any{crash, jsonAnnotation(crash, field, value)} {
			result, rule := th.throttle(c)
			if !names[rule] || result == ResultContinue {
				t.Fatalf("%v: (%s, %s)", c, result, rule)
			}
		}
	})
}

// jsonAnnotation returns crash with field's value read as JSON, when it is.
func jsonAnnotation(crash map[string]any, field, value string) map[string]any {
	var v any
	if json.Unmarshal([]byte(value), &v) != nil {
		return crash
	}
	c := map[string]any{}
	for k, x := range crash {
		c[k] = x
	}
	c[field] = v
	return c
}
