//go:build unix

package blob

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobreakpad/gobreakpad/crashd/scaletest"
)

// The SeaweedFS server of this test process, started by the first test
// that needs it and stopped by TestMain.
var (
	s3Once   sync.Once
	s3Server *scaletest.S3Server
	s3Err    error
	s3Dir    string
	s3Skip   = scaletest.S3Missing
	s3Bucket atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if s3Server != nil {
		s3Server.Stop()
	}
	if s3Dir != "" {
		os.RemoveAll(s3Dir)
	}
	os.Exit(code)
}

// s3Server returns the test process's SeaweedFS server, or skips.
func testS3Server(t testing.TB) *scaletest.S3Server {
	t.Helper()
	if !scaletest.S3Built() {
		t.Skip(s3Skip)
	}
	s3Once.Do(func() {
		s3Dir, s3Err = os.MkdirTemp("", "blob-s3-")
		if s3Err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		s3Server, s3Err = scaletest.StartS3(ctx, s3Dir)
	})
	if s3Err != nil {
		t.Fatal(s3Err)
	}
	return s3Server
}

// s3Store is an S3 store on the test process's SeaweedFS server, in a
// bucket of its own and under a prefix (so that the prefix is tested
// everywhere), or nil when weed is not built.
func s3Store(t testing.TB) Store {
	if !scaletest.S3Built() {
		return nil
	}
	srv := testS3Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := OpenS3(ctx, S3Config{
		Endpoint: srv.Endpoint, Bucket: fmt.Sprintf("blob-test-%d-%d", os.Getpid(), s3Bucket.Add(1)),
		Prefix: "deploy1", AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey,
		Timeout: 10 * time.Second, RetryFor: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
