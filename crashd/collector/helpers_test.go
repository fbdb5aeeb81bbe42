package collector

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// fileVal is a file field of a form: (filename, contents) in mini_poster's terms.
type fileVal struct {
	filename string
	data     []byte
}

// encode writes a multipart body exactly as Antenna's testlib.mini_poster's
// multipart_encode does (fields sorted by name; "extra" as a JSON file part;
// text parts "text/plain; charset=utf-8"; files application/octet-stream)
// and returns it with its Content-Type.
func encode(fields map[string]any, mimetype string) ([]byte, string) {
	var u [16]byte
	_, _ = rand.Read(u[:])
	boundary := hex.EncodeToString(u[:])
	if mimetype == "" {
		mimetype = "multipart/form-data"
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		block := []string{"--" + boundary}
		switch v := fields[k].(type) {
		case string:
			if k == "extra" {
				block = append(block, `Content-Disposition: form-data; name="extra"; filename="extra.json"`, "Content-Type: application/json")
			} else {
				block = append(block, fmt.Sprintf(`Content-Disposition: form-data; name="%s"`, k), "Content-Type: text/plain; charset=utf-8")
			}
			block = append(block, "", "")
			b.WriteString(strings.Join(block, "\r\n"))
			b.WriteString(v)
		case fileVal:
			block = append(block, fmt.Sprintf(`Content-Disposition: form-data; name="%s"; filename="%s"`, k, v.filename), "Content-Type: application/octet-stream", "", "")
			b.WriteString(strings.Join(block, "\r\n"))
			b.Write(v.data)
		default:
			panic(fmt.Sprintf("field %s: %T", k, v))
		}
		b.WriteString("\r\n")
	}
	b.WriteString("--" + boundary + "--\r\n")
	return b.Bytes(), mimetype + "; boundary=" + boundary
}

// compress gzips b (mini_poster's compress).
func compress(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// env is a collector served by a real net/http server on 127.0.0.1.
type env struct {
	c     *Collector
	srv   *httptest.Server
	store blob.Store
	reg   *prometheus.Registry

	mu        sync.Mutex
	published []crash.ID
	failPub   error
}

func newEnv(t testing.TB, cfg Config, store blob.Store) *env {
	t.Helper()
	if store == nil {
		store = blob.NewMem()
	}
	e := &env{store: store, reg: prometheus.NewRegistry()}
	c, err := New(cfg, store, e.publish, nil, e.reg)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	e.srv = httptest.NewServer(c.Handler())
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) publish(ctx context.Context, id crash.ID) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failPub != nil {
		return e.failPub
	}
	e.published = append(e.published, id)
	return nil
}

func (e *env) pubs() []crash.ID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.published)
}

// post sends a request and returns its status and body.
func (e *env) post(t testing.TB, path string, body []byte, header http.Header, chunked bool) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(bytes.NewReader(body)) // unknown length: sent chunked
	}
	req, err := http.NewRequest("POST", e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if !chunked {
		req.ContentLength = int64(len(body))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a loaded machine under -race
	defer cancel()
	resp, err := e.srv.Client().Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// counter returns the value of a counter metric with the given labels (0 if absent).
func (e *env) counter(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

var crashIDAnswer = regexp.MustCompile(`^CrashID=bp-([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{5}([0-9])([0-9]{6}))\n$`)

// answerID returns the crash id of an answer "CrashID=bp-<id>\n" (checked
// for today's date and throttle digit 0), or fails.
func answerID(t testing.TB, body string, digit string) crash.ID {
	t.Helper()
	m := crashIDAnswer.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("answer %q: not CrashID=bp-<id>\\n", body)
	}
	if m[2] != digit {
		t.Errorf("answer %q: throttle digit %s, want %s", body, m[2], digit)
	}
	if today := time.Now().UTC().Format("060102"); m[3] != today {
		t.Errorf("answer %q: date %s, want %s", body, m[3], today)
	}
	return crash.ID(m[1])
}

// stored reads a stored crash: raw crash, dump names, dumps.
func stored(t testing.TB, s blob.Store, id crash.ID) (*crash.RawCrash, []string, map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	b, err := s.Get(ctx, crash.RawCrashKey(id))
	if err != nil {
		t.Fatalf("raw crash: %v", err)
	}
	var raw crash.RawCrash
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	b, err = s.Get(ctx, crash.DumpNamesKey(id))
	if err != nil {
		t.Fatalf("dump names: %v", err)
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		t.Fatal(err)
	}
	dumps := map[string][]byte{}
	for _, n := range names {
		d, err := s.Get(ctx, crash.DumpKey(id, n))
		if err != nil {
			t.Fatalf("dump %s: %v", n, err)
		}
		dumps[n] = d
	}
	return &raw, names, dumps
}

// keys lists a store's keys.
func keys(t testing.TB, s blob.Store) []string {
	t.Helper()
	var out []string
	for k, err := range s.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

// failStore is a blob.Mem whose Put fails.
type failStore struct{ *blob.Mem }

func (failStore) Put(context.Context, string, []byte) error { return errors.New("disk full") }

type ctxT = context.Context

func nil2Store() blob.Store { return blob.NewMem() }
