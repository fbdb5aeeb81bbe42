package blob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// S3Config says where an S3 store keeps its blobs and how it talks to the
// server.
type S3Config struct {
	// Endpoint is the server: a URL (http://127.0.0.1:8333,
	// https://s3.eu-west-1.amazonaws.com) or a bare host[:port], which
	// means HTTPS. Empty: AWS S3 (s3.amazonaws.com).
	Endpoint string
	// Bucket holds the blobs. It is created (in Region) when missing.
	Bucket string
	// Region is the bucket's region (empty: found from the server, or
	// us-east-1 for servers that do not care).
	Region string
	// Prefix, when not empty, is put before every key (a trailing '/' is
	// added when missing), so that one bucket can hold several
	// deployments' blobs or other data besides.
	Prefix string
	// AccessKeyID, SecretAccessKey and SessionToken are the credentials;
	// empty: from the environment (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; MINIO_ROOT_USER and
	// MINIO_ROOT_PASSWORD; ~/.aws/credentials with AWS_PROFILE; on AWS,
	// the instance's, task's or pod's IAM role unless
	// AWS_EC2_METADATA_DISABLED=true).
	AccessKeyID, SecretAccessKey, SessionToken string
	// Timeout bounds each request (default 30 s); RetryFor bounds the
	// retries of a call whose requests fail for a reason that can pass
	// (the network, the server's 5xx and throttling) (default 1 minute).
	Timeout, RetryFor time.Duration
}

// S3 is a Store on an S3-compatible object store (AWS S3, SeaweedFS,
// MinIO, Ceph, Google Cloud Storage with HMAC keys): each blob an object
// named by the prefix and its key, written by one PUT. Put is durable when
// it returns (the server answered 200: S3 stores an object durably before
// it answers, and reads after a write are strongly consistent); a PUT is
// atomic, so a reader sees the old object or the new one. List is S3's
// listing by prefix, in key order, page by page: the sweep and retention
// read only the raw crash folders of the days they cover.
//
// Servers other than AWS's and Google's are addressed path-style
// (http://host/bucket/key), as S3-compatible servers want; AWS and GCS
// virtual-host style. Every call is retried with exponential backoff (0.1 s
// to 2 s, jittered) for RetryFor, each request bounded by Timeout.
type S3 struct {
	c        *minio.Client
	bucket   string
	prefix   string
	timeout  time.Duration
	retryFor time.Duration
	pageSize int // keys a listing page asks for (0: the server's, 1,000 on S3)
}

var _ Store = (*S3)(nil)

// maxS3Object bounds what Get reads of one object (dumps are at most 25
// MiB by the collector's default limit; a processed crash is a few MiB at
// most): an object grown beyond it by someone else is an error, not an
// allocation.
const maxS3Object = 256 << 20

// OpenS3 connects to the server, checks the credentials and the bucket
// (creating it when missing), retrying for cfg.RetryFor while the server
// cannot be reached.
func OpenS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, fmt.Errorf("blob s3: no bucket")
	}
	if err := s3utils.CheckValidBucketNameStrict(cfg.Bucket); err != nil {
		return nil, fmt.Errorf("blob s3: bucket %q: %w", cfg.Bucket, err)
	}
	prefix := cfg.Prefix
	if prefix != "" {
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if err := checkPrefix(prefix); err != nil {
			return nil, fmt.Errorf("blob s3: prefix: %w", err)
		}
	}
	host, secure, err := s3Endpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	var creds *credentials.Credentials
	if cfg.AccessKeyID != "" || cfg.SecretAccessKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	} else {
		chain := []credentials.Provider{&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{}}
		// The IAM role of an EC2 instance, ECS task or EKS pod, unless
		// the AWS SDKs' switch says there is no metadata service.
		if !strings.EqualFold(os.Getenv("AWS_EC2_METADATA_DISABLED"), "true") {
			chain = append(chain, &credentials.IAM{})
		}
		creds = credentials.NewChainCredentials(chain)
	}
	s := &S3{bucket: cfg.Bucket, prefix: prefix, timeout: cfg.Timeout, retryFor: cfg.RetryFor}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	if s.retryFor <= 0 {
		s.retryFor = time.Minute
	}
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("blob s3: %w", err)
	}
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = s.timeout
	s.c, err = minio.New(host, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupAuto, // path-style but for AWS and GCS
		Transport:    tr,
		MaxRetries:   1, // our retry, bounded by RetryFor, not minio's
	})
	if err != nil {
		return nil, fmt.Errorf("blob s3: %w", err)
	}
	v, err := creds.GetWithContext(&credentials.CredContext{Client: &http.Client{Transport: tr, Timeout: 10 * time.Second}})
	if err != nil || v.SignerType.IsAnonymous() || v.AccessKeyID == "" {
		return nil, fmt.Errorf("blob s3: no credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials)")
	}
	var exists bool
	err = s.retry(ctx, func(ctx context.Context) (err error) {
		exists, err = s.c.BucketExists(ctx, s.bucket)
		if err == nil && !exists {
			err = s.c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: cfg.Region})
			if code := minio.ToErrorResponse(err).Code; code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
				err = nil // made by another process meanwhile
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("blob s3: bucket %s at %s: %w", s.bucket, host, err)
	}
	return s, nil
}

