#!/bin/sh
# Regenerates the C++ exception cases in this folder from cxx.cc (see its
# modes: throw, catch, dtor, noexcept), for x86-64 (a live capture by
# minidump_capture), i386 and arm64 (qemu-user cores converted by core2md),
# each at -O0, -O2 and -O2 -fomit-frame-pointer (O2nofp).
#
# Each case MODE-ARCH-OPT holds crash.dmp, the program's Breakpad symbols
# (symbols/) and truth.txt: gdb's backtrace at the fatal signal (natively
# for x86-64, from qemu's core for the others), one frame a line: number,
# tab, function (C++ names as gdb prints them, parameter lists included for
# functions without debug information).
#
# The programs are linked statically so that libstdc++'s and libgcc's
# frames (__cxa_throw, std::terminate, the unwinder) come with the
# program's symbols; the .sym files keep only the records of the functions
# gdb's chain names (testdata/truth/lib.sh).
#
# Needs g++, g++-12-aarch64-linux-gnu, g++-i686-linux-gnu, qemu-user, gdb,
# gdb-multiarch and python3; run from anywhere, with Go on PATH. Tests
# need none of these.
here=$(cd "$(dirname "$0")" && pwd)
prog=cxx
src=$here/cxx.cc
modes="throw catch dtor noexcept"
cc_x64=g++
cc_x86=i686-linux-gnu-g++
cc_arm64=aarch64-linux-gnu-g++-12
. "$here/../lib.sh"

truth_cmds() { "$@" bt; }
truth() { bt2truth_cxx >"$here/$1/truth.txt"; }
syms() { syms_match "$1" "$2"; }
each_case
