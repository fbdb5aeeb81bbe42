package index

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// migrationCorrelations (schema version 12) keeps what the correlations
// count beyond the columns already indexed: the CPU's vendor, family,
// model and stepping, and the modules' versions ("|name\tversion|...").
// Crashes indexed before it have neither (empty): they count as crashes
// without a CPU info or module versions. Portable SQL.
const migrationCorrelations = `
ALTER TABLE crashes ADD COLUMN cpu_info TEXT NOT NULL DEFAULT '';
ALTER TABLE crashes ADD COLUMN module_versions TEXT NOT NULL DEFAULT '';
`

// Bounds of what is indexed for the correlations: the CPU info is cut at
// maxCPUInfo bytes; at most maxModuleVersions module versions are kept per
// crash, each name and version within maxModuleVersion bytes.
const (
	maxCPUInfo        = 200
	maxModuleVersions = 1000
	maxModuleVersion  = 256
)

// textValue makes s storable text in both dialects: valid UTF-8 without
// NUL (PostgreSQL's text takes neither), at most n bytes.
func textValue(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	return strings.ToValidUTF8(s, "") // a character cut in two
}

// cpuInfo is how Details.CPUInfo is stored.
func cpuInfo(s string) string { return textValue(s, maxCPUInfo) }

// moduleVersionList is how Details.ModuleVersions is stored:
// "|name\tversion|..." (the first version of each name), names or
// versions holding '|' or a tab, or too long, left out.
func moduleVersionList(mvs []crash.ModuleVersion) string {
	seen := map[string]bool{}
	var b strings.Builder
	for _, mv := range mvs {
		if len(seen) == maxModuleVersions {
			break
		}
		name, v := textValue(mv.Name, maxModuleVersion), textValue(mv.Version, maxModuleVersion)
		if name == "" || v == "" || seen[name] || strings.ContainsAny(name, "|\t") || strings.ContainsAny(v, "|\t") {
			continue
		}
		seen[name] = true
		if b.Len() == 0 {
			b.WriteByte('|')
		}
		b.WriteString(name)
		b.WriteByte('\t')
		b.WriteString(v)
		b.WriteByte('|')
	}
	return b.String()
}

// The fields the correlations compare; an indexed annotation's field is
// AnnotationField + its name.
const (
	FieldModule        = "module"         // a module's base name
	FieldModuleVersion = "module_version" // "name version"
	FieldOSVersion     = "os_version"     // "OS version" ("Windows NT 10.0.19045")
	FieldCPU           = "cpu"            // the architecture ("amd64")
	FieldCPUVendor     = "cpu_vendor"     // "GenuineIntel", "AuthenticAMD"
	FieldCPUFamily     = "cpu_family"     // "GenuineIntel family 6"
	FieldCPUInfo       = "cpu_info"       // "GenuineIntel family 6 model 158 stepping 10"
	FieldProcessType   = "process_type"
	AnnotationField    = "annotation."
)

// The rule's defaults and bounds (docs/crashd.md, "Correlations").
const (
	// CorrelationSample is the most crashes read per group: the newest of
	// the signature's, the newest of the product's (the reference).
	CorrelationSample = 10_000
	// CorrelationMinCount is the fewest crashes of the signature a value
	// needs to be listed.
	CorrelationMinCount = 3
	// CorrelationLimit is how many values are listed at most.
	CorrelationLimit = 20
	// CorrelationMaxP is the largest one-sided p-value listed.
	CorrelationMaxP = 0.05
	// maxCandidates bounds the distinct values counted in the
	// signature's crashes (and so the memory of a computation).
	maxCandidates = 100_000
)

// CorrelationQuery asks which values are over-represented in a
// signature's crashes against all crashes of a product in a period.
type CorrelationQuery struct {
	// Product: "" compares with the crashes of every product.
	Product, Signature string
	// Since <= received_at < Until; both required.
	Since, Until time.Time
	// Personal counts personal annotation values (view_pii); without it
	// they are not read.
	Personal bool
	// Sample bounds each group (0: CorrelationSample, at most it).
	Sample int
}

// Correlation is one value over-represented in a signature's crashes.
type Correlation struct {
	Field string `json:"field"`
	Value string `json:"value"`
	// InSignature counts the signature's crashes with it; Overall the
	// reference sample's (the signature's among them).
	InSignature int `json:"in_signature"`
	Overall     int `json:"overall"`
	// ShareInSignature is InSignature / Correlations.SignatureCrashes;
	// ShareOverall is Overall / Correlations.OverallCrashes; ShareOthers
	// the share among the reference's crashes of other signatures, which
	// the test compares with.
	ShareInSignature float64 `json:"share_in_signature"`
	ShareOverall     float64 `json:"share_overall"`
	ShareOthers      float64 `json:"share_others"`
	// Z is the two-proportion z statistic (continuity-corrected, one
	// sided); P its p-value.
	Z float64 `json:"z"`
	P float64 `json:"p_value"`
	// All: every crash of the signature has it.
	All bool `json:"all_crashes"`
}

