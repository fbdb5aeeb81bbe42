package jsonout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gobreakpad/gobreakpad/stackwalk"
)

// The "signature" key is written only when asked for, in sorted key order.
func TestSignatureKey(t *testing.T) {
	st := &stackwalk.ProcessState{RequestingThread: -1, MainModule: -1}
	var plain, with bytes.Buffer
	if err := Write(&plain, st, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), `"signature"`) {
		t.Errorf("signature key without a signature: %s", plain.String())
	}
	if err := WriteWith(&with, st, Options{Signature: "a | b<T>"}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(with.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["signature"] != "a | b<T>" {
		t.Errorf("signature = %v", doc["signature"])
	}
	out := with.String()
	if i, j := strings.Index(out, `"process_uptime"`), strings.Index(out, `"signature"`); !(i < j && j < strings.Index(out, `"soft_errors"`)) {
		t.Errorf("signature key out of order: %s", out)
	}
}
