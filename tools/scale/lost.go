//go:build unix

package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
)

// maxLogLines bounds the log lines quoted per lost crash.
const maxLogLines = 60

// reportLost writes to path, for each crash that was accepted and lost
// (never processed, or its blobs unreadable), where it got to on its way
// collector → blob store → record of unqueued crashes → queue → processor
// → index: its index rows, which of its blobs exist, its record, its
// messages still in the work stream, its dead letter, and every line of
// the processes' logs (under dir) that names it. The work stream's
// consumers are described once. Read after a failed run; the path is
// printed with the kept directory.
func reportLost(ctx context.Context, path, dir string, db *sql.DB, st blob.Store, natsURL string, acc []accepted,
	procAt map[string]time.Time, unreadable map[string]bool, indexed, accSet map[string]bool) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()

	var lost []accepted
	for _, a := range acc {
		if _, ok := procAt[a.id]; !ok || unreadable[a.id] {
			lost = append(lost, a)
		}
	}
	fmt.Fprintf(w, "lost %d of %d accepted\n", len(lost), len(acc))
	for id := range indexed {
		if !accSet[id] {
			fmt.Fprintf(w, "indexed, never accepted: %s\n", id)
		}
	}

	var js jetstream.JetStream
	if nc, err := nats.Connect(natsURL, nats.Timeout(5*time.Second)); err != nil {
		fmt.Fprintf(w, "nats: %v\n", err)
	} else {
		defer nc.Close()
		js, _ = jetstream.New(nc)
		describeConsumers(ctx, w, js)
	}
	logs := logFiles(dir)
	for _, a := range lost {
		fmt.Fprintf(w, "\n== %s (seq %d, upload began %s)\n", a.id, a.seq, a.at.UTC().Format(time.RFC3339Nano))
		describeIndex(ctx, w, db, a.id)
		describeBlobs(ctx, w, st, a.id)
		if js != nil {
			describeQueue(ctx, w, js, a.id)
		}
		grepLogs(w, logs, a.id)
		fmt.Printf("scale: lost %s (seq %d): lost.txt\n", a.id, a.seq)
	}
	return nil
}

func describeIndex(ctx context.Context, w *bufio.Writer, db *sql.DB, id string) {
	rows, err := db.QueryContext(ctx, `SELECT status, attempts, error, received_at, processed_at, updated_at FROM crashes WHERE crash_id = $1`, id)
	if err != nil {
		fmt.Fprintf(w, "index: %v\n", err)
		return
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var status, errText, rec, proc, upd string
		var attempts int
		if err := rows.Scan(&status, &attempts, &errText, &rec, &proc, &upd); err != nil {
			fmt.Fprintf(w, "index: %v\n", err)
			return
		}
		n++
		fmt.Fprintf(w, "index: status %s attempts %d error %q received %s processed %s updated %s\n", status, attempts, errText, rec, proc, upd)
	}
	if n == 0 {
		fmt.Fprintln(w, "index: no row")
	}
}

func describeBlobs(ctx context.Context, w *bufio.Writer, st blob.Store, id string) {
	if st == nil {
		fmt.Fprintln(w, "blobs: store not opened")
		return
	}
	cid := crash.ID(id)
	for _, k := range []string{crash.RawCrashKey(cid), crash.DumpNamesKey(cid), crash.DumpKey(cid, "upload_file_minidump"),
		crash.QueuedKey(cid), crash.LegacyQueuedKey(cid), crash.ProcessedCrashKey(cid)} {
		ok, err := st.Exists(ctx, k)
		fmt.Fprintf(w, "blob %s: exists %v %v\n", k, ok, errText(err))
	}
}

// describeQueue says whether id has a record of unqueued crashes, a dead
// letter, and messages still in the work stream.
func describeQueue(ctx context.Context, w *bufio.Writer, js jetstream.JetStream, id string) {
	if kv, err := js.KeyValue(ctx, "crashd_unqueued"); err != nil {
		fmt.Fprintf(w, "unqueued record: bucket: %v\n", err)
	} else {
		e, err := kv.Get(ctx, id)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			fmt.Fprintln(w, "unqueued record: none")
		case err != nil:
			fmt.Fprintf(w, "unqueued record: %v\n", err)
		default:
			fmt.Fprintf(w, "unqueued record: revision %d made %s value %q\n", e.Revision(), e.Created().UTC().Format(time.RFC3339Nano), e.Value())
		}
	}
	if s, err := js.Stream(ctx, "CRASHD_DEAD"); err != nil {
		fmt.Fprintf(w, "dead letter: stream: %v\n", err)
	} else if m, err := s.GetLastMsgForSubject(ctx, "crashd.dead."+id); err == nil {
		fmt.Fprintf(w, "dead letter: %s %s\n", m.Time.UTC().Format(time.RFC3339Nano), m.Data)
	} else if errors.Is(err, jetstream.ErrMsgNotFound) {
		fmt.Fprintln(w, "dead letter: none")
	} else {
		fmt.Fprintf(w, "dead letter: %v\n", errText(err))
	}
	s, err := js.Stream(ctx, "CRASHD")
	if err != nil {
		fmt.Fprintf(w, "work stream: %v\n", err)
		return
	}
	info := s.CachedInfo()
	first, last := info.State.FirstSeq, info.State.LastSeq
	if last-first > 20000 {
		first = last - 20000
	}
	found := 0
	for seq := first; seq <= last && first > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // acknowledged (deleted) or gone
		}
		if string(m.Data) == id {
			found++
			fmt.Fprintf(w, "work stream: message %d %s published %s\n", seq, m.Subject, m.Time.UTC().Format(time.RFC3339Nano))
		}
	}
	if found == 0 {
		fmt.Fprintf(w, "work stream: no message (of %d left, seq %d–%d)\n", info.State.Msgs, info.State.FirstSeq, info.State.LastSeq)
	}
}

func describeConsumers(ctx context.Context, w *bufio.Writer, js jetstream.JetStream) {
	s, err := js.Stream(ctx, "CRASHD")
	if err != nil {
		fmt.Fprintf(w, "work stream: %v\n", err)
		return
	}
	si := s.CachedInfo()
	fmt.Fprintf(w, "work stream: %d messages, seq %d–%d, replicas %d, leader %s\n", si.State.Msgs, si.State.FirstSeq, si.State.LastSeq, si.Config.Replicas, leader(si.Cluster))
	for _, k := range []string{"normal", "priority", "reprocess"} {
		c, err := s.Consumer(ctx, "crashd_"+k)
		if err != nil {
			fmt.Fprintf(w, "consumer %s: %v\n", k, err)
			continue
		}
		ci := c.CachedInfo()
		fmt.Fprintf(w, "consumer %s: pending %d ack pending %d redelivered %d delivered stream seq %d ack floor %d leader %s\n",
			k, ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.Delivered.Stream, ci.AckFloor.Stream, leader(ci.Cluster))
	}
}

func leader(c *jetstream.ClusterInfo) string {
	if c == nil {
		return "?"
	}
	return c.Leader
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}

// logFiles lists the .log files under dir (the crashd processes' and the
// NATS nodes').
func logFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".log") {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// grepLogs writes the lines of logs naming id (at most maxLogLines).
func grepLogs(w *bufio.Writer, logs []string, id string) {
	n := 0
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() && n < maxLogLines {
			if strings.Contains(sc.Text(), id) {
				n++
				fmt.Fprintf(w, "log %s: %s\n", filepath.Base(p), sc.Text())
			}
		}
		f.Close()
	}
	if n == 0 {
		fmt.Fprintln(w, "logs: no line names it")
	}
}
