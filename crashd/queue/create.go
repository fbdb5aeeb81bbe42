package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStream's error codes for a stream create that lost a race.
const (
	errCodeSubjectsOverlap = 10065 // "subjects overlap with an existing stream"
	errCodeNameInUse       = 10058 // "stream name already in use" (jetstream.JSErrCodeStreamNameInUse)
)

// raced reports whether err is what a server answers a process that tried
// to create a stream another process was creating at the same moment.
// nats.go's CreateOrUpdate* asks for an update first and creates on "not
// found"; when two processes do that at once (two processors started
// together on a fresh server) one create loses: the server (nats-server
// 2.9 and 2.15 alike) checks the stream's name, lets go of its lock to
// check the account's limits, then checks the subjects against every
// stream, the other's included, and answers "subjects overlap with an
// existing stream" (10065); "stream name already in use" (10058) is the
// same race where the server's defaults make the two configs differ.
func raced(err error) bool {
	var je jetstream.JetStreamError
	if !errors.As(err, &je) || je.APIError() == nil {
		return false
	}
	c := je.APIError().ErrorCode
	return c == errCodeSubjectsOverlap || c == errCodeNameInUse
}

// errRaced is the transient error of a create that lost a race to a
// stream not yet visible by its name, or lost it again (retried).
var errRaced = errors.New("queue: stream created by another process at the same moment; not visible yet")

// create runs f, a CreateOrUpdate of the stream named stream whose first
// subject is subject (or of the KV bucket or object store it holds),
// retried through leader elections as [retry] does, and idempotent across
// processes: when f lost a race with another process creating the same
// stream (raced), the stream is read back by its name and f runs again,
// which now updates the stream to this process's configuration (nothing,
// when both agree). A stream of another name that holds the subjects is
// an error that says so, not retried.
func (q *JetStream) create(ctx context.Context, stream, subject string, f func(context.Context) error) error {
	return retry(ctx, func(ctx context.Context) error {
		err := f(ctx)
		if err == nil || !raced(err) {
			return err
		}
		_, serr := q.js.Stream(ctx, stream)
		switch {
		case serr == nil:
			err = f(ctx)
			if raced(err) {
				return fmt.Errorf("%w: %w", errRaced, err)
			}
			return err
		case errors.Is(serr, jetstream.ErrStreamNotFound):
			if other, oerr := q.js.StreamNameBySubject(ctx, subject); oerr == nil && other != "" && other != stream {
				return fmt.Errorf("%w: subject %s belongs to stream %s, not %s", err, subject, other, stream)
			}
			return fmt.Errorf("%w: %w", errRaced, err)
		default:
			return serr
		}
	})
}
