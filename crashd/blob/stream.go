package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/nats-io/nats.go/jetstream"
)

// Streamer is a Store that also writes and reads blobs as streams, for
// blobs too big to hold in memory whole (symbol files of up to gigabytes:
// crashd's symbol server on the blob store). Dir, Mem, ObjectStore and S3
// implement it; PutStream and Open work on any Store.
type Streamer interface {
	Store
	// PutStream stores the size bytes of r under key, durable and atomic
	// as Put. r is read from its start (it is seeked there again when a
	// try must be repeated).
	PutStream(ctx context.Context, key string, r io.ReadSeeker, size int64) error
	// Open returns a reader of the blob under key and its size, or an
	// error matching ErrNotExist. The caller closes it.
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
}

// maxBuffered bounds a blob that PutStream or Open holds in memory for a
// store that is not a Streamer.
const maxBuffered = 256 << 20

// PutFile stores the file at path in s under key, streamed (PutStream).
func PutFile(ctx context.Context, s Store, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return PutStream(ctx, s, key, f, fi.Size())
}

// PutStream stores size bytes of r under key in s: streamed where s is a
// Streamer, else read into memory first (at most 256 MiB).
func PutStream(ctx context.Context, s Store, key string, r io.ReadSeeker, size int64) error {
	if st, ok := s.(Streamer); ok {
		return st.PutStream(ctx, key, r, size)
	}
	if size > maxBuffered {
		return fmt.Errorf("blob put %s: %d bytes, over the %d this store takes", key, size, maxBuffered)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	return s.Put(ctx, key, b)
}

// Open returns a reader of the blob under key in s and its size: a stream
// where s is a Streamer, else the blob read whole.
func Open(ctx context.Context, s Store, key string) (io.ReadCloser, int64, error) {
	if st, ok := s.(Streamer); ok {
		return st.Open(ctx, key)
	}
	return openBytes(ctx, s, key)
}

// openBytes is Open of a store that is not a Streamer: the blob read whole.
func openBytes(ctx context.Context, s Store, key string) (io.ReadCloser, int64, error) {
	b, err := s.Get(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

// Presigner is a Store that can hand out a URL from which anyone holding
// it may GET a blob for a while, without credentials (S3's presigned
// URLs): a server may redirect a download there instead of relaying it.
type Presigner interface {
	PresignGet(ctx context.Context, key string, expires time.Duration) (*url.URL, error)
}

// checkSize returns an error when a stream's length n is not the size
// its writer declared.
func checkSize(key string, n, size int64) error {
	if n != size {
		return fmt.Errorf("blob put %s: %d bytes read, %d declared", key, n, size)
	}
	return nil
}

// PutStream implements Streamer: the file is written from r as Put writes
// it (temporary file, sync, rename, directory sync).
func (d *Dir) PutStream(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	cr := &countReader{r: io.LimitReader(r, size+1)}
	if err := d.put(ctx, key, cr, true); err != nil {
		return err
	}
	if err := checkSize(key, cr.n, size); err != nil {
		_ = d.Delete(ctx, key)
		return err
	}
	return nil
}

// Open implements Streamer.
func (d *Dir) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := CheckKey(key); err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("blob open %s: %w", key, err)
	}
	f, err := d.root.Open(filepath.FromSlash(key))
	if err != nil {
		return nil, 0, fmt.Errorf("blob open %s: %w", key, err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("not a file: %w", os.ErrNotExist)
		}
		return nil, 0, fmt.Errorf("blob open %s: %w", key, err)
	}
	return f, fi.Size(), nil
}

// PutStream implements Streamer (in memory all the same).
func (s *Mem) PutStream(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	b, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	if err := checkSize(key, int64(len(b)), size); err != nil {
		return err
	}
	return s.Put(ctx, key, b)
}

// Open implements Streamer.
func (s *Mem) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	return openBytes(ctx, s, key)
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// PutStream implements Streamer: the object written from r (chunked by
// JetStream), retried from r's start through leader elections.
func (s *ObjectStore) PutStream(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	var cr *countReader
	if err := retry(ctx, func(ctx context.Context) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return err
		}
		cr = &countReader{r: io.LimitReader(r, size+1)}
		_, err := s.obs.Put(ctx, jetstream.ObjectMeta{Name: key}, cr)
		return err
	}); err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	if err := checkSize(key, cr.n, size); err != nil {
		_ = s.Delete(ctx, key)
		return err
	}
	return nil
}

