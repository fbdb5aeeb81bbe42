#!/usr/bin/env bash
# cmpout.sh BIN OUTDIR
#
# Runs every gobreakpad program of BIN over the shared corpus (../shared/corpus beside the checkout) and writes
# one record per run to OUTDIR/<program>/<run>.txt: the command, its exit status, its stdout and
# its stderr; files a run writes (converted symbol files, golden files, minidumps, symbol stores)
# go to OUTDIR/<program>/<run>.files/. Two OUTDIRs made from two builds compare with
#     diff -r OUTDIR1 OUTDIR2
# A stdout or stderr larger than 4 MiB is recorded as its size, SHA-256 and first 200 lines, a
# written file larger than 1 MiB as NAME.sha256 (size and SHA-256): rerun the run's command (the
# record's first line; $B programs, $C corpus, $W work dir, $J the run's own dir, t = timeout 60)
# to see a difference in it. OUTDIR/runs.txt lists the runs.
#
# Everything runs in a fixed work directory, /tmp/cmpout-work (recreated each time; so one
# cmpout.sh at a time), from a copy of BIN's programs in /tmp/cmpout-work/bin, with a clean
# environment (env -i; HOME a fresh per-run directory) and the corpus folder as working
# directory, so that no output depends on BIN's or OUTDIR's path or on earlier runs.
# Cores for core2md are made once (kernel core dumps and one gdb gcore of generated/*-x64-*
# programs, with ASLR off) into /tmp/cmpout-fixtures (CMPOUT_FIXTURES) and reused by every later call; their
# SHA-256 is recorded in OUTDIR/fixtures.txt. minidump_capture runs the crash programs afresh
# each time (ASLR off); only its pid-free output and the stack walks of its dumps are recorded.
#
# Environment: CMPOUT_JOBS (parallel runs, default 2), CMPOUT_CORPUS, CMPOUT_FIXTURES,
# CMPOUT_PORT (local HTTP symbol server for --symbols-url runs, default 18931).
#
# Runs left out or changed because two runs of the same binaries differed, or would:
#   - minidump_stackwalk on hostile/dump-4096threads-*.dmp: given -j 1 (with the default -j 2 the
#     frames each thread gets from the shared frame budget vary from run to run).
#   - left out, over the 60 s timeout (so their output depends on the machine's speed):
#     dump_syms --max-inflate-ratio 100000 hostile/elf-zlib-bomb-4G.elf (23 s to over 60 s).
#   - dump_syms -v: stderr sorted (the order of the messages varies from run to run, seen on
#     hostile/elf-line-set-file-huge.elf).
#   - minidump_capture: pids masked in its messages and dump names; "Process uptime" masked in the
#     human walk of its dumps; no human walk for threads (other threads' registers hold thread
#     ids); the crash programs' signal reported by exit status only (bash's note names the pid).
#   - core2md with the default output name: the core copied with its mtime (cp -p): the minidump's
#     time stamp is the core's mtime.
#   - the big hostile dumps (hostile/dump-4*.dmp) get the main minidump_stackwalk modes only (time).

set -u
export LC_ALL=C

