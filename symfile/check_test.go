package symfile

import (
	"bytes"
	"testing"
)

// TestCheckRecordAgreesWithParseRecord: on every line of the test data and
// on malformed variants of each, CheckRecord fails exactly when ParseRecord
// does, with the same message.
func TestCheckRecordAgreesWithParseRecord(t *testing.T) {
	data := []byte(`MODULE Linux x86_64 0123456789ABCDEF0 app
INFO CODE_ID 0123 app
INFO GENERATOR x 1
FILE 0 a.c
INLINE_ORIGIN 3 f
INLINE_ORIGIN 3 0 f
FUNC m 100 20 0 main
FUNC 100 20 0 main
100 4 7 0
104 4 -1 0
INLINE 0 7 0 3 100 4 108 4
INLINE 1 7 3 100 4
INLINE 0 7 0 3 100 4 108 4 110 2 112 2 114 2 116 2
PUBLIC m 200 0 pub
PUBLIC 200 0 pub
STACK CFI INIT 100 20 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 104 .cfa: $rsp 16 +
STACK WIN 4 100 20 1 0 8 0 0 0 1 $T0 .raSearch =
STACK WIN 0 100 20 1 0 8 0 0 0 0 1
STACK FOO 1
`)
	n := 0
	{
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimRight(line, "\r")
			if len(line) == 0 {
				continue
			}
			for _, b := range [][]byte{line, line[:len(line)/2], append(bytes.Clone(line), " zz"...), bytes.Replace(line, []byte(" "), []byte(" g"), 2)} {
				if len(b) == 0 {
					continue
				}
				n++
				_, perr := ParseRecord(b)
				cerr := CheckRecord(b)
				if (perr == nil) != (cerr == nil) || (perr != nil && perr.Error() != cerr.Error()) {
					t.Errorf("%q: ParseRecord %v, CheckRecord %v", b, perr, cerr)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no lines")
	}
}
