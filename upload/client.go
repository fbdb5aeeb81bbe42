package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// Client sends forms as Breakpad's HTTPUpload. The zero Client is ready to
// use: no proxy but the environment's, no timeout, redirects not followed
// (libcurl's defaults, which Breakpad keeps).
type Client struct {
	// Proxy is the proxy as curl's CURLOPT_PROXY takes it (Breakpad's -x):
	// "host[:port]" (an HTTP proxy, port 1080 when none is given) or a URL
	// with a scheme (http, https, socks5). Empty: $http_proxy, $https_proxy
	// and $no_proxy, as libcurl reads them (Go's http.ProxyFromEnvironment,
	// which never proxies loopback addresses).
	Proxy string
	// ProxyUserPassword is "user[:password]" for the proxy (Breakpad's -u).
	ProxyUserPassword string
	// Header holds extra request header fields ("-h NAME:VALUE"); they
	// replace the fields of the same names Breakpad sends (User-Agent,
	// Accept, even Host).
	Header http.Header
	// Timeout bounds the whole exchange; 0, none (libcurl's default).
	Timeout time.Duration
	// HTTP, when set, sends the requests instead of a client made from
	// the fields above (which are then ignored except Header).
	HTTP *http.Client
}

// Response is the server's answer to an upload.
type Response struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Status is the status line's text ("200 OK").
	Status string
	// Body is the response body.
	Body []byte
}

// StatusError is an answer with a status of 400 or more: Breakpad's
// uploader (CURLOPT_FAILONERROR) counts the upload as failed and shows
// none of the body.
type StatusError struct {
	Response *Response
}

func (e *StatusError) Error() string {
	return "server answered " + e.Response.Status
}

// Minidump uploads the minidump at dumpPath to rawURL with the product and
// version fields, as Breakpad's minidump_upload -p product -v version.
func (c *Client) Minidump(ctx context.Context, rawURL, dumpPath, product, version string) (*Response, error) {
	return c.Send(ctx, rawURL, Form{
		Fields: map[string]string{ProductField: product, VersionField: version},
		Files:  map[string]string{MinidumpField: dumpPath},
	})
}

// Send posts form to rawURL. It returns the response when the server
// answered below 400; a *StatusError (holding the response) at 400 and
// above; other errors when the form could not be read or the server not
// reached.
func (c *Client) Send(ctx context.Context, rawURL string, form Form) (*Response, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &url.Error{Op: "Post", URL: rawURL, Err: errUnsupportedProtocol}
	}
	hc, err := c.httpClient()
	if err != nil {
		return nil, err
	}
	boundary := NewBoundary()
	body, err := form.Open(boundary)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("upload URL %q: %w", rawURL, err)
	}
	req.ContentLength = body.Length
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Content-Type", ContentType(boundary))
	for k, vs := range c.Header {
		if http.CanonicalHeaderKey(k) == "Host" && len(vs) > 0 {
			req.Host = vs[0] // net/http sends req.Host, never Header["Host"]
			continue
		}
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	r := &Response{StatusCode: resp.StatusCode, Status: resp.Status, Body: b}
	if resp.StatusCode >= 400 {
		return r, &StatusError{r}
	}
	return r, nil
}

var errUnsupportedProtocol = errors.New("unsupported protocol scheme")

// HTTPClient returns the *http.Client the client sends with: c.HTTP when
// set, else one made from Proxy, ProxyUserPassword and Timeout that follows
// no redirect and asks for no compressed answer (libcurl's defaults). Other
// protocols of Breakpad's programs (sym_upload's sym-upload-v2) use it so
// that -x and -u apply to them too.
func (c *Client) HTTPClient() (*http.Client, error) { return c.httpClient() }

func (c *Client) httpClient() (*http.Client, error) {
	if c.HTTP != nil {
		return c.HTTP, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// libcurl asks for no compressed answer unless told to; Go's
	// transport would add Accept-Encoding: gzip.
	tr.DisableCompression = true
	if c.Proxy != "" {
		p, err := ProxyURL(c.Proxy, c.ProxyUserPassword)
		if err != nil {
			return nil, err
		}
		tr.Proxy = http.ProxyURL(p)
	} else if c.ProxyUserPassword != "" {
		env := tr.Proxy
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			p, err := env(r)
			if p != nil && err == nil {
				p.User = userInfo(c.ProxyUserPassword)
			}
			return p, err
		}
	}
	return &http.Client{
		Transport: tr,
		Timeout:   c.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// ParseURL reads an upload URL as libcurl does: one without "://" (no
// scheme: "host/path", "127.0.0.1:8000/submit") is taken as http://. A URL
// that cannot be read is a *URLError, in words.
func ParseURL(rawURL string) (*url.URL, error) {
	s := rawURL
	if !strings.Contains(s, "://") {
		s = "http://" + s // libcurl guesses http for a URL without a scheme
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		why := "no host"
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			why = err.Error()
		}
		return nil, &URLError{URL: rawURL, Why: why}
	}
	return u, nil
}

// URLError is an upload URL that cannot be read (libcurl's
// CURLE_URL_MALFORMAT).
type URLError struct {
	URL string // as given
	Why string // what is wrong with it
}

func (e *URLError) Error() string {
	return fmt.Sprintf("upload URL %q: %s (want http://HOST[:PORT]/PATH)", e.URL, e.Why)
}

// ProxyURL returns the proxy URL curl makes of proxy (CURLOPT_PROXY) and
// userPassword (CURLOPT_PROXYUSERPWD): no scheme means http, no port 1080.
func ProxyURL(proxy, userPassword string) (*url.URL, error) {
	s := proxy
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("proxy %q: not host[:port] or a URL", proxy)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "1080")
	}
	if userPassword != "" {
		u.User = userInfo(userPassword)
	}
	return u, nil
}

func userInfo(s string) *url.Userinfo {
	if user, pw, ok := strings.Cut(s, ":"); ok {
		return url.UserPassword(user, pw)
	}
	return url.User(s)
}

// CurlError returns what Breakpad's minidump_upload prints after "Failed
// to send minidump: " for err: the text curl_easy_strerror gives the
// matching libcurl error, or err's own text when there is none.
func CurlError(err error) string {
	var se *StatusError
	var fe *FileError
	var dnsErr *net.DNSError
	var ue *url.Error
	switch {
	case errors.As(err, &se):
		return "HTTP response code said error" // CURLE_HTTP_RETURNED_ERROR
	case errors.As(err, &fe):
		return "Failed to open/read local data from file/application" // CURLE_READ_ERROR
	case errors.As(err, new(*URLError)):
		return "URL using bad/illegal format or missing URL" // CURLE_URL_MALFORMAT
	case errors.Is(err, errUnsupportedProtocol):
		return "Unsupported protocol" // CURLE_UNSUPPORTED_PROTOCOL
	case errors.As(err, &dnsErr):
		return "Couldn't resolve host name" // CURLE_COULDNT_RESOLVE_HOST
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "Timeout was reached" // CURLE_OPERATION_TIMEDOUT
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "Couldn't connect to server" // CURLE_COULDNT_CONNECT
	case errors.As(err, &ue) && ue.Timeout():
		return "Timeout was reached"
	}
	return err.Error()
}
