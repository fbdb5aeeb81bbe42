package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/index"
	"github.com/gobreakpad/gobreakpad/crashd/processor"
	"github.com/gobreakpad/gobreakpad/crashd/symserver"
	"github.com/gobreakpad/gobreakpad/symstore"
)

// SymbolServerConfig configures crashd's symbol server (crashd/symserver;
// docs/crashd.md "Symbol server").
type SymbolServerConfig struct {
	// Disabled turns the symbol server off.
	Disabled bool `json:"disabled"`
	// Dir is its Breakpad-layout store (default DATA/symbols); the
	// processor reads it first.
	Dir string `json:"dir"`
	// Tokens are the API tokens allowed to upload (`crashd token create`
	// prints one).
	Tokens []symserver.Token `json:"tokens"`
	// OpenV1 lets sym-upload-v1 uploads in without a token.
	OpenV1 bool `json:"open_v1"`
	// MaxUpload bounds one uploaded file (bytes; 0: 2 GiB).
	MaxUpload int64 `json:"max_upload"`
	// ReprocessMax bounds the crashes queued again when a module's symbols
	// arrive, newest first (0: 100; negative: none).
	ReprocessMax int `json:"reprocess_max"`
	// ReprocessScan bounds the processed crashes, newest first, looked at
	// for those that missed the module (and by /api/missing-symbols)
	// (0: 2000).
	ReprocessScan int `json:"reprocess_scan"`
}

func (c SymbolServerConfig) reprocessMax() int {
	if c.ReprocessMax == 0 {
		return 100
	}
	return max(c.ReprocessMax, 0)
}

func (c SymbolServerConfig) reprocessScan() int {
	if c.ReprocessScan <= 0 {
		return 2000
	}
	return c.ReprocessScan
}

// missingModule is a module of a processed crash walked without symbols.
type missingModule struct {
	DebugFile string `json:"debug_file"`
	DebugID   string `json:"debug_id"`
	CodeFile  string `json:"code_file"`
	CodeID    string `json:"code_id"`
	// Crashes counts the crashes missing it; Latest is the newest's id.
	Crashes int    `json:"crashes"`
	Latest  string `json:"latest_crash_id"`
}

// scanMissing calls fn for each processed crash received since since,
// newest first, at most limit of them, with the modules it missed.
func (s *Server) scanMissing(ctx context.Context, since time.Time, limit int, fn func(id string, mods []missingModule) bool) error {
	var before time.Time
	for seen := 0; seen < limit; {
		q := index.Query{Status: index.Processed, Since: since, Before: before, Limit: min(index.MaxLimit, limit-seen)}
		rows, err := s.ix.Search(ctx, q)
		if err != nil {
			return err
		}
		for _, c := range rows {
			seen++
			b, err := s.store.Get(ctx, crash.ProcessedCrashKey(crash.ID(c.ID)))
			if err != nil {
				continue
			}
			var pc struct {
				Missing  []string `json:"modules_missing_symbols"`
				JSONDump struct {
					Modules []struct {
						Filename, DebugFile, DebugID, CodeID string
						MissingSymbols                       bool
					} `json:"modules"`
				} `json:"json_dump"`
			}
			if json.Unmarshal(b, &pc) != nil {
				continue
			}
			var mods []missingModule
			for _, m := range pc.JSONDump.Modules {
				if m.MissingSymbols && m.DebugFile != "" && m.DebugID != "" {
					mods = append(mods, missingModule{DebugFile: m.DebugFile, DebugID: m.DebugID, CodeFile: m.Filename, CodeID: m.CodeID})
				}
			}
			if len(mods) == 0 {
				for _, m := range pc.Missing {
					if f, id, ok := strings.Cut(m, "/"); ok {
						mods = append(mods, missingModule{DebugFile: f, DebugID: id})
					}
				}
			}
			if len(mods) > 0 && !fn(c.ID, mods) {
				return nil
			}
		}
		if len(rows) < q.Limit || len(rows) == 0 {
			return nil
		}
		before = rows[len(rows)-1].ReceivedAt
	}
	return nil
}

// symbolsArrived queues again, newest first and at most ReprocessMax, the
// crashes that were walked without the module's symbols (the symbol
// server's OnSymbols). It works in the background.
func (s *Server) symbolsArrived(_ context.Context, debugFile, debugID string) {
	limit := s.cfg.SymbolServer.reprocessMax()
	if limit == 0 || s.ix == nil {
		return
	}
	select {
	case s.reprocessSem <- struct{}{}:
	default:
		// Enough scans running; their crashes are found by the next
		// upload or `crashd reprocess`.
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
// crashes walked without the module's symbols; *ids gets them.
func (s *Server) reprocessMissing(ctx context.Context, debugFile, debugID string, limit int, out *[]crash.ID) error {
	var ids []crash.ID
	err := s.scanMissing(ctx, time.Time{}, s.cfg.SymbolServer.reprocessScan(), func(id string, mods []missingModule) bool {
		for _, m := range mods {
			if strings.EqualFold(symstore.BaseName(m.DebugFile), debugFile) && strings.EqualFold(m.DebugID, debugID) {
				ids = append(ids, crash.ID(id))
				break
			}
		}
		return len(ids) < limit
	})
	if err == nil && len(ids) > 0 {
		err = processor.Reprocess(ctx, s.store, s.q, s.ix, ids...)
	}
	*out = ids
	return err
}

// missingSymbols serves GET /api/missing-symbols?since=&limit=: the
// modules processed crashes were walked without, with how many crashes
// miss each, most first (over the newest ReprocessScan processed crashes).
func (s *Server) missingSymbols(w http.ResponseWriter, r *http.Request) {
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := parseSince(v)
		if err != nil {
			http.Error(w, `{"error":"since: a date (2006-01-02) or an RFC 3339 time"}`, http.StatusBadRequest)
			return
		}
		since = t
	}
	limit := 1000
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			http.Error(w, `{"error":"limit: a positive number"}`, http.StatusBadRequest)
			return
		}
		limit = n
	}
	agg := map[string]*missingModule{}
	err := s.scanMissing(r.Context(), since, s.cfg.SymbolServer.reprocessScan(), func(id string, mods []missingModule) bool {
		for _, m := range mods {
			k := m.DebugFile + "\x00" + m.DebugID
			if a := agg[k]; a != nil {
				a.Crashes++
				continue
			}
			m.Crashes, m.Latest = 1, id
			agg[k] = &m
		}
		return true
	})
	if err != nil {
		s.log.Warn("missing symbols", "err", err)
		http.Error(w, `{"error":"index unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	out := make([]*missingModule, 0, len(agg))
	for _, m := range agg {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Crashes != out[j].Crashes {
			return out[i].Crashes > out[j].Crashes
		}
		return out[i].DebugFile+out[i].DebugID < out[j].DebugFile+out[j].DebugID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"modules": out, "total": len(agg)})
}

func parseSince(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", v)
}
