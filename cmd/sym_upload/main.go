// Command sym_upload sends a symbol file to a symbol server, a drop-in for
// Google Breakpad's sym_upload (src/tools/linux/symupload/sym_upload.cc):
//
//	sym_upload [-p sym-upload-v1|sym-upload-v2] [-k KEY] [-t TYPE] [-c CODE_FILE] [-i DEBUG_ID] [-f] [-v VERSION] [-x PROXY] [-u USER[:PASSWORD]] FILE URL
//
// sym-upload-v1 (the default) posts the multipart form Breakpad's does
// (package upload: the fields code_file, cpu, debug_file, debug_identifier,
// os, version from the file's MODULE line and -v, the file as
// symbol_file) to URL and prints what Breakpad's prints:
// "Successfully sent the symbol file." for a 200; for another status below
// 400 "Failed to send symbol file: Response code N", the response, and yet
// exit status 0, as Breakpad's; "Failed to send symbol file: REASON" (curl's
// words), the response code and exit status 1 when the upload fails.
//
// sym-upload-v2 talks Breakpad's sym-upload-v2 protocol to the API at URL
// (URL/v1/symbols/FILE/ID:checkStatus, URL/v1/uploads:create, a PUT of the
// file to the upload URL, URL/v1/uploads/KEY:complete, each with ?key=KEY),
// reading the answers with the regular expressions Breakpad's client uses
// (src/common/linux/symbol_collector_client.cc), and prints its messages.
// Its complete request is JSON (Breakpad's writes keys without quotes).
// With -t other than breakpad the file is a native debug file, or a zip of
// one with its companions (an ELF and its debug file, a PE and its PDB, a
// Mach-O and its dSYM), which crashd's symbol server converts together;
// -c and -i name the module. -x, -u and --timeout apply to both protocols.
//
// A mistake on the command line is one line on standard error and exit
// status 2, as for every program here.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gobreakpad/gobreakpad/cmd/internal/cmdline"
	"github.com/gobreakpad/gobreakpad/upload"
)

func main() {
	os.Exit(cmdline.Run(context.Background(), newCommand(), os.Args, os.Stdout, os.Stderr))
}

// The symbol types of -t, as Breakpad's sym_upload lists them.
var types = []string{"breakpad", "elf", "pe", "macho", "debug_only", "dwp", "dsym", "pdb"}

func newCommand() *cli.Command {
	return &cli.Command{
		Name:            "sym_upload",
		Usage:           "send a symbol file to a symbol server as Breakpad's sym_upload does",
		ArgsUsage:       "FILE URL",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "p", Value: "sym-upload-v1", Usage: "the `PROTOCOL`: sym-upload-v1 or sym-upload-v2"},
			&cli.StringFlag{Name: "k", Usage: "the API `KEY` (sym-upload-v2)"},
			&cli.StringFlag{Name: "t", Value: "breakpad", Usage: "the symbol `TYPE` (sym-upload-v2): " + strings.Join(types, ", ") + "; not breakpad: -c and -i are needed"},
			&cli.StringFlag{Name: "c", Usage: "the module's `CODE_FILE` (basename of the executable; with -t)"},
			&cli.StringFlag{Name: "i", Usage: "the module's `DEBUG_ID` (with -t)"},
			&cli.BoolFlag{Name: "f", Aliases: []string{"force"}, Usage: "upload even when the server has the symbols (sym-upload-v2)"},
			&cli.StringFlag{Name: "v", Usage: "the `VERSION` field (sym-upload-v1)"},
			&cli.StringFlag{Name: "x", Usage: "send through the HTTP proxy `HOST[:PORT]`"},
			&cli.StringFlag{Name: "u", Usage: "`USER[:PASSWORD]` for the proxy"},
			&cli.DurationFlag{Name: "timeout", Usage: "give up each request after `D` (default: no limit, as Breakpad's)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if len(args) != 2 {
				return cmdline.Usagef("want FILE URL, have %d arguments", len(args))
			}
			typ := strings.ToLower(cmd.String("t"))
			if !slices.Contains(types, typ) {
				return cmdline.Usagef("-t %q: one of %s", typ, strings.Join(types, ", "))
			}
			c := &upload.Client{Proxy: cmd.String("x"), ProxyUserPassword: cmd.String("u"), Timeout: cmd.Duration("timeout")}
			if c.Proxy != "" {
				if _, err := upload.ProxyURL(c.Proxy, ""); err != nil {
					return cmdline.Usagef("-x: %v", err)
				}
			}
			out := cmd.Root().Writer
			switch cmd.String("p") {
			case "sym-upload-v1":
				return v1(ctx, out, cmd.Root().ErrWriter, c, args[0], args[1], cmd.String("v"))
			case "sym-upload-v2":
				codeFile, debugID := cmd.String("c"), cmd.String("i")
				if typ != "breakpad" && (codeFile == "" || debugID == "") {
					return cmdline.Usagef("-t %s needs -c and -i", typ)
				}
				// The -x, -u and --timeout of v1 apply here too: the same
				// client sends every request.
				hc, err := c.HTTPClient()
				if err != nil {
					return cmdline.Usagef("-x: %v", err)
				}
				v := &v2Client{http: hc, api: args[1], key: cmd.String("k"), out: out, errw: cmd.Root().ErrWriter}
				return v.upload(ctx, args[0], strings.ToUpper(typ), codeFile, debugID, cmd.Bool("f"))
			default:
				return cmdline.Usagef("-p %q: sym-upload-v1 or sym-upload-v2", cmd.String("p"))
			}
		},
	}
}

