# Shared by the generate.sh scripts of testdata/truth/*, testdata/signal
# and testdata/capture, which source it after setting "here" (the script's
# folder):
#
#	here=$(cd "$(dirname "$0")" && pwd)
#	. "$here/../lib.sh"
#
# It finds the project root, builds our tools (minidump_capture, core2md,
# dump_syms, testdata/signal/trim.go) into a temporary folder removed on
# exit, and leaves the script there. Then, for the groups of
# testdata/truth (cases MODE-ARCH-OPT), each_case runs everything; its
# parts are here for scripts with cases of their own:
#
#	compile PROG SRC OPTFLAGS  PROG-x64, PROG-x86, PROG-arm64, static
#	optflags OPT               O0, O2 ($O2flags, -O2 unless set), O2nofp
#	newcase CASE               an empty case folder (and no old cores)
#	gdb_native BIN MODE EX...  gdb's output of "run MODE", then EX...
#	gdb_stub ARCH BIN MODE EX..  the same through qemu's gdb stub
#	gdb_core BIN CORE EX...    gdb's output of EX... on a core
#	qemu_core ARCH BIN MODE    runs BIN MODE under qemu-user; the core's name
#	capture CASE BIN MODE      a live minidump_capture of BIN MODE (x86-64)
#	core2md CASE CORE BIN      the core converted to the case's crash.dmp
#	bt2truth, bt2truth_cxx     gdb's backtrace as "N<TAB>function" lines
#	syms_trim CASE BIN NAME..  the case's symbols, trimmed to NAMEs
#	syms_match CASE BIN        the same, to the names truth.txt gives
#	syms_full CASE BIN         the case's symbols, whole
#
# Needs Go on PATH; the compilers, qemu-user and gdb as each script says.
set -eu
root=$here
while [ ! -f "$root/go.mod" ]; do
	root=$(dirname "$root")
	[ "$root" != / ] || {
		echo "lib.sh: no go.mod above $here" >&2
		exit 1
	}
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/minidump_capture" ./cmd/minidump_capture
go build -o "$work/core2md" ./cmd/core2md
go build -o "$work/dump_syms" ./cmd/dump_syms
go build -o "$work/trim" ./testdata/signal/trim.go
cd "$work"

# run runs a program in a clean environment: the dumps keep its environ.
run() { env -i PATH=/usr/bin:/bin "$@"; }

cc_x64=${cc_x64:-gcc}
cc_x86=${cc_x86:-i686-linux-gnu-gcc}
cc_arm64=${cc_arm64:-aarch64-linux-gnu-gcc-12}
O2flags=${O2flags:--O2}
# arm64 on a CPU without SVE: gdb 13 rejects the SVE record of qemu's
# signal frames (in cores too).
qemu_x86=qemu-i386
qemu_arm64="qemu-aarch64 -cpu cortex-a57"

optflags() { # OPT
	case $1 in
	O0) echo -O0 ;;
	O2) echo "$O2flags" ;;
	O2nofp) echo "-O2 -fomit-frame-pointer" ;;
	*)
		echo "optflags: unknown level $1" >&2
		return 1
		;;
	esac
}

# compile PROG SRC OPTFLAGS: the program for the three CPUs, linked
# statically (the libc frames come with its symbols), with the build
# folders mapped away so that the build IDs do not change from run to run.
compile() {
	local cflags="$3 -g -static -fdebug-prefix-map=$work=. -fdebug-prefix-map=$here=."
	$cc_x64 $cflags -o "$1-x64" "$2"
	$cc_x86 $cflags -o "$1-x86" "$2"
	$cc_arm64 $cflags -o "$1-arm64" "$2"
}

newcase() { # CASE
	rm -rf "$here/$1" out qemu_*.core core core.*
	mkdir -p "$here/$1"
}

# gdb_batch GDB BINARY CORE EX...: gdb's output of the commands EX on
# BINARY (and CORE unless empty).
gdb_batch() {
	local g=$1 b=$2 core=$3 n e
	shift 3
	n=$#
	for e; do
		set -- "$@" -ex "$e"
	done
	shift $n
	$g -batch -nx -ex 'set pagination off' -ex 'set backtrace past-main on' "$@" "./$b" ${core:+"$core"} 2>/dev/null
}
gdb_native() { # BINARY MODE EX...
	local b=$1 m=$2
	shift 2
	gdb_batch gdb "$b" "" "run $m" "$@"
}
gdb_stub() { # ARCH BINARY MODE EX...: stopped at the first signal
	local q b=$2 m=$3 port
	eval "q=\$qemu_$1"
	shift 3
	port=$((20000 + $$ % 10000))
	run $q -g "$port" "./$b" "$m" >/dev/null 2>&1 &
	sleep 1
	gdb_batch gdb-multiarch "$b" "" "target remote :$port" continue "$@"
	wait $! 2>/dev/null || true
}
gdb_core() { # BINARY CORE EX...
	local b=$1 core=$2
	shift 2
	gdb_batch gdb-multiarch "$b" "$core" "$@"
}

