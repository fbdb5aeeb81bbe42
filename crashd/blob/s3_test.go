package blob

import (
	"testing"
)

func TestS3Endpoint(t *testing.T) {
	for _, c := range []struct {
		in     string
		host   string
		secure bool
		bad    bool
	}{
		{"", "s3.amazonaws.com", true, false},
		{"http://127.0.0.1:8333", "127.0.0.1:8333", false, false},
		{"https://storage.googleapis.com", "storage.googleapis.com", true, false},
		{"https://s3.eu-west-1.amazonaws.com/", "s3.eu-west-1.amazonaws.com", true, false},
		{"minio.internal:9000", "minio.internal:9000", true, false},
		{"ftp://h", "", false, true},
		{"http://h/bucket", "", false, true},
		{"http://user:pw@h", "", false, true},
		{"http://h?x=1", "", false, true},
		{"http://", "", false, true},
	} {
		host, secure, err := s3Endpoint(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q: accepted as %s", c.in, host)
			}
			continue
		}
		if err != nil || host != c.host || secure != c.secure {
			t.Errorf("%q: %s %v %v, want %s %v", c.in, host, secure, err, c.host, c.secure)
		}
	}
}
