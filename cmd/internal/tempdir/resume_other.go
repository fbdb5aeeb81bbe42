//go:build !unix

package tempdir

import "os"

// resume ends the process as the signal would have.
func resume(os.Signal) { os.Exit(1) }
