//go:build unix

package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gobreakpad/gobreakpad/internal/testkit/faults"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// rawClient is a plain minio client on the test server, to put objects
// the store did not write.
func rawClient(t *testing.T) *minio.Client {
	srv := testS3Server(t)
	c, err := minio.New(strings.TrimPrefix(srv.Endpoint, "http://"), &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestS3Prefix: keys live under the prefix; objects of the bucket outside
// it are not listed, and objects under it whose names are not keys are
// skipped; a dump at the collector's limit is one PUT and reads back.
func TestS3Prefix(t *testing.T) {
	ctx := context.Background()
	raw := rawClient(t) // skips without weed
	s := s3Store(t).(*S3)
	if err := s.Put(ctx, "v1/dump/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.StatObject(ctx, s.Bucket(), "deploy1/v1/dump/a", minio.StatObjectOptions{}); err != nil {
		t.Errorf("the key is not under the prefix: %v", err)
	}
	for _, name := range []string{"other/v1/dump/b", "deploy1/v1/dump/.hidden", "deploy1/v1/dump/x y", "deploy1/v1/dump/dir/"} {
		if _, err := raw.PutObject(ctx, s.Bucket(), name, bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(name, err)
		}
	}
	if got := list(t, s, "v1/"); !slices.Equal(got, []string{"v1/dump/a"}) {
		t.Errorf("List = %q", got)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 25<<20/16)
	if err := s.Put(ctx, "v1/dump/big", big); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(ctx, "v1/dump/big"); err != nil || !bytes.Equal(b, big) {
		t.Errorf("big blob: %d bytes, %v", len(b), err)
	}
}

// TestS3Credentials: a wrong secret is refused at once (not retried for
// RetryFor); no credentials at all is an error, not anonymous access.
func TestS3Credentials(t *testing.T) {
	srv := testS3Server(t)
	if !srv.Authenticates {
		t.Skipf("%s checks no signatures", srv.Kind)
	}
	ctx := context.Background()
	t0 := time.Now()
	_, err := OpenS3(ctx, S3Config{Endpoint: srv.Endpoint, Bucket: "creds", AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong", RetryFor: time.Minute})
	if err == nil {
		t.Fatal("a wrong secret was accepted")
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("a refused request was retried for %v", d)
	}
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY", "AWS_SECRET_KEY", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	if _, err := OpenS3(ctx, S3Config{Endpoint: srv.Endpoint, Bucket: "creds"}); err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Errorf("no credentials: %v", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	s, err := OpenS3(ctx, S3Config{Endpoint: srv.Endpoint, Bucket: "creds-env"})
	if err != nil {
		t.Fatalf("credentials from the environment: %v", err)
	}
	if err := s.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
}

// TestS3Outage: the server killed -9 while calls are made; each call waits
// (retrying with backoff) until it is back and then succeeds, a listing
// taken up again after the last key it gave; a server that stays away is
// an error after RetryFor, not a hang. Nothing written before is lost.
func TestS3Outage(t *testing.T) {
	faults.Long(t, "the S3 server killed -9 during calls")
	srv := testS3Server(t) // skips without weed
	ctx := context.Background()
	s := s3Store(t).(*S3)
	s.pageSize = 5
	var want []string
	for i := range 23 {
		k := fmt.Sprintf("v1/raw_crash/20261129/%02d", i)
		want = append(want, k)
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	restarted := make(chan error, 1)
	var got []string
	for k, err := range s.List(ctx, "v1/raw_crash/") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
		if len(got) == 7 { // in the middle of the second page
			srv.Kill()
			go func() {
				time.Sleep(time.Second)
				rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				defer cancel()
				restarted <- srv.Restart(rctx)
			}()
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("listing across the outage: %q", got)
	}

	// SeaweedFS takes 20 s or more to come back on a busy machine (its
	// volume server registers with the master): the default retry bound.
	s.retryFor = time.Minute
	srv.Kill()
	go func() {
		time.Sleep(2 * time.Second)
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		restarted <- srv.Restart(rctx)
	}()
	if err := s.Put(ctx, "v1/dump/during", []byte("d")); err != nil {
		t.Errorf("Put across the outage: %v", err)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	for _, k := range append(want, "v1/dump/during") {
		if ok, err := s.Exists(ctx, k); !ok || err != nil {
			t.Errorf("%s after the restart: %v %v", k, ok, err)
		}
	}

	srv.Kill()
	defer func() {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := srv.Restart(rctx); err != nil {
			t.Fatal(err)
		}
	}()
	short := *s
	short.retryFor = 2 * time.Second
	t0 := time.Now()
	if _, err := short.Get(ctx, want[0]); err == nil || errors.Is(err, ErrNotExist) {
		t.Errorf("Get with the server away: %v", err)
	}
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

// BenchmarkS3Put stores 256 KiB blobs (a dump) on the SeaweedFS server,
// one at a time: the latency a collector's upload pays per blob.
func BenchmarkS3Put(b *testing.B) {
	testS3Server(b)
	s := s3Store(b)
	data := make([]byte, 256<<10)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		if err := s.Put(context.Background(), fmt.Sprintf("v1/dump/%d", i), data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkS3List lists one day folder of 2,000 raw crashes on the
// SeaweedFS server (two pages): what the sweep reads per day, twice.
func BenchmarkS3List(b *testing.B) {
	testS3Server(b)
	s := s3Store(b)
	ctx := context.Background()
	for i := range 2000 {
		if err := s.Put(ctx, fmt.Sprintf("v1/raw_crash/20261129/%04d", i), []byte("{}")); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		n := 0
		for _, err := range s.List(ctx, "v1/raw_crash/20261129/") {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 2000 {
			b.Fatal(n)
		}
	}
}
