package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/processor"
	"github.com/gobreakpad/gobreakpad/crashd/queue"
	"github.com/gobreakpad/gobreakpad/crashd/symserver"
	"github.com/gobreakpad/gobreakpad/crashd/web"
)

// SymbolServerConfig configures crashd's symbol server (crashd/symserver;
// docs/crashd.md "Symbol server").
type SymbolServerConfig struct {
	// Disabled turns the symbol server off.
	Disabled bool `json:"disabled"`
	// Dir is its Breakpad-layout store (default DATA/symbols); the
	// processor reads it first.
	Dir string `json:"dir"`
	// Tokens are the API tokens of the configuration file (`crashd token
	// create` prints one), for every route (auth.Crashd), not only the
	// symbol uploads (scope upload_symbols).
	Tokens []auth.Token `json:"tokens"`
	// OpenV1 lets sym-upload-v1 uploads in without a token.
	OpenV1 bool `json:"open_v1"`
	// MaxUpload bounds one uploaded file (bytes; 0: 2 GiB).
	MaxUpload int64 `json:"max_upload"`
	// MaxSpool bounds the disk all symbol uploads in progress hold
	// together in DATA/symbols.incoming (bytes; 0: 4 × max_upload); past
	// it an upload is answered 503 with Retry-After. Their memory and
	// slots come from the collector's budget (max_inflight_bytes,
	// max_uploads, budget_wait), half of it at most.
	MaxSpool int64 `json:"max_spool"`
	// ReprocessMax bounds the crashes queued again when a module's symbols
	// arrive, newest first (0: 100; negative: none).
	ReprocessMax int `json:"reprocess_max"`
	// ReprocessScan is no longer used: the index's missing_symbols
	// table is queried instead of scanning processed crashes. Kept so
	// that configuration files naming it still load.
	ReprocessScan int `json:"reprocess_scan"`
}

func (c SymbolServerConfig) reprocessMax() int {
	if c.ReprocessMax == 0 {
		return 100
	}
	return max(c.ReprocessMax, 0)
}

// symbolsRedirectFor is how long the presigned URL of a redirected symbol
// download is valid (symbols_redirect).
const symbolsRedirectFor = 10 * time.Minute

// symbolsOnBlobs reports whether the symbols live on the blob store (blobs
// nats or s3: every process shares it) rather than in the data directory.
func (c *Config) symbolsOnBlobs() bool { return c.Blobs == "nats" || c.Blobs == "s3" }

// symbolsConsumer names the consumer of the symbols events that
// reprocesses crashes (one process per event).
const symbolsConsumer = "reprocess"

