package index

import (
	"context"
	"testing"
	"time"
)

func TestSymbolFiles(t *testing.T) { backends(t, testSymbolFiles) }

// testSymbolFiles: rows recorded, replaced by a new upload of the module,
// found by code id without case, listed newest first within the limit.
func testSymbolFiles(t *testing.T, open opener) {
	ctx := context.Background()
	ix := open.must(t, ctx)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	files := []SymbolFile{
		{DebugFile: "liba.so", DebugID: "0123456789abcdef0123456789abcdef0", Name: "liba.so.sym", CodeFile: "liba.so", CodeID: "67452301ab89efcd", Size: 100, StoredAt: t0},
		{DebugFile: "app.pdb", DebugID: "AAAA1", Name: "app.sym", CodeFile: "app.exe", CodeID: "5F00AA1000", Size: 200, StoredAt: t0.Add(time.Minute)},
		{DebugFile: "nocode", DebugID: "BBBB0", Name: "nocode.sym", Size: 300, StoredAt: t0.Add(2 * time.Minute)},
	}
	for _, f := range files {
		if err := ix.RecordSymbolFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.RecordSymbolFile(ctx, SymbolFile{DebugFile: "x"}); err == nil {
		t.Error("a row without a debug id recorded")
	}
	f, ok, err := ix.SymbolFileByCode(ctx, "APP.EXE", "5f00aa1000")
	if err != nil || !ok || f.DebugFile != "app.pdb" || f.DebugID != "AAAA1" || f.Size != 200 || !f.StoredAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("by code id: %+v %v %v", f, ok, err)
	}
	if _, ok, err := ix.SymbolFileByCode(ctx, "app.exe", "5F00AA1001"); ok || err != nil {
		t.Errorf("an unknown code id found: %v %v", ok, err)
	}
	if _, ok, err := ix.SymbolFileByCode(ctx, "", ""); ok || err != nil {
		t.Errorf("no code id found: %v %v", ok, err)
	}
	// liba.so stored again (changed): its row replaced, newest now.
	files[0].Size, files[0].StoredAt = 150, t0.Add(3*time.Minute)
	if err := ix.RecordSymbolFile(ctx, files[0]); err != nil {
		t.Fatal(err)
	}
	got, err := ix.RecentSymbolFiles(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].DebugFile != "liba.so" || got[0].DebugID != "0123456789ABCDEF0123456789ABCDEF0" || got[0].Size != 150 || got[1].DebugFile != "nocode" {
		t.Errorf("recent: %+v", got)
	}
	if all, _ := ix.RecentSymbolFiles(ctx, 0); len(all) != 3 {
		t.Errorf("all recent: %d rows", len(all))
	}
	if f, ok, _ := ix.SymbolFileByCode(ctx, "liba.so", "67452301AB89EFCD"); !ok || f.Size != 150 {
		t.Errorf("by code id after the new upload: %+v %v", f, ok)
	}
}
