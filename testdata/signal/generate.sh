#!/bin/sh
# Regenerates the signal-frame cases in this folder from sigcrash.c: a crash
# inside a signal handler, for x86-64 (a live capture by minidump_capture),
# i386 and arm64 (qemu-user cores converted by core2md), each in two modes
# (see sigcrash.c): CPU-abort and CPU-segv; x86-native-abort is the i386
# program run natively, dumped from the kernel's core (the vDSO on the chain).
#
# Each case holds crash.dmp, the program's Breakpad symbols (symbols/), and
# truth.txt: gdb's backtrace at the fatal signal of the same kind of run
# (natively for x86-64, through qemu's gdb stub for the others), one frame
# a line: number, tab, function ("<signal handler called>" for the kernel's
# signal frame).
#
# The programs are linked statically so that the symbols of the libc frames
# on the chain (raise, abort, the trampolines) come with the program's; the
# .sym files keep only the records of the functions gdb's chain names and
# their neighbours (trim.go), to keep them small.
#
# Needs gcc, gcc-12-aarch64-linux-gnu with libc6-dev-arm64-cross,
# gcc-i686-linux-gnu, qemu-user, gdb and gdb-multiarch; run from anywhere,
# with Go on PATH. Tests need none of these.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/minidump_capture" ./cmd/minidump_capture
go build -o "$work/core2md" ./cmd/core2md
go build -o "$work/dump_syms" ./cmd/dump_syms
cd "$work"
cflags="-O1 -g -static -fdebug-prefix-map=$work=. -fdebug-prefix-map=$here=."
gcc $cflags -o sigcrash-x64 "$here/sigcrash.c"
i686-linux-gnu-gcc $cflags -o sigcrash-x86 "$here/sigcrash.c"
aarch64-linux-gnu-gcc-12 $cflags -o sigcrash-arm64 "$here/sigcrash.c"
run() { env -i PATH=/usr/bin:/bin "$@"; }

# gdb's backtrace as "N<TAB>function" lines.
bt2truth() {
	sed -n 's/^#\([0-9]*\)  *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\).*/\1\t\3/p' |
		sed 's/\t<signal$/\t<signal handler called>/' | awk '!seen[$1]++'
}
gdbflags="-batch -nx -ex 'set pagination off' -ex 'set backtrace past-main on'"
truth_native() { # BINARY MODE
	eval gdb $gdbflags -ex "'run $2'" -ex continue -ex bt "./$1" 2>/dev/null | bt2truth
}
truth_stub() { # BINARY MODE QEMU...: through qemu's gdb stub
	b=$1 m=$2
	shift 2
	port=$((20000 + $$ % 10000))
	run "$@" -g "$port" "./$b" "$m" >/dev/null 2>&1 &
	sleep 1
	eval gdb-multiarch $gdbflags -ex "'target remote :$port'" -ex continue -ex continue -ex bt "./$b" 2>/dev/null | bt2truth
	wait $! 2>/dev/null || true
}
truth_core() { # BINARY CORE
	eval gdb-multiarch $gdbflags -ex bt "./$1" "$2" 2>/dev/null | bt2truth
}

# case CASE BINARY: symbols for the case, trimmed to the truth's functions.
syms() {
	mkdir -p "$here/$1"
	./dump_syms "$2" >"$2.sym"
	id=$(head -1 "$2.sym" | cut -d' ' -f4)
	name=$(head -1 "$2.sym" | cut -d' ' -f5)
	rm -rf "$here/$1/symbols"
	mkdir -p "$here/$1/symbols/$name/$id"
	keep=$(cut -f2 "$here/$1/truth.txt" | grep -v '^<' | tr '\n' ' ')
	# The trampolines and their neighbours, whose ranges gdb does not name.
	keep="$keep gsignal __restore_rt __restore sigaction __sigaction __libc_sigaction _dl_sysinfo_int80 __kernel_vsyscall"
	go run "$here/trim.go" "$2.sym" $keep >"$here/$1/symbols/$name/$id/$name.sym"
}

for m in abort segv; do
	c=x64-$m
	rm -rf "$here/$c" out && mkdir -p "$here/$c" out
	truth_native sigcrash-x64 $m >"$here/$c/truth.txt"
	run ./minidump_capture -o out -- ./sigcrash-x64 $m 2>/dev/null || true
	mv out/*.dmp "$here/$c/crash.dmp"
	syms $c sigcrash-x64

	# i386: gdb reads qemu's core (its stub reports the wrong signal
	# frame for static programs); arm64: gdb runs the program through
	# qemu's stub, on a CPU without SVE (gdb 13 rejects the SVE record of
	# qemu's signal frames, in cores too).
	for a in x86 arm64; do
		c=$a-$m
		rm -rf "$here/$c" qemu_*.core && mkdir -p "$here/$c"
		if [ $a = x86 ]; then
			set -- qemu-i386
		else
			set -- qemu-aarch64 -cpu cortex-a57
			truth_stub sigcrash-$a $m "$@" >"$here/$c/truth.txt"
		fi
		(ulimit -c unlimited; run "$@" ./sigcrash-$a $m) >/dev/null 2>&1 || true
		core=$(ls qemu_*.core)
		[ $a = x86 ] && truth_core sigcrash-$a "$core" >"$here/$c/truth.txt"
		./core2md --no-host-info -o "$here/$c/crash.dmp" "$core" sigcrash-$a
		rm -f "$core"
		syms $c sigcrash-$a
	done
done

# i386 natively, through the kernel's core (core_pattern "core", the
# default): glibc's raise enters the kernel through the vDSO's
# __kernel_vsyscall and the handler returns into its __kernel_sigreturn;
# core2md saves the vDSO whole, and the walker reads its symbols and CFI.
c=x86-native-abort
rm -rf "$here/$c" core core.* && mkdir -p "$here/$c"
(ulimit -c unlimited; run ./sigcrash-x86 abort) >/dev/null 2>&1 || true
core=$(ls core core.* 2>/dev/null | head -1)
truth_core sigcrash-x86 "$core" >"$here/$c/truth.txt"
./core2md --no-host-info -o "$here/$c/crash.dmp" "$core" sigcrash-x86
rm -f "$core"
syms $c sigcrash-x86
