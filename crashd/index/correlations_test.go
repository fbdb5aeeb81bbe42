package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/internal/testkit/cputime"
)

// TestTwoProportion pins the statistic against values computed by hand
// (z² is the Yates-corrected chi-square of R's prop.test, 11.3039...).
func TestTwoProportion(t *testing.T) {
	z, p := TwoProportion(10, 20, 5, 50)
	if math.Abs(z-3.3621331612444196) > 1e-9 || math.Abs(p-0.00038671408060558023) > 1e-12 {
		t.Errorf("TwoProportion(10, 20, 5, 50) = %v, %v; want 3.36213316, 0.00038671", z, p)
	}
	if math.Abs(z*z-11.303939393939395) > 1e-9 {
		t.Errorf("z² = %v, want the corrected chi-square 11.3039", z*z)
	}
	for _, c := range [][4]int{{5, 50, 10, 20}, {1, 2, 1, 2}, {0, 10, 0, 10}, {10, 10, 10, 10}, {3, 0, 1, 1}} {
		if z, p := TwoProportion(c[0], c[1], c[2], c[3]); z != 0 || p != 1 {
			t.Errorf("TwoProportion%v = %v, %v; want 0, 1 (not over-represented)", c, z, p)
		}
	}
}

// TestCorrelations: crashes recorded as the processor records them, a
// module (with its version) and a personal annotation only in the
// crashes of one signature: the module comes first, 100 % of the
// signature's crashes against a small share overall; the personal value
// is counted only with Personal; another product's crashes are not in
// the reference; the sample bound is kept.
func TestCorrelations(t *testing.T) { backends(t, testCorrelations) }

