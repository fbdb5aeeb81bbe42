#!/bin/bash
# bench.sh: Breakpad's minidump_stackwalk, minidump_dump and dump_syms
# against ours, side by side (docs/performance.md). Needs hyperfine,
# /usr/bin/time (GNU), gcc, g++, Breakpad's binaries (tools/breakpad/build.sh)
# and the shared corpus.
#
# Usage: tools/breakpad/bench.sh [RUNS]   (from the project root; RUNS: 10)
#   GOBREAKPAD_BREAKPAD_STACKWALK, GOBREAKPAD_BREAKPAD_DUMP,
#   GOBREAKPAD_BREAKPAD_DUMP_SYMS: Breakpad's binaries (default
#   /tmp/bpsrc/src/processor/... and /tmp/bpsrc/src/tools/linux/dump_syms/;
#   without dump_syms its table is left out)
#   BENCH_TMP: scratch folder (default /tmp/gobreakpad-bench)
#   BENCH_ONLY: a space-separated subset of the tables to print (stackwalk,
#   read, dump, dump_syms)
#
# Cases: the corpus's perf case (65 MB of symbols), its biggest Windows
# dump, its many-thread Linux dump, and a 401-thread Linux dump captured
# here with our minidump_capture from a small program (built and dumped
# again on every run, not committed); reading the perf case's 65 MB .sym
# (our symlookup of one address against wc -l, the speed of reading the
# file); dump_syms on Debian's libc with its debug file, on a large C++
# ELF with DWARF made by tools/breakpad/bigelf.sh and on Go's compiler
# built with uncompressed DWARF (both built once into BENCH_TMP). Prints
# markdown tables: hyperfine's median, mean ± σ, min and max wall times,
# then user+system time and peak RSS as the median of 5 runs of
# /usr/bin/time, and on each "ours" row the ratios to the row above (its
# median wall time over ours, our peak RSS over its). A last row times
# start-up alone. Runs that exit non-zero (the hostile dump, refused by
# both) are timed all the same.
set -euo pipefail

runs=${1:-10}
root=$(pwd)
corpus=$root/../shared/corpus
bp=${GOBREAKPAD_BREAKPAD_STACKWALK:-/tmp/bpsrc/src/processor/minidump_stackwalk}
bpdump=${GOBREAKPAD_BREAKPAD_DUMP:-/tmp/bpsrc/src/processor/minidump_dump}
bpsyms=${GOBREAKPAD_BREAKPAD_DUMP_SYMS:-/tmp/bpsrc/src/tools/linux/dump_syms/dump_syms}
only=${BENCH_ONLY:-stackwalk read dump dump_syms}
want() { [[ " $only " == *" $1 "* ]]; }
tmp=${BENCH_TMP:-/tmp/gobreakpad-bench}
for f in "$bp" "$bpdump" "$corpus/cases.tsv"; do
	[ -e "$f" ] || { echo "bench.sh: $f not found" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "bench.sh: hyperfine not found (apt-get install -y hyperfine)" >&2; exit 1; }

mkdir -p "$tmp/bin" "$tmp/mt"
go build -o "$tmp/bin/" ./cmd/minidump_stackwalk ./cmd/minidump_dump ./cmd/minidump_capture ./cmd/dump_syms ./cmd/symlookup
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

# rss CMD...: "CPU s|peak RSS KiB": the medians of 5 runs of user+system
# time and of peak RSS.
rss() {
	for _ in 1 2 3 4 5; do
		/usr/bin/time -f "%U %S %M" -o "$tmp/time.txt" "$@" >/dev/null 2>&1 || true
		tail -n 1 "$tmp/time.txt" # after "Command exited with non-zero status N"
	done >"$tmp/rss.txt"
	cpu=$(awk '{print $1 + $2}' "$tmp/rss.txt" | sort -g | sed -n 3p)
	kib=$(awk '{print $3}' "$tmp/rss.txt" | sort -n | sed -n 3p)
	echo "$cpu|$kib"
}