// s3Endpoint returns the host[:port] and whether to use TLS.
func s3Endpoint(e string) (host string, secure bool, err error) {
	if e == "" {
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(e, "://") {
		e = "https://" + e
	}
	u, err := url.Parse(e)
	if err != nil {
		return "", false, fmt.Errorf("blob s3: endpoint %q: %w", e, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("blob s3: endpoint %q: want http(s)://host[:port], no path, no user", e)
	}
	return u.Host, u.Scheme == "https", nil
}

// Bucket returns the bucket's name; Prefix the prefix of every key.
func (s *S3) Bucket() string { return s.bucket }

// Prefix returns what is put before every key ("" or ending in '/').
func (s *S3) Prefix() string { return s.prefix }

// permanent reports whether an S3 error will not pass by retrying: the
// object is missing, the request was refused (4xx other than timeouts and
// throttling).
func permanent(err error) bool {
	r := minio.ToErrorResponse(err)
	switch r.Code {
	case "NoSuchKey", "NoSuchBucket", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidBucketName", "EntityTooLarge":
		return true
	case "SlowDown", "RequestTimeout", "RequestTimeTooSkewed", "InternalError", "ServiceUnavailable":
		return false
	}
	return r.StatusCode >= 400 && r.StatusCode < 500 && r.StatusCode != http.StatusRequestTimeout && r.StatusCode != http.StatusTooManyRequests
}

// retry runs f, each try bounded by the store's timeout, until it succeeds,
// fails for good (permanent), ctx ends or RetryFor passed, waiting 0.1 s
// doubling to 2 s (with jitter) between tries.
func (s *S3) retry(ctx context.Context, f func(context.Context) error) error {
	return s.retryTimeout(ctx, s.timeout, f)
}

// retryTimeout is retry with each try bounded by timeout.
func (s *S3) retryTimeout(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	deadline := time.Now().Add(s.retryFor)
	wait := 100 * time.Millisecond
	for {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		err := f(rctx)
		cancel()
		if err == nil || ctx.Err() != nil || permanent(err) || time.Now().After(deadline) {
			return err
		}
		d := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(d):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func notFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == "NoSuchKey" || r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket"
}

// Put implements Store: one PUT of the whole blob with its MD5 (the
// server checks it), never a multipart upload. Each try may take the
// timeout plus a second per MiB (a 25 MiB dump over a slow link).
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	timeout := s.timeout + time.Duration(len(data)>>20)*time.Second
	err := s.retryTimeout(ctx, timeout, func(ctx context.Context) error {
		_, err := s.c.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true, SendContentMd5: true})
		return err
	})
	if err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	return nil
}

