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
# their neighbours (testdata/truth/lib.sh).
#
# Needs gcc, gcc-12-aarch64-linux-gnu with libc6-dev-arm64-cross,
# gcc-i686-linux-gnu, qemu-user, gdb and gdb-multiarch; run from anywhere,
# with Go on PATH. Tests need none of these.
here=$(cd "$(dirname "$0")" && pwd)
prog=threads
src=$here/threads.c
modes="segv abort"
. "$here/../lib.sh"

# mainbt: the block of "thread apply all bt" that holds main.
mainbt() {
	awk '/^Thread /{if (m) exit; buf=""; next} {buf = buf $0 "\n"} / in main \(|^#[0-9]+ +main \(/{m=1} END{if (m) printf "%s", buf}'
}
truth_cmds() { "$@" bt "thread apply all bt"; }
truth() { # CASE MODE: truth.txt, the crashing thread's; truth-main.txt, main's
	cat >gdb.out
	sed -n '/^#0 /,/^$/p' gdb.out | sed '/^$/q' | bt2truth >"$here/$1/truth.txt"
	mainbt <gdb.out | bt2truth >"$here/$1/truth-main.txt"
}
# syms CASE BINARY: symbols trimmed to the truths' functions and the names
# dump_syms picks for aliases gdb names otherwise.
syms() {
	syms_trim "$1" "$2" $(truth_names "$here/$1"/truth*.txt) gsignal __clone __clone3 ___pthread_join
}
each_case