// Correlations is the answer of [Correlator.Correlations].
type Correlations struct {
	Product   string    `json:"product"`
	Signature string    `json:"signature"`
	Since     time.Time `json:"since"`
	Until     time.Time `json:"until"`
	// SignatureCrashes and OverallCrashes are the groups' sizes: the
	// signature's crashes read, the reference sample's crashes.
	SignatureCrashes int `json:"signature_crashes"`
	OverallCrashes   int `json:"overall_crashes"`
	// Sampled: a group had more crashes in the period than the sample
	// bound; its newest were read.
	Sampled bool `json:"sampled"`
	// Items are the over-represented values, strongest first.
	Items []Correlation `json:"correlations"`
}

// Correlator is what the correlations need of an index; [SQL]
// implements it.
type Correlator interface {
	Correlations(ctx context.Context, q CorrelationQuery) (Correlations, error)
}

// corrKey is a field's value.
type corrKey struct{ field, value string }

// corrCount is a value's counts: in the signature's crashes (k1), in the
// reference sample (all) and among the sample's crashes of the signature
// (self).
type corrCount struct{ k1, all, self int }

// Correlations implements [Correlator]. Two groups are read: the
// signature's crashes of the product in the period (the newest Sample),
// and the product's crashes of the period (the newest Sample: the
// reference). A value of a field is listed when at least
// CorrelationMinCount of the signature's crashes have it and its share
// there is significantly larger than among the reference's crashes of
// other signatures: a one-sided two-proportion z-test with continuity
// correction, p < CorrelationMaxP. Strongest (largest z) first, at most
// CorrelationLimit.
func (s *SQL) Correlations(ctx context.Context, q CorrelationQuery) (Correlations, error) {
	fail := func(err error) (Correlations, error) {
		return Correlations{}, fmt.Errorf("index: correlations of %q: %w", q.Signature, err)
	}
	if q.Since.IsZero() || q.Until.IsZero() || !q.Since.Before(q.Until) {
		return fail(fmt.Errorf("a period is required"))
	}
	if q.Signature == "" {
		return fail(fmt.Errorf("a signature is required"))
	}
	n := q.Sample
	if n <= 0 || n > CorrelationSample {
		n = CorrelationSample
	}
	out := Correlations{Product: q.Product, Signature: q.Signature, Since: q.Since.UTC(), Until: q.Until.UTC(), Items: []Correlation{}}
	// The groups, each from its cutoff: the receipt of its n-th newest
	// crash (or the period's start).
	sigCut, sigFull, err := s.cutoff(ctx, q, true, n)
	if err != nil {
		return fail(err)
	}
	refCut, refFull, err := s.cutoff(ctx, q, false, n)
	if err != nil {
		return fail(err)
	}
	out.Sampled = sigFull || refFull
	counts := map[corrKey]*corrCount{}
	count1 := func(field, value string) {
		k := corrKey{field, value}
		if c := counts[k]; c != nil {
			c.k1++
		} else if len(counts) < maxCandidates {
			counts[k] = &corrCount{k1: 1}
		}
	}
	sigIDs, err := s.eachRow(ctx, q, true, sigCut, func(_ bool, f func(func(field, value string))) { f(count1) })
	if err != nil {
		return fail(err)
	}
	if out.SignatureCrashes = len(sigIDs); out.SignatureCrashes == 0 {
		return out, nil
	}
	if err := s.eachAnnotation(ctx, q, sigCut, sigIDs, func(_, name, value string) { count1(AnnotationField+name, value) }); err != nil {
		return fail(err)
	}
	// Only values of at least CorrelationMinCount signature crashes are
	// counted in the reference.
	for k, c := range counts {
		if c.k1 < CorrelationMinCount {
			delete(counts, k)
		}
	}
	refSig := map[string]bool{} // the reference's crashes of the signature
	countAll := func(isSig bool) func(field, value string) {
		return func(field, value string) {
			if c := counts[corrKey{field, value}]; c != nil {
				c.all++
				if isSig {
					c.self++
				}
			}
		}
	}
	all, notSig := countAll(true), countAll(false)
	refIDs, err := s.eachRow(ctx, q, false, refCut, func(isSig bool, f func(func(field, value string))) {
		if isSig {
			f(all)
		} else {
			f(notSig)
		}
	})
	if err != nil {
		return fail(err)
	}
	out.OverallCrashes = len(refIDs)
	for _, id := range refIDs {
		if id.sig {
			refSig[id.id] = true
		}
	}
	if err := s.eachAnnotation(ctx, q, refCut, refIDs, func(id, name, value string) {
		if refSig[id] {
			all(AnnotationField+name, value)
		} else {
			notSig(AnnotationField+name, value)
		}
	}); err != nil {
		return fail(err)
	}
	self := len(refSig)
	out.Items = rankCorrelations(counts, out.SignatureCrashes, out.OverallCrashes, self)
	return out, nil
}

