package collector

import (
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/gobreakpad/gobreakpad/crashd/budget"
	"github.com/gobreakpad/gobreakpad/internal/mmap"
)

// This file reads upload bodies within bounded memory: the body is read as
// it arrives, inflated as it is read, and written to a spool file that is
// then mapped read-only (the parsers work on the mapping, whose pages are
// the page cache's, not the heap's); nothing is sized by what a client
// declares. The memory an upload does hold (copy buffers, decompressors'
// state, decoded annotations) is taken from the collector's budget.

// copyBufSize is the buffer bodies are copied through.
const copyBufSize = 32 << 10

// Memory charged to the budget for a decompressor's state: gzip's window
// and tables (and its reader's buffer); bzip2's block (up to 900 kB of
// uint32 and its run-length buffer); zstd's window (bounded by
// maxZstdWindow) and its block buffers.
const (
	gzipCost  = 64 << 10
	bzip2Cost = 4 << 20
	zstdCost  = maxZstdWindow + 2<<20
	// maxZstdWindow bounds the window a zstd stream may ask for (zstd's
	// levels up to 19 use at most 8 MiB).
	maxZstdWindow = 8 << 20
)

// inflateFloor is what any compressed stream may inflate to whatever its
// ratio (a tiny body of a few hundred bytes may legitimately be 100×).
const inflateFloor = 1 << 20

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// spooled is a body (or a decompressed minidump) in memory, or in a spool
// file, mapped.
type spooled struct {
	data  []byte // the content, read-only
	unmap func() error
	f     *os.File
}

// close unmaps the content and removes the spool file.
func (s *spooled) close() {
	if s == nil {
		return
	}
	if s.unmap != nil {
		_ = s.unmap()
	}
	if s.f != nil {
		name := s.f.Name()
		s.f.Close()
		_ = os.Remove(name) // already gone on Unix
	}
}

// newSpoolFile creates a spool file. On Unix it is unlinked at once: it
// disappears with its last descriptor and mapping, even if the process is
// killed.
func (c *Collector) newSpoolFile() (*os.File, error) {
	f, err := os.CreateTemp(c.spoolDir, "upload-*")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if err = os.MkdirAll(c.spoolDir, 0o700); err == nil {
				f, err = os.CreateTemp(c.spoolDir, "upload-*")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errSpool, err)
		}
	}
	if runtime.GOOS != "windows" {
		_ = os.Remove(f.Name())
	}
	return f, nil
}

// memSpool is the most of a body kept in memory rather than in a spool
// file, when the budget has it free at once: most crash reports are under
// it, and a file (create, write, map, unmap, close) costs more CPU than
// the upload's parsing.
const memSpool = 1 << 20

// spool copies r into memory (up to memSpool, taken from h's budget
// without waiting; h nil: never) or else into a new spool file, which it
// maps. After each read, the bytes so far are checked against limit and,
// when in (the compressed bytes read) is not nil, against the inflation
// bound: more than inflateFloor + ratio × in is errTooLarge.
func (c *Collector) spool(r io.Reader, limit int64, in func() int64, h *budget.Hold) (*spooled, error) {
	s := &spooled{}
	var mem []byte
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var n int64
	for {
		m, rerr := r.Read(buf)
		if m > 0 {
			n += int64(m)
			if n > limit || in != nil && n > inflateFloor+c.cfg.MaxInflateRatio*in() {
				s.close()
				return nil, errTooLarge
			}
			if s.f == nil && len(mem)+m > cap(mem) {
				// Grow the memory copy if the budget allows it at once, else move to a file.
				grow := max(2*cap(mem), len(mem)+m, 4<<10)
				if grow <= memSpool && h.TryGrab(int64(grow-cap(mem))) {
					mem = append(make([]byte, 0, grow), mem...)
				} else {
					f, err := c.newSpoolFile()
					if err != nil {
						return nil, err
					}
					s.f = f
					if _, err := f.Write(mem); err != nil {
						s.close()
						return nil, fmt.Errorf("%w: %w", errSpool, err)
					}
					mem = nil
				}
			}
			if s.f == nil {
				mem = append(mem, buf[:m]...)
			} else if _, err := s.f.Write(buf[:m]); err != nil {
				s.close()
				return nil, fmt.Errorf("%w: %w", errSpool, err)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			s.close()
			return nil, rerr
		}
	}
	if s.f == nil {
		s.data = mem
		return s, nil
	}
	var err error
	s.data, s.unmap, err = mmap.File(s.f, n, mmap.Sequential)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("%w: %w", errSpool, err)
	}
	return s, nil
}

