#!/bin/bash
# bench.sh: Breakpad's minidump_stackwalk and minidump_dump against ours,
# side by side (docs/performance.md). Needs hyperfine, /usr/bin/time (GNU),
# gcc, Breakpad's binaries (tools/breakpad/build.sh) and the shared corpus.
#
# Usage: tools/breakpad/bench.sh [RUNS]   (from the project root; RUNS: 10)
#   GOBREAKPAD_BREAKPAD_STACKWALK, GOBREAKPAD_BREAKPAD_DUMP: Breakpad's
#   binaries (default /tmp/bpsrc/src/processor/...)
#   BENCH_TMP: scratch folder (default /tmp/gobreakpad-bench)
#
# Cases: the corpus's perf case (65 MB of symbols), its biggest Windows
# dump, its many-thread Linux dump, and a 401-thread Linux dump captured
# here with our minidump_capture from a small program (built and dumped
# again on every run, not committed). Prints markdown tables: hyperfine's
# mean ± σ, min and max wall times, then user time and peak RSS as the
# median of 3 runs of /usr/bin/time; a last row times start-up alone. Runs
# that exit non-zero (the hostile dump, refused by both) are timed all the
# same.
set -euo pipefail

runs=${1:-10}
root=$(pwd)
corpus=$root/../shared/corpus
bp=${GOBREAKPAD_BREAKPAD_STACKWALK:-/tmp/bpsrc/src/processor/minidump_stackwalk}
bpdump=${GOBREAKPAD_BREAKPAD_DUMP:-/tmp/bpsrc/src/processor/minidump_dump}
tmp=${BENCH_TMP:-/tmp/gobreakpad-bench}
for f in "$bp" "$bpdump" "$corpus/cases.tsv"; do
	[ -e "$f" ] || { echo "bench.sh: $f not found" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "bench.sh: hyperfine not found (apt-get install -y hyperfine)" >&2; exit 1; }

mkdir -p "$tmp/bin" "$tmp/mt"
go build -o "$tmp/bin/" ./cmd/minidump_stackwalk ./cmd/minidump_dump ./cmd/minidump_capture ./cmd/dump_syms
ours=$tmp/bin/minidump_stackwalk
oursdump=$tmp/bin/minidump_dump

# A live Linux process with 400 parked threads (4 to 11 frames deep) and a
# main thread that aborts, dumped by our minidump_capture, with symbols of
# the program and of the system's libc from our dump_syms.
mt=$tmp/mt
cat >"$mt/manythreads.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#define N 400
static pthread_barrier_t bar;
__attribute__((noinline)) static void park(int d) {
	if (d > 0) { park(d - 1); __asm__ volatile("" ::: "memory"); return; }
	pthread_barrier_wait(&bar);
	for (;;) pause();
}
static void *worker(void *a) { park((int)(long)a % 8 + 4); return 0; }
int main(void) {
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_barrier_init(&bar, 0, N + 1);
	for (long i = 0; i < N; i++) pthread_create(&t, &at, worker, (void *)i);
	pthread_barrier_wait(&bar);
	abort();
}
C
gcc -g -O1 -fno-omit-frame-pointer -pthread -o "$mt/manythreads" "$mt/manythreads.c"
rm -rf "$mt"/*.dmp "$mt/syms"
(cd "$mt" && "$tmp/bin/minidump_capture" -o "$mt" -- ./manythreads) >/dev/null 2>&1 || true
mv "$mt"/manythreads.*.dmp "$mt/mt.dmp"
libc=$(ldd "$mt/manythreads" | awk '/libc.so/ {print $3}')
for f in "$mt/manythreads" "$libc"; do
	"$tmp/bin/dump_syms" "$f" >"$mt/x.sym"
	read -r _ _ _ id name <"$mt/x.sym"
	mkdir -p "$mt/syms/$name/$id"
	mv "$mt/x.sym" "$mt/syms/$name/$id/$name.sym"
done

c=$corpus
# name|dump|symbol paths
walks=(
	"perf-bigsym (65 MB .sym)|$c/generated/deep_chain-x64-O2/crash.dmp|$c/perf/big-symbols $c/generated/syslib-symbols"
	"win stack_exhaustion (1 MB, Windows)|$c/breakpad/processor/stack_exhaustion.dmp|$c/breakpad/processor/symbols"
	"linux threads-x64-O2 (6 threads)|$c/generated/threads-x64-O2/crash.dmp|$c/generated/threads-x64-O2/symbols $c/generated/syslib-symbols"
	"linux manythreads (401 threads, 2.4 MB)|$mt/mt.dmp|$mt/syms"
)
dumps=(
	"mt.dmp (401 threads)|$mt/mt.dmp"
	"stack_exhaustion.dmp|$c/breakpad/processor/stack_exhaustion.dmp"
	"minidump_crashpad_annotation.dmp|$c/breakpad/processor/minidump_crashpad_annotation.dmp"
	"hostile 200000 threads (9.2 MB)|$c/hostile/dump-200000-threads-one-context.dmp"
)

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc))"

# rss CMD...: "user s | peak RSS MiB", the median of 3 runs.
rss() {
	for _ in 1 2 3; do
		/usr/bin/time -f "%U %M" -o "$tmp/time.txt" "$@" >/dev/null 2>&1 || true
		tail -n 1 "$tmp/time.txt" # after "Command exited with non-zero status N"
	done | sort -n -k2 | sed -n 2p | awk '{printf "%.2f s | %.1f MiB", $1, $2/1024}'
}

table() { # title, then lines "name|bp command|ours command"
	local title=$1
	shift
	echo
	echo "### $title"
	echo
	echo "| case | tool | wall mean ± σ | min | max | user (median of 3) | peak RSS (median of 3) |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for line in "$@"; do
		IFS='|' read -r name bcmd ocmd <<<"$line"
		hyperfine -N -i --warmup 1 --runs "$runs" --export-json "$tmp/h.json" -n breakpad "$bcmd" -n ours "$ocmd" >/dev/null 2>&1 ||
			hyperfine -i --warmup 1 --runs "$runs" --export-json "$tmp/h.json" -n breakpad "$bcmd" -n ours "$ocmd" >/dev/null
		for who in breakpad ours; do
			cmd=$bcmd
			[ "$who" = ours ] && cmd=$ocmd
			# shellcheck disable=SC2086
			r=$(rss $cmd)
			python3 - "$tmp/h.json" "$who" "$name" "$r" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
r = next(x for x in h["results"] if x["command"] == sys.argv[2])
print(f"| {sys.argv[3]} | {sys.argv[2]} | {r['mean']*1000:.0f} ± {r['stddev']*1000:.0f} ms | {r['min']*1000:.0f} ms | {r['max']*1000:.0f} ms | {sys.argv[4]} |")
PY
		done
	done
}

lines=()
for w in "${walks[@]}"; do
	IFS='|' read -r name dump syms <<<"$w"
	lines+=("$name, -m|$bp -m $dump $syms|$ours -m $dump $syms")
done
lines+=("linux manythreads, human|$bp $mt/mt.dmp $mt/syms|$ours $mt/mt.dmp $mt/syms")
# Start-up alone: Breakpad's usage text (-h, exit 0), our --version.
lines+=("start-up (Breakpad -h, ours --version)|$bp -h|$ours --version")
table "minidump_stackwalk" "${lines[@]}"

lines=()
for d in "${dumps[@]}"; do
	IFS='|' read -r name dump <<<"$d"
	lines+=("$name|$bpdump $dump|$oursdump $dump")
done
table "minidump_dump" "${lines[@]}"

echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
