//go:build !unix

package server

import (
	"testing"

	"github.com/gobreakpad/gobreakpad/crashd/blob"
)

const s3Skip = "the S3 tests run SeaweedFS through crashd/scaletest, on Unix only"

func s3TestStore(*testing.T) blob.Store { return nil }

func stopS3() {}