if [ "${1:-}" = "--run-one" ]; then
	# ---- one run: $2 is "ID<TAB>COMMAND" -----------------------------------------------------
	id=${2%%$'\t'*}
	cmd=${2#*$'\t'}
	W=$CMPOUT_WORK
	J=$W/j/$id
	rec=$CMPOUT_OUT/$id.txt
	mkdir -p "$J/home" "$J/keep" "${rec%/*}"
	LIMIT=$((4 * 1024 * 1024)) # stdout and stderr larger than this: size, SHA-256, first lines
	FLIMIT=$((1024 * 1024))    # written files larger than this: size and SHA-256
	cd "$CMPOUT_CORPUS" || exit 1
	t0=$EPOCHREALTIME
	env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$J/home" LC_ALL=C TZ=UTC \
		B="$W/bin" C="$CMPOUT_CORPUS" W="$W" J="$J" F="$CMPOUT_FIXTURES" P="$CMPOUT_PORT" \
		timeout -k 10 300 bash -c 'ulimit -c 0; t() { timeout -k 5 60 "$@"; }; '"$cmd" \
		>"$J/stdout" 2>"$J/stderr" </dev/null
	rc=$?
	t1=$EPOCHREALTIME
	us=$(( (${t1/./} - ${t0/./}) ))
	printf '%d.%06d %s %s\n' $((us / 1000000)) $((us % 1000000)) "$rc" "$id" >>"$W/times.txt"
	sizes=($(stat -c %s "$J/stdout" "$J/stderr"))
	stream() { # NAME FILE SIZE
		if [ "$3" -gt "$LIMIT" ]; then
			printf -- '--- %s: %s bytes, sha256 %s; first 200 lines:\n' "$1" "$3" "$(sha256sum <"$2")"
			head -n 200 "$2" | head -c 65536
		else
			printf -- '--- %s: %s bytes\n' "$1" "$3"
			cat "$2"
		fi
		if [ "$3" -gt 0 ] && [ -n "$(tail -c 1 "$2")" ]; then printf '\n--- (no final newline)\n'; fi
	}
	{
		printf 'command: %s\nexit: %s\n' "$cmd" "$rc"
		stream stdout "$J/stdout" "${sizes[0]}"
		stream stderr "$J/stderr" "${sizes[1]}"
	} >"$rec"
	shopt -s nullglob dotglob
	kept=("$J"/keep/*)
	if [ ${#kept[@]} -gt 0 ]; then
		dst=$CMPOUT_OUT/$id.files
		mkdir -p "$dst"
		(cd "$J/keep" && find . -mindepth 1 | sort) | while IFS= read -r f; do
			f=${f#./}
			if [ -d "$J/keep/$f" ] && [ ! -L "$J/keep/$f" ]; then
				mkdir -p "$dst/$f"
			elif [ -f "$J/keep/$f" ] && [ ! -L "$J/keep/$f" ] && [ "$(stat -c %s "$J/keep/$f")" -gt "$FLIMIT" ]; then
				printf '%s bytes, sha256 %s\n' "$(stat -c %s "$J/keep/$f")" "$(sha256sum <"$J/keep/$f")" >"$dst/$f.sha256"
			else
				cp -P "$J/keep/$f" "$dst/$f"
			fi
		done
	fi
	rm -rf "$J"
	exit 0
fi

if [ $# -ne 2 ]; then
	echo "usage: $0 BIN OUTDIR" >&2
	exit 2
fi
start=$(date +%s)
SELF=$(readlink -f "$0")
BINSRC=$(cd "$1" && pwd) || exit 2
OUT=$2
C=${CMPOUT_CORPUS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/corpus}
C=$(cd "$C" && pwd) || exit 2
W=/tmp/cmpout-work
F=${CMPOUT_FIXTURES:-/tmp/cmpout-fixtures}
JOBS=${CMPOUT_JOBS:-2}
PORT=${CMPOUT_PORT:-18931}
PROGS="minidump_stackwalk microdump_stackwalk minidump_dump dump_syms symconv symlookup crashdiff core2md minidump_capture"

exec 9>/tmp/cmpout-work.lock
if ! flock -n 9; then
	echo "cmpout.sh: another cmpout.sh is running (/tmp/cmpout-work.lock)" >&2
	exit 1
fi
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then
	echo "cmpout.sh: $OUT exists and is not empty" >&2
	exit 2
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$W"
mkdir -p "$W/bin" "$W/j"
for p in $PROGS; do
	[ -f "$BINSRC/$p" ] && cp "$BINSRC/$p" "$W/bin/$p"
done

# ---- fixtures: ELF cores for core2md, made once ------------------------------------------------
CORE_PROGS="null_write-x64-O2/null_write threads-x64-O2/threads solib_link-x64-O2/solib_link deep_chain-x64-O0/deep_chain inline_chain-x64-O2/inline_chain qsort_cb-x64-O2/qsort_cb"
if [ ! -f "$F/done" ]; then
	echo "cmpout.sh: making core fixtures in $F" >&2
	rm -rf "$F"
	mkdir -p "$F/tmp"
	for cp in $CORE_PROGS; do
		name=${cp%%/*}
		(cd "$F/tmp" && rm -f core core.* && ulimit -c unlimited &&
			env -i PATH=/usr/bin:/bin setarch -R "$C/generated/$cp" >/dev/null 2>&1
			c=$(ls core core.* 2>/dev/null | head -1)
			[ -n "$c" ] && mv "$c" "$F/$name.core")
		if [ ! -f "$F/$name.core" ] && command -v gdb >/dev/null; then
			env -i PATH=/usr/bin:/bin timeout 120 gdb -q -batch -ex run -ex "gcore $F/$name.core" \
				--args "$C/generated/$cp" >/dev/null 2>&1
		fi
	done
	if command -v gdb >/dev/null; then
		env -i PATH=/usr/bin:/bin timeout 120 gdb -q -batch -ex run -ex "gcore $F/null_write-x64-O2.gcore" \
			--args "$C/generated/null_write-x64-O2/null_write" >/dev/null 2>&1
	fi
	rm -rf "$F/tmp"
	chmod a+r "$F"/* 2>/dev/null
	touch "$F/done"
fi
(cd "$F" && sha256sum *.core *.gcore 2>/dev/null) >"$OUT/fixtures.txt"

# ---- shared inputs in the work directory --------------------------------------------------------
# a dump with a huge function name (hostile/README.md)
LF=$W/longfunc/app/333231303534373638396162636465660
mkdir -p "$LF"
{
	printf 'MODULE Linux x86_64 333231303534373638396162636465660 app\nFUNC 1000 100 0 '
	head -c 16777216 /dev/zero | tr '\0' a
	printf '\n1020 10 1 0\nFILE 1 a.c\n'
} >"$LF/app.sym"
# extra signature lists
mkdir -p "$W/siglists"
printf 'bump_counter\nlevel30\ncompare_by_name\n' >"$W/siglists/irrelevant_signature_re.txt"
printf 'store_.*\n' >"$W/siglists/prefix_signature_re.txt"
# broken inputs
: >"$W/empty"
head -c 1000 "$C/generated/threads-x64-O2/crash.dmp" >"$W/truncated.dmp"
head -c 20000 "$C/generated/threads-x64-O2/crash.dmp" >"$W/truncated20k.dmp"
# a directory of dumps for crashdiff
CD_CASES="null_write-x64-O2 deep_chain-x86-O2 threads-arm64-O2 qsort_cb-x64-O0 inline_chain-x64-O2 solib_link-x64-O2 null_write-x64-O0 threads-x64-O2"
mkdir -p "$W/crashdiff/dumps"
for c in $CD_CASES; do cp "$C/generated/$c/crash.dmp" "$W/crashdiff/dumps/$c.dmp"; done
cp "$C/rust-minidump/testdata/linux-mini.dmp" "$C/breakpad/processor/linux_inline.dmp" "$W/crashdiff/dumps/"
cp "$W/truncated.dmp" "$W/crashdiff/dumps/"
CD_SYMS="-s \$C/generated/syslib-symbols -s \$C/breakpad/processor/symbols -s \$C/rust-minidump/testdata/symbols"
for c in $CD_CASES; do CD_SYMS="$CD_SYMS -s \$C/generated/$c/symbols"; done
# addresses to look up: from FUNC and PUBLIC records (start, middle, last byte, end)
mkdir -p "$W/addrs"
sym_addrs() { # SYMFILE MAXRECORDS
	local f=$1 n=$2 total k
	total=$(grep -c -E '^(FUNC|PUBLIC) ' "$f")
	k=$((total / n))
	[ "$k" -lt 1 ] && k=1
	echo 0x0
	grep -E '^(FUNC|PUBLIC) ' "$f" | awk -v k="$k" -v n="$n" '(NR-1)%k==0 && c<n {print; c++}' |
		while read -r kind a b rest; do
			if [ "$a" = m ]; then a=$b; b=${rest%% *}; fi
			echo "0x$a"
			if [ "$kind" = FUNC ]; then
				local s=$((16#$a)) z=$((16#$b))
				printf '0x%x\n0x%x\n0x%x\n' $((s + z / 2)) $((s + z - 1)) $((s + z))
			fi
		done
	echo 0xffffffffffff
}

# ---- job list -----------------------------------------------------------------------------------
JOBF=$W/jobs.txt
: >"$JOBF"
job() { # ID COMMAND (COMMAND is bash; $B programs, $C corpus, $J run dir, $W work dir, t: timeout 60)
	printf '%s\t%s\n' "$1" "$2" >>"$JOBF"
}
cd "$C" || exit 1

# help, version, no arguments
for p in $PROGS; do
	job "help/$p.help" "t \$B/$p --help"
	job "help/$p.version" "t \$B/$p --version"
	job "help/$p.noargs" "t \$B/$p"
done

# ---- minidump_stackwalk
SW=minidump_stackwalk
CORE_MODES=("h|" "m|-m" "json|--json" "pretty|--json --pretty" "s|-s")
EXTRA_MODES=("sig|--signature" "sigjson|--signature --json" "siglists|--signature-lists \$W/siglists"
	"c|-c" "t0|-t 0" "t1|-t 1" "b|-b" "d|-d" "j1m|-j 1 -m" "fmachine|-f machine" "v|-v -m"
	"tail|--tail-calls -m" "ccs|--check-call-sites -m")
sw_case() { # NAME DUMP SYMS
	local name=$1 dump=$2 syms=$3 mode tag fl jf=""
	case $dump in hostile/dump-4096threads-*) jf="-j 1 " ;; esac
	for mode in "${CORE_MODES[@]}" "${EXTRA_MODES[@]}"; do
		tag=${mode%%|*}
		fl=${mode#*|}
		case $dump.$tag in
		# the big hostile dumps (seconds and tens of MB a run): the main modes only
		hostile/dump-4*.dmp.siglists | hostile/dump-4*.dmp.t1 | hostile/dump-4*.dmp.fmachine | hostile/dump-4*.dmp.v | hostile/dump-4*.dmp.tail | hostile/dump-4*.dmp.ccs) continue ;;
		esac
		job "$SW/$name.$tag" "t \$B/$SW $jf$fl $dump $syms"
	done
	if [ -n "$syms" ]; then
		job "$SW/$name.nosym.h" "t \$B/$SW $jf$dump"
		job "$SW/$name.nosym.m" "t \$B/$SW $jf-m $dump"
	fi
}
declare -A INCASES
while IFS=$'\t' read -r name dump exp syms; do
	[ -z "$name" ] && continue
	INCASES[$dump]=1
	sw_case "$name" "$dump" "$syms"
done <"$C/cases.tsv"
while read -r dump; do
	dump=${dump#./}
	[ -n "${INCASES[$dump]:-}" ] && continue
	case $dump in *microdump*) continue ;; esac
	[ "$(stat -c %s "$dump")" -gt 52428800 ] && continue
	d=$(dirname "$dump")
	case $dump in
	generated/*/crash.dmp)
		syms="$d/symbols generated/syslib-symbols"
		[ -d "$d/syslib-symbols" ] && syms="$d/symbols $d/syslib-symbols"
		name=gen2-$(basename "$d")
		;;
	breakpad/processor/*) syms=breakpad/processor/symbols name=bp2-$(basename "$dump" .dmp) ;;
	rust-minidump/*) syms=rust-minidump/testdata/symbols name=rm2-$(basename "$dump" .dmp) ;;
	hostile/dump-for-long-func-name.dmp) syms="\$W/longfunc" name=hostile-$(basename "$dump" .dmp) ;;
	hostile/*) syms="" name=hostile-$(basename "$dump" .dmp) ;;
	*) syms="" name=other-$(echo "${dump%.dmp}" | tr '/' '_') ;;
	esac
	sw_case "$name" "$dump" "$syms"
done < <(find . -name '*.dmp' -type f | sort)
# --symbols-cache: a fresh cache (stable path), cold then warm, then what the cache holds
while IFS=$'\t' read -r name dump exp syms; do
	case $name in perf-*|rm-test|rm-linux-mini|bp-linux_inline|gen-*-x64-O2|gen-*-arm64-O2|gen-*-x86-O0|gen-qsort_cb-x64-O2-nosymlibc) ;; *) continue ;; esac
	job "$SW/$name.cache" "t \$B/$SW --symbols-cache \$J/cache -m $dump $syms; echo \"[exit \$?]\"; t \$B/$SW --symbols-cache \$J/cache -m $dump $syms; echo \"[exit \$?]\"; t \$B/$SW --symbols-cache \$J/cache --json $dump $syms; echo \"[exit \$?]\"; cd \$J/cache && find . -type f | sort | xargs -r sha256sum"
done <"$C/cases.tsv"
# --symbols-url: a local HTTP server serving the corpus
for c in null_write-x64-O2 threads-x64-O2 solib_link-x86-O2 qsort_cb-arm64-O2 inline_chain-x64-O2-dw5 deep_chain-x64-O0; do
	d=generated/$c
	job "$SW/gen-$c.url" "t \$B/$SW -v -m --symbols-cache \$J/cache --symbols-url http://127.0.0.1:\$P/generated/syslib-symbols --symbols-url http://127.0.0.1:\$P/$d/symbols $d/crash.dmp"
	job "$SW/gen-$c.urlmix" "t \$B/$SW --prefetch 0 --symbols-cache \$J/cache --symbols-url http://127.0.0.1:\$P/generated/syslib-symbols $d/crash.dmp $d/symbols"
done
job "$SW/url-404" "t \$B/$SW -v -m --symbols-cache \$J/cache --symbols-url http://127.0.0.1:\$P/nothing-here generated/null_write-x64-O2/crash.dmp"
job "$SW/url-refused" "t \$B/$SW -v -m --symbols-cache \$J/cache --symbols-timeout 5s --symbols-url http://127.0.0.1:9/sym generated/null_write-x64-O2/crash.dmp"
# error paths
job "$SW/err-missing" "t \$B/$SW does-not-exist.dmp"
job "$SW/err-empty" "t \$B/$SW \$W/empty"
job "$SW/err-empty-m" "t \$B/$SW -m \$W/empty"
job "$SW/err-truncated" "t \$B/$SW \$W/truncated.dmp generated/syslib-symbols"
job "$SW/err-truncated20k" "t \$B/$SW -m \$W/truncated20k.dmp generated/syslib-symbols generated/threads-x64-O2/symbols"
job "$SW/err-truncated20k-json" "t \$B/$SW --json \$W/truncated20k.dmp generated/syslib-symbols generated/threads-x64-O2/symbols"
job "$SW/err-symfile" "t \$B/$SW cases.tsv"
job "$SW/err-microdump" "t \$B/$SW breakpad/processor/microdump-arm64.dmp"
job "$SW/err-badflag" "t \$B/$SW --no-such-flag generated/threads-x64-O2/crash.dmp"
job "$SW/err-badformat" "t \$B/$SW -f xml generated/threads-x64-O2/crash.dmp"
job "$SW/err-conflict-cm" "t \$B/$SW -c -m generated/threads-x64-O2/crash.dmp"
job "$SW/err-badthread" "t \$B/$SW -t 99 generated/threads-x64-O2/crash.dmp"

# ---- microdump_stackwalk
MD=microdump_stackwalk
while read -r f; do
	f=${f#./}
	case $f in
	generated/*) syms="$(dirname "$f")/symbols generated/syslib-symbols" name=$(basename "$(dirname "$f")") ;;
	breakpad/processor/*) syms=breakpad/processor/symbols/microdump name=bp-$(basename "$f" .dmp) ;;
	*) syms="" name=$(echo "$f" | tr '/' '_') ;;
	esac
	for mode in "h|" "m|-m" "s|-s" "v|-v -m"; do
		job "$MD/$name.${mode%%|*}" "t \$B/$MD ${mode#*|} $f $syms"
	done
	job "$MD/$name.nosym.h" "t \$B/$MD $f"
	job "$MD/$name.nosym.m" "t \$B/$MD -m $f"
done < <(find . -type f -name '*microdump*' ! -name '*.out' ! -name '*.txt' ! -name '*.sym' ! -path '*/symbols/*' | sort)
job "$MD/url" "t \$B/$MD -m -v --symbols-cache \$J/cache --symbols-url http://127.0.0.1:\$P/generated/syslib-symbols generated/null_write-x64-O2-microdump/crash.microdump generated/null_write-x64-O2-microdump/symbols"
job "$MD/err-minidump" "t \$B/$MD generated/threads-x64-O2/crash.dmp"
job "$MD/err-empty" "t \$B/$MD \$W/empty"
job "$MD/err-missing" "t \$B/$MD does-not-exist"

# ---- minidump_dump
DD=minidump_dump
n=0
while read -r f; do
	f=${f#./}
	[ "$(stat -c %s "$f")" -gt 52428800 ] && continue
	name=$(echo "${f%.dmp}" | tr '/' '_')
	job "$DD/$name" "t \$B/$DD $f"
	# -x on every fourth dump and on all of breakpad/processor's and rust-minidump's small ones
	case $f in
	hostile/dump-4096*|hostile/dump-200000*) ;;
	breakpad/processor/*|rust-minidump/*) job "$DD/$name.x" "t \$B/$DD -x $f" ;;
	*) [ $((n % 4)) -eq 0 ] && job "$DD/$name.x" "t \$B/$DD -x $f" ;;
	esac
	n=$((n + 1))
done < <(find . -name '*.dmp' -type f | sort)
job "$DD/err-empty" "t \$B/$DD \$W/empty"
job "$DD/err-truncated" "t \$B/$DD \$W/truncated.dmp"
job "$DD/err-truncated20k" "t \$B/$DD \$W/truncated20k.dmp"
job "$DD/err-missing" "t \$B/$DD does-not-exist.dmp"
job "$DD/generated-microdump" "t \$B/$DD generated/null_write-x64-O2-microdump/crash.microdump"

# ---- dump_syms
DS=dump_syms
declare -A DBGDIR
while IFS='|' read -r _ nm inp dbg _; do
	inp=$(echo "$inp" | sed 's/ *(.*)//; s/^ *//; s/ *$//')
	dbg=$(echo "$dbg" | sed 's/^ *//; s/ *$//')
	[ -n "$dbg" ] && [ -e "$inp" ] && DBGDIR[$inp]=$dbg
done < <(grep '^| [a-z]' "$C/breakpad/expected-dump_syms/README.md")
while read -r f; do
	f=${f#./}
	name=$(echo "$f" | tr '/' '_')
	for mode in "plain|" "d|-d" "i|-i" "c|-c"; do
		job "$DS/$name.${mode%%|*}" "t \$B/$DS ${mode#*|} $f"
	done
	job "$DS/$name.v" "t \$B/$DS -v $f 2>\$J/err; rc=\$?; sort \$J/err >&2; exit \$rc"
	case $f in windows/* | debian/*) job "$DS/$name.m" "t \$B/$DS -m $f" ;; esac
	if [ -n "${DBGDIR[$f]:-}" ]; then
		job "$DS/$name.dbg.plain" "t \$B/$DS $f ${DBGDIR[$f]}"
		job "$DS/$name.dbg.d" "t \$B/$DS -d $f ${DBGDIR[$f]}"
		job "$DS/$name.dbg.v" "t \$B/$DS -v $f ${DBGDIR[$f]} 2>\$J/err; rc=\$?; sort \$J/err >&2; exit \$rc"
	fi
	case $f in
	*.exe | *.dll)
		for st in symbolic mozilla breakpad mozilla-pe exact; do
			job "$DS/$name.cfi-$st" "t \$B/$DS --cfi-style $st $f"
		done
		job "$DS/$name.pe-only-mozilla" "t \$B/$DS --pe-only mozilla $f"
		job "$DS/$name.pe-only-mozilla-exact" "t \$B/$DS --pe-only mozilla --cfi-style exact $f"
		;;
	esac
done < <(find elf debian windows hostile -type f ! -name '*.sym' ! -name '*.txt' ! -name '*.md' ! -name '*.cc' ! -name '*.dmp' ! -name '*.gsym' | sort)
# split DWARF read from inside the folder (DW_AT_dwo_name is relative)
for t in x64-dw4 x64-dw5 x86 arm64; do
	for p in deep_chain inline_chain libshapes.so; do
		[ -f "elf/$t/split/$p" ] || continue
		job "$DS/elf_${t}_split_$p.incwd" "cd elf/$t/split && t \$B/$DS $p"
		job "$DS/elf_${t}_split_$p.incwd.d" "cd elf/$t/split && t \$B/$DS -d $p"
	done
done
# Mach-O (not read: the error message)
for f in macos/built/hello-x86_64 macos/built/libdemo-fat.dylib macos/built/hello-arm64.dSYM/Contents/Resources/DWARF/hello-arm64; do
	[ -f "$f" ] && job "$DS/$(echo "$f" | tr '/' '_')" "t \$B/$DS $f"
done
# --store, -n, -o, --max-inflate-ratio
for f in elf/x64-dw4/full/inline_chain elf/arm64/full/libshapes.so windows/breakpad/dump_syms_regtest.pdb windows/mozilla/basic64.dll debian/libc/libc.so.6; do
	name=$(echo "$f" | tr '/' '_')
	dbg=${DBGDIR[$f]:-}
	job "$DS/$name.store" "t \$B/$DS --store \$J/keep/store $f $dbg; echo \"[exit \$?]\"; t \$B/$DS -d --store \$J/keep/store $f $dbg; echo \"[exit \$?]\"; cd \$J/keep && find . | sort"
done
job "$DS/rename" "t \$B/$DS -n renamed -o Android elf/x64-dw5/full/deep_chain"
job "$DS/inflate-ratio-low" "t \$B/$DS --max-inflate-ratio 1 elf/x64-dw4/zlib/deep_chain"
job "$DS/inflate-ratio-low-zstd" "t \$B/$DS --max-inflate-ratio 1 elf/x64-dw5/zstd/inline_chain"
job "$DS/err-missing" "t \$B/$DS does-not-exist"
job "$DS/err-empty" "t \$B/$DS \$W/empty"
job "$DS/err-text" "t \$B/$DS cases.tsv"
job "$DS/err-badcfistyle" "t \$B/$DS --cfi-style nope windows/breakpad/dump_syms_regtest64.exe"

# ---- symconv
SC=symconv
mapfile -t ALLSYM < <(find . -name '*.sym' -type f ! -path './perf/*' | sed 's|^\./||' | sort)
SAMPLE=()
k=$(( ${#ALLSYM[@]} / 30 ))
[ "$k" -lt 1 ] && k=1
for ((i = 0; i < ${#ALLSYM[@]}; i += k)); do SAMPLE+=("${ALLSYM[$i]}"); done
for f in windows/breakpad/dump_syms_regtest.sym windows/breakpad/omap_reorder_funcs.sym \
	mozilla-dump_syms/windows/basic32.sym mozilla-dump_syms/windows/dump_syms_regtest64.sym \
	mozilla-dump_syms/windows/ntdll.sym mozilla-dump_syms/linux/basic.full.inlines.sym \
	macos/symbolic/crash.inlines.sym symbolic/macos/crash.inlines.sym symbolic/linux/crash.sym \
	symbolic/regression/large_symbol.sym symbolic/xul.sym \
	breakpad/inline-symbols-new/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.sym \
	breakpad/inline-symbols-old/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.sym \
	generated/inline_chain-x64-O2/symbols/*/*/*.sym generated/solib_link-arm64-O2/symbols/libshapes.so/*/*.sym \
	generated/syslib-symbols/libc.so.6/EC61AC938E5A39B16F9FBD350E3169A50/libc.so.6.sym \
	rust-minidump/testdata/symbols/crash-client/*/crash-client.sym; do
	[ -f "$f" ] && SAMPLE+=("$f")
done
mapfile -t SAMPLE < <(printf '%s\n' "${SAMPLE[@]}" | sort -u)
for f in "${SAMPLE[@]}"; do
	name=$(echo "${f%.sym}" | tr '/' '_')
	job "$SC/$name.to-sym" "t \$B/$SC $f \$J/keep/out.sym"
	for ext in gsym symbfile symc; do
		job "$SC/$name.to-$ext" "t \$B/$SC $f \$J/keep/out.$ext; echo \"[exit \$?]\"; t \$B/$SC \$J/keep/out.$ext \$J/keep/back.sym"
	done
	for fmt in symcache7 symcache8; do
		job "$SC/$name.f-$fmt" "t \$B/$SC -f $fmt $f \$J/keep/out.bin; echo \"[exit \$?]\"; t \$B/$SC \$J/keep/out.bin \$J/keep/back.sym"
	done
done
for f in "${SAMPLE[@]:0:6}"; do
	name=$(echo "${f%.sym}" | tr '/' '_')
	job "$SC/$name.v-symc" "t \$B/$SC -v $f \$J/keep/out.symc"
	job "$SC/$name.stdout" "t \$B/$SC -f breakpad $f -"
done
while read -r f; do
	f=${f#./}
	name=$(echo "$f" | tr '/' '_')
	job "$SC/$name.to-sym" "t \$B/$SC $f \$J/keep/out.sym"
	job "$SC/$name.v-to-sym" "t \$B/$SC -v $f \$J/keep/out.sym"
	job "$SC/$name.to-symcache8" "t \$B/$SC -f symcache8 $f \$J/keep/out.symc"
done < <(find gsym symbolic/symcache symbfile hostile -type f \( -name '*.gsym' -o -name '*.symc' -o -name '*.symbfile' \) | sort)
# ELF input
for f in elf/*/full/* elf/x64-dw4/stripped/deep_chain elf/x64-dw5/zstd/inline_chain elf/arm64/minidebuginfo/deep_chain symbfile/inline-no-tco debian/libc/libc.so.6; do
	[ -f "$f" ] || continue
	name=$(echo "$f" | tr '/' '_')
	job "$SC/$name.to-sym" "t \$B/$SC $f \$J/keep/out.sym"
	job "$SC/$name.to-symc" "t \$B/$SC $f \$J/keep/out.symc"
done
# --module
job "$SC/module-libc" "t \$B/$SC --module libc.so.6/EC61AC938E5A39B16F9FBD350E3169A50 generated/syslib-symbols \$J/keep/out.sym"
job "$SC/module-libc-symc" "t \$B/$SC --module libc.so.6/EC61AC938E5A39B16F9FBD350E3169A50 --code-file libc.so.6 generated/syslib-symbols \$J/keep/out.symc"
job "$SC/module-pdb" "t \$B/$SC --module test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1 breakpad/processor/symbols \$J/keep/out.sym"
job "$SC/module-url" "t \$B/$SC --symbols-cache \$J/cache --module libstdc++.so.6/9FE39E28078C4FBDA48102DFEEB7E6F90 http://127.0.0.1:\$P/generated/syslib-symbols \$J/keep/out.gsym"
job "$SC/module-missing" "t \$B/$SC --module nothing/000000000000000000000000000000000 generated/syslib-symbols \$J/keep/out.sym"
job "$SC/err-ext" "t \$B/$SC symbolic/linux/crash.sym \$J/keep/out.unknown"
job "$SC/err-format" "t \$B/$SC -f nope symbolic/linux/crash.sym \$J/keep/out.sym"
job "$SC/err-input" "t \$B/$SC cases.tsv \$J/keep/out.sym"
job "$SC/err-missing" "t \$B/$SC does-not-exist.sym \$J/keep/out.sym"
job "$SC/err-stdout-noformat" "t \$B/$SC symbolic/linux/crash.sym -"

# ---- symlookup
SL=symlookup
addrs_for() { # SYMFILE NAME MAX -> $W/addrs/NAME
	sym_addrs "$1" "$3" >"$W/addrs/$2"
}
LOOKSYMS=(generated/inline_chain-x64-O2/symbols/*/*/*.sym generated/syslib-symbols/libc.so.6/EC61AC938E5A39B16F9FBD350E3169A50/libc.so.6.sym
	windows/breakpad/dump_syms_regtest.sym mozilla-dump_syms/windows/basic32.sym macos/symbolic/crash.inlines.sym
	breakpad/inline-symbols-new/linux_inline/BBA6FA10B8AAB33D00000000000000000/linux_inline.sym
	generated/deep_chain-arm64-O2/symbols/*/*/*.sym symbolic/linux/crash.sym generated/solib_link-x86-O2/symbols/libshapes.so/*/*.sym)
for f in "${LOOKSYMS[@]}"; do
	[ -f "$f" ] || continue
	name=$(echo "${f%.sym}" | tr '/' '_')
	addrs_for "$f" "$name" 40
	job "$SL/$name.sym" "t \$B/$SL $f \$(cat \$W/addrs/$name)"
	job "$SL/$name.sym.json" "t \$B/$SL --json $f \$(cat \$W/addrs/$name)"
	job "$SL/$name.sym.stdin" "t \$B/$SL $f - < \$W/addrs/$name"
	for fmt in symcache symcache7 symcache8 gsym symbfile; do
		job "$SL/$name.$fmt" "t \$B/$SC -f $fmt $f \$J/conv >/dev/null; echo \"[symconv exit \$?]\"; t \$B/$SL \$J/conv - < \$W/addrs/$name"
		job "$SL/$name.$fmt.json" "t \$B/$SC -f $fmt $f \$J/conv >/dev/null; echo \"[symconv exit \$?]\"; t \$B/$SL --json \$J/conv - < \$W/addrs/$name"
	done
done
# GSYM files: every address LLVM's lookups list
for f in gsym/*.gsym; do
	base=$(basename "$f" .gsym)
	lk=gsym/${base%.llvm*}.lookups.txt
	if [ -f "$lk" ]; then
		grep -o '^0x[0-9a-f]*' "$lk" >"$W/addrs/$base"
	else
		addrs_for breakpad/expected-dump_syms/debian-libc.so.6.sym "$base" 200
	fi
	job "$SL/gsym_$base" "t \$B/$SL $f - < \$W/addrs/$base"
	job "$SL/gsym_$base.json" "t \$B/$SL --json $f - < \$W/addrs/$base"
done
addrs_for breakpad/expected-dump_syms/debian-libc.so.6.sym libc-cut 200
job "$SL/hostile_gsym-libc-cut" "t \$B/$SL hostile/gsym-libc-cut-401408.gsym - < \$W/addrs/libc-cut"
job "$SL/hostile_gsym-libc-cut.json" "t \$B/$SL --json hostile/gsym-libc-cut-401408.gsym 0x98930"
# SymCache files of symbolic
addrs_for symbolic/linux/crash.sym symc-linux 60
addrs_for symbolic/macos/crash.sym symc-macos 60
job "$SL/symc_linux" "t \$B/$SL symbolic/symcache/current/linux.symc - < \$W/addrs/symc-linux"
job "$SL/symc_linux.json" "t \$B/$SL --json symbolic/symcache/current/linux.symc - < \$W/addrs/symc-linux"
job "$SL/symc_macos" "t \$B/$SL symbolic/symcache/current/macos.symc - < \$W/addrs/symc-macos"
job "$SL/symc_macos.json" "t \$B/$SL --json symbolic/symcache/current/macos.symc - < \$W/addrs/symc-macos"
job "$SL/symc_v1" "t \$B/$SL symbolic/symcache/compat/v1.symc 0x1000"
# symbfile: every 4-byte step of the program's functions
readelf -Ws symbfile/inline-no-tco 2>/dev/null | awk '$4=="FUNC" && $3+0>0 {print $2, $3}' | sort -u |
	while read -r v s; do
		for ((a = 16#$v; a < 16#$v + s; a += 4)); do printf '0x%x\n' "$a"; done
	done >"$W/addrs/symbfile"
job "$SL/symbfile" "t \$B/$SL symbfile/inline-no-tco.ranges.symbfile - < \$W/addrs/symbfile"
job "$SL/symbfile.json" "t \$B/$SL --json symbfile/inline-no-tco.ranges.symbfile - < \$W/addrs/symbfile"
job "$SL/err-missing" "t \$B/$SL does-not-exist.sym 0x1000"
job "$SL/err-badaddr" "t \$B/$SL symbolic/linux/crash.sym zzz"
job "$SL/err-text" "t \$B/$SL cases.tsv 0x1000"

# ---- crashdiff
CX=crashdiff
CDRUN="cd \$W/crashdiff && t \$B/$CX"
job "$CX/dir" "$CDRUN $CD_SYMS dumps"
job "$CX/dir.json" "$CDRUN --json $CD_SYMS dumps"
job "$CX/dir.json.q.j1" "$CDRUN --json -q -j 1 $CD_SYMS dumps"
job "$CX/dir.nosym.json" "$CDRUN --json -q dumps"
job "$CX/dir.siglists.json" "$CDRUN --json -q --signature-lists \$W/siglists $CD_SYMS dumps"
job "$CX/files.json" "$CDRUN --json -q $CD_SYMS dumps/null_write-x64-O2.dmp dumps/threads-x64-O2.dmp dumps/linux_inline.dmp"
job "$CX/golden" "cd \$J/keep && cp -r \$W/crashdiff/dumps . && t \$B/$CX -q --golden golden --update $CD_SYMS dumps; echo \"[exit \$?]\"; t \$B/$CX --golden golden $CD_SYMS dumps; echo \"[exit \$?]\"; t \$B/$CX --json --golden golden -s \$C/generated/syslib-symbols dumps; echo \"[exit \$?]\"; rm -rf dumps"
job "$CX/processor.json" "t \$B/$CX --json -q -s breakpad/processor/symbols breakpad/processor"
job "$CX/hostile.json" "t \$B/$CX --json -q -j 1 hostile"
job "$CX/err-missing" "t \$B/$CX does-not-exist"

# ---- core2md (cores made once in the fixtures folder)
CM=core2md
for cp in $CORE_PROGS; do
	name=${cp%%/*}
	for core in "$F/$name.core" "$F/$name.gcore"; do
		[ -f "$core" ] || continue
		tag=$name.${core##*.}
		exe=$C/generated/$cp
		walk="t \$B/minidump_stackwalk -m \$J/keep/out.dmp generated/$name/symbols generated/syslib-symbols; echo \"[exit \$?]\"; t \$B/minidump_stackwalk \$J/keep/out.dmp generated/$name/symbols generated/syslib-symbols; echo \"[exit \$?]\"; t \$B/minidump_dump \$J/keep/out.dmp"
		job "$CM/$tag" "t \$B/$CM -o \$J/keep/out.dmp $core $exe; echo \"[exit \$?]\"; $walk"
		job "$CM/$tag.noexe" "t \$B/$CM -o \$J/keep/out.dmp $core; echo \"[exit \$?]\"; $walk"
		job "$CM/$tag.nohost" "t \$B/$CM --no-host-info -o \$J/keep/out.dmp $core $exe; echo \"[exit \$?]\"; $walk"
	done
done
[ -f "$F/null_write-x64-O2.core" ] && job "$CM/default-output" "cp -p \$F/null_write-x64-O2.core \$J/keep/c.core && cd \$J/keep && t \$B/$CM c.core; echo \"[exit \$?]\"; rm -f c.core; ls"
[ -f "$F/null_write-x64-O2.core" ] && job "$CM/wrong-exe" "t \$B/$CM -o \$J/keep/out.dmp \$F/null_write-x64-O2.core generated/threads-x64-O2/threads"
job "$CM/err-not-core" "t \$B/$CM -o \$J/keep/out.dmp generated/threads-x64-O2/threads"
job "$CM/err-minidump" "t \$B/$CM -o \$J/keep/out.dmp generated/threads-x64-O2/crash.dmp"
job "$CM/err-missing" "t \$B/$CM -o \$J/keep/out.dmp does-not-exist"

# ---- minidump_capture (the programs run afresh, ASLR off; pids masked)
CP=minidump_capture
MASK="sed -E 's/\\.[0-9]+\\.dmp/.PID.dmp/g; s/(thread|process) [0-9]+/\\1 N/g'"
for cp in $CORE_PROGS; do
	name=${cp%%/*}
	# (timeout called directly, in braces: bash's "PID Segmentation fault" note goes to /dev/null)
	# (the process uptime, 0 or 1 s, masked)
	human="t \$B/minidump_stackwalk \$J/d/*.dmp generated/$name/symbols generated/syslib-symbols | sed 's/^Process uptime: .*/Process uptime: (masked)/'; echo \"[exit \${PIPESTATUS[0]}]\"; "
	# threads: the other threads' registers hold thread ids
	[ "$name" = threads-x64-O2 ] && human=
	job "$CP/$name" "cd \$J && { timeout -k 5 60 setarch -R \$B/$CP -o d -- \$C/generated/$cp > o 2> e; } 2>/dev/null; echo \"[capture exit \$?]\"; $MASK o; $MASK e >&2; ls d | $MASK; cd \$C; t \$B/minidump_stackwalk -m \$J/d/*.dmp generated/$name/symbols generated/syslib-symbols; echo \"[exit \$?]\"; $human""t \$B/minidump_stackwalk --signature \$J/d/*.dmp generated/$name/symbols generated/syslib-symbols"
done
job "$CP/true" "cd \$J && t \$B/$CP -o d -- /bin/true; echo \"[exit \$?]\"; ls -A d 2>&1"
job "$CP/exit3" "cd \$J && t \$B/$CP -o d -- /bin/sh -c 'exit 3'; echo \"[exit \$?]\"; ls -A d 2>&1"
job "$CP/args-out" "cd \$J && t \$B/$CP -o d -- /bin/echo one two; echo \"[exit \$?]\""
job "$CP/missing" "cd \$J && t \$B/$CP -o d -- /does/not/exist; echo \"[exit \$?]\"; ls -A d 2>&1"

# ---- run -----------------------------------------------------------------------------------------
dups=$(cut -f1 "$JOBF" | sort | uniq -d)
if [ -n "$dups" ]; then
	echo "cmpout.sh: duplicate run names:" $dups >&2
	exit 3
fi
http_pid=
if command -v python3 >/dev/null; then
	python3 -m http.server --bind 127.0.0.1 --directory "$C" "$PORT" >"$W/http.log" 2>&1 &
	http_pid=$!
	for _ in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
		sleep 0.1
	done
fi
trap '[ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null' EXIT

export CMPOUT_WORK=$W CMPOUT_OUT=$OUT CMPOUT_CORPUS=$C CMPOUT_FIXTURES=$F CMPOUT_PORT=$PORT
echo "cmpout.sh: $(wc -l <"$JOBF") runs, $JOBS at a time" >&2
tr '\n' '\0' <"$JOBF" | xargs -0 -n 1 -P "$JOBS" "$SELF" --run-one
cut -f1 "$JOBF" | sort >"$OUT/runs.txt"

end=$(date +%s)
echo "cmpout.sh: done in $((end - start)) s; runs per program:" >&2
cut -f1 "$JOBF" | cut -d/ -f1 | sort | uniq -c >&2