qemu_core() { # ARCH BINARY MODE
	local q
	eval "q=\$qemu_$1"
	rm -f qemu_*.core
	(ulimit -c unlimited; run $q "./$2" "$3") >/dev/null 2>&1 || true
	ls qemu_*.core
}
capture() { # CASE BINARY MODE
	rm -rf out && mkdir out
	run ./minidump_capture -o out -- "./$2" "$3" >/dev/null 2>&1 || true
	mv out/*.dmp "$here/$1/crash.dmp"
}
core2md() { # CASE CORE BINARY
	./core2md --no-host-info -o "$here/$1/crash.dmp" "$2" "$3"
	rm -f "$2"
}

# bt2truth: gdb's backtrace as "N<TAB>function" lines (C names: the first
# word after the address), the first of each frame number (gdb repeats it
# for inlined frames' "in"), "<signal handler called>" for the kernel's
# signal frame.
bt2truth() {
	sed -n 's/^#\([0-9]*\)  *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\).*/\1\t\3/p' |
		sed 's/\t<signal$/\t<signal handler called>/' | awk '!seen[$1]++'
}
# bt2truth_cxx: the same for names with spaces (C++): the name without its
# argument list, source position or library.
bt2truth_cxx() {
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

# truth_names FILE...: the function names of truth files (not "??" or
# "<signal handler called>"), one a line.
truth_names() {
	cut -f2 "$@" | grep -v '^[<?]' | sort -u
}

# symdir CASE BINARY: the symbols of BINARY in BINARY.sym and the case's
# empty symbol folder for them, in $symfile.
symdir() {
	local id name
	./dump_syms "$2" >"$2.sym"
	id=$(head -1 "$2.sym" | cut -d' ' -f4)
	name=$(head -1 "$2.sym" | cut -d' ' -f5)
	rm -rf "$here/$1/symbols"
	mkdir -p "$here/$1/symbols/$name/$id"
	symfile=$here/$1/symbols/$name/$id/$name.sym
}
syms_full() { # CASE BINARY
	symdir "$1" "$2"
	cp "$2.sym" "$symfile"
}
# syms_trim CASE BINARY NAME...: only the records of the functions named
# and their neighbours (trim.go), to keep the case small.
syms_trim() {
	local b=$2
	symdir "$1" "$2"
	shift 2
	./trim "$b.sym" "$@" >"$symfile"
}
# syms_match CASE BINARY: syms_trim to the functions the case's truth.txt
# names, matched without parameter lists (C++), glibc's aliases included.
syms_match() {
	symdir "$1" "$2"
	./trim -truth "$here/$1/truth.txt" "$2.sym" >"$symfile"
}

# each_case runs the cases MODE-ARCH-OPT of a group of testdata/truth for
# MODE in $modes, ARCH in x64, x86 and arm64, OPT in $opts (O0 O2 O2nofp
# unless set): the program $prog built from $src, gdb's truth (natively for
# x64, through qemu's gdb stub for the CPUs in $stub_arches, from qemu's
# core for the others), the dump (a live capture for x64, qemu's core
# through core2md for the others) and the symbols. The group defines:
#
#	truth_cmds RUNNER ARGS...  runs RUNNER ARGS with gdb's commands after the stop
#	truth CASE MODE            the case's truth files from gdb's output on stdin
#	syms CASE BINARY           the case's symbols
each_case() {
	local o m a c core
	for o in ${opts:-O0 O2 O2nofp}; do
		compile "$prog" "$src" "$(optflags $o)"
		for m in $modes; do
			for a in x64 x86 arm64; do
				c=$m-$a-$o
				newcase $c
				if [ $a = x64 ]; then
					truth_cmds gdb_native $prog-x64 $m | truth $c $m
					capture $c $prog-x64 $m
				else
					case " ${stub_arches:-} " in
					*" $a "*) truth_cmds gdb_stub $a $prog-$a $m | truth $c $m ;;
					esac
					core=$(qemu_core $a $prog-$a $m)
					case " ${stub_arches:-} " in
					*" $a "*) ;;
					*) truth_cmds gdb_core $prog-$a "$core" | truth $c $m ;;
					esac
					core2md $c "$core" $prog-$a
				fi
				syms $c $prog-$a
			done
		done
	done
}
