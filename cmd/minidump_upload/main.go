// Command minidump_upload sends a minidump to a crash server, a drop-in for
// Google Breakpad's minidump_upload (src/tools/linux/symupload):
//
//	minidump_upload [-p PRODUCT] [-v VERSION] [-x PROXY] [-u USER[:PASSWORD]] [-h NAME:VALUE]... [--timeout D] DUMP URL
//
// The request is Breakpad's byte for byte (package upload): a
// multipart/form-data POST with the text fields prod and ver and the dump as
// the file part upload_file_minidump. On success it prints what Breakpad's
// prints,
//
//	Successfully sent the minidump file.
//	Response:
//	RESPONSE BODY
//
// and exits 0; when the upload fails (the server unreachable, the dump
// unreadable, an answer of 400 or more) it prints
//
//	Failed to send minidump: REASON
//	Response:
//
// with libcurl's words for REASON, exits 1, and says more on standard error
// (the status and body of a refusal, which Breakpad's never shows). A mistake
// on the command line is one line on standard error and exit status 2, as
// for every program here (Breakpad's prints its usage and exits 1).
//
// -h adds a request header ("X-Token: abc"); Breakpad's -h printed its usage
// and uploaded nothing, so no command line that worked with Breakpad's
// changes meaning. --help prints the usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/upload"
)

func main() {
	os.Exit(cmdline.Run(context.Background(), newCommand(), os.Args, os.Stdout, os.Stderr))
}

func newCommand() *cli.Command {
	return &cli.Command{
		Name:            "minidump_upload",
		Usage:           "send a minidump to a crash server as Breakpad's minidump_upload does",
		ArgsUsage:       "DUMP URL",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "p", Usage: "the product name (form field prod)"},
			&cli.StringFlag{Name: "v", Usage: "the product version (form field ver)"},
			&cli.StringFlag{Name: "x", Usage: "send through the HTTP proxy `HOST[:PORT]` (port 1080 when none; or a URL: http, https, socks5)"},
			&cli.StringFlag{Name: "u", Usage: "`USER[:PASSWORD]` for the proxy"},
			&cli.StringSliceFlag{Name: "h", Usage: "add the request header `NAME:VALUE` (repeatable)"},
			&cli.DurationFlag{Name: "timeout", Usage: "give up after `D` (default: no limit, as Breakpad's)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if len(args) != 2 {
				return cmdline.Usagef("want DUMP URL, have %d arguments", len(args))
			}
			hdr := http.Header{}
			for _, h := range cmd.StringSlice("h") {
				name, value, ok := strings.Cut(h, ":")
				name = strings.TrimSpace(name)
				if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
					return cmdline.Usagef("-h %q: want NAME:VALUE", h)
				}
				hdr.Add(name, strings.TrimSpace(value))
			}
			c := &upload.Client{
				Proxy:             cmd.String("x"),
				ProxyUserPassword: cmd.String("u"),
				Header:            hdr,
				Timeout:           cmd.Duration("timeout"),
			}
			if c.Proxy != "" {
				if _, err := upload.ProxyURL(c.Proxy, ""); err != nil {
					return cmdline.Usagef("-x: %v", err)
				}
			}
			resp, err := c.Minidump(ctx, args[1], args[0], cmd.String("p"), cmd.String("v"))
			return report(cmd.Root().Writer, cmd.Root().ErrWriter, args[1], resp, err)
		},
	}
}

// report prints the outcome as Breakpad's minidump_upload does (stdout) and
// the details Breakpad's leaves out (stderr).
func report(stdout, stderr io.Writer, url string, resp *upload.Response, err error) error {
	if err == nil {
		fmt.Fprintf(stdout, "Successfully sent the minidump file.\nResponse:\n%s\n", resp.Body)
		return nil
	}
	fmt.Fprintf(stdout, "Failed to send minidump: %s\nResponse:\n\n", upload.CurlError(err))
	var se *upload.StatusError
	if errors.As(err, &se) {
		body := strings.TrimRight(string(se.Response.Body), "\n")
		if len(body) > 1024 {
			body = body[:1024] + "..."
		}
		fmt.Fprintf(stderr, "minidump_upload: %s answered %s: %q\n", url, se.Response.Status, body)
	} else {
		fmt.Fprintf(stderr, "minidump_upload: %v\n", err)
	}
	return cmdline.ExitStatus(1)
}