// groupWhere is the condition of a group's crashes (the signature's with
// sig) from since, and its arguments; prefix names the crashes table.
func groupWhere(q CorrelationQuery, sig bool, since time.Time, prefix string) (string, []any) {
	w := prefix + "status = ? AND " + prefix + "received_at >= ? AND " + prefix + "received_at < ?"
	args := []any{string(Processed), formatTime(since), formatTime(q.Until)}
	if q.Product != "" {
		w += " AND " + prefix + "product = ?"
		args = append(args, q.Product)
	}
	if sig {
		w += " AND " + prefix + "signature = ?"
		args = append(args, q.Signature)
	}
	return w, args
}

// cutoff returns the receipt of the group's n-th newest crash in the
// period, and whether the group has more (it is a sample); the period's
// start when it has fewer than n.
func (s *SQL) cutoff(ctx context.Context, q CorrelationQuery, sig bool, n int) (time.Time, bool, error) {
	w, args := groupWhere(q, sig, q.Since, "")
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT received_at FROM crashes WHERE `+w+
		` ORDER BY received_at DESC LIMIT 2 OFFSET `+strconv.Itoa(n-1)), args...)
	if err != nil {
		return time.Time{}, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return q.Since, false, rows.Err()
	}
	var at string
	if err := rows.Scan(&at); err != nil {
		return time.Time{}, false, err
	}
	// Crashes received at the same microsecond as the n-th are read
	// too: a few more than n at most.
	more := rows.Next()
	return parseTime(at), more, rows.Err()
}

// rowFields are the columns a group's crashes are read with.
const rowFields = `crash_id, signature, os, os_version, cpu, cpu_info, process_type, modules, module_versions`

// crashRef is a crash read, and whether it has the signature.
type crashRef struct {
	id  string
	sig bool
}

// crashValues calls f with each (field, value) of one crash row, each
// once.
func crashValues(os, osVersion, cpu, cpuInfo, ptype, modules, versions string, f func(field, value string)) {
	if osVersion != "" {
		f(FieldOSVersion, strings.TrimSpace(os+" "+osVersion))
	}
	if cpu != "" {
		f(FieldCPU, cpu)
	}
	if cpuInfo != "" {
		f(FieldCPUInfo, cpuInfo)
		if i := strings.Index(cpuInfo, "family "); i >= 0 {
			if v := strings.TrimSpace(cpuInfo[:i]); v != "" {
				f(FieldCPUVendor, v)
			}
			fam := cpuInfo
			if j := strings.Index(cpuInfo, " model "); j > i {
				fam = cpuInfo[:j]
			}
			f(FieldCPUFamily, fam)
		}
	}
	if ptype != "" {
		f(FieldProcessType, ptype)
	}
	// "|a|b|": each name once (moduleList).
	for m := range strings.SplitSeq(strings.Trim(modules, "|"), "|") {
		if m != "" {
			f(FieldModule, m)
		}
	}
	for mv := range strings.SplitSeq(strings.Trim(versions, "|"), "|") {
		if name, v, ok := strings.Cut(mv, "\t"); ok {
			f(FieldModuleVersion, name+" "+v)
		}
	}
}

// eachRow reads a group's crashes from since (the signature's with
// sig): for each, visit is called with whether it has the signature and
// a function calling its argument with each of the crash's values. It
// returns the crashes read.
func (s *SQL) eachRow(ctx context.Context, q CorrelationQuery, sig bool, since time.Time,
	visit func(isSig bool, values func(func(field, value string)))) ([]crashRef, error) {
	w, args := groupWhere(q, sig, since, "")
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+rowFields+` FROM crashes WHERE `+w), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []crashRef
	var id, sigv, os, osv, cpu, ci, pt, mods, vers string
	values := func(f func(field, value string)) { crashValues(os, osv, cpu, ci, pt, mods, vers, f) }
	for rows.Next() {
		if err := rows.Scan(&id, &sigv, &os, &osv, &cpu, &ci, &pt, &mods, &vers); err != nil {
			return nil, err
		}
		isSig := sigv == q.Signature
		out = append(out, crashRef{id, isSig})
		visit(isSig, values)
	}
	return out, rows.Err()
}

// eachAnnotation calls f with each indexed annotation of the crashes,
// received from since (personal ones only with q.Personal). When the
// crashes are at least half of all those received in the window (the
// reference, unless other products dominate it), the window's
// annotations are read in receipt order, which is their order on disk,
// and those of other crashes skipped; else they are looked up by crash
// id, maxIn at a time (a signature's crashes among many).
func (s *SQL) eachAnnotation(ctx context.Context, q CorrelationQuery, since time.Time, crashes []crashRef, f func(id, name, value string)) error {
	if len(crashes) == 0 {
		return nil
	}
	pers := ""
	if !q.Personal {
		pers = " AND personal = 0"
	}
	var window int
	if err := s.db.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM crashes WHERE status = ? AND received_at >= ? AND received_at < ?`),
		string(Processed), formatTime(since), formatTime(q.Until)).Scan(&window); err != nil {
		return err
	}
	scan := func(query string, args []any, keep func(id string) bool) error {
		rows, err := s.db.QueryContext(ctx, s.rebind(query), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, name, value string
			if err := rows.Scan(&id, &name, &value); err != nil {
				return err
			}
			if keep(id) {
				f(id, name, value)
			}
		}
		return rows.Err()
	}
	if window <= 2*len(crashes) {
		ids := make(map[string]bool, len(crashes))
		for _, c := range crashes {
			ids[c.id] = true
		}
		return scan(`SELECT crash_id, name, value FROM crash_annotations WHERE received_at >= ? AND received_at < ?`+pers,
			[]any{formatTime(since), formatTime(q.Until)}, func(id string) bool { return ids[id] })
	}
	args := make([]any, 0, maxIn)
	for chunk := range slices.Chunk(crashes, maxIn) {
		args = args[:0]
		for _, c := range chunk {
			args = append(args, c.id)
		}
		if err := scan(`SELECT crash_id, name, value FROM crash_annotations WHERE crash_id IN (`+marks(len(chunk))+`)`+pers,
			args, func(string) bool { return true }); err != nil {
			return err
		}
	}
	return nil
}

