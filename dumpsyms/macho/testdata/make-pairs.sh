#!/bin/sh
# Rebuilds libpairs-arm64.dylib from pairs-arm64.S (its hand-written
# __LD,__compact_unwind entries) with Debian's clang-22 and ld64.lld-22, and
# checks that the linker kept the eight encodings, and that LLVM MC derives
# the same eight from the .cfi directives of the same code (a second build,
# not kept).
set -eu
cd "$(dirname "$0")"
T=arm64-apple-macos11
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clang-22 -target $T -DHAND -c pairs-arm64.S -o "$tmp/hand.o"
clang-22 -target $T -c pairs-arm64.S -o "$tmp/cfi.o"
for v in hand cfi; do
  out=libpairs-arm64.dylib
  [ $v = cfi ] && out="$tmp/libpairs-cfi-arm64.dylib"
  ld64.lld-22 -arch arm64 -platform_version macos 11.0 11.0 -dylib \
      -install_name @rpath/libpairs.dylib -o $out "$tmp/$v.o"
  llvm-objdump-22 --unwind-info $out | grep -E 'encoding\[[0-9]+\]:|Function offset|Common encodings' > "$tmp/$v.txt" || true
done
want='0x02001001 0x02001002 0x02002101 0x02004003 0x02009f1f 0x04000003 0x04000101 0x04000f1f'
for v in hand cfi; do
  got=$(grep -oE 'encoding(\[[0-9]+\])?: 0x[0-9a-f]+' "$tmp/$v.txt" | grep -oE '0x[0-9a-f]+$' | sort -u | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" != "$want" ]; then
    echo "$v: encodings $got, want $want" >&2
    exit 1
  fi
done
echo "both dylibs hold the encodings $want"
