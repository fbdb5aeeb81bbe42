package blob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStream: PutStream and Open on every store, a blob of 3 MiB (over a
// JetStream chunk, streamed both ways), the size checked, a missing key
// ErrNotExist; S3's presigned URL serves the object without credentials.
func TestStream(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			skipNil(t, s)
			key := "symbols/libc.so.6/ABC0/libc.so.6.sym"
			if err := PutStream(ctx, s, key, bytes.NewReader(data), int64(len(data))); err != nil {
				t.Fatal(err)
			}
			rc, n, err := Open(ctx, s, key)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || n != int64(len(data)) || !bytes.Equal(got, data) {
				t.Fatalf("Open: %d bytes (size %d), err %v; want %d", len(got), n, err, len(data))
			}
			// A reader shorter than its declared size stores nothing.
			if err := PutStream(ctx, s, "symbols/short", strings.NewReader("abc"), 10); err == nil {
				t.Error("PutStream of 3 bytes declared 10: no error")
			}
			if ok, _ := s.Exists(ctx, "symbols/short"); ok && name != "S3" {
				t.Error("a short stream left a blob")
			}
			if _, _, err := Open(ctx, s, "symbols/missing"); !errors.Is(err, ErrNotExist) {
				t.Errorf("Open of a missing key: %v, want ErrNotExist", err)
			}
			if _, _, err := Open(ctx, s, "../x"); err == nil {
				t.Error("Open(../x): no error")
			}
			p, ok := s.(Presigner)
			if !ok {
				return
			}
			u, err := p.PresignGet(ctx, key, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(u.String())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Equal(body, data) {
				t.Fatalf("presigned GET: %s, %d bytes", resp.Status, len(body))
			}
		})
	}
}
