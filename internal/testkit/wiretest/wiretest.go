// Package wiretest is a test HTTP server on 127.0.0.1 that keeps the raw
// bytes of every request it reads, for tests that compare what clients put
// on the wire (ours and Google Breakpad's upload clients) byte for byte.
package wiretest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Recorder holds the raw requests a [Server] read.
type Recorder struct {
	mu   sync.Mutex
	buf  bytes.Buffer // read since the last request was cut
	reqs [][]byte
}

// Take returns the raw requests read since the last Take, oldest first,
// and forgets them.
func (r *Recorder) Take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// TakeAll is Take's requests joined: every byte read since the last Take.
func (r *Recorder) TakeAll() []byte {
	return bytes.Join(r.Take(), nil)
}

// cut ends the request being read: the bytes read so far are one request.
func (r *Recorder) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, bytes.Clone(r.buf.Bytes()))
	r.buf.Reset()
}

// Server starts an httptest server on 127.0.0.1 (closed when the test
// ends) that reads each request's body whole, keeps the request's raw
// bytes, and then answers with answer.
func Server(t testing.TB, answer func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *Recorder) {
	t.Helper()
	rec := &Recorder{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rec.cut()
		answer(w, r)
	}))
	srv.Listener = listener{srv.Listener, rec}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, rec
}

// listener hands out connections whose reads are recorded.
type listener struct {
	net.Listener
	r *Recorder
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return conn{c, l.r}, nil
}

type conn struct {
	net.Conn
	r *Recorder
}

func (c conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.r.mu.Lock()
	c.r.buf.Write(p[:n])
	c.r.mu.Unlock()
	return n, err
}
