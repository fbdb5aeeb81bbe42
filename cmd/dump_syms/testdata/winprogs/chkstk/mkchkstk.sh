#!/bin/sh
# Rebuilds big.exe and big.pdb from big.c with clang-22 and lld-22 for
# x86_64-w64-windows-gnu (-O2, CodeView), reproducibly (a fixed build
# directory, -Brepro). Nothing is run: ../mkx64 makes the dumps it walks.
#
# Needs: apt-get install -y clang-22 lld-22 mingw-w64.
set -eu
cd "$(dirname "$0")"
build=/tmp/gobreakpad-chkstk
rm -rf "$build"
mkdir "$build"
cp big.c "$build"
(
	cd "$build"
	clang-22 --target=x86_64-w64-windows-gnu -O2 -g -gcodeview -fdebug-compilation-dir=. -c -o big.o big.c
	clang-22 --target=x86_64-w64-windows-gnu -fuse-ld=lld -Wl,-s -Wl,-Xlink=-Brepro \
		-Wl,--pdb=big.pdb -Wl,-Xlink=/pdbaltpath:big.pdb -o big.exe big.o
)
cp "$build/big.exe" "$build/big.pdb" .
rm -rf "$build"
ls -l big.exe big.pdb
