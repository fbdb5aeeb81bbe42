#!/bin/sh
# build.sh: build Google Breakpad's processor tools (minidump_stackwalk,
# minidump_dump) from source, to compare gobreakpad with the real thing
# (tools/bpcompare, docs/stackwalk.md "Breakpad on our truth corpus",
# docs/performance.md).
#
# Usage: tools/breakpad/build.sh [DIR]      (DIR defaults to /tmp/bpsrc)
#
#   BREAKPAD_COMMIT   the commit to build (default: the one our docs' figures
#                     come from, 418aacd617897c19d960ec3e649f42ea95a6363a)
#   BREAKPAD_REPO     where to get it: a git URL or a local git directory (a
#                     bare mirror works) (default: ../shared/src/breakpad.git
#                     beside the checkout when it is there, a one-commit copy
#                     at 418aacd that needs no network; else
#                     https://github.com/google/breakpad)
#   JOBS              make -j (default: number of CPUs)
#
# On a fresh Debian (12 and later) as root:
#   apt-get update && apt-get install -y git g++ make
# (gcc/g++ 12.2 built the binaries our figures were measured with; the
# processor needs no library beyond libstdc++.)
#
# Only the processor is built: `configure --disable-tools` and the two make
# targets. Neither needs Breakpad's third_party submodules (LSS, googletest),
# which only the client library and the unit tests use, so no submodule is
# fetched. Nothing of Breakpad is copied into this repository.
#
# Afterwards:
#   export GOBREAKPAD_BREAKPAD_STACKWALK=DIR/src/processor/minidump_stackwalk
#   export GOBREAKPAD_BREAKPAD_DUMP=DIR/src/processor/minidump_dump
set -eu

dir=${1:-/tmp/bpsrc}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

. "$(dirname "$0")/source.sh"
breakpad_source "$dir" build.sh

cd "$dir"
if [ ! -f Makefile ]; then
	./configure --disable-tools
fi
make -j"$jobs" src/processor/minidump_stackwalk src/processor/minidump_dump

echo "GOBREAKPAD_BREAKPAD_STACKWALK=$dir/src/processor/minidump_stackwalk"
echo "GOBREAKPAD_BREAKPAD_DUMP=$dir/src/processor/minidump_dump"
