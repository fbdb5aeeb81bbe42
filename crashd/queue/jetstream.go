package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config is the shape of the streams and consumers.
type Config struct {
	// Prefix names the subjects (PREFIX.work.KIND, PREFIX.dead.ID), the
	// streams (upper-cased PREFIX and PREFIX_DEAD) and the consumers
	// (PREFIX_KIND). Default "crashd".
	Prefix string
	// AckWait is how long a delivery may go without an ack or
	// InProgress before it is delivered again. Default 30s.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of one message (a crash that kills
	// its worker each time is not delivered for ever). Default 10.
	MaxDeliver int
	// Duplicates is the window within which a Normal crash published twice
	// is stored once. Default 2m.
	Duplicates time.Duration
	// Replicas is the streams' replication in a cluster (the object
	// store's and the leases' too). Default: 3 when the server is in a
	// cluster (or the URL names three servers or more), else 1.
	Replicas int
	// HandBackOnOpen deletes and recreates the consumers when the queue
	// opens, so that deliveries a dead process held come back at once
	// instead of after AckWait. Only for a queue no other process
	// consumes (the embedded server).
	HandBackOnOpen bool
}

func (c *Config) defaults() {
	if c.Prefix == "" {
		c.Prefix = "crashd"
	}
	if c.AckWait <= 0 {
		c.AckWait = 30 * time.Second
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = 10
	}
	if c.Duplicates <= 0 {
		c.Duplicates = 2 * time.Minute
	}
}

// EmbeddedConfig is the NATS server crashd runs in its own process.
type EmbeddedConfig struct {
	// Dir holds JetStream's file storage (DATA/nats).
	Dir string
	// Listen, if set (host:port), also lets other processes connect over
	// TCP (loopback in tests); empty: in-process connections only.
	Listen string
	// SyncAlways syncs every stored message to disk before it is
	// acknowledged (survives power loss, at a cost per message); without
	// it messages survive the process being killed, and the server
	// syncs them in the background.
	SyncAlways bool
	// Cluster makes the embedded server a node of a NATS cluster (for
	// small deployments without a separate NATS service): it listens for
	// routes on Cluster.Listen and connects to Cluster.Routes. Without it
	// the server is alone.
	Cluster *ClusterConfig
}

// ClusterConfig is the embedded server's place in a NATS cluster.
type ClusterConfig struct {
	// Name is the cluster's name, the same on every node (default
	// "crashd").
	Name string
	// ServerName is this node's name, unique in the cluster (JetStream
	// needs it; default: the host name and the route port).
	ServerName string
	// Listen is the host:port of the routes (nats-server's cluster
	// listen, usually :6222).
	Listen string
	// Routes are the other nodes' route URLs (nats-route://host:6222 or
	// nats://host:6222); this node's own may be among them.
	Routes []string
}

// JetStream is a [Queue] on NATS JetStream.
type JetStream struct {
	cfg   Config
	ns    *server.Server // embedded server, or nil
	nc    *nats.Conn
	js    jetstream.JetStream
	work  string // stream names
	dead  string
	cons  map[Kind]jetstream.Consumer
	close sync.Once
	// kv is the leases' bucket, marksKV the reprocess markers' (ErrQueued),
	// made on first use.
	kvMu    sync.Mutex
	kv      jetstream.KeyValue
	marksKV jetstream.KeyValue
	// unqueued is the bucket of crashes stored but not yet queued.
	unqueued *Unqueued
}

