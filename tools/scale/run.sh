#!/bin/sh
# tools/scale/run.sh: crashd scaled out on this machine, loopback only
# (docs/scale.md): a 3-node nats-server cluster, PostgreSQL in a temporary
# directory, 2 collectors, 3 processors and 1 page server; a stream of corpus
# uploads from a Go load generator; during it a processor is killed -9 while
# it walks, one NATS node is killed -9 and PostgreSQL restarted; then the
# backlog drains and every accepted crash must be processed exactly once with
# readable blobs. The last line is
#   scale: sent N accepted N processed N lost 0 duplicates 0 ingest R/s processed R/s p50 Xs p99 Ys faults K
# Options are the driver's (tools/scale/main.go): -crashes N -rate R
# -processors N -collectors N -workers N -faults=false -drain D -keep
# -blobs nats|s3 -symupload N. With -blobs s3 the blobs are on a SeaweedFS
# server (built by tools/s3/build.sh), which is also killed -9 and
# restarted, and the corpus's symbol files are uploaded during the stream
# with sym_upload (Breakpad's when built, else ours) to random processes
# with the symbols role (-symupload N: N files, with any -blobs).
# Needs nats-server and postgresql (Debian packages) and ../shared/corpus.
# Everything it starts is stopped by pid; it is bounded by -drain and a
# 20-minute timeout.
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
corpus=${CORPUS:-$root/../shared/corpus}
if [ ! -d "$corpus/breakpad/processor" ]; then
	echo "scale: no corpus at $corpus (set CORPUS)" >&2
	exit 2
fi
bin=$(mktemp -d "${TMPDIR:-/tmp}/crashd-scale-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT INT TERM
go build -o "$bin/crashd" ./cmd/crashd
go build -o "$bin/scale" ./tools/scale
go build -o "$bin/sym_upload" ./cmd/sym_upload
timeout -k 30 1200 "$bin/scale" -crashd "$bin/crashd" -sym-upload "$bin/sym_upload" -corpus "$corpus" "$@"