// countReader counts the bytes read through it and keeps the first error
// other than EOF (a decompressor may hide the client's failure behind its
// own).
type countReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// idleReader reads a request body, moving the connection's read deadline
// before each read so that a client silent for longer than idle fails the
// read (as nginx's client_body_timeout), but never past the whole body's
// deadline, which no trickle of bytes extends.
type idleReader struct {
	r        io.Reader
	rc       *http.ResponseController
	idle     time.Duration
	deadline time.Time
	timedOut bool
}

func (ir *idleReader) Read(p []byte) (int, error) {
	d := time.Now().Add(ir.idle)
	if d.After(ir.deadline) {
		d = ir.deadline
	}
	_ = ir.rc.SetReadDeadline(d) // unsupported writers: no deadline
	n, err := ir.r.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		ir.timedOut = true
	}
	return n, err
}

// readBody reads the request body within the size limits and the body's
// deadlines into memory or a spool file (spool), undoing gzip when gz is
// set; size is the body's size as received. The caller holds the upload's
// budget h (copy buffer and, for gzip, the inflater).
func (c *Collector) readBody(w http.ResponseWriter, r *http.Request, gz bool, start time.Time, h *budget.Hold) (body *spooled, size int64, err error) {
	if r.ContentLength > c.cfg.MaxBodySize {
		return nil, r.ContentLength, errTooLarge
	}
	ir := &idleReader{r: r.Body, rc: http.NewResponseController(w), idle: time.Duration(c.cfg.BodyIdleTimeout),
		deadline: start.Add(time.Duration(c.cfg.BodyTimeout))}
	defer func() {
		// After a timeout the deadline stays in the past: the server's
		// discarding of the unread body must fail at once, not wait for
		// a client that has stopped sending.
		if !ir.timedOut {
			ir.rc.SetReadDeadline(time.Time{})
		}
	}()
	cr := &countReader{r: http.MaxBytesReader(w, io.NopCloser(ir), c.cfg.MaxBodySize)}
	// The error of a failed read: the client's (size, deadline) first.
	fail := func(err error, bad error) error {
		if errors.Is(err, errTooLarge) {
			return err
		}
		if cr.err != nil {
			err = cr.err
		}
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errTooLarge
		}
		if ir.timedOut {
			return errTimeout
		}
		if errors.Is(err, errSpool) {
			return err
		}
		return bad
	}
	if !gz {
		body, err = c.spool(cr, c.cfg.MaxBodySize, nil, h)
		if err != nil {
			return nil, cr.n, fail(err, malformed(ReasonInvalidPayloadStructure))
		}
		return body, cr.n, nil
	}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		return nil, cr.n, fail(err, malformed(ReasonBadGzip))
	}
	zr.Multistream(false)
	body, err = c.spool(zr, c.cfg.MaxDecompressedSize, func() int64 { return cr.n }, h)
	if err != nil {
		return nil, cr.n, fail(err, malformed(ReasonBadGzip))
	}
	// What follows the gzip member is read (within the size bound) and
	// ignored, as before the body was streamed.
	if _, err := io.Copy(io.Discard, cr); err != nil {
		body.close()
		return nil, cr.n, fail(err, malformed(ReasonInvalidPayloadStructure))
	}
	return body, cr.n, nil
}

// errSpool marks a failure of the spool file (the server's disk), not of
// the client's body: answered as a failure to store.
var errSpool = errors.New("spool")

// decoderFor returns a reader undoing the compression container b starts
// with (gzip, bzip2, zstd: by magic bytes) and what its state costs in
// memory, or nil when b is not compressed. xz is an error: an xz stream
// chooses its own dictionary size (up to 4 GiB, allocated before any
// output).
func decoderFor(b io.Reader, head []byte) (rd io.Reader, cost int64, closeFn func(), err error) {
	switch {
	case len(head) >= 2 && string(head[:2]) == "\x1f\x8b":
		zr, err := gzip.NewReader(b)
		if err != nil {
			return nil, 0, nil, err
		}
		zr.Multistream(false)
		return zr, gzipCost, func() {}, nil
	case len(head) >= 6 && string(head[:6]) == "\xfd7zXZ\x00":
		return nil, 0, nil, errors.New("xz containers are not accepted")
	case len(head) >= 3 && string(head[:3]) == "BZh":
		return bzip2.NewReader(b), bzip2Cost, func() {}, nil
	case len(head) >= 4 && string(head[:4]) == "\x28\xb5\x2f\xfd":
		z, err := zstd.NewReader(b, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(maxZstdWindow))
		if err != nil {
			return nil, 0, nil, err
		}
		return z, zstdCost, z.Close, nil
	}
	return nil, 0, nil, nil
}
