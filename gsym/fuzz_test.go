package gsym

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

// FuzzFile: any bytes open or fail without panicking, and the mapped and
// io.ReaderAt readers agree.
func FuzzFile(f *testing.F) {
	f.Add(sample(f, binary.LittleEndian))
	f.Add(sample(f, binary.BigEndian))
	f.Add(rawFile([]uint16{0x1000}, [][]byte{body(16, LineTableInfo, okLines, InlineInfoType, []byte{1, 0, 16, 1, 1, 0, 0, 0, 0, 0, 1, 2, 4, 0, 2, 0, 0, 0, 1, 7, 0})}, "f\x00", FileEntry{0, 1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, errA := NewFileBytes(data)
		b, errB := NewFile(bytes.NewReader(data), int64(len(data)))
		if (errA == nil) != (errB == nil) {
			t.Fatalf("open: %v vs %v", errA, errB)
		}
		if errA != nil {
			return
		}
		for i := 0; i < min(a.NumFunctions(), 32); i++ {
			fa, ea := a.FunctionAt(i)
			fb, eb := b.FunctionAt(i)
			if (ea == nil) != (eb == nil) || !reflect.DeepEqual(fa, fb) {
				t.Fatalf("function %d: %v %v vs %v %v", i, fa, ea, fb, eb)
			}
			start, _ := a.Address(i)
			for _, d := range []uint64{0, 1, 5, 17} {
				ra, ea := a.Lookup(start + d)
				rb, eb := b.Lookup(start + d)
				if (ea == nil) != (eb == nil) || !reflect.DeepEqual(ra, rb) {
					t.Fatalf("lookup %#x: %v %v vs %v %v", start+d, ra, ea, rb, eb)
				}
			}
		}
	})
}
