package symserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/budget"
)

// This file bounds what the uploads hold at once, whatever their clients
// send or claim (their tokens are checked first, but a token holder's
// uploads are untrusted bytes all the same):
//
//   - memory and upload slots: each upload takes a slot and the memory
//     of its phases from the uploads' budget it shares with the collector
//     (Config.Budget: max_inflight_bytes, max_uploads, budget_wait), at
//     most half of it in all (budget.Share), so that crash uploads always
//     find the other half;
//   - disk: the files of all uploads in Incoming together (received
//     bodies, zip members, conversions' .sym, v2 files waiting for their
//     complete) are at most Config.MaxSpool bytes, charged as they are
//     written.
//
// An upload that cannot get its share within the budget's wait is
// answered 503 with Retry-After, as a crash upload is, and nothing of it
// is kept.

// Memory charged for an upload's phases. What a phase really allocates
// depends on the file; these are measured upper estimates (docs/crashd.md
// "Symbol server": the fast forms of the corpus' 65 MB .sym took 63 MiB of
// heap, those of a 3.4 MB .sym 15 MiB).
const (
	// receiveCost: the copy buffer, the multipart reader's buffers, a
	// complete request's body (maxCompleteBody).
	receiveCost = 160 << 10
	// phaseBase is what any conversion holds besides its file's share.
	phaseBase = 16 << 20
	// putPart is the most of a file the blob store's client buffers at
	// once (S3's multipart part).
	putPart = 16 << 20
	// zipEntryCost is the memory of one member of a zip's directory.
	zipEntryCost = 512
	// spoolStep is how much spool disk a write takes at a time.
	spoolStep = 1 << 20
)

// convertCost is the memory of converting a native debug file of size
// bytes into a .sym (dump_syms' model of its DWARF or PDB: a few times the
// file).
func convertCost(size int64) int64 { return 4*size + phaseBase }

// storeCost is the memory of storing a .sym of size bytes: its fast forms
// (the parsed .sym's records, about its size) and the blob store's put.
func storeCost(size int64) int64 { return size + phaseBase + min(size, putPart) }

// DefaultMaxSpool is Config.MaxSpool's default in multiples of
// MaxUpload: a native file, its conversion and a few uploads beside it.
const DefaultMaxSpool = 4

// upload is one upload request's share of the budgets: a slot and memory
// of the uploads' budget, and its files' bytes in Incoming.
type upload struct {
	mem, disk *budget.Hold
	memMax    int64
	wait      time.Duration
}

// errBusy is an upload refused for want of its share of a budget: 503
// with Retry-After.
func errBusy(what string, err error) error {
	return &uploadError{http.StatusServiceUnavailable, fmt.Errorf("%s: %w", what, err)}
}

// begin takes an upload's slot and the memory of receiving it (503
// with Retry-After past the budget); done gives everything back.
func (s *Server) begin(ctx context.Context) (*upload, error) {
	h, err := s.mem.Begin(ctx, receiveCost)
	if err != nil {
		return nil, errBusy("symbol uploads", err)
	}
	return &upload{mem: h, disk: s.disk.Hold(ctx), memMax: s.mem.Max(), wait: s.mem.Wait()}, nil
}

// done gives back the upload's slot, memory and spool disk: call it after
// its files are removed.
func (u *upload) done() {
	if u == nil {
		return
	}
	u.mem.Done()
	u.disk.Done()
}

// phaseWait is how long a received upload waits for the memory of its
// conversion and storing: its client has sent the file already, so it
// waits longer than a new upload for its slot (the budget's wait), taking
// no memory meanwhile; the memory's share is taken by uploads' phases in
// the order the budget gives it, a few at once.
const phaseWait = 2 * time.Minute

// phase takes the memory of a phase costing n bytes, at most the symbol
// uploads' whole share (a file so big takes all of it: such uploads run
// one at a time), waiting up to phaseWait (or the budget's wait, if
// longer); release gives it back.
func (u *upload) phase(n int64) (release func(), err error) {
	if u == nil {
		return func() {}, nil
	}
	n = min(n, u.memMax-receiveCost)
	if err := u.mem.GrabWithin(n, max(phaseWait, u.wait)); err != nil {
		return nil, errBusy("symbol uploads: memory", err)
	}
	return func() { u.mem.Give(n) }, nil
}

// spool takes n more bytes of spool disk.
func (u *upload) spool(n int64) error {
	if u == nil || n <= 0 {
		return nil
	}
	if err := u.disk.Grab(n); err != nil {
		return errBusy("symbol uploads: spool disk (max_spool)", err)
	}
	return nil
}

// unspool gives back n bytes of spool disk (a file removed before the
// upload is done).
func (u *upload) unspool(n int64) {
	if u != nil {
		u.disk.Give(n)
	}
}

// writer returns w charging what is written through it to the upload's
// spool disk, spoolStep at a time.
func (u *upload) writer(w io.Writer) *spoolWriter { return &spoolWriter{w: w, u: u} }

// spoolWriter is a writer of a file in Incoming charging its bytes to an
// upload's spool disk; err is the refusal that stopped it, if any (a
// writer's caller may word its errors its own way).
type spoolWriter struct {
	w     io.Writer
	u     *upload
	avail int64 // taken and not yet written
	err   error
}

func (sw *spoolWriter) Write(p []byte) (int, error) {
	if need := int64(len(p)) - sw.avail; need > 0 && sw.u != nil {
		step := (need + spoolStep - 1) / spoolStep * spoolStep
		if err := sw.u.spool(step); err != nil {
			sw.err = err
			return 0, err
		}
		sw.avail += step
	}
	n, err := sw.w.Write(p)
	sw.avail -= int64(n)
	return n, err
}

// busy reports whether err is a refusal for want of budget.
func busy(err error) bool { return errors.Is(err, budget.ErrBusy) }
