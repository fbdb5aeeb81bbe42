//go:build unix

package scaletest

import (
	"os"
	"strings"
	"testing"
)

// TestWeedVersion: the build script builds the version Weed looks for.
func TestWeedVersion(t *testing.T) {
	b, err := os.ReadFile("../../" + WeedBuildScript)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "version=${SEAWEEDFS_VERSION:-"+SeaweedFSVersion+"}") {
		t.Errorf("%s does not build %s", WeedBuildScript, SeaweedFSVersion)
	}
}