// rankCorrelations applies the rule to the counts: n1 signature crashes,
// nAll reference crashes of which self have the signature.
func rankCorrelations(counts map[corrKey]*corrCount, n1, nAll, self int) []Correlation {
	out := []Correlation{}
	n2 := nAll - self
	if n1 == 0 || n2 <= 0 {
		return out // nothing to compare with
	}
	for k, c := range counts {
		k2 := c.all - c.self
		if c.k1 < CorrelationMinCount || k2 < 0 {
			continue
		}
		z, p := TwoProportion(c.k1, n1, k2, n2)
		if z <= 0 || p >= CorrelationMaxP {
			continue
		}
		item := Correlation{Field: k.field, Value: k.value, InSignature: c.k1, Overall: c.all,
			ShareInSignature: float64(c.k1) / float64(n1), ShareOthers: float64(k2) / float64(n2), Z: z, P: p, All: c.k1 == n1}
		if nAll > 0 {
			item.ShareOverall = float64(c.all) / float64(nAll)
		}
		out = append(out, item)
	}
	slices.SortFunc(out, func(a, b Correlation) int {
		switch {
		case a.Z != b.Z:
			if a.Z > b.Z {
				return -1
			}
			return 1
		case a.ShareInSignature-a.ShareOthers != b.ShareInSignature-b.ShareOthers:
			if a.ShareInSignature-a.ShareOthers > b.ShareInSignature-b.ShareOthers {
				return -1
			}
			return 1
		case a.Field != b.Field:
			return strings.Compare(a.Field, b.Field)
		}
		return strings.Compare(a.Value, b.Value)
	})
	if len(out) > CorrelationLimit {
		out = out[:CorrelationLimit]
	}
	return out
}

// TwoProportion is the one-sided two-proportion z-test of k1 of n1
// against k2 of n2 (is k1/n1 larger?), with the continuity correction
// (1/n1 + 1/n2)/2 taken off the difference: z = (p1 - p2 - (1/n1 +
// 1/n2)/2) / sqrt(p(1-p)(1/n1 + 1/n2)), p the pooled share (k1+k2) /
// (n1+n2). It returns z (0 when the corrected difference is not
// positive) and the p-value P(Z >= z) of the standard normal.
func TwoProportion(k1, n1, k2, n2 int) (z, p float64) {
	if n1 <= 0 || n2 <= 0 {
		return 0, 1
	}
	f1, f2 := float64(n1), float64(n2)
	p1, p2 := float64(k1)/f1, float64(k2)/f2
	pool := float64(k1+k2) / (f1 + f2)
	inv := 1/f1 + 1/f2
	se := math.Sqrt(pool * (1 - pool) * inv)
	d := p1 - p2 - inv/2
	if se == 0 || d <= 0 {
		return 0, 1
	}
	z = d / se
	return z, 0.5 * math.Erfc(z/math.Sqrt2)
}
