#!/bin/sh
# Regenerates the thread cases in this folder from threads.c: a crash (segv)
# and an abort (abort) in a second thread, a few frames below its start
# routine, while main waits in pthread_join; for x86-64 (a live capture by
# minidump_capture), i386 and arm64 (qemu-user cores converted by core2md),
# each at -O0, -O2 and -O2 -fomit-frame-pointer (O2nofp).
#
# Each case PROG-ARCH-OPT (PROG: the mode) holds crash.dmp, the program's
# Breakpad symbols (symbols/), truth.txt: gdb's backtrace of the crashing
# thread at the fatal signal (natively for x86-64, from qemu's core for the
# others), one frame a line: number, tab, function; and truth-main.txt: the
# main thread's backtrace from gdb's "thread apply all bt".
#
# The programs are linked statically so that the libc frames (raise, abort,
# pthread_join, start_thread, clone) come with the program's symbols; the
# .sym files keep only the records of the functions gdb's chains name and
# their neighbours (../../signal/trim.go).
#
# Needs gcc, gcc-12-aarch64-linux-gnu with libc6-dev-arm64-cross,
# gcc-i686-linux-gnu, qemu-user, gdb and gdb-multiarch; run from anywhere,
# with Go on PATH. Tests need none of these.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/minidump_capture" ./cmd/minidump_capture
go build -o "$work/core2md" ./cmd/core2md
go build -o "$work/dump_syms" ./cmd/dump_syms
cd "$work"
run() { env -i PATH=/usr/bin:/bin "$@"; }

# gdb's backtraces as "N<TAB>function" lines.
bt2truth() {
	sed -n 's/^#\([0-9]*\)  *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\).*/\1\t\3/p' | awk '!seen[$1]++'
}
# mainbt: the block of "thread apply all bt" that holds main.
mainbt() {
	awk '/^Thread /{if (m) exit; buf=""; next} {buf = buf $0 "\n"} / in main \(|^#[0-9]+ +main \(/{m=1} END{if (m) printf "%s", buf}'
}
gdbflags="-batch -nx -ex 'set pagination off' -ex 'set backtrace past-main on'"

# syms CASE BINARY: symbols for the case, trimmed to the truths' functions.
syms() {
	./dump_syms "$2" >"$2.sym"
	id=$(head -1 "$2.sym" | cut -d' ' -f4)
	name=$(head -1 "$2.sym" | cut -d' ' -f5)
	rm -rf "$here/$1/symbols"
	mkdir -p "$here/$1/symbols/$name/$id"
	keep=$(cat "$here/$1"/truth*.txt | cut -f2 | grep -v '^<' | tr '\n' ' ')
	# The names dump_syms picks for aliases gdb names otherwise.
	keep="$keep gsignal __clone __clone3 ___pthread_join"
	go run "$root/testdata/signal/trim.go" "$2.sym" $keep >"$here/$1/symbols/$name/$id/$name.sym"
}

for o in O0 O2 O2nofp; do
	case $o in
	O0) opt=-O0 ;;
	O2) opt=-O2 ;;
	O2nofp) opt="-O2 -fomit-frame-pointer" ;;
	esac
	cflags="$opt -g -static -fdebug-prefix-map=$work=. -fdebug-prefix-map=$here=."
	gcc $cflags -o threads-x64 "$here/threads.c"
	i686-linux-gnu-gcc $cflags -o threads-x86 "$here/threads.c"
	aarch64-linux-gnu-gcc-12 $cflags -o threads-arm64 "$here/threads.c"
	for m in segv abort; do
		c=$m-x64-$o
		rm -rf "$here/$c" out && mkdir -p "$here/$c" out
		eval gdb $gdbflags -ex "'run $m'" -ex bt -ex "'thread apply all bt'" ./threads-x64 >gdb.out 2>/dev/null
		sed -n '/^#0 /,/^$/p' gdb.out | sed '/^$/q' | bt2truth >"$here/$c/truth.txt"
		mainbt <gdb.out | bt2truth >"$here/$c/truth-main.txt"
		run ./minidump_capture -o out -- ./threads-x64 $m 2>/dev/null || true
		mv out/*.dmp "$here/$c/crash.dmp"
		syms $c threads-x64
		for a in x86 arm64; do
			c=$m-$a-$o
			rm -rf "$here/$c" qemu_*.core && mkdir -p "$here/$c"
			if [ $a = x86 ]; then
				set -- qemu-i386
			else
				set -- qemu-aarch64 -cpu cortex-a57
			fi
			(ulimit -c unlimited; run "$@" ./threads-$a $m) >/dev/null 2>&1 || true
			core=$(ls qemu_*.core)
			eval gdb-multiarch $gdbflags -ex bt -ex "'thread apply all bt'" ./threads-$a "$core" >gdb.out 2>/dev/null
			sed -n '/^#0 /,/^$/p' gdb.out | sed '/^$/q' | bt2truth >"$here/$c/truth.txt"
			mainbt <gdb.out | bt2truth >"$here/$c/truth-main.txt"
			./core2md --no-host-info -o "$here/$c/crash.dmp" "$core" threads-$a
			rm -f "$core" core core.*
			syms $c threads-$a
		done
	done
done
