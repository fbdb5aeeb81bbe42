#!/bin/sh
# Regenerates the signal-frame cases in this folder from sigcrash.c: a crash
# inside a signal handler, for x86-64 (a live capture by minidump_capture),
# i386 and arm64 (qemu-user cores converted by core2md), each in two modes
# (see sigcrash.c): CPU-abort and CPU-segv; x86-native-abort is the i386
# program run natively, dumped from the kernel's core (the vDSO on the chain).
#
# The cases named *-nocode are dumps of the kind Breakpad's client writes:
# written with --breakpad-memory (the stacks and 256 bytes around the
# crash's pc: no vDSO image, no one-page code mapping, no code around the
# stack's return addresses), with symbols that do not name the
# trampolines (as those of a stripped libc, whose __restore_rt is a local
# symbol), so that the walker finds the signal frame from the stack alone:
# x86-64 (glibc's __restore_rt), i386 under qemu (glibc's __restore and
# __restore_rt), i386 natively (the vDSO's __kernel_sigreturn and
# __kernel_rt_sigreturn, the vDSO having no symbols), arm64 under qemu
# (qemu's trampoline page, no module) and 32-bit arm under qemu (glibc's
# __default_rt_sa_restorer; segv only). segvold is the old-style
# frame with the crash in the handler (natively, frame 0 of abort is in the
# vDSO, which such a dump cannot name).
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
# gcc-arm-linux-gnueabihf with libc6-dev-armhf-cross,
# gcc-i686-linux-gnu, qemu-user, gdb and gdb-multiarch; run from anywhere,
# with Go on PATH. Tests need none of these.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../truth/lib.sh"
compile sigcrash "$here/sigcrash.c" -O1

# syms CASE BINARY: symbols trimmed to the truth's functions, the
# trampolines and their neighbours, whose ranges gdb does not name.
syms() {
	syms_trim "$1" "$2" $(truth_names "$here/$1/truth.txt") gsignal __restore_rt __restore \
		sigaction __sigaction __libc_sigaction _dl_sysinfo_int80 __kernel_vsyscall
}

# syms_nocode CASE BINARY: syms without any record naming a trampoline.
syms_nocode() {
	syms_trim "$1" "$2" $(truth_names "$here/$1/truth.txt") gsignal \
		sigaction __sigaction __libc_sigaction _dl_sysinfo_int80 __kernel_vsyscall
	grep -Ev ' (__restore|__restore_rt|__kernel_sigreturn|__kernel_rt_sigreturn|__default_sa_restorer|__default_rt_sa_restorer)$' "$symfile" >"$symfile.tmp"
	mv "$symfile.tmp" "$symfile"
}

# nocode_case CASE ARCH BINARY MODE: the *-nocode case (truth as above).
nocode_case() {
	local c=$1 a=$2 b=$3 m=$4 core
	newcase $c
	case $a in
	x64)
		gdb_native $b $m continue bt | bt2truth >"$here/$c/truth.txt"
		rm -rf out && mkdir out
		run ./minidump_capture --breakpad-memory -o out -- "./$b" $m >/dev/null 2>&1 || true
		mv out/*.dmp "$here/$c/crash.dmp"
		;;
	x86-native)
		(ulimit -c unlimited; run ./$b $m) >/dev/null 2>&1 || true
		core=$(ls core core.* 2>/dev/null | head -1)
		gdb_core $b "$core" bt | bt2truth >"$here/$c/truth.txt"
		./core2md --no-host-info --breakpad-memory -o "$here/$c/crash.dmp" "$core" $b
		rm -f "$core"
		;;
	*)
		if [ $a = arm64 ]; then
			gdb_stub $a $b $m continue bt | bt2truth >"$here/$c/truth.txt"
		fi
		core=$(qemu_core $a $b $m)
		if [ $a = x86 ] || [ $a = arm ]; then
			gdb_core $b "$core" bt | bt2truth >"$here/$c/truth.txt"
		fi
		./core2md --no-host-info --breakpad-memory -o "$here/$c/crash.dmp" "$core" $b
		rm -f "$core"
		;;
	esac
	syms_nocode $c $b
}

# generate.sh nocode [ARCH...] makes only the *-nocode cases (of the
# ARCHs among arm x64 x86 arm64 x86-native; all by default). The others
# were made before sigcrash.c had its segvold mode; a whole run remakes
# them too.
# 32-bit arm (qemu-arm, truth from its core; glibc's
# __default_rt_sa_restorer): only arm-segv-nocode.
cc_arm=${cc_arm:-arm-linux-gnueabihf-gcc}
qemu_arm=qemu-arm
$cc_arm -O1 -g -static -fdebug-prefix-map="$work=." -fdebug-prefix-map="$here=." -o sigcrash-arm "$here/sigcrash.c"

nocode_cases() {
	local m a
	for m in abort segv segvold; do
		for a in ${arches:-arm x64 x86 arm64 x86-native}; do
			# gdb shows "??" past qemu-arm's old-style frames
			# (signal(): abort, segvold): no truth there.
			if [ $a = arm ] && [ $m != segv ]; then
				continue
			fi
			nocode_case $a-$m-nocode $a sigcrash-${a%-native} $m
		done
	done
}
if [ "${1:-}" = nocode ]; then
	shift
	arches=$*
	nocode_cases
	exit 0
fi

for m in abort segv; do
	c=x64-$m
	newcase $c
	gdb_native sigcrash-x64 $m continue bt | bt2truth >"$here/$c/truth.txt"
	capture $c sigcrash-x64 $m
	syms $c sigcrash-x64

	# i386: gdb reads qemu's core (its stub reports the wrong signal
	# frame for static programs); arm64: gdb runs the program through
	# qemu's stub (lib.sh: on a CPU without SVE).
	for a in x86 arm64; do
		c=$a-$m
		newcase $c
		if [ $a = arm64 ]; then
			gdb_stub $a sigcrash-$a $m continue bt | bt2truth >"$here/$c/truth.txt"
		fi
		core=$(qemu_core $a sigcrash-$a $m)
		if [ $a = x86 ]; then
			gdb_core sigcrash-$a "$core" bt | bt2truth >"$here/$c/truth.txt"
		fi
		core2md $c "$core" sigcrash-$a
		syms $c sigcrash-$a
	done
done

# i386 natively, through the kernel's core (core_pattern "core", the
# default): glibc's raise enters the kernel through the vDSO's
# __kernel_vsyscall and the handler returns into its __kernel_sigreturn;
# core2md saves the vDSO whole, and the walker reads its symbols and CFI.
c=x86-native-abort
newcase $c
(ulimit -c unlimited; run ./sigcrash-x86 abort) >/dev/null 2>&1 || true
core=$(ls core core.* 2>/dev/null | head -1)
gdb_core sigcrash-x86 "$core" bt | bt2truth >"$here/$c/truth.txt"
core2md $c "$core" sigcrash-x86
syms $c sigcrash-x86

nocode_cases
