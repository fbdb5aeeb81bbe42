#!/bin/sh
# Rebuilds throw-x64-O0 and throw-x64-O2: throw.cpp (a C++ exception thrown
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
# Needs: apt-get install -y clang-22 lld-22 llvm-22 mingw-w64 wine64.
set -eu
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
build=/tmp/gobreakpad-wincxx
bin=$(mktemp -d)
(cd "$root" && go build -o "$bin/" ./cmd/dump_syms ./cmd/dump_syms/testdata/wincrash/fixdump)
export WINEDEBUG=-all
export WINEPREFIX="${WINEPREFIX:-$(mktemp -d)/wine}"
for opt in O0 O2; do
	d=throw-x64-$opt
	rm -rf "$d" "$build"
	mkdir -p "$d" "$build"
	cp throw.cpp "$build/"
	(
		cd "$build"
		clang-22 --target=x86_64-w64-windows-gnu -$opt -g -gcodeview -fdebug-compilation-dir=. -c -o throw.o throw.cpp
		clang++-22 --target=x86_64-w64-windows-gnu -fuse-ld=lld -static -Wl,-s -Wl,-Xlink=-Brepro \
			-Wl,--pdb=throw.pdb -Wl,-Xlink=/pdbaltpath:throw.pdb -o throw.exe throw.o -ldbghelp
		rc=0
		wine throw.exe wine.dmp || rc=$?
		[ "$rc" = 3 ] || { echo "throw.exe exited $rc, want 3 (the handler's)" >&2; exit 1; }
	)
	"$bin/fixdump" "$build/wine.dmp" "$d/crash.dmp" "$build/throw.exe"
	"$bin/dump_syms" --store "$d/symbols" "$build/throw.pdb" >/dev/null
	printf '0\t\n1\t_Unwind_RaiseException\n2\t__cxa_throw\n3\tthrower\n4\tlevel2\n5\tlevel1\n6\trun\n7\tmain\n' > "$d/truth.txt"
done
rm -rf "$build" "$bin"
