//go:build !unix

package blob

import "testing"

const s3Skip = "the S3 tests run SeaweedFS through crashd/scaletest, on Unix only"

func s3Store(testing.TB) Store { return nil }
