#!/bin/sh
# Rebuilds this folder's macOS programs for TestMacPrograms
# (../../macprogs_test.go), for x86_64 and arm64 (one folder each):
#
#   app/prog    the executable (fp.c with frame pointers, nofp.c with
#               -fomit-frame-pointer, dwarf.c: a function with its unwind
#               rules only in __eh_frame), entry point _main, linked
#               against libsys.dylib; app/prog.dSYM its DWARF (dsymutil)
#   system/libsys.dylib  sys.c, a stand-in for a system library: frame
#               pointers, symbols stripped (llvm-strip -x -S), no dSYM
#
# The programs link no library of Apple's (no SDK here), so they cannot
# run; the test runs their machine code on a model (see macprogs_test.go).
# Two builds are byte-identical (paths mapped to /src).
#
# Needs: apt-get install -y clang-22 lld-22 llvm-22
# Run from anywhere: sh mkprogs.sh
set -eu
cd "$(dirname "$0")"
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for arch in x86_64 arm64; do
	T="-target $arch-apple-macos11 -g -O2 -fno-optimize-sibling-calls -fno-stack-protector -fdebug-prefix-map=$here=/src"
	clang-22 $T -fno-omit-frame-pointer -c fp.c -o "$tmp/fp-$arch.o"
	clang-22 $T -fomit-frame-pointer -c nofp.c -o "$tmp/nofp-$arch.o"
	clang-22 $T -c dwarf.c -o "$tmp/dwarf-$arch.o"
	clang-22 $T -fno-omit-frame-pointer -c sys.c -o "$tmp/sys-$arch.o"
	mkdir -p "$arch/app" "$arch/system"
	rm -rf "$arch/app/prog" "$arch/app/prog.dSYM" "$arch/system/libsys.dylib"
	ld64.lld-22 -arch $arch -platform_version macos 11.0 11.0 -dylib -oso_prefix "$tmp/" \
		-install_name /usr/lib/system/libsys.dylib -o "$arch/system/libsys.dylib" "$tmp/sys-$arch.o"
	llvm-strip-22 -x -S "$arch/system/libsys.dylib"
	ld64.lld-22 -arch $arch -platform_version macos 11.0 11.0 -e _main -oso_prefix "$tmp/" \
		-o "$arch/app/prog" "$tmp/fp-$arch.o" "$tmp/nofp-$arch.o" "$tmp/dwarf-$arch.o" "$arch/system/libsys.dylib"
	dsymutil-22 --oso-prepend-path "$tmp" -o "$arch/app/prog.dSYM" "$arch/app/prog"
done
