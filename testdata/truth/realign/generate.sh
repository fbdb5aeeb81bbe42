#!/bin/sh
# Regenerates the realigned-stack cases in this folder from realign.c (see
# its modes: over, drap, force), for x86-64 (a live capture by minidump_capture),
# i386 and arm64 (qemu-user cores converted by core2md), each at -O0, -O2
# and -O2 -fomit-frame-pointer (O2nofp).
#
# Each case MODE-ARCH-OPT holds crash.dmp, the program's Breakpad symbols
# (symbols/) and truth.txt: gdb's backtrace at the fatal signal (natively
# for x86-64, from qemu's core for the others), one frame a line: number,
# tab, function.
#
# The programs are linked statically, like the other truth groups; the .sym
# files keep only the records of the functions gdb's chain names
# (testdata/truth/lib.sh).
#
# Needs gcc, gcc-12-aarch64-linux-gnu, gcc-i686-linux-gnu, qemu-user, gdb,
# gdb-multiarch and python3; run from anywhere, with Go on PATH. Tests need
# none of these.
here=$(cd "$(dirname "$0")" && pwd)
prog=realign
src=$here/realign.c
modes="over drap force"
. "$here/../lib.sh"

truth_cmds() { "$@" bt; }
truth() { bt2truth_cxx >"$here/$1/truth.txt"; }
syms() { syms_match "$1" "$2"; }
each_case
