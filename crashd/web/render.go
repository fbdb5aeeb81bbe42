package web

import (
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// pages are the templates, each parsed with templates/layout.html.
var pages = []string{"home", "signature", "report", "search", "symbols", "login", "error", "tokens"}

// partials are the templates a page includes beyond its own, each in a
// file of its own.
var partials = map[string][]string{"signature": {"templates/correlations.html"}}

func parseTemplates() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, p := range pages {
		files := append([]string{"templates/layout.html", "templates/triage.html", "templates/source.html", "templates/" + p + ".html"}, partials[p]...)
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, files...)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", p, err)
		}
		out[p] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"spark":      spark,
	"hbar":       hbar,
	"daybars":    daybars,
	"pct":        func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + " %" },
	"delta":      delta,
	"rankChange": rankChange,
	"clip":       clip,
	"link":       link,
	"sigURL":     func(s string) string { return "/signature?signature=" + url.QueryEscape(s) },
	"date":       date,
	"rfc":        func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"maxCount":   maxCount,
	"trust":      func(s string) string { return or(TrustWords[s], s) },
	"fieldName":  fieldName,
	"either":     or,
	"get":        func(m map[string]string, k string) string { return m[k] },
	"dec":        func(n int) int { return n - 1 },
	"add":        func(a, b int) int { return a + b },
	"sub":        func(a, b int) int { return a - b },
	"back":       func(a, b int) int { return max(a-b, 0) },
	"percent":    func(n, total int) string { return pctOf(n, total) },
	"days":       func() []int { return PeriodDays },
	"filters":    func() []string { return filterFields },
	"list":       func() []string { return searchFields },
	"columns":    func() []string { return index.SortFields },
	"sortOrder":  sortOrder,
	"expires":    expiresText,
	"brk":        breakable,
	"hexOff":     hexOff,
	"hexTail":    hexTail,
	"noun":       noun,
	"menu":       menu,
	"states":     func() []index.State { return index.States },
	"corrField":  corrField,
	"corrMin":    func() int { return index.CorrelationMinCount },
	"corrMaxP":   func() float64 { return index.CorrelationMaxP },
	"age":        age,
	"changeRows": changeRows,
	// The trend's (trend.go), the change in words, and exact: a search
	// value matching v exactly (quoted with = when it starts with an
	// operator, index.Match).
	"trendChart":  trendChart,
	"trendName":   trendName,
	"swatch":      swatch,
	"changeWords": changeWords,
	"exact":       func(v string) string { return index.Match{Op: index.OpExact, Value: v}.String() },
}

// changeRow is a row of the stack-change table: frame N before and after.
type changeRow struct {
	N             int
	Before, After string
	Differs       bool
}

// changeRows pairs a stack change's frames before and after.
func changeRows(c *crash.StackChange) []changeRow {
	var out []changeRow
	for i := range max(len(c.PreviousFrames), len(c.Frames)) {
		r := changeRow{N: c.FramesFrom + i}
		if i < len(c.PreviousFrames) {
			r.Before = c.PreviousFrames[i]
		}
		if i < len(c.Frames) {
			r.After = c.Frames[i]
		}
		r.Differs = r.Before != r.After
		out = append(out, r)
	}
	return out
}

// age writes a number of seconds as a page shows an uptime or an install
// age: "2 d 3 h", "3 h 25 min", "4 min 5 s", "12.5 s".
func age(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%d d %d h", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%d h %d min", d/time.Hour, d%time.Hour/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%d min %d s", d/time.Minute, d%time.Minute/time.Second)
	}
	return strconv.FormatFloat(seconds, 'f', -1, 64) + " s"
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func pctOf(n, total int) string {
	if total == 0 {
		return "0 %"
	}
	return strconv.FormatFloat(100*float64(n)/float64(total), 'f', 1, 64) + " %"
}

