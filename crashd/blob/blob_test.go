package blob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func stores(t *testing.T) map[string]Store {
	d, err := OpenDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return map[string]Store{"Dir": d, "Mem": NewMem(), "ObjectStore": objectStore(t), "S3": s3Store(t)}
}

// skipNil skips a test of a store that could not be had here (nil: S3
// without SeaweedFS built), saying why.
func skipNil(t *testing.T, s Store) {
	t.Helper()
	if s == nil {
		t.Skip(s3Skip)
	}
}

// objectStore is an ObjectStore on a NATS server with JetStream started in
// the test process (the cluster's replication is tested in crashd/queue
// and by tools/scale/run.sh).
func objectStore(t *testing.T) *ObjectStore {
	ns, err := server.NewServer(&server.Options{JetStream: true, StoreDir: filepath.Join(t.TempDir(), "nats"), DontListen: true, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL(), nats.InProcessServer(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenObjectStore(context.Background(), js, "blobs", 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func list(t *testing.T, s Store, prefix string) []string {
	t.Helper()
	var keys []string
	for k, err := range s.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		keys = append(keys, k)
	}
	return keys
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			skipNil(t, s)
			keys := []string{
				"v1/raw_crash/20160918/de1bb258-cbbf-4589-a673-34f800160918",
				"v1/raw_crash/20160919/aaaabbbb-cbbf-4589-a673-34f800160919",
				"v1/dump/de1bb258-cbbf-4589-a673-34f800160918",
				"v1/dump_names/de1bb258-cbbf-4589-a673-34f800160918",
				"top",
			}
			for i, k := range keys {
				if err := s.Put(ctx, k, []byte(fmt.Sprint("blob ", i))); err != nil {
					t.Fatalf("Put(%q): %v", k, err)
				}
			}
			if err := s.Put(ctx, keys[0], []byte("again")); err != nil {
				t.Fatal(err)
			}
			if b, err := s.Get(ctx, keys[0]); err != nil || string(b) != "again" {
				t.Errorf("Get = %q, %v", b, err)
			}
			if b, err := s.Get(ctx, keys[2]); err != nil || string(b) != "blob 2" {
				t.Errorf("Get = %q, %v", b, err)
			}
			if _, err := s.Get(ctx, "v1/dump/nothing"); !errors.Is(err, ErrNotExist) {
				t.Errorf("Get(missing) = %v", err)
			}
			if ok, err := s.Exists(ctx, keys[1]); !ok || err != nil {
				t.Errorf("Exists = %v, %v", ok, err)
			}
			if ok, err := s.Exists(ctx, "v1/raw_crash"); ok || err != nil {
				t.Errorf("Exists(directory) = %v, %v", ok, err)
			}
			if got, want := list(t, s, "v1/raw_crash/"), keys[:2]; !slices.Equal(got, want) {
				t.Errorf("List raw = %q, want %q", got, want)
			}
			if got, want := list(t, s, "v1/raw_crash/20160919"), keys[1:2]; !slices.Equal(got, want) {
				t.Errorf("List date = %q, want %q", got, want)
			}
			if got, want := list(t, s, "v1/dump"), []string{keys[2], keys[3]}; !slices.Equal(got, want) {
				t.Errorf("List v1/dump = %q, want %q", got, want)
			}
			if got, want := list(t, s, ""), []string{keys[4], keys[2], keys[3], keys[0], keys[1]}; !slices.Equal(got, want) {
				t.Errorf("List all = %q, want %q", got, want)
			}
			if got := list(t, s, "nothing/"); len(got) != 0 {
				t.Errorf("List(nothing/) = %q", got)
			}
			n := 0
			for range s.List(ctx, "v1/") {
				n++
				break
			}
			if n != 1 {
				t.Error("List did not stop")
			}
			if err := s.Delete(ctx, keys[0]); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, keys[0]); err != nil {
				t.Errorf("second Delete: %v", err)
			}
			if ok, _ := s.Exists(ctx, keys[0]); ok {
				t.Error("deleted key exists")
			}
			for _, bad := range []string{"", "/abs", "a//b", "../x", "a/../../x", "a/./b", ".hidden", "a/.tmp-1", `a\b`, "a\x00b", "a b", "a/", string(make([]byte, 2000))} {
				if err := s.Put(ctx, bad, nil); err == nil {
					t.Errorf("Put(%q) accepted", bad)
				}
				if _, err := s.Get(ctx, bad); err == nil {
					t.Errorf("Get(%q) accepted", bad)
				}
			}
			for _, err := range s.List(ctx, "../") {
				if err == nil {
					t.Error("List(../) yielded a key")
				}
			}
		})
	}
}

func TestStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			skipNil(t, s)
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := range 20 {
						k := fmt.Sprintf("v1/x/%d/%d", i%3, g*100+i)
						if err := s.Put(ctx, k, []byte(k)); err != nil {
							t.Error(err)
							return
						}
						if err := s.Put(ctx, "v1/same", []byte(k)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if got := list(t, s, "v1/x/"); len(got) != 160 {
				t.Errorf("%d keys, want 160", len(got))
			}
		})
	}
}

// TestDirStaysInRoot checks that a symbolic link inside the root does not
// lead a key outside it, and that temporary files are never listed.
func TestDirStaysInRoot(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	root := filepath.Join(t.TempDir(), "root")
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if _, err := d.Get(ctx, "link/secret"); err == nil {
		t.Error("Get followed a link out of the root")
	}
	if err := d.Put(ctx, "link/new", []byte("x")); err == nil {
		t.Error("Put followed a link out of the root")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("Put wrote outside the root")
	}
	if err := os.WriteFile(filepath.Join(root, ".tmp-123"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(ctx, "a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := list(t, d, ""); !slices.Equal(got, []string{"a/b"}) {
		t.Errorf("List = %q", got)
	}
	ents, _ := os.ReadDir(filepath.Join(root, "a"))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// BenchmarkDirPutLarge stores 256 KiB blobs (a dump) durably.
func BenchmarkDirPutLarge(b *testing.B) {
	d, err := OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	data := make([]byte, 256<<10)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		if err := d.Put(context.Background(), fmt.Sprintf("v1/dump/%d", i), data); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzCheckKey: a key CheckKey accepts is a local path (never absolute,
// never climbing out of the root).
func FuzzCheckKey(f *testing.F) {
	for _, k := range []string{"v1/dump/x", "../x", "a/./b", "a/.tmp", `a\b`} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if CheckKey(key) == nil && !filepath.IsLocal(key) {
			t.Fatalf("CheckKey accepted %q", key)
		}
	})
}

// TestDirLazy: PutLazy stores as Put does and remembers the key; Sync
// syncs them and forgets them, a key deleted in between included.
func TestDirLazy(t *testing.T) {
	t.Run("syncfs", testDirLazy)
	t.Run("per-file", func(t *testing.T) {
		perFileSync = true
		defer func() { perFileSync = false }()
		testDirLazy(t)
	})
}

func testDirLazy(t *testing.T) {
	ctx := context.Background()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, k := range []string{"v1/processed_crash/a", "v1/processed_crash/b", "v1/other/deep/c"} {
		if err := d.PutLazy(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
		if b, err := d.Get(ctx, k); err != nil || string(b) != k {
			t.Fatalf("%s: %q %v", k, b, err)
		}
	}
	if err := d.Delete(ctx, "v1/processed_crash/b"); err != nil {
		t.Fatal(err)
	}
	if len(d.pending) != 3 {
		t.Fatalf("pending %v", d.pending)
	}
	if err := d.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if len(d.pending) != 0 {
		t.Fatalf("pending after Sync: %v", d.pending)
	}
	if err := d.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.PutLazy(ctx, "../x", nil); err == nil {
		t.Error("a bad key was stored")
	}
	var names []string
	for k, err := range d.List(ctx, "v1/") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, k)
	}
	if len(names) != 2 {
		t.Errorf("listed %v (temporary files left?)", names)
	}
}
