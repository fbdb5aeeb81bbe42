#!/bin/sh
# Rebuilds this folder's Windows crash programs and their dumps for
# dump_syms' end-to-end tests (windows_test.go, TestWindowsPrograms):
# prog.cpp (C++: a namespace, classes, a template, a virtual call; threads;
# an inlined chain) and lib.c (a DLL, in C), built with clang-22 and lld-22
# for the mingw-w64 targets with CodeView debug information, for x86_64 and
# i686 at -O0 and -O2, one folder per build (x64-O0, x64-O2, x86-O0,
# x86-O2): prog.exe, prog.pdb, lib.dll, lib.pdb, a dump per crash
# (cpp.dmp, dll.dmp, thread.dmp, inline.dmp, align.dmp; prog.cpp says what
# each does;
# for i686 also entry.dmp, threads at functions' first instructions, see
# mkx86/main.go) and truth.txt.
#
# Needs: apt-get install -y clang-22 lld-22 llvm-22 mingw-w64 wine64.
#
# x86_64: each crash runs under wine64; prog.exe's unhandled-exception
# filter writes the dump with MiniDumpWriteDump, which ../wincrash/fixdump
# then fixes up: Wine leaves the modules' CodeView records empty (filled
# from prog.exe and lib.dll) and saves ~7,000 small memory regions, past
# the 4,096 Breakpad's reader takes (only the threads' stacks are kept).
#
# i686: 32-bit wine is not installable here, so mkx86 writes the dump a
# crash would leave: the threads' stacks and registers as the real machine
# code of each function of the chain leaves them (see mkx86/main.go).
#
# (mkx64, which the tests run, sweeps the x86_64 builds the way mkx86 -sweep
# sweeps the i686 ones; it writes nothing here.)
#
# truth.txt: llvm-symbolizer-22's frames (inline ones included) from the PE
# and its PDB at each frame's address of each thread, up to main or the
# thread procedure: the crash's instruction, then the return addresses
# minus one. For x86_64 the addresses are those of our walk, for i686
# those mkx86 built the stacks from.
#
# Run from the project root or from here: sh mkprogs.sh
set -eu
cd "$(dirname "$0")"
root=$(cd ../../../.. && pwd)
rm -rf .bin
(cd "$root" && go build -o "$OLDPWD/.bin/" ./cmd/dump_syms ./cmd/minidump_stackwalk \
	./cmd/dump_syms/testdata/wincrash/fixdump ./cmd/dump_syms/testdata/winprogs/mkx86)
export WINEDEBUG=-all
export WINEPREFIX="${WINEPREFIX:-$(mktemp -d)/wine}"
scenarios="cpp dll thread inline align"
build=/tmp/gobreakpad-winprogs

# frames DIR SCENARIO prints the frames of a dump's threads, one a line:
# thread index, module, address, 1 for a thread's first frame.
frames() {
	store=$(mktemp -d)
	.bin/dump_syms -d --store "$store" "$1/prog.pdb"
	.bin/dump_syms -d --store "$store" "$1/lib.pdb"
	.bin/minidump_stackwalk "$1/$2.dmp" "$store" 2>/dev/null | awk '
		/^Thread [0-9]+/ { t = $2; first = 1 }
		/^ *[0-9]+  [^ ]/ { mod = $2; sub(/!.*/, "", mod) }
		/[er]ip = 0x/ {
			match($0, /[er]ip = 0x[0-9a-f]+/)
			print t, mod, substr($0, RSTART + 6, RLENGTH - 6), first
			first = 0
		}'
	rm -rf "$store"
}

for arch in x64 x86; do
	case $arch in
	x64) target=x86_64-w64-windows-gnu ;;
	x86) target=i686-w64-windows-gnu ;;
	esac
	for opt in O0 O2; do
		d=$arch-$opt
		rm -rf "$d" "$build"
		mkdir "$d" "$build"
		cp prog.cpp lib.c "$build"
		# Built in a fixed directory, with fixed object names and -Brepro
		# (time stamp and PDB GUID from a hash of the output), so that the
		# PEs and PDBs come out the same from any checkout. -s: no DWARF from
		# mingw's CRT objects in the PE (llvm-symbolizer then reads the PDB);
		# /pdbaltpath: the PDB named without the build directory.
		(
			cd "$build"
			cflags="--target=$target -$opt -g -gcodeview -fdebug-compilation-dir=."
			lflags="--target=$target -fuse-ld=lld -Wl,-s -Wl,-Xlink=-Brepro"
			clang-22 $cflags -c -o lib.o lib.c
			clang-22 $lflags -shared -Wl,--pdb=lib.pdb -Wl,-Xlink=/pdbaltpath:lib.pdb \
				-Wl,--out-implib=liblib.a -o lib.dll lib.o
			clang-22 $cflags -fno-exceptions -fno-rtti -c -o prog.o prog.cpp
			clang-22 $lflags -Wl,--pdb=prog.pdb -Wl,-Xlink=/pdbaltpath:prog.pdb \
				-o prog.exe prog.o -L. -llib -ldbghelp
		)
		cp "$build/prog.exe" "$build/prog.pdb" "$build/lib.dll" "$build/lib.pdb" $d/
		rm -rf "$build"
		ss=$scenarios
		[ $arch = x64 ] || ss="$scenarios entry"
		for s in $ss; do
			if [ $arch = x64 ]; then
				rc=0
				(cd $d && wine prog.exe $s wine-$s.dmp) || rc=$?
				[ "$rc" = 3 ] || { echo "$d/prog.exe $s exited $rc, want 3 (the filter's exit code)" >&2; exit 1; }
				.bin/fixdump $d/wine-$s.dmp $d/$s.dmp $d/prog.exe $d/lib.dll
				rm $d/wine-$s.dmp
				frames $d $s > $d/$s.frames
			else
				.bin/mkx86 $d $s $d/$s.dmp > $d/$s.frames
			fi
		done
		: > $d/truth.txt
		for s in $ss; do
			stopped=
			while read -r t mod addr first; do
				case " $stopped " in *" $t "*) continue ;; esac
				case $mod in prog.exe | lib.dll) ;; *)
					stopped="$stopped $t"
					continue
					;;
				esac
				[ "$first" = 1 ] || addr=$(printf '0x%x' $((addr - 1)))
				out=$(llvm-symbolizer-22 --obj=$d/$mod --inlines --adjust-vma=0 "$addr" | sed '/^$/d' | sed "s|$build/||")
				printf 'dump %s thread %s %s %s\n%s\n' "$s" "$t" "$mod" "$addr" "$out" >> $d/truth.txt
				if echo "$out" | grep -Eq '^(main|crash_proc|idle_proc)(\(|$)'; then
					stopped="$stopped $t"
				fi
			done < $d/$s.frames
			rm $d/$s.frames
		done
	done
done
rm -rf .bin
ls -l */
du -cb */* | tail -1
