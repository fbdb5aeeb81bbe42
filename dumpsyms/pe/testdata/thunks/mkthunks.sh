#!/bin/sh
# mkthunks.sh: rebuild thunks.exe and thunks.pdb (i686, clang-22 and
# lld-link-22) from thunks.cc, with relative paths and no time stamp so
# that a rebuild elsewhere gives the same records.
set -e
cd "$(dirname "$0")"
clang-22 --target=i686-pc-windows-msvc -O1 -g -gcodeview -fno-exceptions -fno-rtti \
	-ffile-compilation-dir=. -c thunks.cc -o thunks.obj
lld-link-22 /debug /nodefaultlib /entry:mainCRTStartup /subsystem:console /out:thunks.exe /pdb:thunks.pdb \
	/pdbaltpath:thunks.pdb /pdbsourcepath:C:\\thunks /Brepro thunks.obj
rm -f thunks.obj
