package processor

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
)

// TestIndexedAnnotations: the processor indexes the configured
// annotations of a crash (non-strings as JSON text), leaves out the others
// and the personal ones unless IndexPersonal, marked personal then.
func TestIndexedAnnotations(t *testing.T) {
	for _, personal := range []bool{false, true} {
		e := newEnv(t)
		p, err := New(Config{Workers: 1, Timeout: 5 * time.Second, IndexedAnnotations: []string{"ReleaseChannel", "Email", "Num", "Absent"}, IndexPersonal: personal},
			e.store, e.q, e.ix, nil, prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- p.Run(ctx) }()
		id := crash.New(time.Now(), crash.ThrottleAccept)
		raw := &crash.RawCrash{Annotations: map[string]any{"ProductName": "Test", "ReleaseChannel": "beta", "Email": "a@b.c", "Num": 3, "Other": "x"},
			SubmittedTimestamp: time.Now(), UUID: id, Version: crash.RawCrashVersion}
		raw.Metadata.Restricted = []string{"Email"}
		b, _ := json.Marshal(raw)
		names, _ := json.Marshal(crash.DumpNames{crash.MinidumpField})
		for k, v := range map[string][]byte{crash.RawCrashKey(id): b, crash.DumpNamesKey(id): names, crash.DumpKey(id, crash.MinidumpField): []byte("not a dump")} {
			if err := e.store.Put(ctx, k, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.q.Publish(ctx, queue.Normal, string(id)); err != nil {
			t.Fatal(err)
		}
		e.wait(t, id, index.Processed)
		cancel()
		<-done
		week := index.Filter{Since: time.Now().Add(-time.Hour), Until: time.Now().Add(time.Hour), Personal: true}
		for name, want := range map[string][]index.Bucket{
			"ReleaseChannel": {{Value: "beta", Count: 1}}, "Num": {{Value: "3", Count: 1}}, "Other": {},
			"Email": map[bool][]index.Bucket{false: {}, true: {{Value: "a@b.c", Count: 1}}}[personal],
		} {
			got, err := e.ix.FacetAnnotation(context.Background(), week, name, 10)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("IndexPersonal %v: %s: %v, want %v (%v)", personal, name, got, want, err)
			}
		}
		week.Personal = false
		if got, _ := e.ix.FacetAnnotation(context.Background(), week, "Email", 10); len(got) != 0 {
			t.Errorf("personal annotation counted without Personal: %v", got)
		}
	}
}
