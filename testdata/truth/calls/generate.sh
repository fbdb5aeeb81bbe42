#!/bin/sh
# Regenerates the call cases in this folder from calls.c: for each mode of
# calls.c (null, data, unmapped, tail, recurse, abort), each CPU (x64: a
# live capture by minidump_capture; x86 and arm64: qemu-user cores converted
# by core2md) and each optimisation level, a case MODE-ARCH-OPT/ with
# crash.dmp, the program's Breakpad symbols (symbols/) and truth.txt, gdb's
# backtrace at the fatal signal, one frame a line: number, tab, function.
#
# OPT: O0 (-O0), O2 (-O2 -fno-omit-frame-pointer: the frame pointer kept,
# so that the two -O2 levels differ on every CPU) and O2nofp (-O2
# -fomit-frame-pointer).
#
# info.txt, when present, says truth_tailcall_frames=N...: the frames gdb
# shows as tail call frames (gdb.TAILCALL_FRAME), which it makes from the
# DWARF call-site records (DW_TAG_call_site) of the functions that jumped
# to their callee: nothing on the stack, in the registers or in a Breakpad
# symbol file records them.
#
# In mode data, gdb names the pc in data_buf by the data object's minimal
# symbol; frame 0 is written "??" (no function is there).
#
# The truth is gdb's natively for x86-64, from qemu's core for i386 and
# through qemu's gdb stub for arm64 (on a CPU without SVE, as
# testdata/signal/generate.sh does).
#
# The programs are linked statically (libc's abort and raise on the chain
# come with the program's symbols); the .sym files keep only the records of
# the functions the truth names and their neighbours (testdata/truth/lib.sh).
#
# Needs gcc, gcc-12-aarch64-linux-gnu with libc6-dev-arm64-cross,
# gcc-i686-linux-gnu, qemu-user, gdb and gdb-multiarch (with Python); run
# from anywhere, with Go on PATH. Tests need none of these.
here=$(cd "$(dirname "$0")" && pwd)
prog=calls
src=$here/calls.c
modes="null data unmapped tail recurse abort"
O2flags="-O2 -fno-omit-frame-pointer"
stub_arches=arm64
. "$here/../lib.sh"

# gdb's chain: "TRUTH<TAB>N<TAB>name<TAB>tail" lines (tail for a tail call frame).
cat >truth.py <<'EOF'
import gdb
f, i = gdb.newest_frame(), 0
while f is not None:
    t = "tail" if f.type() == gdb.TAILCALL_FRAME else ""
    print("TRUTH\t%d\t%s\t%s" % (i, f.name() or "??", t))
    f, i = f.older(), i + 1
EOF
truth_cmds() { "$@" "source truth.py"; }
# truth CASE MODE: truth.txt and info.txt from gdb's output on stdin.
truth() {
	grep '^TRUTH' | cut -f2- >chain.txt
	cut -f1,2 chain.txt >"$here/$1/truth.txt"
	if [ "$2" = data ]; then
		sed -i '1s/\t.*/\t??/' "$here/$1/truth.txt"
	fi
	tails=$(awk -F'\t' '$3 == "tail" { printf "%s%s", s, $1; s = " " }' chain.txt)
	rm -f "$here/$1/info.txt"
	if [ -n "$tails" ]; then
		echo "truth_tailcall_frames=$tails" >"$here/$1/info.txt"
	fi
}
# syms CASE BINARY: symbols trimmed to the truth's functions and those the
# walk passes through or near, gdb names them or not.
syms() {
	syms_trim "$1" "$2" $(truth_names "$here/$1/truth.txt") call_through run main \
		__pthread_kill_implementation pthread_kill gsignal _dl_sysinfo_int80 __kernel_vsyscall
}
each_case