func testCorrelations(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
	add := func(product, sig string, evil bool) {
		n++
		at := now.Add(-time.Duration(n) * time.Minute)
		c := Crash{ID: crashID(n, at), ReceivedAt: at, Product: product, Version: "1.0", OS: "Windows NT", CPU: "amd64", Signature: sig, Attempts: 1}
		d := Details{ProcessType: []string{"parent", "content"}[rng.IntN(2)], OSVersion: []string{"10.0.19045", "10.0.22631"}[rng.IntN(2)],
			CPUInfo: []string{"GenuineIntel family 6 model 158 stepping 10", "AuthenticAMD family 25 model 33 stepping 0"}[rng.IntN(2)],
			Modules: []string{"ntdll.dll", "xul.dll"}, ModuleVersions: []crash.ModuleVersion{{Name: "xul.dll", Version: "120.0"}},
			Annotations: []Annotation{{Name: "ReleaseChannel", Value: []string{"beta", "release"}[rng.IntN(2)]}}}
		if rng.IntN(4) == 0 {
			d.Modules = append(d.Modules, "nvd3dumx.dll")
		}
		if evil {
			d.Modules = append(d.Modules, "evil.dll")
			d.ModuleVersions = append(d.ModuleVersions, crash.ModuleVersion{Name: "evil.dll", Version: "6.6.6.6"})
			d.Annotations = append(d.Annotations, Annotation{Name: "Email", Value: "victim@example.com", Personal: true})
		}
		if _, err := ix.RecordProcessed(ctx, Outcome{Crash: c, Details: d}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 80 {
		add("P", fmt.Sprintf("other%d", i%7), false)
		if i%10 == 0 {
			add("P", "evil", true)
		}
	}
	for range 5 {
		add("Q", "q", true) // another product: not in P's reference
	}
	q := CorrelationQuery{Product: "P", Signature: "evil", Since: now.Add(-7 * 24 * time.Hour), Until: now}
	got, err := ix.Correlations(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got.SignatureCrashes != 8 || got.OverallCrashes != 88 || got.Sampled {
		t.Fatalf("groups %d and %d crashes (sampled %v), want 8 and 88", got.SignatureCrashes, got.OverallCrashes, got.Sampled)
	}
	if len(got.Items) < 2 {
		t.Fatalf("correlations %+v, want evil.dll first", got.Items)
	}
	first := got.Items[0]
	if first.Field != FieldModule || first.Value != "evil.dll" || first.InSignature != 8 || first.Overall != 8 || !first.All ||
		first.ShareInSignature != 1 || math.Abs(first.ShareOverall-8.0/88) > 1e-12 || first.ShareOthers != 0 || first.P >= 1e-6 {
		t.Errorf("first correlation %+v, want module evil.dll, 8 of 8 against 8 of 88", first)
	}
	if second := got.Items[1]; second.Field != FieldModuleVersion || second.Value != "evil.dll 6.6.6.6" || !second.All {
		t.Errorf("second correlation %+v, want module_version evil.dll 6.6.6.6", second)
	}
	for _, it := range got.Items {
		if strings.Contains(it.Value, "victim") {
			t.Errorf("personal value counted without Personal: %+v", it)
		}
		if it.Value == "ntdll.dll" || it.Value == "xul.dll" {
			t.Errorf("a module every crash has is listed: %+v", it)
		}
		if it.InSignature < CorrelationMinCount || it.P >= CorrelationMaxP {
			t.Errorf("listed against the rule: %+v", it)
		}
	}
	q.Personal = true
	if got, err = ix.Correlations(ctx, q); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range got.Items {
		if it.Field == AnnotationField+"Email" && it.Value == "victim@example.com" && it.All && it.Overall == 8 {
			found = true
		}
	}
	if !found {
		t.Errorf("with Personal: no annotation.Email correlation in %+v", got.Items)
	}
	// Without a product: Q's crashes are in the reference (and the
	// signature's group is still evil's alone).
	q.Product = ""
	if got, err = ix.Correlations(ctx, q); err != nil {
		t.Fatal(err)
	}
	if got.OverallCrashes != 93 || got.Items[0].Value != "evil.dll" && got.Items[0].Value != "victim@example.com" {
		t.Errorf("all products: %d crashes, first %+v", got.OverallCrashes, got.Items[0])
	}
	// The sample: the newest 20 of the product, the newest 5 of the
	// signature.
	q = CorrelationQuery{Product: "P", Signature: "evil", Since: now.Add(-7 * 24 * time.Hour), Until: now, Sample: 5}
	if got, err = ix.Correlations(ctx, q); err != nil {
		t.Fatal(err)
	}
	if got.SignatureCrashes != 5 || got.OverallCrashes != 5 || !got.Sampled {
		t.Errorf("sampled by 5: %d and %d crashes (sampled %v)", got.SignatureCrashes, got.OverallCrashes, got.Sampled)
	}
	// Exactly the bound: not a sample.
	q.Sample = 8
	if got, err = ix.Correlations(ctx, q); err != nil || got.SignatureCrashes != 8 || got.OverallCrashes != 8 || !got.Sampled {
		t.Errorf("sampled by 8: %d and %d crashes (sampled %v), %v", got.SignatureCrashes, got.OverallCrashes, got.Sampled, err)
	}
	q.Sample, q.Product = 100, "P"
	if got, err = ix.Correlations(ctx, q); err != nil || got.SignatureCrashes != 8 || got.OverallCrashes != 88 || got.Sampled {
		t.Errorf("a bound above the groups: %d and %d crashes (sampled %v), %v", got.SignatureCrashes, got.OverallCrashes, got.Sampled, err)
	}
	// An unknown signature: no crashes, no correlations.
	q = CorrelationQuery{Product: "P", Signature: "nothing", Since: now.Add(-7 * 24 * time.Hour), Until: now}
	if got, err = ix.Correlations(ctx, q); err != nil || got.SignatureCrashes != 0 || len(got.Items) != 0 {
		t.Errorf("unknown signature: %+v, %v", got, err)
	}
	if _, err := ix.Correlations(ctx, CorrelationQuery{Signature: "evil"}); err == nil {
		t.Error("no period: no error")
	}
}

// TestModuleVersionList: the stored form is bounded and parses back.
func TestModuleVersionList(t *testing.T) {
	mvs := []crash.ModuleVersion{{Name: "a.dll", Version: "1.0"}, {Name: "a.dll", Version: "2.0"}, {Name: "b|c.dll", Version: "1"}, {Name: "d.dll", Version: "x\ty"}, {Name: "", Version: "1"}, {Name: "e.dll", Version: ""},
		{Name: "bad\xff\x00.dll", Version: "3"}, {Name: strings.Repeat("n", 300), Version: "1"}}
	got := moduleVersionList(mvs)
	want := "|a.dll\t1.0|bad\uFFFD.dll\t3|" + strings.Repeat("n", maxModuleVersion) + "\t1|"
	if got != want {
		t.Errorf("moduleVersionList = %q, want %q", got, want)
	}
	var vals []string
	crashValues("", "", "", "", "", "", got, func(f, v string) { vals = append(vals, f+"="+v) })
	if len(vals) != 3 || vals[0] != "module_version=a.dll 1.0" {
		t.Errorf("parsed back: %q", vals)
	}
	many := make([]crash.ModuleVersion, 3000)
	for i := range many {
		many[i] = crash.ModuleVersion{Name: fmt.Sprintf("m%d.dll", i), Version: "1"}
	}
	if c := strings.Count(moduleVersionList(many), "\t"); c != maxModuleVersions {
		t.Errorf("%d module versions kept, want %d", c, maxModuleVersions)
	}
	if got := cpuInfo(strings.Repeat("é", 200)); len(got) > maxCPUInfo || !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("cpuInfo cut badly: %q", got)
	}
}

// BenchmarkCorrelations computes the correlations of a signature of 1,000
// crashes against 10,000 crashes of its product (the sample's bound) with
// realistic module lists: 150 modules a crash out of 400 names (20 with
// versions), 2 indexed annotations, on SQLite. The web benchmark
// (crashd/web BenchmarkHome, correlations_*) measures the page's index of
// 100,000 crashes with short module lists.
//
//	go test ./crashd/index -run X -bench Correlations -benchtime 10x
func BenchmarkCorrelations(b *testing.B) {
	ctx := context.Background()
	ix, err := OpenSQLite(ctx, b.TempDir()+"/index.sqlite")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	names := make([]string, 400)
	for i := range names {
		names[i] = fmt.Sprintf("module%03d.dll", i)
	}
	const n = CorrelationSample
	t0 := time.Now()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for i := g; i < n; i += 8 {
				at := now.Add(-time.Duration(rng.Int64N(int64(7 * 24 * time.Hour))))
				sig := fmt.Sprintf("sig%d", rng.IntN(200))
				if i%10 == 0 {
					sig = "target"
				}
				c := Crash{ID: crashID(i, at), ReceivedAt: at, Product: "P", Version: "1", OS: "Windows NT", CPU: "amd64", Signature: sig}
				d := Details{ProcessType: "content", OSVersion: fmt.Sprintf("10.0.%d", 19041+rng.IntN(5)),
					CPUInfo:     fmt.Sprintf("GenuineIntel family 6 model %d stepping %d", 140+rng.IntN(20), rng.IntN(12)),
					Annotations: []Annotation{{Name: "ReleaseChannel", Value: "release"}, {Name: "GraphicsAdapter", Value: fmt.Sprintf("0x%04x", rng.IntN(300))}}}
				for _, j := range rng.Perm(len(names))[:150] {
					d.Modules = append(d.Modules, names[j])
					if j < 20 {
						d.ModuleVersions = append(d.ModuleVersions, crash.ModuleVersion{Name: names[j], Version: fmt.Sprintf("1.%d", rng.IntN(3))})
					}
				}
				if _, err := ix.RecordProcessed(ctx, Outcome{Crash: c, Details: d}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("indexed %d crashes in %v", n, time.Since(t0))
	q := CorrelationQuery{Product: "P", Signature: "target", Since: now.Add(-7 * 24 * time.Hour), Until: now}
	cpu0 := cputime.Used().Nanoseconds()
	defer func() {
		if cpu := cputime.Used().Nanoseconds(); cpu > 0 {
			b.ReportMetric(float64(cpu-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		}
	}()
	for b.Loop() {
		got, err := ix.Correlations(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		if got.SignatureCrashes != n/10 || got.OverallCrashes != n {
			b.Fatalf("groups %d, %d", got.SignatureCrashes, got.OverallCrashes)
		}
	}
}

// FuzzCorrelationValues: module versions and CPU infos from dumps (any
// bytes) are stored as valid UTF-8 without NUL, bounded, and read back as
// at most one value per stored module; cpu info never panics the parse.
func FuzzCorrelationValues(f *testing.F) {
	f.Add("xul.dll", "120.0.1.8686", "GenuineIntel family 6 model 158 stepping 10")
	f.Add("a|b", "1\t2", "family 6")
	f.Add("\xff\x00", "", " model family ")
	f.Fuzz(func(t *testing.T, name, version, cpu string) {
		stored := moduleVersionList([]crash.ModuleVersion{{Name: name, Version: version}, {Name: version, Version: name}})
		ci := cpuInfo(cpu)
		for _, s := range []string{stored, ci} {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("stored %q: not valid UTF-8 without NUL", s)
			}
		}
		if len(ci) > maxCPUInfo {
			t.Fatalf("cpu info of %d bytes", len(ci))
		}
		n := 0
		crashValues("Linux", "1", "amd64", ci, "", "", stored, func(field, value string) {
			if field == FieldModuleVersion {
				n++
			}
			if value == "" {
				t.Fatalf("an empty %s value", field)
			}
		})
		if n > 2 {
			t.Fatalf("%d module versions read back from %q", n, stored)
		}
	})
}
