// Package queue is crashd's work queue: the ids of crashes waiting to be
// processed, handed to workers with explicit acknowledgement, redelivered
// when a worker dies or gives a crash back, and a dead-letter state for
// crashes that failed too often, visible and reprocessable.
//
// It is NATS JetStream (docs/crashd.md, "Queue"): a stream with work-queue
// retention holding one subject per kind of work, as Socorro's queues
// (normal, priority, reprocessing), one durable pull consumer per subject
// with explicit acks, an ack wait the workers extend while they work
// ([Delivery.InProgress]) and a bounded number of deliveries, and a second
// stream of dead letters (one subject per crash). [Embedded] runs the NATS
// server in this process (JetStream file storage, no network listener
// unless asked); [Connect] uses an external server or cluster (issue 26).
package queue

import (
	"context"
	"errors"
	"time"
)

// Kind is the kind of work a crash id is queued for; each is a subject of
// the stream, consumed in the order priority, reprocess, normal.
type Kind string

// The kinds of work, as Socorro's queues.
const (
	// Normal is a crash that has just arrived.
	Normal Kind = "normal"
	// Priority is a crash someone is waiting for (Socorro's priority
	// queue: a person asked for it).
	Priority Kind = "priority"
	// Reprocess is a crash processed before and queued again (new
	// symbols, a failed crash retried).
	Reprocess Kind = "reprocess"
)

// Kinds lists the kinds in the order workers take them.
var Kinds = []Kind{Priority, Reprocess, Normal}

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// ErrClosed is returned by a queue or consumer after Close.
var ErrClosed = errors.New("queue: closed")

// Queue is what the collector and the processor need of a queue.
type Queue interface {
	// Publish queues id for the kind of work, durably (the queue has
	// stored it when Publish returns nil). A Normal crash published twice
	// within the queue's duplicate window is queued once; a Reprocess
	// crash already waiting to be reprocessed is not queued again
	// (ErrQueued).
	Publish(ctx context.Context, kind Kind, id string) error
	// Consume starts taking work: Next of the returned consumer hands
	// one delivery at a time, priority first.
	Consume(ctx context.Context) (Consumer, error)
	// DeadLetter records id as a dead letter with the reason (kept until
	// Undead or a reprocess).
	DeadLetter(ctx context.Context, id, reason string) error
	// Undead removes id's dead letter, if any.
	Undead(ctx context.Context, id string) error
	// Dead lists the dead letters, oldest first, at most limit (0: all).
	Dead(ctx context.Context, limit int) ([]DeadLetter, error)
	// Depth counts the work waiting and in flight.
	Depth(ctx context.Context) (Depth, error)
	// Ping checks that the queue answers.
	Ping(ctx context.Context) error
	// Close releases the queue (and stops an embedded server).
	Close() error
}

// Consumer hands out deliveries.
type Consumer interface {
	// Next blocks until a delivery is ready (priority first, then
	// reprocess, then normal) or ctx ends.
	Next(ctx context.Context) (Delivery, error)
	// Stop stops taking work and hands back deliveries taken but not yet
	// given to a caller of Next.
	Stop()
}

// Delivery is one crash id handed to a worker. Exactly one of Ack, Nak or
// Term ends it; a worker that ends none of them (it died) gets the crash
// back after the ack wait.
type Delivery interface {
	// ID is the crash id.
	ID() string
	// Kind is the kind of work it was queued for.
	Kind() Kind
	// Attempt is the delivery count: 1 on the first delivery.
	Attempt() int
	// Ack says the work is done; the queue forgets it.
	Ack() error
	// Nak hands the crash back, to be delivered again after delay.
	Nak(delay time.Duration) error
	// Term drops the crash from the queue without doing it (after it was
	// dead-lettered).
	Term(reason string) error
	// InProgress extends the ack wait: the worker is still on it.
	InProgress() error
}

// DeadLetter is a crash that failed too often.
type DeadLetter struct {
	ID     string    `json:"crash_id"`
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// Depth is how much work the queue holds.
type Depth struct {
	// Waiting counts crashes not yet delivered, per kind.
	Waiting map[Kind]uint64 `json:"waiting"`
	// InFlight counts deliveries not yet acknowledged.
	InFlight uint64 `json:"in_flight"`
	// Dead counts dead letters.
	Dead uint64 `json:"dead"`
}

// Total is the number of crashes waiting, of every kind.
func (d Depth) Total() uint64 {
	var n uint64
	for _, v := range d.Waiting {
		n += v
	}
	return n
}
