#!/bin/sh
# Regenerates the captured test cases in this folder from crasher.c:
#
#   x64-segv       a live capture by minidump_capture of crasher segv (x86-64)
#   x64-threads    a live capture of crasher threads: the crash is in a worker thread
#   x64-core-abort a kernel core of crasher abort, converted by core2md
#   x86-core-segv  a qemu-i386 core of crasher segv (32-bit x86), converted by core2md
#   x86-threads    a live capture of the 32-bit crasher threads on an x86-64 host, with
#                  gdb's truth of the same run (truth.txt, regs.txt; needs gdb and setarch)
#   arm64-core-segv a qemu-aarch64 core of crasher segv, converted by core2md
#
# Each case holds crash.dmp, the program's Breakpad symbols (symbols/), and
# info.txt: the facts the tests check (signal, code, thread count, CPU, exit
# status, and the true call chain of the crashing thread, innermost first).
# Needs gcc, gcc-multilib (or gcc-i686-linux-gnu), gcc-12-aarch64-linux-gnu
# (with libc6-dev-arm64-cross) and qemu-user; run from anywhere, with Go on
# PATH. With case names as arguments, only those cases are made again.
cases="$*"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../truth/lib.sh"
# Map the build folders away so that the build IDs do not change from run to run.
cflags="-O1 -g -pthread -fdebug-prefix-map=$work=. -fdebug-prefix-map=$root=."
gcc $cflags -o crasher-x64 "$here/crasher.c"
# 32-bit x86: gcc -m32 with multilib, else Debian's cross compiler.
gcc -m32 $cflags -o crasher-x86 "$here/crasher.c" 2>/dev/null ||
	i686-linux-gnu-gcc $cflags -o crasher-x86 "$here/crasher.c"
aarch64-linux-gnu-gcc-12 $cflags -o crasher-arm64 "$here/crasher.c"
syms() { syms_full "$@"; } # CASE BINARY: the whole .sym (dynamic programs: small)
info() { # CASE SIGNAL CODE THREADS CPU STATUS CHAIN...
	c=$1 sig=$2 code=$3 threads=$4 cpu=$5 status=$6
	shift 6
	printf 'signal=%s\ncode=%s\nthreads=%s\ncpu=%s\nexit_status=%s\nchain=%s\n' "$sig" "$code" "$threads" "$cpu" "$status" "$*" >"$here/$c/info.txt"
}
want() { # CASE: is CASE to be made (all are without arguments)?
	[ -z "$cases" ] && return 0
	case " $cases " in *" $1 "*) return 0 ;; esac
	return 1
}
livecapture() { # CASE MODE [BINARY]: the exit status
	rm -rf "$here/$1" out && mkdir -p "$here/$1" out
	status=0
	run ./minidump_capture -o out -- "./${3:-crasher-x64}" "$2" 2>/dev/null || status=$?
	mv out/*.dmp "$here/$1/crash.dmp"
	syms "$1" "${3:-crasher-x64}"
	echo "$status"
}
if want x64-segv; then
	st=$(livecapture x64-segv segv)
	info x64-segv 11 1 1 amd64 "$st" crash_here level3 level2 level1 main
fi
if want x64-threads; then
	st=$(livecapture x64-threads threads)
	info x64-threads 11 1 5 amd64 "$st" crash_here level3 level2 level1 crasher_thread
fi
# gdbtruth CASE BINARY MODE: gdb's view of BINARY MODE at its fatal signal, run as
# capture runs it (same argv and environment, no address randomization):
# truth.txt, the crashing thread's backtrace as the corpus's truth.txt files
# (frame, function, file:line; "??" where gdb cannot name it), and regs.txt, the
# registers of every thread, one line per thread, the crashing thread first.
gdbtruth() {
	run gdb -q -batch -nx -ex "set startup-with-shell off" -ex "unset environment LINES" \
		-ex "unset environment COLUMNS" -ex run -ex "info registers" -ex bt \
		-ex "thread apply all info registers" --args "$2" "$3" >gdb.out 2>/dev/null
	sed -n 's/^#\([0-9]*\) .* in \([^ ]*\) .* at [^ ]*\/\([^/ ]*:[0-9]*\)$/\1	\2	\3/p;
		s/^#\([0-9]*\) *\([^ 0][^ ]*\) (.*) at [^ ]*\/\([^/ ]*:[0-9]*\)$/\1	\2	\3/p;
		s/^#\([0-9]*\) .* in ?? ().*$/\1	??	/p' gdb.out >"$here/$1/truth.txt"
	awk '/^(eax|ecx|edx|ebx|esp|ebp|esi|edi|eip|eflags|cs|ss|ds|es|fs|gs) / {
		line = line sep $1 "=" $2; sep = " "
		if ($1 == "gs") { print line; line = ""; sep = "" }
	}' gdb.out | awk '!seen[$0]++' >"$here/$1/regs.txt"
}
if want x86-threads; then
	# Without address randomization, as under gdb, and by its full path (gdb
	# runs programs by theirs), so that the stacks and regs.txt agree.
	rm -rf "$here/x86-threads" out && mkdir -p "$here/x86-threads" out
	st=0
	run setarch -R ./minidump_capture -o out -- "$work/crasher-x86" threads 2>/dev/null || st=$?
	mv out/*.dmp "$here/x86-threads/crash.dmp"
	syms x86-threads crasher-x86
	info x86-threads 11 1 5 x86 "$st" crash_here level3 level2 level1 crasher_thread
	gdbtruth x86-threads "$work/crasher-x86" threads
fi

qemucore() { # CASE QEMU BINARY
	rm -rf "$here/$1" qemu_*.core && mkdir -p "$here/$1"
	(ulimit -c unlimited; run "$2" -L "$3" "./$4" segv) 2>/dev/null || true
	rm -f core
	./core2md --no-host-info -o "$here/$1/crash.dmp" qemu_*.core "$4"
	syms "$1" "$4"
}
if want x86-core-segv; then
	qemucore x86-core-segv qemu-i386 / crasher-x86
	info x86-core-segv 11 0 1 x86 139 crash_here level3 level2 level1 main
fi
if want arm64-core-segv; then
	qemucore arm64-core-segv qemu-aarch64 /usr/aarch64-linux-gnu crasher-arm64
	info arm64-core-segv 11 0 1 arm64 139 crash_here level3 level2 level1 main
fi

# The kernel writes "core" here when core_pattern is "core" (the default).
if want x64-core-abort; then
	rm -rf "$here/x64-core-abort" core core.* && mkdir -p "$here/x64-core-abort"
	(ulimit -c unlimited; run ./crasher-x64 abort) 2>/dev/null || true
	corefile=$(ls core core.* 2>/dev/null | head -1)
	./core2md --no-host-info -o "$here/x64-core-abort/crash.dmp" "$corefile" crasher-x64
	syms x64-core-abort crasher-x64
	# abort() raises SIGABRT with tgkill: si_code SI_TKILL (-6).
	info x64-core-abort 6 -6 1 amd64 134 crash_here level3 level2 level1 main
fi
