package pdb

import (
	"encoding/binary"
	"testing"
)

func TestCrossScope(t *testing.T) {
	le := binary.LittleEndian
	var imp []byte
	for _, v := range []uint32{7, 2, 0x1005, 0x80000003, 9, 0} {
		imp = le.AppendUint32(imp, v)
	}
	got, err := ParseCrossScopeImports(imp)
	if err != nil || len(got) != 2 || got[0].ModuleName != 7 || len(got[0].Locals) != 2 || got[0].Locals[1] != 0x80000003 || got[1].ModuleName != 9 || len(got[1].Locals) != 0 {
		t.Fatalf("imports: %+v, %v", got, err)
	}
	if _, err := ParseCrossScopeImports([]byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}); err == nil {
		t.Error("2^32-1 imported indices in 0 bytes: no error")
	}
	var exp []byte
	for _, v := range []uint32{0x80000003, 0x1234, 0x1005, 0x2000} {
		exp = le.AppendUint32(exp, v)
	}
	ex, err := ParseCrossScopeExports(exp)
	if err != nil || len(ex) != 2 || ex[0].Local != 0x1005 {
		t.Fatalf("exports: %+v, %v", ex, err)
	}
	if g, ok := ExportedIndex(ex, 0x80000003); !ok || g != 0x1234 {
		t.Errorf("ExportedIndex(0x80000003) = %#x, %v", g, ok)
	}
	if _, ok := ExportedIndex(ex, 0x1006); ok {
		t.Error("ExportedIndex(0x1006): found")
	}
	if m, i := TypeIndex(0x80312345).CrossModule(); !TypeIndex(0x80312345).IsCrossModule() || m != 3 || i != 0x12345 {
		t.Errorf("CrossModule(0x80312345) = %d, %#x", m, i)
	}
}
