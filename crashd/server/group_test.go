package server

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestGroup: a part's error stops every part, is reported and returned; a
// part that returns nil on its own is a failure too; the end part (the
// signal) ends the group without one.
func TestGroup(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	forever := func(stop chan struct{}) (func() error, func()) {
		return func() error { <-stop; return nil }, func() { close(stop) }
	}
	for _, tc := range []struct {
		name    string
		run     func() error
		end     bool
		wantErr string
	}{
		{"processor", func() error { return errors.New("start-up check failed") }, false, "processor: start-up check failed"},
		{"background", func() error { return nil }, false, "background: stopped on its own"},
		{"signal", func() error { time.Sleep(10 * time.Millisecond); return nil }, true, ""},
	} {
		var g group
		r, s := forever(make(chan struct{}))
		g.add("http", r, s)
		if tc.end {
			g.addEnd(tc.name, tc.run, func() {})
		} else {
			g.add(tc.name, tc.run, func() {})
		}
		r2, s2 := forever(make(chan struct{}))
		g.add("other", r2, s2)
		reported := map[string]error{}
		err := g.run(log, func(part string, err error) { reported[part] = err })
		if tc.wantErr == "" {
			if err != nil || len(reported) != 0 {
				t.Errorf("%s: %v %v", tc.name, err, reported)
			}
			continue
		}
		if err == nil || err.Error() != tc.wantErr || reported[tc.name] == nil || len(reported) != 1 {
			t.Errorf("%s: err %v, reported %v", tc.name, err, reported)
		}
		if !strings.HasPrefix(err.Error(), tc.name) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
