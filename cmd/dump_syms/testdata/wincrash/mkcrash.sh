#!/bin/sh
# Rebuilds this folder's Windows x64 crash: crash.exe and crash.pdb from
# crash.c (clang-22 and lld-22 for the mingw-w64 target, CodeView debug
# information), crash.dmp (the program run under wine64; its unhandled-
# exception filter calls MiniDumpWriteDump) and truth.txt (llvm-symbolizer-22
# on the PE and its PDB at the crashing thread's return addresses).
#
# Needs: apt-get install -y clang-22 lld-22 llvm-22 mingw-w64 wine64.
#
# Wine's dump is passed through fixdump (see fixdump/main.go): Wine leaves
# the modules' CodeView records empty, fixdump fills crash.exe's from the PE;
# and it keeps only the threads' stacks of Wine's ~7000 memory regions, past
# the 4096 Breakpad's reader takes. Nothing else is changed.
#
# Run from the project root or from here: sh mkcrash.sh
set -eu
cd "$(dirname "$0")"
root=$(cd ../../../.. && pwd)
rm -f crash.exe crash.pdb crash.dmp wine.dmp
# -s: no DWARF from mingw's CRT objects in the PE (llvm-symbolizer then reads
# the PDB); /pdbaltpath: the PDB named without this machine's directory.
clang-22 --target=x86_64-w64-windows-gnu -O1 -g -gcodeview -fdebug-compilation-dir=. \
	-fuse-ld=lld -Wl,--pdb=crash.pdb -Wl,-s -Wl,-Xlink=/pdbaltpath:crash.pdb \
	-o crash.exe crash.c -ldbghelp
export WINEDEBUG=-all
export WINEPREFIX="${WINEPREFIX:-$(mktemp -d)/wine}"
rc=0
wine crash.exe || rc=$?
[ "$rc" = 3 ] || { echo "crash.exe exited $rc, want 3 (the filter's exit code)" >&2; exit 1; }
mv crash.dmp wine.dmp
(cd "$root" && go run ./cmd/dump_syms/testdata/wincrash/fixdump \
	cmd/dump_syms/testdata/wincrash/wine.dmp cmd/dump_syms/testdata/wincrash/crash.dmp \
	cmd/dump_syms/testdata/wincrash/crash.exe)
rm -f wine.dmp
# The truth: llvm-symbolizer's frames (inline ones included) from the PE +
# PDB at the crash address and at each return address minus one of the
# crashing thread up to main, the addresses (rip) taken from our walk.
(cd "$root" && go build -o "$OLDPWD/.bin/" ./cmd/dump_syms ./cmd/minidump_stackwalk)
store=$(mktemp -d)
.bin/dump_syms --store "$store" crash.pdb
: > truth.txt
n=0
for rip in $(.bin/minidump_stackwalk crash.dmp "$store" 2>/dev/null | sed -n '/^Thread 0 (crashed)/,/^Thread 1/p' | sed -n 's/.*rip = \(0x[0-9a-f]*\).*/\1/p' | head -5); do
	[ "$n" = 0 ] || rip=$(printf '0x%x' $((rip - 1)))
	echo "address $rip" >> truth.txt
	llvm-symbolizer-22 --obj=crash.exe --inlines --adjust-vma=0 "$rip" | sed '/^$/d' | sed "s|$PWD/||" >> truth.txt
	n=$((n + 1))
done
rm -rf .bin "$store"
cat truth.txt
