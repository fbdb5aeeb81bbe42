package index

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Bounds of a trend: the days it covers and the versions it names (the
// others are summed as one series, Other).
const (
	MaxTrendDays     = 90
	MaxTrendVersions = 10
)

// Trend is the crashes per UTC day and version of what a filter selects
// (a signature's page): the most frequent versions each a series, the rest
// summed in one.
type Trend struct {
	// Days are the UTC dates (YYYY-MM-DD) of the period, oldest first.
	Days []string `json:"days"`
	// Total is the crashes of the period; Daily their count per day.
	Total int   `json:"total"`
	Daily []int `json:"daily"`
	// Versions are the series, most crashes first; the one of the
	// versions left out (Other) last.
	Versions []TrendSeries `json:"versions"`
}

// TrendSeries is one version's crashes per day of Trend.Days.
type TrendSeries struct {
	Version string `json:"version"`
	// Other: the sum of the versions not named (Version is "").
	Other bool    `json:"other,omitempty"`
	Count int     `json:"count"`
	Share float64 `json:"share"`
	Daily []int   `json:"daily"`
}

// SignatureTrend counts the processed crashes f selects (f.Since and
// f.Until required, at most MaxTrendDays (and a day) apart) per UTC day and version:
// the top versions (at most MaxTrendVersions; 0 is 5) by count, then
// version, each a series, the others one series, Other. One grouped read
// of crashes (its (status, signature, received_at) index when f names a
// signature).
func (s *SQL) SignatureTrend(ctx context.Context, f Filter, top int) (Trend, error) {
	if f.Since.IsZero() || f.Until.IsZero() || !f.Since.Before(f.Until) {
		return Trend{}, fmt.Errorf("index: trend: a period is required")
	}
	// MaxTrendDays of 24 hours ending at any time touch one more UTC day.
	if f.Until.Sub(f.Since) > (MaxTrendDays+1)*24*time.Hour {
		return Trend{}, fmt.Errorf("index: trend: at most %d days", MaxTrendDays)
	}
	if top <= 0 {
		top = 5
	}
	top = min(top, MaxTrendVersions)
	tr := Trend{Days: days(f.Since.UTC(), f.Until.UTC()), Versions: []TrendSeries{}}
	tr.Daily = make([]int, len(tr.Days))
	byDay := map[string]int{}
	for i, d := range tr.Days {
		byDay[d] = i
	}
	w, args := f.where()
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT substr(received_at, 1, 10), version, COUNT(*) FROM crashes WHERE `+w+
		` GROUP BY substr(received_at, 1, 10), version`), args...)
	if err != nil {
		return Trend{}, fmt.Errorf("index: trend: %w", err)
	}
	defer rows.Close()
	perVersion := map[string][]int{}
	counts := map[string]int{}
	for rows.Next() {
		var day, version string
		var n int
		if err := rows.Scan(&day, &version, &n); err != nil {
			return Trend{}, fmt.Errorf("index: trend: %w", err)
		}
		i, ok := byDay[day]
		if !ok {
			continue
		}
		if perVersion[version] == nil {
			perVersion[version] = make([]int, len(tr.Days))
		}
		perVersion[version][i] += n
		counts[version] += n
		tr.Daily[i] += n
		tr.Total += n
	}
	if err := rows.Err(); err != nil {
		return Trend{}, fmt.Errorf("index: trend: %w", err)
	}
	var other *TrendSeries
	for i, v := range rank(counts) {
		if i < top {
			tr.Versions = append(tr.Versions, TrendSeries{Version: v, Count: counts[v], Daily: perVersion[v]})
			continue
		}
		if other == nil {
			other = &TrendSeries{Other: true, Daily: make([]int, len(tr.Days))}
		}
		other.Count += counts[v]
		for d, n := range perVersion[v] {
			other.Daily[d] += n
		}
	}
	if other != nil {
		tr.Versions = append(tr.Versions, *other)
	}
	for i := range tr.Versions {
		tr.Versions[i].Share = float64(tr.Versions[i].Count) / float64(tr.Total)
	}
	return tr, nil
}

// String is a one-line summary, for logs and test failures.
func (t Trend) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d crashes over %d days:", t.Total, len(t.Days))
	for _, v := range t.Versions {
		name := v.Version
		if v.Other {
			name = "other"
		}
		fmt.Fprintf(&b, " %s=%d%v", name, v.Count, v.Daily)
	}
	return b.String()
}
