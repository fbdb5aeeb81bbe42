#!/bin/sh
# build.sh: build SeaweedFS's `weed` (Apache-2.0), a real S3-compatible object
# store, from its Go module source, for crashd's S3 blob tests (crashd/blob
# TestS3*) and `tools/scale/run.sh -blobs s3` (docs/scale.md "Blobs").
# Debian packages no S3-compatible server.
#
# Usage: tools/s3/build.sh            prints the binary's path when done
#        tools/s3/build.sh -n         only says whether it is built (exit 0 and
#                                     the path) or not (exit 1)
#        tools/s3/build.sh gofakes3 [-n]
#                                     the same for gofakes3's server program
#                                     (github.com/johannesboyne/gofakes3, MIT,
#                                     cmd/gofakes3 with its bolt backend): a
#                                     simpler S3 server that builds in about 2
#                                     minutes; it checks no signatures, so the
#                                     tests of credentials skip on it. The tests
#                                     use weed when both are built.
#
#   SEAWEEDFS_VERSION  module version to build (default below; the one the
#                      tests were run against)
#   GOBREAKPAD_CACHE   where the binary goes (default: the user cache
#                      directory, ${XDG_CACHE_HOME:-$HOME/.cache}/gobreakpad,
#                      the same place the Go tests look: os.UserCacheDir)
#
# The module has replace directives, so `go install module@version` refuses
# it; instead the source is downloaded through the module proxy (`go mod
# download`), copied to a scratch directory and built there with `go build
# ./weed`. About 9 minutes on 2 busy cores; the binary is about 230 MB. The
# result is <cache>/seaweedfs/<version>/weed; a finished build is never
# redone (the tests look for exactly that path). On a shared machine run it
# with nice. Nothing of SeaweedFS is
# copied into this repository.
set -eu

version=${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}
cache=${GOBREAKPAD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gobreakpad}
if [ "${1:-}" = gofakes3 ]; then
	fversion=${GOFAKES3_VERSION:-v1.2.0}
	fout=$cache/gofakes3/$fversion
	if [ -x "$fout/gofakes3" ]; then
		echo "$fout/gofakes3"
		exit 0
	fi
	if [ "${2:-}" = -n ]; then
		exit 1
	fi
	mkdir -p "$fout"
	# No replace directives: go install builds it as published.
	CGO_ENABLED=0 GOBIN="$fout" GOFLAGS=-mod=mod go install -trimpath -ldflags='-s -w' "github.com/johannesboyne/gofakes3/cmd/gofakes3@$fversion"
	echo "$fout/gofakes3"
	exit 0
fi
out=$cache/seaweedfs/$version
if [ -x "$out/weed" ]; then
	echo "$out/weed"
	exit 0
fi
if [ "${1:-}" = "-n" ]; then
	exit 1
fi
command -v go >/dev/null 2>&1 || { echo "build.sh: go not found" >&2; exit 1; }
mkdir -p "$out"
# One build at a time (CI may start it in the background while a person runs it).
lock=$out/.lock
if ! mkdir "$lock" 2>/dev/null; then
	echo "build.sh: another build holds $lock (remove it if none runs)" >&2
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/weedsrc.XXXXXX")
trap 'rm -rf "$work" "$lock"' EXIT INT TERM

dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/seaweedfs/seaweedfs@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir" ] || { echo "build.sh: go mod download gave no source directory" >&2; exit 1; }
cp -R "$dir" "$work/src"
chmod -R u+w "$work/src"
cd "$work/src"
# -trimpath and no debug info: a smaller binary; CGO off: no C toolchain needed.
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/weed.tmp" ./weed
mv "$out/weed.tmp" "$out/weed"
echo "$out/weed"
