package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Symbols is the event "a module's symbols arrived": whichever process
// stored them (the symbol server's upload, on any machine) publishes it,
// so that every processor forgets that it lacked the module and one of
// them queues again the crashes walked without it.
type Symbols struct {
	DebugFile string `json:"debug_file"`
	DebugID   string `json:"debug_id"`
}

// symbolsMaxAge is how long a symbols event is kept: a processor that
// was down longer finds the crashes at the module's next upload or by
// `crashd reprocess`.
const symbolsMaxAge = time.Hour

// symbolsRetryDelay is how long an event whose handling failed waits to
// be delivered again (a variable for the tests).
var symbolsRetryDelay = 10 * time.Second

// maxSymbolsEvent bounds the body of an event read back.
const maxSymbolsEvent = 4096

// symbolsStream returns the stream of symbols events (PREFIX_SYMBOLS,
// subject PREFIX.symbols, kept an hour), made on first use.
func (q *JetStream) symbolsStream(ctx context.Context) (jetstream.Stream, error) {
	name := strings.ToUpper(q.cfg.Prefix) + "_SYMBOLS"
	var st jetstream.Stream
	err := q.create(ctx, name, q.symbolsSubject(), func(ctx context.Context) (err error) {
		st, err = q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        name,
			Description: "crashd: modules whose symbols arrived (the symbol server's uploads)",
			Subjects:    []string{q.symbolsSubject()},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			MaxAge:      symbolsMaxAge,
			Replicas:    q.cfg.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", name, err)
	}
	return st, nil
}

func (q *JetStream) symbolsSubject() string { return q.cfg.Prefix + ".symbols" }

// PublishSymbols publishes a symbols event, retried through leader
// elections as Publish is.
func (q *JetStream) PublishSymbols(ctx context.Context, ev Symbols) error {
	if _, err := q.symbolsStream(ctx); err != nil {
		return err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if err := retry(ctx, func(ctx context.Context) error {
		_, err := q.js.Publish(ctx, q.symbolsSubject(), b)
		return err
	}); err != nil {
		return fmt.Errorf("queue: symbols event %s %s: %w", ev.DebugFile, ev.DebugID, err)
	}
	return nil
}

// SymbolsHandler handles one symbols event; an error has it delivered
// again later (ConsumeSymbols).
type SymbolsHandler func(ctx context.Context, ev Symbols) error

// ConsumeSymbols hands each symbols event to one of the processes
// consuming under the same name (a durable consumer PREFIX_symbols_NAME
// they share; an event is delivered again after an error or a process's
// death, at most 5 times) until stop is called. Events published before
// the consumer was first made are delivered too (those of the last hour).
func (q *JetStream) ConsumeSymbols(ctx context.Context, name string, f SymbolsHandler) (stop func(), err error) {
	if strings.ContainsAny(name, ".*> \t\r\n") || name == "" {
		return nil, fmt.Errorf("queue: symbols consumer %q: a name without dots, wildcards or spaces", name)
	}
	st, err := q.symbolsStream(ctx)
	if err != nil {
		return nil, err
	}
	var c jetstream.Consumer
	durable := q.cfg.Prefix + "_symbols_" + name
	if err := retry(ctx, func(ctx context.Context) (err error) {
		c, err = st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       durable,
			Description:   "crashd: symbols events, each handled by one process",
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       max(q.cfg.AckWait, 2*time.Minute),
			MaxDeliver:    5,
			DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		return err
	}); err != nil {
		return nil, fmt.Errorf("queue: consumer %s: %w", durable, err)
	}
	return q.consumeSymbols(c, func(m jetstream.Msg, ev Symbols, ok bool) {
		if !ok {
			_ = m.Term()
			return
		}
		if err := f(context.Background(), ev); err != nil {
			_ = m.NakWithDelay(symbolsRetryDelay)
			return
		}
		_ = m.Ack()
	})
}

// WatchSymbols hands every symbols event published from now on to f, in
// this process (an ordered consumer of its own), until stop is called:
// what each process does for itself (forgetting its remembered misses).
func (q *JetStream) WatchSymbols(ctx context.Context, f func(ev Symbols)) (stop func(), err error) {
	st, err := q.symbolsStream(ctx)
	if err != nil {
		return nil, err
	}
	var c jetstream.Consumer
	if err := retry(ctx, func(ctx context.Context) (err error) {
		c, err = st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
		return err
	}); err != nil {
		return nil, fmt.Errorf("queue: symbols watch: %w", err)
	}
	return q.consumeSymbols(c, func(m jetstream.Msg, ev Symbols, ok bool) {
		if ok {
			f(ev)
		}
	})
}

// consumeSymbols runs h on each message of c, decoded (ok false for a
// message that is no event).
func (q *JetStream) consumeSymbols(c jetstream.Consumer, h func(m jetstream.Msg, ev Symbols, ok bool)) (func(), error) {
	cc, err := c.Consume(func(m jetstream.Msg) {
		var ev Symbols
		d := m.Data()
		ok := len(d) <= maxSymbolsEvent && json.Unmarshal(d, &ev) == nil && ev.DebugFile != "" && ev.DebugID != ""
		h(m, ev, ok)
	})
	if err != nil {
		return nil, fmt.Errorf("queue: symbols events: %w", err)
	}
	return cc.Stop, nil
}
