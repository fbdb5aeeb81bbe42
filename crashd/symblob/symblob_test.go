package symblob

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
	"github.com/gobreakpad/gobreakpad/symbols"
	"github.com/gobreakpad/gobreakpad/symbols/symsrc"
)

func TestKey(t *testing.T) {
	for _, c := range []struct{ file, id, name, want string }{
		{"libc.so.6", "0123456789ABCDEF0123456789ABCDEF0", "libc.so.6.sym", "symbols/libc.so.6/0123456789ABCDEF0123456789ABCDEF0/libc.so.6.sym"},
		{`C:\b\xul.pdb`, "ID1", "xul.sym", "symbols/xul.pdb/ID1/xul.sym"},
		{"xul.pdb", "ID1", "xul.symc", "symbols/xul.pdb/ID1/xul.symc"},
		// Names the symbol server takes but blob keys do not.
		{"libstdc++.so.6", "ID2", "libstdc++.so.6.sym", "symbols/_x/6c69627374646324322b2b2e736f2e36/494432/6c69627374646324322b2b2e736f2e362e73796d"},
		{".hidden", "ID3", ".hidden.sym", "symbols/_x/2e68696464656e/494433/2e68696464656e2e73796d"},
		{"_x", "ID4", "_x.sym", "symbols/_x/5f78/494434/5f782e73796d"},
	} {
		got, err := Key(c.file, c.id, c.name)
		if c.file == "libstdc++.so.6" {
			// Computed, not typed: the test is that it is escaped.
			if err != nil || !strings.HasPrefix(got, escaped) || len(strings.Split(got, "/")) != 5 {
				t.Errorf("Key(%q) = %q, %v", c.file, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Key(%q, %q, %q) = %q, %v; want %q", c.file, c.id, c.name, got, err, c.want)
		}
	}
	for _, bad := range [][2]string{{"..", "ID"}, {"a", ".."}, {"a/../..", "ID"}, {"a", "b/c"}, {"a\x00", "ID"}, {"", "ID"}} {
		if k, err := Key(bad[0], bad[1], "x.sym"); err == nil {
			t.Errorf("Key(%q, %q) = %q, want an error", bad[0], bad[1], k)
		}
	}
}

const testSym = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libfoo.so\nINFO CODE_ID 00AA libfoo.so\nFILE 0 a.c\nFUNC 1000 10 0 foo\n1000 10 3 0\nPUBLIC 2000 0 bar\nSTACK CFI INIT 1000 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"

func stores(t *testing.T) map[string]blob.Store {
	d, err := blob.OpenDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return map[string]blob.Store{"Mem": blob.NewMem(), "Dir": d}
}

// TestStoreAndCache: an upload's .sym and fast forms put on the blob store
// (Put, Same, Exists), fetched by another machine's cache (Fill) whose
// symbol chain then answers from the installed fast forms; Forget; the
// bound deletes the oldest copies.
func TestStoreAndCache(t *testing.T) {
	ctx := context.Background()
	for name, bs := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := &Store{Blobs: bs}
			up, upCache := t.TempDir(), t.TempDir()
			sym := filepath.Join(up, "libfoo.so.sym")
			os.WriteFile(sym, []byte(testSym), 0o644)
			if err := symsrc.WriteFast(upCache, sym, "libfoo.so", "0123456789ABCDEF0123456789ABCDEF0"); err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, "libfoo.so", "0123456789ABCDEF0123456789ABCDEF0", sym, upCache); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"symbols/libfoo.so/0123456789ABCDEF0123456789ABCDEF0/libfoo.so.sym", "symbols/libfoo.so/0123456789ABCDEF0123456789ABCDEF0/libfoo.so.symc", "symbols/libfoo.so/0123456789ABCDEF0123456789ABCDEF0/libfoo.so.cfidx"} {
				if ok, err := bs.Exists(ctx, k); !ok || err != nil {
					t.Errorf("%s: not stored (%v)", k, err)
				}
			}
			sum := sha256.Sum256([]byte(testSym))
			if same, err := st.Same(ctx, "libfoo.so", "0123456789ABCDEF0123456789ABCDEF0", sum, int64(len(testSym))); !same || err != nil {
				t.Errorf("Same: %v %v", same, err)
			}
			if same, _ := st.Same(ctx, "libfoo.so", "0123456789ABCDEF0123456789ABCDEF0", sha256.Sum256([]byte("x")), int64(len(testSym))); same {
				t.Error("Same of other bytes: true")
			}
			if ok, _ := st.Exists(ctx, "libbar.so", "0123456789ABCDEF0123456789ABCDEF0"); ok {
				t.Error("Exists of a missing module: true")
			}
			rc, n, err := st.Open(ctx, "libfoo.so", "0123456789ABCDEF0123456789ABCDEF0")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if string(b) != testSym || n != int64(len(testSym)) {
				t.Errorf("Open: %q", b)
			}

			// Another machine.
			dir, fast := t.TempDir(), t.TempDir()
			c := &Cache{Store: st, Dir: dir, FastCache: fast}
			src, err := symsrc.Open(symsrc.Config{Paths: []string{dir}, CacheDir: fast, Fill: c.Fill})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			m := symbols.Module{DebugFile: "libfoo.so", DebugID: "0123456789ABCDEF0123456789ABCDEF0"}
			got, err := src.Load(m)
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := got.Lookup.(symbols.Lookuper); !ok || f == nil {
				t.Fatalf("no lookups: %+v", got)
			}
			if strings.Contains(typeName(got.Lookup), "breakpad") {
				t.Errorf("lookups from the .sym (%s), not the fast forms fetched", typeName(got.Lookup))
			}
			if c.Bytes() != int64(len(testSym)) {
				t.Errorf("cache counts %d bytes", c.Bytes())
			}
			if err := c.Fill(symbols.Module{DebugFile: "libbar.so", DebugID: "0123456789ABCDEF0123456789ABCDEF0"}); !errors.Is(err, symbols.ErrNotFound) {
				t.Errorf("Fill of a module the store lacks: %v", err)
			}
			c.Forget("libfoo.so", "0123456789abcdef0123456789abcdef0")
			if _, err := os.Stat(filepath.Join(dir, "libfoo.so", "0123456789ABCDEF0123456789ABCDEF0", "libfoo.so.sym")); err == nil {
				t.Error("Forget left the copy")
			}
			// The bound: two modules of which only the newest fits.
			sym2 := filepath.Join(up, "two.sym")
			os.WriteFile(sym2, []byte(strings.Replace(testSym, "0123456789ABCDEF0123456789ABCDEF0 libfoo.so", "DEF1 libtwo.so", 1)), 0o644)
			if err := st.Put(ctx, "libtwo.so", "DEF1", sym2, ""); err != nil {
				t.Fatal(err)
			}
			c2 := &Cache{Store: st, Dir: t.TempDir(), MaxBytes: int64(len(testSym)) + 10}
			for _, m := range []symbols.Module{{DebugFile: "libfoo.so", DebugID: "0123456789ABCDEF0123456789ABCDEF0"}, {DebugFile: "libtwo.so", DebugID: "DEF1"}} {
				if err := c2.Fill(m); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(filepath.Join(c2.Dir, "libfoo.so", "0123456789ABCDEF0123456789ABCDEF0", "libfoo.so.sym")); err == nil || c2.Bytes() > c2.MaxBytes {
				t.Errorf("over the bound: the oldest kept (%d bytes)", c2.Bytes())
			}
			c3 := &Cache{Store: st, Dir: c2.Dir, MaxBytes: 1 << 20}
			if err := c3.Scan(); err != nil || c3.Bytes() != c2.Bytes() {
				t.Errorf("Scan: %d bytes, %v; want %d", c3.Bytes(), err, c2.Bytes())
			}
		})
	}
}

func typeName(v any) string { return strings.ToLower(fmtType(v)) }

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

// FuzzKey: whatever names an upload gives, a key is a valid blob key
// under symbols/ of four segments (five when escaped), or an error.
func FuzzKey(f *testing.F) {
	f.Add("libc.so.6", "ABC0", "libc.so.6.sym")
	f.Add("libstdc++.so.6", "ID", "x.sym")
	f.Add("..", "a/b", "../../v1/raw_crash")
	f.Add(`C:\a\b.pdb`, "ID", ".sym")
	f.Fuzz(func(t *testing.T, file, id, name string) {
		k, err := Key(file, id, name)
		if err != nil {
			return
		}
		if blob.CheckKey(k) != nil || !strings.HasPrefix(k, Prefix) {
			t.Fatalf("Key(%q, %q, %q) = %q: not a key under %s", file, id, name, k, Prefix)
		}
		n := len(strings.Split(k, "/"))
		if n != 4 && !(n == 5 && strings.HasPrefix(k, escaped)) {
			t.Fatalf("Key(%q, %q, %q) = %q: %d segments", file, id, name, k, n)
		}
	})
}