// symbolsArrived is the symbol server's OnSymbols: this process forgets at
// once that it lacked the module, and the event goes on the queue
// (queue.Symbols), where every process's watchSymbols forgets it too and
// one process queues again the crashes walked without the module
// (reprocessArrived). Without the queue's answer this process does it.
func (s *Server) symbolsArrived(ctx context.Context, debugFile, debugID string) {
	if s.syms != nil {
		// New crashes with the module are walked with its symbols at once,
		// not after the local sources' memory of its miss runs out.
		s.syms.ForgetMisses(debugFile, debugID)
	}
	if s.symLocal != nil {
		s.symLocal.Note(debugFile, debugID)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.jsq.PublishSymbols(pctx, queue.Symbols{DebugFile: debugFile, DebugID: debugID}); err != nil {
		s.log.Warn("symbols arrived: event not published; reprocessing from this process", "debug_file", debugFile, "debug_id", debugID, "err", err)
		s.reprocessHere(debugFile, debugID)
	}
}

// watchSymbols starts this process's consumers of the symbols events:
// every process holding a symbol chain forgets the module's misses and
// its local copy (replaced symbols are fetched again), and the processes
// with the processor or symbols role share the reprocessing.
func (s *Server) watchSymbols(ctx context.Context) error {
	if s.syms != nil || s.symLocal != nil {
		stop, err := s.jsq.WatchSymbols(ctx, func(ev queue.Symbols) {
			if s.symLocal != nil {
				s.symLocal.Forget(ev.DebugFile, ev.DebugID)
			}
			if s.syms != nil {
				s.syms.ForgetMisses(ev.DebugFile, ev.DebugID)
			}
		})
		if err != nil {
			return err
		}
		s.symStops = append(s.symStops, stop)
	}
	if (s.cfg.Has(RoleProcessor) || s.cfg.Has(RoleSymbols)) && !s.cfg.SymbolServer.Disabled {
		stop, err := s.jsq.ConsumeSymbols(ctx, symbolsConsumer, s.reprocessArrived)
		if err != nil {
			return err
		}
		s.symStops = append(s.symStops, stop)
	}
	return nil
}

// reprocessArrived queues again, newest first and at most ReprocessMax,
// the crashes that were walked without the module of a symbols event (the
// index's missing_symbols table names them). An error has the event
// delivered again.
func (s *Server) reprocessArrived(ctx context.Context, ev queue.Symbols) error {
	limit := s.cfg.SymbolServer.reprocessMax()
	if limit == 0 || s.ix == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var ids []crash.ID
	if err := s.reprocessMissing(ctx, ev.DebugFile, ev.DebugID, limit, &ids); err != nil {
		s.log.Warn("symbols arrived: reprocessing", "debug_file", ev.DebugFile, "debug_id", ev.DebugID, "err", err)
		return err
	}
	s.log.Info("symbols arrived: crashes queued again", "debug_file", ev.DebugFile, "debug_id", ev.DebugID, "crashes", len(ids))
	return nil
}

// reprocessHere queues again in the background, newest first and at most
// ReprocessMax, the crashes that were walked without the module: what
// symbolsArrived does when the queue took no event.
func (s *Server) reprocessHere(debugFile, debugID string) {
	limit := s.cfg.SymbolServer.reprocessMax()
	if limit == 0 || s.ix == nil {
		return
	}
	select {
	case s.reprocessSem <- struct{}{}:
	default:
		// Enough reprocessing running; these crashes stay listed by
		// /api/missing-symbols and are found by the next upload of the
		// module or `crashd reprocess`.
		s.log.Warn("symbols arrived: reprocessing busy, not looking for crashes", "debug_file", debugFile, "debug_id", debugID)
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer func() { <-s.reprocessSem }()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// One process of a deployment looks for the module's crashes
		// (the same module uploaded to two symbol servers at once).
		sum := sha256.Sum256([]byte(strings.ToLower(debugFile + "/" + debugID)))
		var ids []crash.ID
		ran, err := s.jsq.WithLease(ctx, "reprocess-"+hex.EncodeToString(sum[:12]), s.owner(), func(ctx context.Context) error {
			return s.reprocessMissing(ctx, debugFile, debugID, limit, &ids)
		})
		if err == nil && !ran {
			s.log.Info("symbols arrived: another process is reprocessing the module's crashes", "debug_file", debugFile, "debug_id", debugID)
			return
		}
		if err != nil {
			s.log.Warn("symbols arrived: reprocessing", "debug_file", debugFile, "debug_id", debugID, "err", err)
			return
		}
		s.log.Info("symbols arrived: crashes queued again", "debug_file", debugFile, "debug_id", debugID, "crashes", len(ids))
	}()
}

// reprocessMissing queues again, newest first and at most limit, the
// crashes walked without the module's symbols (the index's
// missing_symbols); *out gets them.
func (s *Server) reprocessMissing(ctx context.Context, debugFile, debugID string, limit int, out *[]crash.ID) error {
	found, err := s.ix.CrashesMissing(ctx, debugFile, debugID, limit)
	if err != nil {
		return err
	}
	ids := make([]crash.ID, 0, len(found))
	for _, id := range found {
		ids = append(ids, crash.ID(id))
	}
	*out = ids
	if len(ids) == 0 {
		return nil
	}
	return processor.Reprocess(ctx, s.store, s.q, s.ix, ids...)
}

// missingSymbols serves GET /api/missing-symbols?since=&limit=: the
// modules crashes were walked without (every crash the index holds, or
// those received since since), with how many crashes miss each, most
// first.
func (s *Server) missingSymbols(w http.ResponseWriter, r *http.Request) {
	var q index.MissingQuery
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := parseSince(v)
		if err != nil {
			http.Error(w, `{"error":"since: a date (2006-01-02) or an RFC 3339 time"}`, http.StatusBadRequest)
			return
		}
		q.Since = t
	}
	q.Limit = index.MaxLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > index.MaxLimit {
			http.Error(w, `{"error":"limit: a number from 1 to 1000"}`, http.StatusBadRequest)
			return
		}
		q.Limit = n
	}
	mods, total, err := s.ix.MissingSymbols(r.Context(), q)
	if err != nil {
		s.log.Warn("missing symbols", "err", err)
		http.Error(w, `{"error":"index unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"modules": mods, "total": total})
}

func parseSince(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", v)
}

// missingList is the symbols page's ranking of missing modules (the
// index's missing_symbols table).
func (s *Server) missingList(ctx context.Context, limit int) ([]web.MissingModule, error) {
	mods, _, err := s.ix.MissingSymbols(ctx, index.MissingQuery{Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]web.MissingModule, 0, len(mods))
	for _, m := range mods {
		out = append(out, web.MissingModule{DebugFile: m.DebugFile, DebugID: m.DebugID, CodeFile: m.CodeFile, CodeID: m.CodeID,
			Crashes: m.Crashes, Latest: m.LatestCrashID})
	}
	return out, nil
}

// symbolCatalog is the symbol server's catalogue of stored modules (with
// the symbols on the blob store): the index's symbol_files, which every
// process reads.
type symbolCatalog struct{ ix index.SymbolFiles }

// Record implements symserver.Catalog.
func (c symbolCatalog) Record(ctx context.Context, e symserver.CatalogEntry) error {
	return c.ix.RecordSymbolFile(ctx, index.SymbolFile{DebugFile: e.DebugFile, DebugID: e.DebugID, Name: e.Name,
		CodeFile: e.CodeFile, CodeID: e.CodeID, Size: e.Size, StoredAt: time.Now()})
}

// ByCode implements symserver.Catalog.
func (c symbolCatalog) ByCode(ctx context.Context, codeFile, codeID string) (string, string, bool, error) {
	f, ok, err := c.ix.SymbolFileByCode(ctx, codeFile, codeID)
	return f.DebugFile, f.DebugID, ok, err
}

// recentUploadsIn is the symbols page's list of recent uploads: from
// the index's catalogue with the symbols on the blob store (every
// process's uploads), else the newest files of the symbol directory.
func (s *Server) recentUploadsIn(symDir string) func(ctx context.Context, limit int) ([]web.Upload, error) {
	if sf, ok := s.ix.(index.SymbolFiles); ok && s.cfg.symbolsOnBlobs() {
		return func(ctx context.Context, limit int) ([]web.Upload, error) { return recentCatalogued(ctx, sf, limit) }
	}
	return func(ctx context.Context, limit int) ([]web.Upload, error) { return recentUploads(ctx, symDir, limit) }
}

// recentCatalogued lists the newest symbol files of the catalogue (with
// the symbols on the blob store: every process's uploads).
func recentCatalogued(ctx context.Context, ix index.SymbolFiles, limit int) ([]web.Upload, error) {
	fs, err := ix.RecentSymbolFiles(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]web.Upload, 0, len(fs))
	for _, f := range fs {
		out = append(out, web.Upload{DebugFile: f.DebugFile, DebugID: f.DebugID, Name: f.Name, Size: f.Size, Time: f.StoredAt})
	}
	return out, nil
}

// recentUploads lists the newest .sym files of the symbol server's
// Breakpad-layout directory (NAME/ID/NAME.sym), looking at most at
// 100,000 files.
func recentUploads(ctx context.Context, dir string, limit int) ([]web.Upload, error) {
	var out []web.Upload
	seen := 0
	names, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return []web.Upload{}, nil
		}
		return nil, err
	}
	for _, n := range names {
		if !n.IsDir() || strings.HasPrefix(n.Name(), ".") {
			continue
		}
		ids, _ := os.ReadDir(filepath.Join(dir, n.Name()))
		for _, id := range ids {
			if !id.IsDir() {
				continue
			}
			files, _ := os.ReadDir(filepath.Join(dir, n.Name(), id.Name()))
			for _, f := range files {
				if seen++; seen > 100000 || ctx.Err() != nil {
					break
				}
				if !strings.HasSuffix(f.Name(), ".sym") {
					continue
				}
				fi, err := f.Info()
				if err != nil {
					continue
				}
				out = append(out, web.Upload{DebugFile: n.Name(), DebugID: id.Name(), Name: f.Name(), Size: fi.Size(), Time: fi.ModTime().UTC()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []web.Upload{}
	}
	return out, nil
}