// moduleLine reads the file's first line as Breakpad's
// ModuleDataForSymbolFile: five fields separated by spaces, MODULE OS CPU
// ID NAME. The error says why the file has none (Breakpad's client says
// only "Failed to parse symbol file!").
func moduleLine(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1023)).ReadString('\n')
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no first line of at most 1023 bytes ending in a newline (a Breakpad .sym file starts with MODULE OS CPU ID NAME)", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var parts []string
	for _, p := range strings.Split(strings.TrimSuffix(line, "\n"), " ") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) != 5 {
		first := strings.TrimSpace(line)
		if len(first) > 80 {
			first = first[:80] + "..."
		}
		return nil, fmt.Errorf("%s: first line %q is not MODULE OS CPU ID NAME (not a Breakpad .sym file?)", path, first)
	}
	return parts, nil
}

// parseFailed prints Breakpad's message for a symbol file without a MODULE
// line and, on the next line, why.
func parseFailed(errw io.Writer, err error) error {
	fmt.Fprintln(errw, "Failed to parse symbol file!")
	fmt.Fprintf(errw, "sym_upload: %v\n", err)
	return cmdline.ExitStatus(1)
}

// sendFailed prints what Breakpad's HTTPUpload prints on standard error when
// a request fails (curl's words), so that scripts reading it keep working;
// the URL is given without its query (sym-upload-v2's ?key=KEY: the API key
// is kept out of logs).
func sendFailed(errw io.Writer, u string, err error) {
	u, _, _ = strings.Cut(u, "?key=")
	fmt.Fprintf(errw, "Failed to send http request to %s, error: %s\n", u, upload.CurlError(err))
}

// compactID is Breakpad's CompactIdentifier: the id without hyphens.
func compactID(id string) string { return strings.ReplaceAll(id, "-", "") }

func v1(ctx context.Context, out, errw io.Writer, c *upload.Client, file, url, version string) error {
	parts, err := moduleLine(file)
	if err != nil {
		return parseFailed(errw, err)
	}
	fields := map[string]string{"os": parts[1], "cpu": parts[2], "debug_file": parts[4], "code_file": parts[4], "debug_identifier": compactID(parts[3])}
	if version != "" {
		fields["version"] = version
	}
	resp, err := c.Send(ctx, url, upload.Form{Fields: fields, Files: map[string]string{"symbol_file": file}})
	if err != nil {
		// libcurl's CURLOPT_FAILONERROR keeps the body of a refusal from
		// Breakpad's: its Response is empty; standard error has it here.
		code := 0
		var se *upload.StatusError
		if errors.As(err, &se) {
			code = se.Response.StatusCode
			fmt.Fprintf(errw, "sym_upload: %s answered %s: %q\n", url, se.Response.Status, strings.TrimSpace(string(se.Response.Body)))
		} else {
			sendFailed(errw, url, err)
		}
		fmt.Fprintf(out, "Failed to send symbol file: %s\nResponse code: %d\nResponse:\n\n", upload.CurlError(err), code)
		return cmdline.ExitStatus(1)
	}
	if resp.StatusCode != 200 {
		fmt.Fprintf(out, "Failed to send symbol file: Response code %d\nResponse:\n%s\n", resp.StatusCode, resp.Body)
		return nil // Breakpad's counts it a success
	}
	fmt.Fprintln(out, "Successfully sent the symbol file.")
	return nil
}

// The answers Breakpad's client reads, with its regular expressions.
var (
	reStatus    = regexp.MustCompile(`"status": "([^"]+)"`)
	reUploadURL = regexp.MustCompile(`"uploadUrl": "([^"]+)"`)
	reUploadKey = regexp.MustCompile(`"uploadKey": "([^"]+)"`)
	reResult    = regexp.MustCompile(`"result": "([^"]+)"`)
)

type v2Client struct {
	http      *http.Client
	api, key  string
	out, errw io.Writer
}

func (v *v2Client) url(path string) string {
	u := v.api + path
	if v.key != "" {
		u += "?key=" + url.QueryEscape(v.key)
	}
	return u
}

