package web

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// trendVersions is how many versions a signature's page draws as their
// own series (the rest are "other").
const trendVersions = 5

// TrendData is GET /api/signature/trend: a signature's crashes per day and
// version over days (1 to index.MaxTrendDays).
type TrendData struct {
	Signature string      `json:"signature"`
	Period    int         `json:"period_days"`
	Since     time.Time   `json:"since"`
	Until     time.Time   `json:"until"`
	Trend     index.Trend `json:"trend"`
}

// parseIntParam reads an integer parameter within [lo, hi], def when absent.
func parseIntParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, httpErr(http.StatusBadRequest, "%s=%q: a number from %d to %d", name, s, lo, hi)
	}
	return n, nil
}

// signatureTrend serves GET /api/signature/trend?signature=&days=&versions=
// (and the signature page's filters: product, version, os, cpu,
// process_type, exact).
func (w *Web) signatureTrend(r *http.Request, _ *principal) (any, error) {
	tri, err := w.triage()
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	sig := v.Get("signature")
	if sig == "" {
		return nil, httpErr(http.StatusBadRequest, "signature= is required")
	}
	days, err := parseIntParam(v, "days", 28, 1, index.MaxTrendDays)
	if err != nil {
		return nil, err
	}
	top, err := parseIntParam(v, "versions", trendVersions, 1, index.MaxTrendVersions)
	if err != nil {
		return nil, err
	}
	f := w.signatureFilter(v, sig, days)
	d := &TrendData{Signature: sig, Period: days, Since: f.Since, Until: f.Until}
	if d.Trend, err = tri.SignatureTrend(r.Context(), f, top); err != nil {
		return nil, err
	}
	return d, nil
}

// trendColors are the series' fills (Okabe and Ito's colour-blind-safe
// set, then three more); "other" is grey.
var trendColors = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000", "#882255", "#44AA99"}

const trendOther = "#999999"

// trendColor is the fill of series i of tr.
func trendColor(tr *index.Trend, i int) string {
	if tr.Versions[i].Other {
		return trendOther
	}
	return trendColors[i%len(trendColors)]
}

// trendName is a series' name as the page shows it.
func trendName(s index.TrendSeries) string {
	if s.Other {
		return "other versions"
	}
	return or(s.Version, "(none)")
}

// trendChart draws tr as stacked bars, a bar per day and a colour per
// version, as inline SVG that stretches to the page's width (no text
// inside it: the axis and legend are the page's). Its <title> and <desc>
// name it and say the totals; each segment's <title> says its day, version
// and count. Versions are the crashes' (hostile): escaped and clipped.
func trendChart(tr *index.Trend) template.HTML {
	if tr == nil || len(tr.Days) == 0 {
		return ""
	}
	const h = 120
	bw := 10
	w := bw * len(tr.Days)
	m := 1
	for _, n := range tr.Daily {
		m = max(m, n)
	}
	esc := func(s string) string { return template.HTMLEscapeString(clip(s)) }
	var desc []string
	for _, s := range tr.Versions {
		desc = append(desc, fmt.Sprintf("%s %d (%s)", trendName(s), s.Count, pctOf(s.Count, tr.Total)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="trend" viewBox="0 0 %d %d" width="100%%" height="%d" preserveAspectRatio="none" role="img" aria-labelledby="trend-title trend-desc">`, w, h, h)
	fmt.Fprintf(&b, `<title id="trend-title">Crashes per day by version, %s to %s</title>`, tr.Days[0], tr.Days[len(tr.Days)-1])
	fmt.Fprintf(&b, `<desc id="trend-desc">%d crashes, at most %d a day: %s.</desc>`, tr.Total, m, esc(strings.Join(desc, ", ")))
	for d, day := range tr.Days {
		y := float64(h)
		for i, s := range tr.Versions {
			n := s.Daily[d]
			if n == 0 {
				continue
			}
			sh := float64(h) * float64(n) / float64(m)
			y -= sh
			fmt.Fprintf(&b, `<rect x="%d" y="%.2f" width="%d" height="%.2f" fill="%s"><title>%s, %s: %d</title></rect>`,
				d*bw+1, y, bw-2, sh, trendColor(tr, i), day, esc(trendName(s)), n)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// swatch is a legend's colour square of series i.
func swatch(tr *index.Trend, i int) template.HTML {
	return template.HTML(fmt.Sprintf(`<svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="%s"/></svg>`, trendColor(tr, i)))
}

// changeWords says a count's change against the previous period's count
// in words, under the home page's column "vs previous N days": "up 9 from
// 0", "down 2 from 5", "unchanged at 4".
func changeWords(count, prev int) string {
	switch {
	case count > prev:
		return fmt.Sprintf("up %d from %d", count-prev, prev)
	case count < prev:
		return fmt.Sprintf("down %d from %d", prev-count, prev)
	}
	return fmt.Sprintf("unchanged at %d", prev)
}