// Embedded starts a NATS server with JetStream in this process (file
// storage under ecfg.Dir) and opens the queue on it over an in-process
// connection.
func Embedded(ctx context.Context, ecfg EmbeddedConfig, cfg Config) (*JetStream, error) {
	if cl := ecfg.Cluster; cl != nil && cfg.Replicas <= 0 {
		// The routes name the other nodes: the cluster is them and this
		// node (two routes: three nodes, R3, which outlives the loss of
		// one).
		cfg.Replicas = min(3, len(cl.Routes)+1)
	}
	ns, err := startEmbeddedServer(ecfg)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(ns.ClientURL(), nats.InProcessServer(ns), nats.Name("crashd"), nats.MaxReconnects(-1))
	if err != nil {
		ns.Shutdown()
		return nil, fmt.Errorf("queue: embedded server: connect: %w", err)
	}
	if ecfg.Cluster != nil {
		// JetStream answers once the cluster has elected its meta leader.
		err = waitJetStream(ctx, nc)
	}
	var q *JetStream
	if err == nil {
		q, err = open(ctx, nc, cfg)
	}
	if err != nil {
		nc.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, err
	}
	q.ns = ns
	return q, nil
}

// startEmbeddedServer starts the NATS server of ecfg in this process and
// waits until it takes connections.
func startEmbeddedServer(ecfg EmbeddedConfig) (*server.Server, error) {
	if ecfg.Dir == "" {
		return nil, errors.New("queue: embedded server: no storage directory")
	}
	opts := &server.Options{
		ServerName: "crashd",
		JetStream:  true,
		StoreDir:   ecfg.Dir,
		SyncAlways: ecfg.SyncAlways,
		NoSigs:     true,
		NoLog:      os.Getenv("CRASHD_NATS_DEBUG") == "",
		DontListen: ecfg.Listen == "",
	}
	if ecfg.Listen != "" {
		host, port, err := net.SplitHostPort(ecfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("queue: embedded server: listen address %q: %w", ecfg.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("queue: embedded server: listen port %q: %w", port, err)
		}
		opts.Host, opts.Port = host, p
	}
	if cl := ecfg.Cluster; cl != nil {
		// DontListen would keep the routes from starting too: without a
		// client address, clients get a random loopback port.
		if opts.DontListen {
			opts.DontListen, opts.Host, opts.Port = false, "127.0.0.1", server.RANDOM_PORT
		}
		host, port, err := net.SplitHostPort(cl.Listen)
		if err != nil {
			return nil, fmt.Errorf("queue: embedded server: cluster listen address %q: %w", cl.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("queue: embedded server: cluster port %q: %w", port, err)
		}
		opts.Cluster = server.ClusterOpts{Name: cl.Name, Host: host, Port: p}
		if opts.Cluster.Name == "" {
			opts.Cluster.Name = "crashd"
		}
		opts.ServerName = cl.ServerName
		if opts.ServerName == "" {
			h, _ := os.Hostname()
			opts.ServerName = h + "-" + port
		}
		for _, r := range cl.Routes {
			u, err := url.Parse(r)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("queue: embedded server: route %q: not a URL (nats-route://host:port)", r)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("queue: embedded server: %w", err)
	}
	if !opts.NoLog {
		ns.ConfigureLogger() // on stderr: CRASHD_NATS_DEBUG is set
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("queue: embedded server: not ready after 30s")
	}
	return ns, nil
}

// Connect opens the queue on an external NATS server or cluster at url
// (nats://host:port, comma-separated for several).
func Connect(ctx context.Context, url string, cfg Config, opts ...nats.Option) (*JetStream, error) {
	nc, err := nats.Connect(url, append([]nats.Option{nats.Name("crashd"), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("queue: connect %s: %w", url, err)
	}
	err = waitJetStream(ctx, nc)
	// Connected: a server in a cluster says so.
	if cfg.Replicas <= 0 && (nc.ConnectedClusterName() != "" || len(nc.Servers()) >= 3) {
		cfg.Replicas = 3
	}
	var q *JetStream
	if err == nil {
		q, err = open(ctx, nc, cfg)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return q, nil
}

// waitJetStream waits until JetStream answers on nc (a cluster starting
// elects its leaders first), up to a minute or the end of ctx.
func waitJetStream(ctx context.Context, nc *nats.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("queue: jetstream: %w", err)
	}
	for {
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := js.AccountInfo(actx)
		acancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("queue: jetstream not available: %w", err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// retry runs f until it succeeds, ctx ends or a minute passed, waiting a
// little longer after each failure: a cluster that lost a node elects new
// stream leaders within seconds, during which requests time out or find
// no responders. Only for idempotent requests.
func retry(ctx context.Context, f func(context.Context) error) error {
	deadline := time.Now().Add(time.Minute)
	wait := 100 * time.Millisecond
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f(rctx)
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// transient reports whether err is one a cluster recovers from by itself.
func transient(err error) bool {
	for _, e := range []error{context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders,
		jetstream.ErrNoStreamResponse, nats.ErrDisconnected, nats.ErrConnectionReconnecting,
		jetstream.ErrJetStreamNotEnabled, errRaced} {
		if errors.Is(err, e) {
			return true
		}
	}
	// "No suitable peers for placement" (JetStream error 10005): a node
	// that just joined is not yet known as a JetStream peer to the meta
	// leader, so an R3 stream cannot be placed for a moment.
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == 10005 {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "leader") || strings.Contains(msg, "temporarily unavailable") || strings.Contains(msg, "no suitable peers")
}

func open(ctx context.Context, nc *nats.Conn, cfg Config) (*JetStream, error) {
	cfg.defaults()
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if strings.ContainsAny(cfg.Prefix, ".*> \t\r\n") {
		return nil, fmt.Errorf("queue: prefix %q: no dots, wildcards or spaces", cfg.Prefix)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("queue: jetstream: %w", err)
	}
	q := &JetStream{cfg: cfg, nc: nc, js: js, cons: map[Kind]jetstream.Consumer{}}
	base := strings.ToUpper(cfg.Prefix)
	q.work, q.dead = base, base+"_DEAD"
	if err := q.create(ctx, q.work, cfg.Prefix+".work.*", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        q.work,
			Description: "crash ids waiting to be processed",
			Subjects:    []string{cfg.Prefix + ".work.*"},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			Duplicates:  cfg.Duplicates,
			Replicas:    cfg.Replicas,
		})
		return err
	}); err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", q.work, err)
	}
	if err := q.create(ctx, q.dead, cfg.Prefix+".dead.*", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:              q.dead,
			Description:       "crashes that failed too often (one subject per crash)",
			Subjects:          []string{cfg.Prefix + ".dead.*"},
			Retention:         jetstream.LimitsPolicy,
			Storage:           jetstream.FileStorage,
			MaxMsgsPerSubject: 1,
			Replicas:          cfg.Replicas,
		})
		return err
	}); err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", q.dead, err)
	}
	for _, k := range Kinds {
		name := cfg.Prefix + "_" + string(k)
		if cfg.HandBackOnOpen {
			if err := js.DeleteConsumer(ctx, q.work, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return nil, fmt.Errorf("queue: consumer %s: hand back: %w", name, err)
			}
		}
		var c jetstream.Consumer
		err := retry(ctx, func(ctx context.Context) (err error) {
			c, err = js.CreateOrUpdateConsumer(ctx, q.work, jetstream.ConsumerConfig{
				Durable:       name,
				Description:   "crashd workers: " + string(k) + " crashes",
				FilterSubject: q.subject(k),
				AckPolicy:     jetstream.AckExplicitPolicy,
				AckWait:       cfg.AckWait,
				MaxDeliver:    cfg.MaxDeliver,
				DeliverPolicy: jetstream.DeliverAllPolicy,
				MaxAckPending: -1,
			})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("queue: consumer %s: %w", name, err)
		}
		q.cons[k] = c
	}
	return q, nil
}

func (q *JetStream) subject(k Kind) string { return q.cfg.Prefix + ".work." + string(k) }

func (q *JetStream) deadSubject(id string) string { return q.cfg.Prefix + ".dead." + id }

// checkID refuses ids that are not one subject token.
func checkID(id string) error {
	if id == "" || len(id) > 200 {
		return fmt.Errorf("queue: crash id %q: empty or too long", id)
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("queue: crash id %q: only letters, digits, '-' and '_'", id)
		}
	}
	return nil
}

// Config returns the queue's configuration, defaults filled in.
func (q *JetStream) Config() Config { return q.cfg }

// Publish implements [Queue].
func (q *JetStream) Publish(ctx context.Context, kind Kind, id string) error {
	if !kind.Valid() {
		return fmt.Errorf("queue: publish %s: unknown kind %q", id, kind)
	}
	if err := checkID(id); err != nil {
		return err
	}
	if kind == Reprocess {
		// Once while it waits (ErrQueued).
		if err := q.mark(ctx, id); err != nil {
			return err
		}
	}
	var opts []jetstream.PublishOpt
	if kind == Normal {
		// The collector and the start-up recovery may both queue a crash.
		opts = append(opts, jetstream.WithMsgID(string(kind)+":"+id))
	}
	// Retried while a cluster recovers from a lost node: a Normal crash
	// is published once however often it is sent (its message id); the
	// other kinds are idempotent for the processor.
	if err := retry(ctx, func(ctx context.Context) error {
		_, err := q.js.Publish(ctx, q.subject(kind), []byte(id), opts...)
		return err
	}); err != nil {
		if kind == Reprocess {
			err = errors.Join(err, q.unmark(context.WithoutCancel(ctx), id))
		}
		return fmt.Errorf("queue: publish %s (%s): %w", id, kind, err)
	}
	return nil
}

type deadRecord struct {
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// DeadLetter implements [Queue].
func (q *JetStream) DeadLetter(ctx context.Context, id, reason string) error {
	if err := checkID(id); err != nil {
		return err
	}
	b, _ := json.Marshal(deadRecord{Reason: reason, Time: time.Now().UTC()})
	if _, err := q.js.Publish(ctx, q.deadSubject(id), b); err != nil {
		return fmt.Errorf("queue: dead letter %s: %w", id, err)
	}
	return nil
}

// Undead implements [Queue].
func (q *JetStream) Undead(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	s, err := q.js.Stream(ctx, q.dead)
	if err != nil {
		return fmt.Errorf("queue: undead %s: %w", id, err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(q.deadSubject(id))); err != nil {
		return fmt.Errorf("queue: undead %s: %w", id, err)
	}
	return nil
}

// Dead implements [Queue].
func (q *JetStream) Dead(ctx context.Context, limit int) ([]DeadLetter, error) {
	s, err := q.js.Stream(ctx, q.dead)
	if err != nil {
		return nil, fmt.Errorf("queue: dead letters: %w", err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(q.cfg.Prefix+".dead.*"))
	if err != nil {
		return nil, fmt.Errorf("queue: dead letters: %w", err)
	}
	var out []DeadLetter
	prefix := q.cfg.Prefix + ".dead."
	for subj := range info.State.Subjects {
		m, err := s.GetLastMsgForSubject(ctx, subj)
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			return nil, fmt.Errorf("queue: dead letter %s: %w", subj, err)
		}
		var r deadRecord
		if err := json.Unmarshal(m.Data, &r); err != nil {
			r.Reason = "unreadable dead letter: " + err.Error()
			r.Time = m.Time
		}
		out = append(out, DeadLetter{ID: strings.TrimPrefix(subj, prefix), Reason: r.Reason, Time: r.Time})
	}
	slices.SortFunc(out, func(a, b DeadLetter) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Depth implements [Queue].
func (q *JetStream) Depth(ctx context.Context) (Depth, error) {
	d := Depth{Waiting: map[Kind]uint64{}}
	for _, k := range Kinds {
		info, err := q.cons[k].Info(ctx)
		if err != nil {
			return d, fmt.Errorf("queue: depth: consumer %s: %w", k, err)
		}
		d.Waiting[k] = info.NumPending
		d.InFlight += uint64(info.NumAckPending)
	}
	s, err := q.js.Stream(ctx, q.dead)
	if err != nil {
		return d, fmt.Errorf("queue: depth: %w", err)
	}
	d.Dead = s.CachedInfo().State.Msgs
	return d, nil
}

// Ping implements [Queue]: a round trip to JetStream.
func (q *JetStream) Ping(ctx context.Context) error {
	if !q.nc.IsConnected() {
		return fmt.Errorf("queue: not connected (%s)", q.nc.Status())
	}
	if _, err := q.js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	return nil
}

// Close implements [Queue]: it closes the connection and shuts an
// embedded server down (its storage is synced).
func (q *JetStream) Close() error {
	q.close.Do(func() {
		q.nc.Close()
		if q.ns != nil {
			q.ns.Shutdown()
			q.ns.WaitForShutdown()
		}
	})
	return nil
}

// Consume implements [Queue].
func (q *JetStream) Consume(ctx context.Context) (Consumer, error) {
	c := &consumer{q: q, ch: map[Kind]chan *delivery{}, stop: make(chan struct{})}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	// Every channel is made before any fetcher runs: a fetcher reads the
	// map (a race with the writes of a single loop).
	for _, k := range Kinds {
		c.ch[k] = make(chan *delivery)
	}
	for _, k := range Kinds {
		c.wg.Add(1)
		go c.fetch(fctx, k)
	}
	return c, nil
}

// consumer runs one fetcher per kind; each holds at most one message,
// handed to the next caller of Next, kept alive with InProgress while it
// waits and handed back (Nak) on Stop.
type consumer struct {
	q      *JetStream
	ch     map[Kind]chan *delivery
	stop   chan struct{}
	once   sync.Once
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (c *consumer) fetch(ctx context.Context, k Kind) {
	defer c.wg.Done()
	cons := c.q.cons[k]
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := cons.Next(jetstream.FetchContext(fctx))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
				// The server is away: retry without spinning.
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
					return
				}
			}
			continue
		}
		d := &delivery{m: m, kind: k, id: string(m.Data()), attempt: 1}
		if md, err := m.Metadata(); err == nil {
			d.attempt = int(md.NumDelivered)
		}
		if !c.handOver(ctx, k, d) {
			_ = m.Nak()
			return
		}
	}
}

// handOver gives d to a caller of Next, extending its ack wait while it
// waits; false when the consumer stopped first.
func (c *consumer) handOver(ctx context.Context, k Kind, d *delivery) bool {
	tick := time.NewTicker(max(c.q.cfg.AckWait/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case c.ch[k] <- d:
			return true
		case <-tick.C:
			_ = d.m.InProgress()
		case <-ctx.Done():
			return false
		}
	}
}

// Next implements [Consumer].
func (c *consumer) Next(ctx context.Context) (Delivery, error) {
	for _, k := range Kinds {
		select {
		case d := <-c.ch[k]:
			return c.taken(d), nil
		default:
		}
	}
	select {
	case d := <-c.ch[Priority]:
		return c.taken(d), nil
	case d := <-c.ch[Reprocess]:
		return c.taken(d), nil
	case d := <-c.ch[Normal]:
		return c.taken(d), nil
	case <-c.stop:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Stop implements [Consumer].
func (c *consumer) Stop() {
	c.once.Do(func() {
		close(c.stop)
		c.cancel()
		c.wg.Wait()
	})
}

type delivery struct {
	m       jetstream.Msg
	kind    Kind
	id      string
	attempt int
}

func (d *delivery) ID() string   { return d.id }
func (d *delivery) Kind() Kind   { return d.kind }
func (d *delivery) Attempt() int { return d.attempt }
func (d *delivery) Ack() error   { return wrap("ack", d.id, d.m.Ack()) }
func (d *delivery) InProgress() error {
	return wrap("in progress", d.id, d.m.InProgress())
}
func (d *delivery) Nak(delay time.Duration) error {
	if delay <= 0 {
		return wrap("nak", d.id, d.m.Nak())
	}
	return wrap("nak", d.id, d.m.NakWithDelay(delay))
}
func (d *delivery) Term(reason string) error {
	return wrap("term", d.id, d.m.TermWithReason(reason))
}

func wrap(op, id string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("queue: %s %s: %w", op, id, err)
}

// LeaseTTL is how long a lease lasts without renewal: a process that dies
// holding one frees it after that long.
const LeaseTTL = time.Minute

// Lease is a named lease in the cluster (a key of the NATS KV bucket
// PREFIX_leases, replicated as the streams): while a process holds it no
// other gets it, so work that must not run twice at once (the sweep of
// crashes stored but never queued, retention, reprocessing for symbols
// that arrived) runs in one process of a deployment. It lasts [LeaseTTL]
// unless renewed.
type Lease struct {
	kv  jetstream.KeyValue
	key string
	mu  sync.Mutex
	rev uint64
}

func (q *JetStream) leases(ctx context.Context) (jetstream.KeyValue, error) {
	q.kvMu.Lock()
	defer q.kvMu.Unlock()
	if q.kv != nil {
		return q.kv, nil
	}
	var kv jetstream.KeyValue
	bucket := q.cfg.Prefix + "_leases"
	err := q.create(ctx, "KV_"+bucket, "$KV."+bucket+".>", func(ctx context.Context) (err error) {
		kv, err = q.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      bucket,
			Description: "crashd's leases: work one process of a deployment does at a time",
			TTL:         LeaseTTL,
			Replicas:    q.cfg.Replicas,
			Storage:     jetstream.FileStorage,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("queue: leases: %w", err)
	}
	q.kv = kv
	return kv, nil
}

// TryLease takes the lease name if no process holds it: (lease, true), or
// (nil, false) when another holds it. owner is recorded in it (for
// people looking with the nats CLI). Names are letters, digits, '-', '_'
// and '.'.
func (q *JetStream) TryLease(ctx context.Context, name, owner string) (*Lease, bool, error) {
	kv, err := q.leases(ctx)
	if err != nil {
		return nil, false, err
	}
	val := []byte(owner + " " + time.Now().UTC().Format(time.RFC3339))
	var rev uint64
	err = retry(ctx, func(ctx context.Context) (err error) {
		rev, err = kv.Create(ctx, name, val)
		return err
	})
	if errors.Is(err, jetstream.ErrKeyExists) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("queue: lease %s: %w", name, err)
	}
	return &Lease{kv: kv, key: name, rev: rev}, true, nil
}

// Renew extends the lease for another LeaseTTL; an error means it was
// lost (expired and taken by another process): stop the work.
func (l *Lease) Renew(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	rev, err := l.kv.Update(ctx, l.key, []byte("renewed "+time.Now().UTC().Format(time.RFC3339)), l.rev)
	if err != nil {
		return fmt.Errorf("queue: lease %s: renew: %w", l.key, err)
	}
	l.rev = rev
	return nil
}

// Release gives the lease up (if this process still holds it).
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev)); err != nil {
		return fmt.Errorf("queue: lease %s: release: %w", l.key, err)
	}
	return nil
}

// WithLease runs f holding the lease name, renewing it every third of
// LeaseTTL; f's context ends if the lease is lost. It returns false
// without running f when another process holds the lease.
func (q *JetStream) WithLease(ctx context.Context, name, owner string, f func(context.Context) error) (bool, error) {
	l, ok, err := q.TryLease(ctx, name, owner)
	if err != nil || !ok {
		return false, err
	}
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := l.Renew(fctx); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	err = f(fctx)
	close(done)
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	if rerr := l.Release(rctx); rerr != nil && err == nil && context.Cause(fctx) == nil {
		err = rerr
	}
	if cause := context.Cause(fctx); cause != nil && err == nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	return true, err
}

// JetStream returns the queue's JetStream context (for the object store of
// blobs on the same cluster).
func (q *JetStream) JetStream() jetstream.JetStream { return q.js }