// do sends one request; it returns the status and body (libcurl's
// wrapper counts any answer a success).
func (v *v2Client) do(ctx context.Context, method, u, ctype string, body io.Reader, n int64) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return 0, "", err
	}
	if body != nil {
		req.ContentLength = n
	}
	// The header fields Breakpad's client sends through libcurl: Accept
	// */*, no User-Agent (Go's would add one).
	req.Header.Set("Accept", "*/*")
	req.Header.Set("User-Agent", "")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := v.http.Do(req)
	if err != nil {
		sendFailed(v.errw, u, err)
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), nil
}

// notV2 says, after an answer that is not sym-upload-v2's, what URL
// -p sym-upload-v2 takes: the API's base, to which it adds /v1/....
func (v *v2Client) notV2(code int) {
	hint := ""
	if u, err := url.Parse(v.api); err == nil && u.Host != "" && strings.Trim(u.Path, "/") != "" {
		hint = fmt.Sprintf(" (%s://%s?)", u.Scheme, u.Host)
	}
	fmt.Fprintf(v.errw, "sym_upload: %s answered %d, not with sym-upload-v2's JSON: -p sym-upload-v2 takes the base URL of the server's API, to which it adds /v1/symbols/..., not the sym-upload-v1 upload URL%s\n",
		v.api, code, hint)
}

func (v *v2Client) fail(format string, args ...any) error {
	fmt.Fprintf(v.out, format, args...)
	return cmdline.ExitStatus(1)
}

func (v *v2Client) upload(ctx context.Context, file, typ, codeFile, debugID string, force bool) error {
	if typ == "BREAKPAD" {
		parts, err := moduleLine(file)
		if err != nil {
			return parseFailed(v.errw, err)
		}
		codeFile, debugID = parts[4], compactID(parts[3])
	}
	if !force {
		code, body, err := v.do(ctx, http.MethodGet, v.url("/v1/symbols/"+codeFile+"/"+debugID+":checkStatus"), "", nil, 0)
		m := reStatus.FindStringSubmatch(body)
		switch {
		case err != nil:
			fmt.Fprintf(v.out, "Failed to check symbol status, error message.\nResponse code: %d\nResponse:\n%s\n", code, body)
			return v.fail("Failed to check for existing symbol.\n")
		case m == nil:
			fmt.Fprintf(v.out, "Failed to parse check symbol status response.Response:\n%s\n", body)
			v.notV2(code)
			return v.fail("Failed to check for existing symbol.\n")
		case m[1] == "FOUND":
			fmt.Fprint(v.out, "Symbol file already exists, upload aborted. Use \"-f\" to overwrite.\n")
			return nil
		}
	}
	// An empty POST, typed as libcurl types one.
	code, body, err := v.do(ctx, http.MethodPost, v.url("/v1/uploads:create"), "application/x-www-form-urlencoded", bytes.NewReader(nil), 0)
	mu, mk := reUploadURL.FindStringSubmatch(body), reUploadKey.FindStringSubmatch(body)
	if err != nil || mu == nil || mk == nil {
		if err != nil {
			fmt.Fprintf(v.out, "Failed to create upload url.\nResponse code: %d\nResponse:\n%s\n", code, body)
		} else {
			fmt.Fprintf(v.out, "Failed to parse create url response.Response:\n%s\n", body)
		}
		return v.fail("Failed to create upload URL.\n")
	}
	f, err := os.Open(file)
	if err != nil {
		return v.fail("Failed to send symbol file.\nResponse code: 0\nResponse:\n\n")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return v.fail("Failed to send symbol file.\nResponse code: 0\nResponse:\n\n")
	}
	code, body, err = v.do(ctx, http.MethodPut, mu[1], "", f, st.Size())
	switch {
	case err != nil:
		return v.fail("Failed to send symbol file.\nResponse code: %d\nResponse:\n%s\n", code, body)
	case code != 200:
		return v.fail("Failed to send symbol file: Response code %d\nResponse:\n%s\n", code, body)
	}
	req, _ := json.Marshal(map[string]any{
		"symbol_id":          map[string]string{"debug_file": codeFile, "debug_id": debugID},
		"symbol_upload_type": typ,
	})
	code, body, err = v.do(ctx, http.MethodPost, v.url("/v1/uploads/"+mk[1]+":complete"), "application/json", bytes.NewReader(req), int64(len(req)))
	m := reResult.FindStringSubmatch(body)
	if err != nil || m == nil {
		if err != nil {
			fmt.Fprintf(v.out, "Failed to complete upload.\nResponse code: %d\nResponse:\n%s\n", code, body)
		} else {
			fmt.Fprintf(v.out, "Failed to parse complete upload response.Response:\n%s\n", body)
		}
		return v.fail("Failed to complete upload.\n")
	}
	if m[1] == "DUPLICATE_DATA" {
		fmt.Fprint(v.out, "Uploaded file checksum matched existing file checksum, no change necessary.\n")
	} else {
		fmt.Fprint(v.out, "Successfully sent the symbol file.\n")
	}
	return nil
}
