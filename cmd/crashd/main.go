// Command crashd is a crash server: it receives crashes from the programs
// that crashed (Breakpad, Crashpad, Electron, sentry-native uploads), keeps
// them, and walks each one as it arrives (docs/crashd.md):
//
//	crashd serve [--listen ADDR] [--data DIR] [--symbols PATH]... [--symbols-url URL]... [--config FILE] ...
//	crashd reprocess [--server URL] ID...
//	crashd token create --name NAME [--scopes S] [--expires D] [--data DIR | --db URL | --config FILE]
//	crashd token list|revoke NAME [--data DIR | --db URL | --config FILE]
//
// serve runs the collector, the processor and the API in one process on
// embedded defaults: NATS JetStream in-process as the queue (DIR/nats),
// blobs as files (DIR/v1/...), SQLite as the index (DIR/index.sqlite).
// --symbols and --symbols-url take what minidump_stackwalk takes. The
// configuration comes from the defaults, then the JSON file of --config
// (or $CRASHD_CONFIG), then CRASHD_* environment variables, then the
// flags. SIGTERM or SIGINT shuts it down gracefully.
//
// token manages the API tokens kept in the index: in a stopped server's
// data directory directly, in a running one's through its control socket
// (DATA/crashd.sock), in PostgreSQL directly (docs/crashd.md, "Tokens").
//
// reprocess queues crashes again through a running server's API
// (POST /api/crashes/ID/reprocess), e.g. after their symbols arrived.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/crashd/crash"
	"github.com/gobreakpad/gobreakpad/crashd/server"
)

func main() {
	os.Exit(cmdline.Run(context.Background(), newCommand(os.Stdout, os.Stderr), os.Args, os.Stdout, os.Stderr))
}

func newCommand(stdout, stderr io.Writer) *cli.Command {
	configFlag := &cli.StringFlag{Name: "config", Usage: "read the configuration from the JSON `FILE` (default $CRASHD_CONFIG)"}
	return &cli.Command{
		Name:            "crashd",
		Usage:           "a crash server: receive crashes, keep them, walk them as they arrive",
		HideHelpCommand: true,
		Commands: []*cli.Command{
			{
				Name:      "serve",
				Usage:     "run the crash server (collector, processor and API)",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					configFlag,
					&cli.StringFlag{Name: "listen", Usage: "serve HTTP on `ADDR` (host:port; default 127.0.0.1:8000)"},
					&cli.StringFlag{Name: "public-url", Usage: "the `URL` people reach the server at, for the links it gives out (default http:// and the listen address)"},
					&cli.StringFlag{Name: "data", Usage: "keep crashes, the queue and the index under `DIR` (default crashd-data)"},
					&cli.StringSliceFlag{Name: "symbols", Usage: "a symbol `PATH` as minidump_stackwalk takes it: a store, a URL, srv*CACHE*URL (repeatable)"},
					&cli.StringSliceFlag{Name: "symbols-url", Usage: "a Breakpad-layout symbol server `URL` (repeatable)"},
					&cli.StringFlag{Name: "symbols-cache", Usage: "keep downloaded symbols in `DIR`"},
					&cli.StringFlag{Name: "signature-lists", Usage: "add the signature lists of `DIR` to the defaults (as minidump_stackwalk's)"},
					&cli.IntFlag{Name: "workers", Usage: "process `N` crashes at once (default: four per CPU)"},
					&cli.StringFlag{Name: "roles", Usage: "the roles of this process, comma-separated: collector, processor, web, symbols, or all (the default)"},
					&cli.StringFlag{Name: "nats", Aliases: []string{"nats-url"}, Usage: "use the external NATS server or cluster at `URLS` (nats://h1:4222,nats://h2:4222,...) as the queue instead of the embedded one"},
					&cli.StringFlag{Name: "nats-cluster", Usage: "make the embedded NATS server a node of the cluster whose other nodes' routes are `URLS` (nats-route://h2:6222,...)"},
					&cli.StringFlag{Name: "nats-cluster-listen", Usage: "listen for the embedded NATS server's routes on `ADDR` (default 0.0.0.0:6222)"},
					&cli.StringFlag{Name: "blobs", Usage: "keep blobs in `STORE`: dir (the data directory), nats (a replicated JetStream object store) or s3 (an S3-compatible object store: s3_endpoint, s3_bucket, s3_region, s3_prefix in the configuration file or CRASHD_S3_*; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"},
					&cli.StringFlag{Name: "db", Usage: "keep the index in PostgreSQL at `URL` (postgres://...) or in the SQLite file at that path (default DATA/index.sqlite)"},
					&cli.StringFlag{Name: "log-format", Usage: "log as `FORMAT`: text or json"},
					&cli.BoolFlag{Name: "public-pages", Usage: "show the web pages and their API read-only without a token (a team behind a VPN)"},
					&cli.StringFlag{Name: "indexed-annotations", Usage: "index the annotations `NAMES` (comma-separated) for search and facets (annotation.NAME=VALUE)"},
				},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return cmdline.Usagef("serve takes no arguments (got %q)", cmd.Args().First())
					}
					cfg, err := config(cmd)
					if err != nil {
						return err
					}
					if cmd.IsSet("listen") {
						cfg.Listen = cmd.String("listen")
					}
					if cmd.IsSet("data") {
						cfg.Data = cmd.String("data")
					}
					if cmd.IsSet("public-url") {
						cfg.PublicURL = cmd.String("public-url")
					}
					if cmd.IsSet("symbols") {
						cfg.Symbols = cmd.StringSlice("symbols")
					}
					if cmd.IsSet("symbols-url") {
						cfg.SymbolsURL = cmd.StringSlice("symbols-url")
					}
					if cmd.IsSet("symbols-cache") {
						cfg.SymbolsCache = cmd.String("symbols-cache")
					}
					if cmd.IsSet("signature-lists") {
						cfg.SignatureLists = cmd.String("signature-lists")
					}
					if cmd.IsSet("workers") {
						cfg.Workers = int(cmd.Int("workers"))
					}
					if cmd.IsSet("roles") {
						cfg.Roles = strings.Split(cmd.String("roles"), ",")
					}
					if cmd.IsSet("nats") {
						cfg.NATSURL = cmd.String("nats")
					}
					if cmd.IsSet("nats-cluster") {
						cfg.NATSCluster = strings.Split(cmd.String("nats-cluster"), ",")
					}
					if cmd.IsSet("nats-cluster-listen") {
						cfg.NATSClusterListen = cmd.String("nats-cluster-listen")
					}
					if cmd.IsSet("blobs") {
						cfg.Blobs = cmd.String("blobs")
					}
					if cmd.IsSet("public-pages") {
						cfg.PublicPages = cmd.Bool("public-pages")
					}
					if cmd.IsSet("indexed-annotations") {
						cfg.IndexedAnnotations = nil
						for _, n := range strings.Split(cmd.String("indexed-annotations"), ",") {
							if n = strings.TrimSpace(n); n != "" {
								cfg.IndexedAnnotations = append(cfg.IndexedAnnotations, n)
							}
						}
					}
					if cmd.IsSet("db") {
						cfg.DB = cmd.String("db")
					}
					if cmd.IsSet("log-format") {
						cfg.LogFormat = cmd.String("log-format")
					}
					if err := cfg.Check(); err != nil {
						return cmdline.Usagef("%v", err)
					}
					return serve(ctx, cfg)
				},
			},
			tokenCommand(stdout, configFlag),
			{
				Name:      "reprocess",
				Usage:     "queue crashes again through a running server's API",
				ArgsUsage: "ID...",
				Flags: []cli.Flag{
					configFlag,
					&cli.StringFlag{Name: "server", Usage: "the server's base `URL` (default http:// and the configuration's listen address)"},
				},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() == 0 {
						return cmdline.Usagef("no crash id")
					}
					var ids []crash.ID
					for _, a := range cmd.Args().Slice() {
						id, err := crash.Parse(a)
						if err != nil {
							return cmdline.Usagef("%v", err)
						}
						ids = append(ids, id)
					}
					cfg, err := config(cmd)
					if err != nil {
						return err
					}
					base := cmd.String("server")
					if base == "" {
						base = "http://" + localAddr(cfg.Listen)
					}
					return reprocess(ctx, stdout, stderr, strings.TrimSuffix(base, "/"), cfg.APIToken, ids)
				},
			},
		},
	}
}