// Open implements Streamer.
func (s *ObjectStore) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := CheckKey(key); err != nil {
		return nil, 0, err
	}
	var res jetstream.ObjectResult
	err := retry(ctx, func(context.Context) (err error) {
		// The result is read after the try: not the try's context.
		res, err = s.obs.Get(ctx, key)
		return s.confirmMissing(ctx, key, err)
	})
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, 0, fmt.Errorf("blob open %s: %w", key, ErrNotExist)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("blob open %s: %w", key, err)
	}
	info, err := res.Info()
	if err != nil {
		res.Close()
		return nil, 0, fmt.Errorf("blob open %s: %w", key, err)
	}
	return res, int64(info.Size), nil
}

// PutStream implements Streamer: one PutObject from r (a multipart upload
// for objects over minio-go's part size, 16 MiB and more: symbol files;
// crash blobs go through Put, one PUT). Each try may take the store's
// timeout plus a second per MiB, and starts again from r's start.
func (s *S3) PutStream(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	timeout := s.timeout + time.Duration(size>>20)*time.Second
	err := s.retryTimeout(ctx, timeout, func(ctx context.Context) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := s.c.PutObject(ctx, s.bucket, s.prefix+key, io.LimitReader(r, size), size,
			minio.PutObjectOptions{ContentType: "application/octet-stream"})
		return err
	})
	if err != nil {
		return fmt.Errorf("blob put %s: %w", key, err)
	}
	return nil
}

// Open implements Streamer: the object's GET, streamed; the reader fails
// when the server sends nothing for the store's timeout.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := CheckKey(key); err != nil {
		return nil, 0, err
	}
	var obj *minio.Object
	var size int64
	var cancel context.CancelFunc
	err := s.retry(ctx, func(rctx context.Context) error {
		// The object outlives this try: its own context, bounded by the
		// watchdog below.
		octx, ocancel := context.WithCancel(context.WithoutCancel(ctx))
		o, err := s.c.GetObject(octx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
		if err == nil {
			var st minio.ObjectInfo
			if st, err = o.Stat(); err == nil {
				obj, size, cancel = o, st.Size, ocancel
				return nil
			}
			o.Close()
		}
		ocancel()
		return err
	})
	if notFound(err) {
		return nil, 0, fmt.Errorf("blob open %s: %w", key, ErrNotExist)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("blob open %s: %w", key, err)
	}
	dog := time.AfterFunc(s.timeout, cancel)
	return &s3Reader{progress: progress{obj, func() { dog.Reset(s.timeout) }}, close: func() error {
		dog.Stop()
		err := obj.Close()
		cancel()
		return err
	}}, size, nil
}

// s3Reader is an object being read, with its watchdog.
type s3Reader struct {
	progress
	close func() error
}

func (r *s3Reader) Close() error { return r.close() }

// PresignGet implements Presigner: a presigned GET URL of the object,
// valid for expires (at most 7 days, S3's bound).
func (s *S3) PresignGet(ctx context.Context, key string, expires time.Duration) (*url.URL, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	u, err := s.c.PresignedGetObject(ctx, s.bucket, s.prefix+key, expires, nil)
	if err != nil {
		return nil, fmt.Errorf("blob presign %s: %w", key, err)
	}
	return u, nil
}

var (
	_ Streamer  = (*Dir)(nil)
	_ Streamer  = (*Mem)(nil)
	_ Streamer  = (*ObjectStore)(nil)
	_ Streamer  = (*S3)(nil)
	_ Presigner = (*S3)(nil)
)
