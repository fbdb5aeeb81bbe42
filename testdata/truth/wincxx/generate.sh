#!/bin/bash
# Rebuilds the cases named as arguments, or all four: throw-x64-O0 and
# throw-x64-O2 are throw.cpp (a C++ exception thrown
# through main -> run -> level1 -> level2 -> thrower; see the source) built
# with clang-22 and lld-22 for x86_64-w64-windows-gnu (mingw-w64's static
# libstdc++ and libgcc: __cxa_throw and _Unwind_RaiseException have PUBLIC
# symbols and .pdata, no line records), run under wine64, whose
# kernelbase.dll (no PDB, no CodeView record) raises the exception; the
# vectored exception handler writes the dump. ../../../cmd/dump_syms/
# testdata/wincrash/fixdump fills the exe's CodeView record and keeps only the
# threads' stacks; symbols/ is our dump_syms of the PDB (with the PE beside
# it: STACK CFI from .pdata).
#
# truth.txt is the crashing thread's chain up to main, found from the code
# (llvm-objdump-22 of throw.exe): RaiseException's frame (kernelbase, no
# name), then the return address after `call [RaiseException]` in
# _Unwind_RaiseException (on the stack above the exception record), after
# `call _Unwind_RaiseException` in __cxa_throw, after `call __cxa_throw` in
# thrower, and so on. The stack below __cxa_throw's frame also holds return
# addresses of calls made before the throw (__cxa_allocate_exception,
# __emutls_get_address and __mingwthr_key_dtor through __cxa_get_globals),
# which a scan finds first.
#
# pe/kernelbase.dll is Wine's kernelbase.dll (the one that ran: same time
# stamp and image size, the code identifier the dump gives) cut by
# trimpe/ to its headers, unwind data (.pdata, .xdata) and exports
# (.edata): what a walk takes from a system DLL without a PDB in the
# symbol path (TestTruthWindowsCxx's second walk of each case).
#
# Needs: apt-get install -y clang-22 lld-22 llvm-22 mingw-w64 g++-mingw-w64-x86-64 wine64.
set -eu
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
build=/tmp/gobreakpad-wincxx
bin=$(mktemp -d)
(cd "$root" && go build -o "$bin/" ./cmd/dump_syms ./cmd/dump_syms/testdata/wincrash/fixdump ./testdata/truth/wincxx/trimpe)
export WINEDEBUG=-all
export WINEPREFIX="${WINEPREFIX:-$(mktemp -d)/wine}"
for d in ${*:-throw-x64-O0 throw-x64-O2 throw-x64-gccO0 throw-x64-gccO2}; do
	opt=${d##*-}
	rm -rf "$d" "$build"
	mkdir -p "$d" "$build"
	cp throw.cpp "$build/"
	(
		cd "$build"
		case $opt in
		gcc*)
			x86_64-w64-mingw32-g++ -${opt#gcc} -c -o throw.o throw.cpp
			x86_64-w64-mingw32-g++ -static -s -Wl,--pdb=throw.pdb -o throw.exe throw.o -ldbghelp
			;;
		*)
			clang-22 --target=x86_64-w64-windows-gnu -$opt -g -gcodeview -fdebug-compilation-dir=. -c -o throw.o throw.cpp
			clang++-22 --target=x86_64-w64-windows-gnu -fuse-ld=lld -static -Wl,-s -Wl,-Xlink=-Brepro \
				-Wl,--pdb=throw.pdb -Wl,-Xlink=/pdbaltpath:throw.pdb -o throw.exe throw.o -ldbghelp
			;;
		esac
		rc=0
		wine throw.exe wine.dmp || rc=$?
		[ "$rc" = 3 ] || { echo "throw.exe exited $rc, want 3 (the handler's)" >&2; exit 1; }
	)
	"$bin/fixdump" "$build/wine.dmp" "$d/crash.dmp" "$build/throw.exe"
	"$bin/dump_syms" --store "$d/symbols" "$build/throw.pdb" >/dev/null
	case $opt in
	gcc*) printf '0\t\n1\t_Unwind_RaiseException\n2\t__cxa_throw\n3\t_Z7throweri\n4\t_Z6level2i\n5\t_Z6level1i\n6\t_Z3runi\n7\tmain\n' ;;
	*) printf '0\t\n1\t_Unwind_RaiseException\n2\t__cxa_throw\n3\tthrower\n4\tlevel2\n5\tlevel1\n6\trun\n7\tmain\n' ;;
	esac > "$d/truth.txt"
done
mkdir -p pe
"$bin/trimpe" "$(dirname "$(command -v wine)")/../lib/x86_64-linux-gnu/wine/x86_64-windows/kernelbase.dll" pe/kernelbase.dll
rm -rf "$build" "$bin"