// config is the configuration before flags: defaults, file, environment.
func config(cmd *cli.Command) (server.Config, error) {
	cfg := server.Default()
	path := cmd.String("config")
	if path == "" {
		path = os.Getenv("CRASHD_CONFIG")
	}
	if path != "" {
		if err := cfg.LoadFile(path); err != nil {
			return cfg, err
		}
	}
	if err := cfg.FromEnv(os.LookupEnv); err != nil {
		return cfg, cmdline.Usagef("%v", err)
	}
	return cfg, nil
}

// localAddr is the address to reach a server listening on listen from
// this machine: a listen address without a host, or with an unspecified
// one (0.0.0.0, ::), is reached on 127.0.0.1.
func localAddr(listen string) string { return server.LocalAddr(listen) }

func serve(ctx context.Context, cfg server.Config) error {
	log := server.NewLogger(cfg, os.Stderr)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := server.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		s.Close()
		return err
	}
	return s.Serve(ctx, ln)
}

func reprocess(ctx context.Context, stdout, stderr io.Writer, base, token string, ids []crash.ID) error {
	client := &http.Client{Timeout: 30 * time.Second}
	failed := 0
	for _, id := range ids {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/crashes/"+string(id)+"/reprocess", nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			var e struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(body, &e) != nil || e.Error == "" {
				e.Error = strings.TrimSpace(string(body))
			}
			fmt.Fprintf(stderr, "crashd: reprocess %s: %s: %s\n", id, resp.Status, e.Error)
			failed++
			continue
		}
		var res struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(body, &res) == nil && res.Status == "already_queued" {
			fmt.Fprintf(stdout, "already queued %s\n", id)
			continue
		}
		fmt.Fprintf(stdout, "queued %s\n", id)
	}
	if failed > 0 {
		return cmdline.ExitStatus(1)
	}
	return nil
}
