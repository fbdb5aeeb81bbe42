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
# (../../signal/trim.go).
#
# Needs gcc, gcc-12-aarch64-linux-gnu, gcc-i686-linux-gnu, qemu-user, gdb,
# gdb-multiarch and python3; run from anywhere, with Go on PATH. Tests need
# none of these.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
prog=realign
src=$here/realign.c
modes="over drap force"
cc_x64=gcc
cc_x86=i686-linux-gnu-gcc
cc_arm64=aarch64-linux-gnu-gcc-12

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/minidump_capture" ./cmd/minidump_capture
go build -o "$work/core2md" ./cmd/core2md
go build -o "$work/dump_syms" ./cmd/dump_syms
cd "$work"
run() { env -i PATH=/usr/bin:/bin "$@"; }

# bt2truth: gdb's backtrace as "N<TAB>function" lines: the name without
# its argument list, source position or library.
bt2truth() {
	python3 -c '
import re, sys
seen = set()
for l in sys.stdin:
    m = re.match(r"#(\d+)\s+(?:0x[0-9a-f]+ in )?(.*)$", l.rstrip("\n"))
    if not m or m.group(1) in seen:
        continue
    seen.add(m.group(1))
    s = re.sub(r" (at|from) \S+$", "", m.group(2))
    if s.endswith(")"):
        d = 0
        for i in range(len(s) - 1, -1, -1):
            d += {")": 1, "(": -1}.get(s[i], 0)
            if d == 0:
                break
        if i > 0 and s[i - 1] == " ":
            s = s[:i - 1]
    print(m.group(1) + "\t" + s)
'
}
gdbflags="-batch -nx -ex 'set pagination off' -ex 'set backtrace past-main on'"

# syms CASE BINARY: symbols for the case, trimmed to the functions the
# truth names (matched without parameter lists, glibc's aliases included).
syms() {
	./dump_syms "$2" >"$2.sym"
	id=$(head -1 "$2.sym" | cut -d' ' -f4)
	name=$(head -1 "$2.sym" | cut -d' ' -f5)
	rm -rf "$here/$1/symbols"
	mkdir -p "$here/$1/symbols/$name/$id"
	go build -o trim "$root/testdata/signal/trim.go"
	python3 -c '
import subprocess, sys
alias = {"gsignal": "raise", "__clone3": "clone3", "__clone": "clone", "___pthread_join": "pthread_join"}
def norm(s):
    s = s.strip()
    if s.endswith(")") or s.endswith(") const"):
        d = 0
        for i in range(len(s) - 1, -1, -1):
            d += {")": 1, "(": -1}.get(s[i], 0)
            if s[i] == "(" and d == 0:
                s = s[:i]
                break
    return alias.get(s, s)
want = {norm(l.split("\t", 1)[1]) for l in open(sys.argv[2]) if "\t" in l}
names = set()
for l in open(sys.argv[1]):
    f = l.split()
    if f and f[0] in ("FUNC", "PUBLIC"):
        if f[1] == "m":
            f = f[:1] + f[2:]
        n = " ".join(f[4:] if f[0] == "FUNC" else f[3:])
        if norm(n) in want:
            names.add(n)
sys.stdout.flush()
subprocess.run(["./trim", sys.argv[1]] + sorted(names), stdout=open(sys.argv[3], "w"), check=True)
' "$2.sym" "$here/$1/truth.txt" "$here/$1/symbols/$name/$id/$name.sym"
}

for o in O0 O2 O2nofp; do
	case $o in
	O0) opt=-O0 ;;
	O2) opt=-O2 ;;
	O2nofp) opt="-O2 -fomit-frame-pointer" ;;
	esac
	cflags="$opt -g -static -fdebug-prefix-map=$work=. -fdebug-prefix-map=$here=."
	$cc_x64 $cflags -o $prog-x64 "$src"
	$cc_x86 $cflags -o $prog-x86 "$src"
	$cc_arm64 $cflags -o $prog-arm64 "$src"
	for m in $modes; do
		c=$m-x64-$o
		rm -rf "$here/$c" out && mkdir -p "$here/$c" out
		eval gdb $gdbflags -ex "'run $m'" -ex bt ./$prog-x64 2>/dev/null | bt2truth >"$here/$c/truth.txt"
		run ./minidump_capture -o out -- ./$prog-x64 $m >/dev/null 2>&1 || true
		mv out/*.dmp "$here/$c/crash.dmp"
		syms $c $prog-x64
		for a in x86 arm64; do
			c=$m-$a-$o
			rm -rf "$here/$c" qemu_*.core && mkdir -p "$here/$c"
			if [ $a = x86 ]; then
				set -- qemu-i386
			else
				set -- qemu-aarch64 -cpu cortex-a57
			fi
			(ulimit -c unlimited; run "$@" ./$prog-$a $m) >/dev/null 2>&1 || true
			core=$(ls qemu_*.core)
			eval gdb-multiarch $gdbflags -ex bt ./$prog-$a "$core" 2>/dev/null | bt2truth >"$here/$c/truth.txt"
			./core2md --no-host-info -o "$here/$c/crash.dmp" "$core" $prog-$a
			rm -f "$core" core core.*
			syms $c $prog-$a
		done
	done
done