table() { # title, then lines "name|left command|ours command[|left tool's name]"
	local title=$1
	shift
	echo
	echo "### $title"
	echo
	echo "| case | tool | wall median | mean ± σ | min | max | CPU (median of 5) | peak RSS (median of 5) | ours: speed-up, RSS ratio |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
	for line in "$@"; do
		IFS='|' read -r name bcmd ocmd bname <<<"$line"
		bname=${bname:-breakpad}
		hyperfine -N -i --warmup 1 --runs "$runs" --export-json "$tmp/h.json" -n "$bname" "$bcmd" -n ours "$ocmd" >/dev/null 2>&1 ||
			hyperfine -i --warmup 1 --runs "$runs" --export-json "$tmp/h.json" -n "$bname" "$bcmd" -n ours "$ocmd" >/dev/null
		# shellcheck disable=SC2086
		rb=$(rss $bcmd)
		# shellcheck disable=SC2086
		ro=$(rss $ocmd)
		python3 - "$tmp/h.json" "$bname" "$name" "$rb" "$ro" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
left, name = sys.argv[2], sys.argv[3]
rs = {left: sys.argv[4].split("|"), "ours": sys.argv[5].split("|")}
res = {x["command"]: x for x in h["results"]}
for who in (left, "ours"):
    r = res[who]
    cpu, kib = rs[who]
    extra = ""
    if who == "ours":
        b = res[left]
        extra = f"{b['median'] / r['median']:.1f}×, {int(kib) / int(rs[left][1]):.2f}"
    print(f"| {name} | {who} | {r['median']*1000:.1f} ms | {r['mean']*1000:.1f} ± {r['stddev']*1000:.1f} ms "
          f"| {r['min']*1000:.1f} ms | {r['max']*1000:.1f} ms | {float(cpu)*1000:.0f} ms | {int(kib)/1024:.1f} MiB | {extra} |")
PY
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
want stackwalk && table "minidump_stackwalk" "${lines[@]}"

# Reading a .sym to the point of answering lookups, against the speed the
# machine reads the file (wc -l on the page-cached file).
bigsym=$c/perf/big-symbols/deep_chain/A34CC23410BCE5A3F062F9443D3440C00/deep_chain.sym
want read && table "reading the 65 MB .sym" "symlookup of one address|wc -l $bigsym|$tmp/bin/symlookup $bigsym 0x1170|wc -l"

lines=()
for d in "${dumps[@]}"; do
	IFS='|' read -r name dump <<<"$d"
	lines+=("$name|$bpdump $dump|$oursdump $dump")
done
want dump && table "minidump_dump" "${lines[@]}"

if want dump_syms && [ -x "$bpsyms" ]; then
	tools/breakpad/bigelf.sh "$tmp/bigelf" >/dev/null
	# A large Go program with uncompressed DWARF (Breakpad reads no
	# compressed sections): the Go toolchain's compiler, built once.
	[ -f "$tmp/gocompile" ] || go build -ldflags=-compressdwarf=false -o "$tmp/gocompile" cmd/compile
	dl=$c/debian/libc
	lines=(
		"Debian libc.so.6 + debug file|$bpsyms $dl/libc.so.6 $dl/usr-lib-debug/.build-id/93|$tmp/bin/dump_syms $dl/libc.so.6 $dl/usr-lib-debug/.build-id/93"
		"bigelf.sh C++ ELF ($(($(stat -c %s "$tmp/bigelf") >> 20)) MiB)|$bpsyms $tmp/bigelf|$tmp/bin/dump_syms $tmp/bigelf"
		"Go's cmd/compile, DWARF uncompressed ($(($(stat -c %s "$tmp/gocompile") >> 20)) MiB)|$bpsyms $tmp/gocompile|$tmp/bin/dump_syms $tmp/gocompile"
	)
	table "dump_syms" "${lines[@]}"
fi

echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