// Get implements Store. A try ends when the server sends nothing for the
// store's timeout (not after a fixed time: a 25 MiB dump may take long on
// a slow link, but keeps coming).
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	var b []byte
	// retryTimeout's own bound is the retry bound: the watchdog is the
	// try's.
	err := s.retryTimeout(ctx, s.retryFor, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		dog := time.AfterFunc(s.timeout, cancel)
		defer dog.Stop()
		obj, err := s.c.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer obj.Close()
		b, err = io.ReadAll(io.LimitReader(progress{obj, func() { dog.Reset(s.timeout) }}, maxS3Object+1))
		if err == nil && len(b) > maxS3Object {
			err = fmt.Errorf("object larger than %d bytes", maxS3Object)
		}
		return err
	})
	if notFound(err) {
		return nil, fmt.Errorf("blob get %s: %w", key, ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("blob get %s: %w", key, err)
	}
	return b, nil
}

// progress is a reader that calls f after every read that got bytes.
type progress struct {
	r io.Reader
	f func()
}

func (p progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.f()
	}
	return n, err
}

// Exists implements Store (a HEAD request).
func (s *S3) Exists(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	err := s.retry(ctx, func(ctx context.Context) error {
		_, err := s.c.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
		return err
	})
	if notFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("blob exists %s: %w", key, err)
	}
	return true, nil
}

// Delete implements Store (S3 answers a missing key's DELETE with 204).
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	err := s.retry(ctx, func(ctx context.Context) error {
		return s.c.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	})
	if err != nil && !notFound(err) {
		return fmt.Errorf("blob delete %s: %w", key, err)
	}
	return nil
}

// List implements Store with ListObjectsV2 by prefix (S3 lists in key
// order, 1,000 keys a page). A listing that fails is taken up again after
// the last key seen, for RetryFor from the last progress; a page not
// answered within the store's timeout is such a failure. Objects whose
// names are not keys (written under the prefix by something else) are
// skipped.
func (s *S3) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := checkPrefix(prefix); err != nil {
			yield("", err)
			return
		}
		after := ""
		deadline := time.Now().Add(s.retryFor)
		wait := 100 * time.Millisecond
		for {
			last := after
			stopped, err := s.listFrom(ctx, prefix, &after, yield)
			if stopped || err == nil {
				return
			}
			if after != last { // progress: a new failure, not the same one
				deadline = time.Now().Add(s.retryFor)
				wait = 100 * time.Millisecond
			}
			if ctx.Err() != nil || permanent(err) || time.Now().After(deadline) {
				yield("", fmt.Errorf("blob list %s: %w", prefix, err))
				return
			}
			select {
			case <-ctx.Done():
				yield("", fmt.Errorf("blob list %s: %w", prefix, ctx.Err()))
				return
			case <-time.After(wait/2 + rand.N(wait/2+1)):
			}
			wait = min(2*wait, 2*time.Second)
		}
	}
}

// listFrom lists the keys under prefix after the object *after (a whole
// object name), yielding them and moving *after along. It reports whether
// yield asked to stop, or the error that ended the listing early.
func (s *S3) listFrom(ctx context.Context, prefix string, after *string, yield func(string, error) bool) (stopped bool, err error) {
	lctx, cancel := context.WithCancel(ctx)
	// The watchdog: no object (or end) within the timeout cancels the
	// listing; it is stopped while the caller works on a key.
	dog := time.AfterFunc(s.timeout, cancel)
	ch := s.c.ListObjects(lctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true, StartAfter: *after, MaxKeys: s.pageSize})
	defer func() {
		dog.Stop()
		cancel()
		for range ch { // let the lister's goroutine end
		}
	}()
	for obj := range ch {
		dog.Stop()
		if obj.Err != nil {
			if ctx.Err() == nil && lctx.Err() != nil {
				return false, fmt.Errorf("no answer within %v: %w", s.timeout, obj.Err)
			}
			return false, obj.Err
		}
		*after = obj.Key
		if key := strings.TrimPrefix(obj.Key, s.prefix); CheckKey(key) == nil {
			if !yield(key, nil) {
				return true, nil
			}
		}
		dog.Reset(s.timeout)
	}
	if lctx.Err() != nil {
		// The channel closed without an error object: cancelled.
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, fmt.Errorf("no answer within %v", s.timeout)
	}
	return false, nil
}
