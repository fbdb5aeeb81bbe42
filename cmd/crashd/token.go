package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/crashd/auth"
	"github.com/gobreakpad/gobreakpad/crashd/server"
)

// tokenCommand is `crashd token create|list|revoke`: the tokens a
// deployment keeps in its index (docs/crashd.md, "Tokens"), managed
// directly (a stopped server's data directory, PostgreSQL) or through a
// running server's control socket (server.OpenTokens).
func tokenCommand(stdout io.Writer, configFlag cli.Flag) *cli.Command {
	storeFlags := func() []cli.Flag {
		return []cli.Flag{
			configFlag,
			&cli.StringFlag{Name: "data", Usage: "the tokens of the crashd whose data directory is `DIR` (running or not)"},
			&cli.StringFlag{Name: "db", Usage: "the tokens of the index at `URL` (postgres://...) or SQLite path"},
		}
	}
	return &cli.Command{
		Name:  "token",
		Usage: "API tokens: create, list, revoke",
		Commands: []*cli.Command{
			{
				Name: "create",
				Usage: "make a new API token and print its secret, once, on the line \"token: SECRET\". With --data, --db or --config it is kept " +
					"(as its SHA-256) in the index, where every process of the deployment honours it within seconds; without, the entry " +
					"for the configuration's symbol_server.tokens is printed",
				ArgsUsage: " ",
				Flags: append(storeFlags(),
					&cli.StringFlag{Name: "scopes", Value: auth.ScopeUpload, Usage: "what the token may do, comma-separated (`SCOPES`: " + strings.Join(auth.Scopes, ", ") + ")"},
					&cli.StringFlag{Name: "name", Usage: "whose token it is (`NAME`, unique; logs, revocation); required"},
					&cli.StringFlag{Name: "expires", Usage: "the token stops working after `D`: a duration (720h) or a date (2027-01-31); default never"},
				),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 0 {
						return cmdline.Usagef("token create takes no arguments")
					}
					stored := cmd.IsSet("data") || cmd.IsSet("db") || cmd.IsSet("config")
					var scopes []string
					for sc := range strings.SplitSeq(cmd.String("scopes"), ",") {
						sc = strings.TrimSpace(sc)
						switch {
						case sc == "":
						case auth.Known(sc):
							scopes = append(scopes, sc)
						default:
							return cmdline.Usagef("unknown scope %q (known: %s)", sc, strings.Join(auth.Scopes, ", "))
						}
					}
					if len(scopes) == 0 {
						return cmdline.Usagef("no scopes")
					}
					name := strings.TrimSpace(cmd.String("name"))
					if name == "" {
						return cmdline.Usagef("--name is required: whose token it is")
					}
					expires, err := auth.ParseExpiry(cmd.String("expires"), time.Now())
					if err != nil {
						return cmdline.Usagef("--expires: %v", err)
					}
					if !stored {
						if !expires.IsZero() {
							return cmdline.Usagef("--expires: only for tokens kept in the index (--data, --db or --config)")
						}
						secret, tok, err := auth.NewToken(name, scopes...)
						if err != nil {
							return err
						}
						entry, _ := json.Marshal(tok)
						fmt.Fprintf(stdout, "token: %s\nadd to the configuration's \"symbol_server\": {\"tokens\": [...]}:\n%s\n", secret, entry)
						return nil
					}
					cfg, err := tokenConfig(cmd)
					if err != nil {
						return err
					}
					for _, t := range cfg.SymbolServer.Tokens {
						if t.Name == name {
							return fmt.Errorf("token %q: the configuration file has a token of that name", name)
						}
					}
					secret, tok, err := auth.NewToken(name, scopes...)
					if err != nil {
						return err
					}
					tok.Expires = expires
					tokens, release, err := server.OpenTokens(ctx, cfg)
					if err != nil {
						return err
					}
					defer release()
					if err := tokens.CreateToken(ctx, tok); err != nil {
						if errors.Is(err, auth.ErrTokenExists) {
							return fmt.Errorf("token %q exists: revoke it first (crashd token revoke %s) or choose another name", name, name)
						}
						return err
					}
					fmt.Fprintf(stdout, "token: %s\n", secret)
					fmt.Fprintf(stdout, "kept as %q (scopes %s%s); the secret is not kept and is shown only now\n", name, strings.Join(scopes, ", "), expiresNote(expires))
					return nil
				},
			},
			{
				Name:      "list",
				Usage:     "list the tokens kept in the index (revoked and expired ones too; never their secrets)",
				ArgsUsage: " ",
				Flags:     storeFlags(),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 0 {
						return cmdline.Usagef("token list takes no arguments")
					}
					tokens, release, err := openTokens(ctx, cmd)
					if err != nil {
						return err
					}
					defer release()
					list, err := tokens.ListTokens(ctx)
					if err != nil {
						return err
					}
					now := time.Now()
					tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tSCOPES\tCREATED\tEXPIRES\tSTATE")
					for _, t := range list {
						exp := "never"
						if !t.Expires.IsZero() {
							exp = t.Expires.UTC().Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, strings.Join(t.Scopes, ","), t.Created.UTC().Format(time.RFC3339), exp, t.State(now))
					}
					return tw.Flush()
				},
			},
			{
				Name:      "revoke",
				Usage:     "revoke the token NAME: it and its login sessions stop working within seconds in every process",
				ArgsUsage: "NAME",
				Flags:     storeFlags(),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return cmdline.Usagef("token revoke takes the token's name")
					}
					name := cmd.Args().First()
					tokens, release, err := openTokens(ctx, cmd)
					if err != nil {
						return err
					}
					defer release()
					if err := tokens.RevokeToken(ctx, name); err != nil {
						if errors.Is(err, auth.ErrNoToken) {
							return fmt.Errorf("no token %q in the index", name)
						}
						return err
					}
					fmt.Fprintf(stdout, "revoked %s\n", name)
					return nil
				},
			},
		},
	}
}

// openTokens opens the token store the command's flags name (tokenConfig,
// server.OpenTokens).
func openTokens(ctx context.Context, cmd *cli.Command) (auth.Tokens, func(), error) {
	cfg, err := tokenConfig(cmd)
	if err != nil {
		return nil, nil, err
	}
	return server.OpenTokens(ctx, cfg)
}

// tokenConfig is the configuration of the token commands: defaults,
// file, environment, then --data and --db.
func tokenConfig(cmd *cli.Command) (server.Config, error) {
	cfg, err := config(cmd)
	if err != nil {
		return cfg, err
	}
	if cmd.IsSet("data") {
		cfg.Data = cmd.String("data")
	}
	if cmd.IsSet("db") {
		cfg.DB = cmd.String("db")
	}
	return cfg, nil
}

func expiresNote(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ", expires " + t.UTC().Format(time.RFC3339)
}
