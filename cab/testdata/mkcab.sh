#!/bin/sh
# Rebuilds hello.cab: a small MSZIP cabinet (gcab, Debian package gcab) of
# hello.txt, three blocks long so that blocks share the deflate history.
set -e
cd "$(dirname "$0")"
rm -f hello.txt
i=0
while [ $i -lt 4000 ]; do echo "line $i: the quick brown fox jumps over the lazy dog" >>hello.txt; i=$((i+1)); done
gcab -c -z hello.cab hello.txt
rm hello.txt
