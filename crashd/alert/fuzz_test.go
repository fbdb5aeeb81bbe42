package alert

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gobreakpad/gobreakpad/crashd/index"
)

// FuzzPayload: signatures and products come from dumps and uploads. The
// payload always encodes, its text is valid UTF-8 with no control
// character, and the only '<' and '>' of the text are its link's.
func FuzzPayload(f *testing.F) {
	f.Add("a&b <c> d", "App", "1.0", "spike")
	f.Add("<!here> <@U123|x>", "<https://evil|click>", "\x00\xff", "new_signature")
	f.Fuzz(func(t *testing.T, sig, product, version, kind string) {
		if !utf8.ValidString(sig) {
			sig = strings.ToValidUTF8(sig, "?")
		}
		p := NewPayload(index.NewAlertEvent(kind, product, sig, version, "c", 3, index.AlertEvent{}.CreatedAt), "https://crashes.example.com")
		if _, err := json.Marshal(p); err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(p.Text) && utf8.ValidString(product) && utf8.ValidString(version) && utf8.ValidString(kind) {
			t.Errorf("text not UTF-8: %q", p.Text)
		}
		body, link, ok := strings.Cut(p.Text, "(<"+p.Link+"|signature>)")
		if !ok || link != "" {
			t.Fatalf("text %q does not end with its link", p.Text)
		}
		if strings.ContainsAny(body, "<>\n\r\t") {
			t.Errorf("unescaped in %q", body)
		}
	})
}
