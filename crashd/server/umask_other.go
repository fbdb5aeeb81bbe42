//go:build !unix

package server

import (
	"log/slog"
	"os"
)

// restrictUmask does nothing where there is no umask (Windows: the data
// directory's ACL, inherited, decides).
func restrictUmask(groupReadable bool) {}

// restrictDir does nothing where modes are not Unix permissions.
func restrictDir(dir string, mode os.FileMode, log *slog.Logger) error { return nil }
