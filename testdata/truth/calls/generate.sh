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
# the functions the truth names and their neighbours (testdata/signal/trim.go).
#
# Needs gcc, gcc-12-aarch64-linux-gnu with libc6-dev-arm64-cross,
# gcc-i686-linux-gnu, qemu-user, gdb and gdb-multiarch (with Python); run
# from anywhere, with Go on PATH. Tests need none of these.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
trim=$root/testdata/signal/trim.go
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/minidump_capture" ./cmd/minidump_capture
go build -o "$work/core2md" ./cmd/core2md
go build -o "$work/dump_syms" ./cmd/dump_syms
cd "$work"
run() { env -i PATH=/usr/bin:/bin "$@"; }

# gdb's chain: "TRUTH<TAB>N<TAB>name<TAB>tail" lines (tail for a tail call frame).
cat >truth.py <<'EOF'
import gdb
f, i = gdb.newest_frame(), 0
while f is not None:
    t = "tail" if f.type() == gdb.TAILCALL_FRAME else ""
    print("TRUTH\t%d\t%s\t%s" % (i, f.name() or "??", t))
    f, i = f.older(), i + 1
EOF
gdbflags="-batch -nx -ex 'set pagination off' -ex 'set backtrace past-main on'"
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

# syms CASE BINARY: symbols for the case, trimmed to the truth's functions.
syms() {
	./dump_syms "$2" >"$2.sym"
	id=$(head -1 "$2.sym" | cut -d' ' -f4)
	name=$(head -1 "$2.sym" | cut -d' ' -f5)
	mkdir -p "$here/$1/symbols/$name/$id"
	keep=$(cut -f2 "$here/$1/truth.txt" | grep -v '^?' | sort -u | tr '\n' ' ')
	# The functions the walk passes through or near, gdb names or not.
	keep="$keep call_through run main __pthread_kill_implementation pthread_kill gsignal _dl_sysinfo_int80 __kernel_vsyscall"
	go run "$trim" "$2.sym" $keep >"$here/$1/symbols/$name/$id/$name.sym"
}

modes="null data unmapped tail recurse abort"
for o in O0 O2 O2nofp; do
	case $o in
	O0) opt=-O0 ;;
	O2) opt="-O2 -fno-omit-frame-pointer" ;;
	O2nofp) opt="-O2 -fomit-frame-pointer" ;;
	esac
	cflags="$opt -g -static -fdebug-prefix-map=$work=. -fdebug-prefix-map=$here=."
	gcc $cflags -o calls-x64 "$here/calls.c"
	i686-linux-gnu-gcc $cflags -o calls-x86 "$here/calls.c"
	aarch64-linux-gnu-gcc-12 $cflags -o calls-arm64 "$here/calls.c"
	for m in $modes; do
		c=$m-x64-$o
		rm -rf "$here/$c" out && mkdir -p "$here/$c" out
		eval gdb $gdbflags -ex "'run $m'" -ex "'source truth.py'" ./calls-x64 2>/dev/null | truth $c $m
		run ./minidump_capture -o out -- ./calls-x64 $m 2>/dev/null || true
		mv out/*.dmp "$here/$c/crash.dmp"
		syms $c calls-x64

		for a in x86 arm64; do
			c=$m-$a-$o
			rm -rf "$here/$c" qemu_*.core && mkdir -p "$here/$c"
			if [ $a = x86 ]; then
				set -- qemu-i386
			else
				set -- qemu-aarch64 -cpu cortex-a57
				port=$((20000 + $$ % 10000))
				run "$@" -g $port ./calls-$a $m >/dev/null 2>&1 &
				sleep 1
				eval gdb-multiarch $gdbflags -ex "'target remote :$port'" -ex continue -ex "'source truth.py'" ./calls-$a 2>/dev/null | truth $c $m
				wait $! 2>/dev/null || true
			fi
			(ulimit -c unlimited; run "$@" ./calls-$a $m) >/dev/null 2>&1 || true
			core=$(ls qemu_*.core)
			if [ $a = x86 ]; then
				eval gdb-multiarch $gdbflags -ex "'source truth.py'" ./calls-$a "$core" 2>/dev/null | truth $c $m
			fi
			./core2md --no-host-info -o "$here/$c/crash.dmp" "$core" calls-$a
			rm -f "$core"
			syms $c calls-$a
		done
	done
done
