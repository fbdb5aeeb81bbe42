#!/bin/sh
# make.sh: rebuild the 32-bit Mach-O test inputs of dumpsyms/macho
# (TestMach32*) from prog.c with Debian's LLVM 22 (clang-22, llvm-lipo-22).
#
# ld64.lld-22 links no 32-bit Mach-O ("missing or unsupported -arch i386",
# the same for armv7): its Mach-O port has x86_64, arm64 and arm64_32
# only. So the inputs are object files (MH_OBJECT), which hold the same
# DWARF, symbol table, __eh_frame / __debug_frame and (i386) the
# compiler's compact unwind entries (__LD,__compact_unwind, the list ld64
# turns into __unwind_info), and a universal file of object slices.
#
#   prog-i386.o      i386, frame pointers (compact EBP-frame mode)
#   prog-i386-fl.o   i386, -fomit-frame-pointer: frameless immediate mode, and
#                    DWARF mode where the PIC base (call; pop) or pushed
#                    arguments move esp in the body
#   prog-i386-ind.o  i386, -fomit-frame-pointer -mdynamic-no-pic, arguments
#                    stored, not pushed: frameless immediate and indirect
#                    (big_frame's 3 KB frame) modes
#   prog-armv7.o     armv7 (iOS) with DWARF exceptions (__eh_frame; by default,
#                    SjLj exceptions, clang writes no unwind information at
#                    all for armv7, neither compact unwind nor __eh_frame)
#   prog-armv7k.o    armv7k (watchOS), the only 32-bit arm clang writes compact
#                    unwind for (ARM frame mode), with -femit-dwarf-unwind=always:
#                    __eh_frame FDEs for the same functions too
#   prog-fat.o       universal: i386 (frameless), armv7, x86_64
set -eu
cd "$(dirname "$0")"
CF="-g -O2 -fdebug-prefix-map=$(pwd)=/src"
clang-22 -target i386-apple-macos10.13 $CF -c prog.c -o prog-i386.o
clang-22 -target i386-apple-macos10.13 $CF -fomit-frame-pointer -c prog.c -o prog-i386-fl.o
clang-22 -target i386-apple-macos10.13 $CF -fomit-frame-pointer -mdynamic-no-pic -mllvm -no-x86-call-frame-opt -c prog.c -o prog-i386-ind.o
clang-22 -target armv7-apple-ios9 $CF -fexceptions -fdwarf-exceptions -c prog.c -o prog-armv7.o
clang-22 -target armv7k-apple-watchos4 $CF -femit-dwarf-unwind=always -c prog.c -o prog-armv7k.o
clang-22 -target x86_64-apple-macos10.13 $CF -c prog.c -o prog-x86_64.o
llvm-lipo-22 -create prog-i386-fl.o prog-armv7.o prog-x86_64.o -output prog-fat.o
rm prog-x86_64.o

# Linked executables and their dSYMs, from link.c (self-contained: no data,
# no external symbols) by mklink, our stand-in for ld64 (mklink/main.go says
# what it does), and dsymutil-22, which links their DWARF from the objects by
# the debug map as for any binary:
#
#   link-i386       i386 frameless (compact immediate and indirect modes,
#                   DWARF mode for the two functions without an entry)
#   link-i386-fp    i386 frame pointers (compact EBP-frame mode)
#   link-armv7      armv7, DWARF exceptions (__debug_frame, in the dSYM)
#   link-armv7k     armv7k: compact unwind (ARM frame mode), no FDE
#   link-fat        universal: link-i386 and link-armv7; link-fat.dSYM too
#   *.dSYM          dsymutil-22's
LF="$CF -fno-stack-protector"
t=$(mktemp -d)
clang-22 -target i386-apple-macos10.13 $LF -fomit-frame-pointer -mllvm -no-x86-call-frame-opt -c link.c -o $t/link-i386.o
clang-22 -target i386-apple-macos10.13 $LF -c link.c -o $t/link-i386-fp.o
clang-22 -target armv7-apple-ios9 $LF -fexceptions -fdwarf-exceptions -c link.c -o $t/link-armv7.o
clang-22 -target armv7k-apple-watchos4 $LF -c link.c -o $t/link-armv7k.o
(cd mklink && go build -o $t/mklink .)
for a in i386 i386-fp armv7 armv7k; do
	$t/mklink $t/link-$a.o $t/link-$a
done
llvm-lipo-22 -create $t/link-i386 $t/link-armv7 -output $t/link-fat
rm -rf link-*.dSYM
ln -s "$(command -v llvm-lipo-22)" $t/lipo # dsymutil joins a universal dSYM's slices with lipo
for a in i386 i386-fp armv7 armv7k fat; do
	(cd $t && PATH=$t:$PATH dsymutil-22 link-$a -o link-$a.dSYM)
	cp $t/link-$a .
	cp -r $t/link-$a.dSYM .
done
rm -r $t

# Breakpad's dump_syms_mac on them (BREAKPAD_DUMP_SYMS_MAC: its binary, built
# from Breakpad 418aacd6 on Linux with `make src/tools/mac/dump_syms/dump_syms_mac`
# in a tools/breakpad/build.sh tree): breakpad/*.sym. Breakpad finds
# __eh_frame only in a segment named __TEXT and DWARF only in one named
# __DWARF, and an object's sections all lie in one unnamed segment, so
# breakpad/prog-i386-fl.textseg.sym is its output for prog-i386-fl.o with
# that segment renamed __TEXT (TestMach32Breakpad renames it the same way):
# its STACK CFI from __eh_frame.
if [ -n "${BREAKPAD_DUMP_SYMS_MAC:-}" ]; then
	mkdir -p breakpad
	for f in prog-i386.o prog-i386-fl.o prog-i386-ind.o prog-armv7.o prog-armv7k.o; do
		"$BREAKPAD_DUMP_SYMS_MAC" $f > breakpad/$f.sym
	done
	"$BREAKPAD_DUMP_SYMS_MAC" -a i386 prog-fat.o > breakpad/prog-fat.o.i386.sym
	for a in i386 i386-fp armv7 armv7k; do
		"$BREAKPAD_DUMP_SYMS_MAC" -d -g link-$a.dSYM link-$a > breakpad/link-$a.g.sym
		"$BREAKPAD_DUMP_SYMS_MAC" link-$a > breakpad/link-$a.sym
	done
	"$BREAKPAD_DUMP_SYMS_MAC" -d -a i386 link-fat.dSYM > breakpad/link-fat.dSYM.i386.sym
	"$BREAKPAD_DUMP_SYMS_MAC" -a arm link-fat > breakpad/link-fat.arm.sym 2>&1 || true
	t=$(mktemp -d)
	cp prog-i386-fl.o $t/prog-i386-fl.textseg.o
	# the first load command (LC_SEGMENT at 28) names its segment at 36
	printf '__TEXT\0\0\0\0\0\0\0\0\0\0' | dd of=$t/prog-i386-fl.textseg.o bs=1 seek=36 conv=notrunc status=none
	"$BREAKPAD_DUMP_SYMS_MAC" $t/prog-i386-fl.textseg.o > breakpad/prog-i386-fl.textseg.sym
	rm -r $t
fi