var fieldNames = map[string]string{
	"product": "Product", "version": "Version", "os": "OS", "cpu": "CPU", "process_type": "Process type",
	"signature": "Signature", "crash_reason": "Crash reason", "day": "Day", "module": "Module",
	"since": "Since", "until": "Until", "received_at": "Received",
}

func fieldName(f string) string { return or(fieldNames[f], f) }

// corrFields name the correlations' fields.
var corrFields = map[string]string{
	index.FieldModule: "Module", index.FieldModuleVersion: "Module version", index.FieldOSVersion: "OS version",
	index.FieldCPU: "CPU", index.FieldCPUVendor: "CPU vendor", index.FieldCPUFamily: "CPU family", index.FieldCPUInfo: "CPU info",
	index.FieldProcessType: "Process type",
}

// corrField names a correlation's field: an annotation by its name.
func corrField(f string) string {
	if name, ok := strings.CutPrefix(f, index.AnnotationField); ok {
		return "Annotation " + name
	}
	return or(corrFields[f], f)
}

// maxClip is how many characters of a string a page shows.
const maxClip = 2000

// clip makes s readable and bounded: control characters (and invalid
// UTF-8) shown as \xNN or \u escapes, at most maxClip characters, with
// the count of the rest. html/template escapes the result.
func clip(s string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n == maxClip {
			fmt.Fprintf(&b, "… (%d more bytes)", len(s)-i)
			break
		}
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.In(r, unicode.Bidi_Control):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
		n++
	}
	return b.String()
}

