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
#                     bare mirror works) (default https://github.com/google/breakpad)
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
commit=${BREAKPAD_COMMIT:-418aacd617897c19d960ec3e649f42ea95a6363a}
repo=${BREAKPAD_REPO:-https://github.com/google/breakpad}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

for tool in git g++ make; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "build.sh: $tool not found (apt-get install -y git g++ make)" >&2
		exit 1
	}
done

if [ ! -x "$dir/configure" ]; then
	mkdir -p "$dir"
	# A shallow fetch of the one commit (GitHub serves any reachable commit),
	# falling back to a full clone for servers that refuse it.
	git -C "$dir" init -q
	if ! git -C "$dir" fetch -q --depth 1 "$repo" "$commit"; then
		git -C "$dir" fetch -q "$repo" '+refs/heads/*:refs/remotes/origin/*'
	fi
	git -C "$dir" -c advice.detachedHead=false checkout -q "$commit"
fi

cd "$dir"
if [ ! -f Makefile ]; then
	./configure --disable-tools
fi
make -j"$jobs" src/processor/minidump_stackwalk src/processor/minidump_dump

echo "GOBREAKPAD_BREAKPAD_STACKWALK=$dir/src/processor/minidump_stackwalk"
echo "GOBREAKPAD_BREAKPAD_DUMP=$dir/src/processor/minidump_dump"