func date(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func delta(n int) string {
	switch {
	case n > 0:
		return "+" + strconv.Itoa(n)
	case n < 0:
		return "−" + strconv.Itoa(-n)
	}
	return "0"
}

// rankChange says how a signature moved: "▲ 2" (up two places), "▼ 1",
// "=", "new" when first seen in the period, or "returning" when seen
// before but not in the previous period.
func rankChange(r index.TopRow) string {
	switch {
	case r.New:
		return "new"
	case r.PrevRank == 0:
		return "returning"
	case r.PrevRank > r.Rank:
		return "▲ " + strconv.Itoa(r.PrevRank-r.Rank)
	case r.PrevRank < r.Rank:
		return "▼ " + strconv.Itoa(r.Rank-r.PrevRank)
	}
	return "="
}

// link returns path with q's parameters, changed by kv (name, value
// pairs; an empty value removes the name). offset is dropped unless kv
// sets it.
func link(path string, q url.Values, kv ...string) string {
	v := url.Values{}
	for k, vs := range q {
		if k != "offset" {
			v[k] = vs
		}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			v.Del(kv[i])
		} else {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

func maxCount(bs []index.Bucket) int {
	m := 0
	for _, b := range bs {
		m = max(m, b.Count)
	}
	return m
}

// spark draws daily counts as an SVG line, with an accessible name
// listing them.
func spark(daily []int) template.HTML {
	const w, h = 100, 20
	m := 1
	for _, n := range daily {
		m = max(m, n)
	}
	var pts strings.Builder
	step := float64(w)
	if len(daily) > 1 {
		step = float64(w) / float64(len(daily)-1)
	}
	label := make([]string, len(daily))
	for i, n := range daily {
		x := step * float64(i)
		y := float64(h-1) - float64(h-2)*float64(n)/float64(m)
		fmt.Fprintf(&pts, "%.1f,%.1f ", x, y)
		label[i] = strconv.Itoa(n)
	}
	return template.HTML(fmt.Sprintf(`<svg class="spark" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="crashes per day: %s"><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="%s"/></svg>`,
		w, h, w, h, strings.Join(label, ", "), strings.TrimSpace(pts.String())))
}

// hbar draws n of max as a horizontal bar; it stretches (style.css
// .bar) to the width its column is given, at most its own.
func hbar(n, m int) template.HTML {
	const w, h = 120, 10
	bw := 0.0
	if m > 0 {
		bw = float64(w) * float64(n) / float64(m)
	}
	return template.HTML(fmt.Sprintf(`<svg class="bar" viewBox="0 0 %d %d" width="%d" height="%d" preserveAspectRatio="none" aria-hidden="true"><rect width="%.1f" height="%d"/></svg>`, w, h, w, h, bw, h))
}

// daybars draws per-day counts as vertical bars, each with its date and
// count as a title.
func daybars(bs []index.Bucket) template.HTML {
	const h = 60
	bw := 12
	m := max(maxCount(bs), 1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="days" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="crashes per day">`, bw*len(bs)+1, h, bw*len(bs)+1, h)
	for i, x := range bs {
		bh := float64(h-1) * float64(x.Count) / float64(m)
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f"><title>%s: %d</title></rect>`,
			i*bw+1, float64(h)-bh, bw-2, bh, template.HTMLEscapeString(x.Value), x.Count)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// sortOrder is the order a column's header link asks for: descending
// first, the other way when the column is the sort already.
func sortOrder(col, sort string, asc bool) string {
	if col == sort && !asc {
		return "asc"
	}
	return "desc"
}

// breakRun is how many characters breakable lets go without a break
// opportunity.
const breakRun = 32

// breakable is clip(s) escaped, with a <wbr> (a break opportunity) after
// each "::", "(", ",", "/" and "\\", and after every breakRun
// characters without one, so that long C++ signatures, function names
// and paths wrap at their joints instead of mid-word, and a column's
// narrowest width stays bounded (docs/crashd.md "Layout").
func breakable(s string) template.HTML {
	var b strings.Builder
	run := 0
	var prev rune
	c := clip(s)
	b.Grow(len(c) + len(c)/8)
	for _, r := range c {
		switch r { // as template.HTMLEscapeString, without a string per rune
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		case 0:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
		run++
		switch {
		case unicode.IsSpace(r):
			run = 0
		case strings.ContainsRune("(,/\\", r) || r == ':' && prev == ':' || run >= breakRun:
			b.WriteString("<wbr>")
			run = 0
		}
		prev = r
	}
	return template.HTML(b.String())
}

// hexOff writes a hexadecimal offset or address as Breakpad prints it,
// without the leading zeros of the processed crash's 16 digits:
// "0x000000000000005e" is "0x5e". Anything else is returned as it is.
func hexOff(s string) string {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || h == "" || strings.TrimLeft(h, "0123456789abcdefABCDEF") != "" {
		return s
	}
	h = strings.TrimLeft(h, "0")
	if h == "" {
		h = "0"
	}
	return "0x" + h
}

// hexTail shortens the offset of a "module+0x000000000000005e" frame
// (a common stack's frame without symbols) as hexOff does.
func hexTail(s string) string {
	i := strings.LastIndex(s, "+0x")
	if i < 0 {
		return s
	}
	return s[:i+1] + hexOff(s[i+1:])
}

// noun is the word for n things: one for 1, else many ("1 crash", "2
// crashes", "0 crashes").
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// option is an entry of a filter menu.
type option struct {
	Value, Label       string
	Selected, Disabled bool
}

// menu is a filter's menu: "any" (selected when cur is empty), then
// each value with its count. The bucket of crashes without a value is
// "(none) (N)", disabled (the filter cannot ask for it: an empty value
// means any), so it is never the one selected; a value cur names that is
// not among the buckets is kept, selected.
func menu(buckets []index.Bucket, cur string) []option {
	out := []option{{Value: "", Label: "any", Selected: cur == ""}}
	found := cur == ""
	for _, b := range buckets {
		if b.Value == "" {
			out = append(out, option{Label: fmt.Sprintf("(none) (%d)", b.Count), Disabled: true})
			continue
		}
		sel := b.Value == cur
		found = found || sel
		out = append(out, option{Value: b.Value, Label: fmt.Sprintf("%s (%d)", clip(b.Value), b.Count), Selected: sel})
	}
	if !found {
		out = append(out, option{Value: cur, Label: clip(cur), Selected: true})
	}
	return out
}
