// arm64 functions whose compact unwind encodings save register pairs:
// frameless (UNWIND_ARM64_MODE_FRAMELESS, stack size and pairs) and frame
// (UNWIND_ARM64_MODE_FRAME with pairs), each saving its pairs where the
// encoding says (LLVM MC's layout: the first pair of the encoding highest,
// its lower-numbered register above the other). Built twice by
// make-pairs.sh: with -DHAND the __LD,__compact_unwind entries are written
// below by hand with their encodings; without it, the .cfi directives make
// LLVM MC derive the same encodings (the script checks both agree).
#ifdef HAND
#define CFI(...)
#define ENTRY(fn, enc) .quad _##fn %% .long L##fn##_end - _##fn %% .long enc %% .quad 0 %% .quad 0
#else
#define CFI(...) __VA_ARGS__
#endif

	.text
	.p2align 2

// frameless, 16 bytes, x19/x20: encoding 0x02001001
	.globl _fl_x19x20
_fl_x19x20:
	CFI(.cfi_startproc)
	stp x20, x19, [sp, #-16]!
	CFI(.cfi_def_cfa_offset 16)
	CFI(.cfi_offset w19, -8)
	CFI(.cfi_offset w20, -16)
	mov x19, x0
	mov x20, x1
	cbz x0, 1f
	add x0, x19, x20
	ldp x20, x19, [sp], #16
	ret
1:	sub x0, x20, x19
	ldp x20, x19, [sp], #16
	ret
	CFI(.cfi_endproc)
Lfl_x19x20_end:

// frameless, 64 bytes (locals below the saves), x19/x20 x21/x22: 0x02004003
	.globl _fl_locals
_fl_locals:
	CFI(.cfi_startproc)
	sub sp, sp, #64
	stp x22, x21, [sp, #32]
	stp x20, x19, [sp, #48]
	CFI(.cfi_def_cfa_offset 64)
	CFI(.cfi_offset w19, -8)
	CFI(.cfi_offset w20, -16)
	CFI(.cfi_offset w21, -24)
	CFI(.cfi_offset w22, -32)
	mov x19, x0
	mov x20, x1
	mov x21, x2
	mov x22, x3
	str x19, [sp, #8]
	ldr x0, [sp, #8]
	add x0, x0, x22
	add x0, x0, x21
	ldp x20, x19, [sp, #48]
	ldp x22, x21, [sp, #32]
	add sp, sp, #64
	ret
	CFI(.cfi_endproc)
Lfl_locals_end:

// frameless, 16 bytes, x21/x22 only: 0x02001002
	.globl _fl_x21x22
_fl_x21x22:
	CFI(.cfi_startproc)
	stp x22, x21, [sp, #-16]!
	CFI(.cfi_def_cfa_offset 16)
	CFI(.cfi_offset w21, -8)
	CFI(.cfi_offset w22, -16)
	mov x21, x0
	mov x22, x1
	mul x0, x21, x22
	ldp x22, x21, [sp], #16
	ret
	CFI(.cfi_endproc)
Lfl_x21x22_end:

// frameless, 32 bytes, x19/x20 and d8/d9, a tail call: 0x02002101
	.globl _fl_d8
_fl_d8:
	CFI(.cfi_startproc)
	stp d9, d8, [sp, #-32]!
	stp x20, x19, [sp, #16]
	CFI(.cfi_def_cfa_offset 32)
	CFI(.cfi_offset w19, -8)
	CFI(.cfi_offset w20, -16)
	CFI(.cfi_offset b8, -24)
	CFI(.cfi_offset b9, -32)
	mov x19, x0
	mov x20, x1
	fmov d8, x0
	fmov d9, x1
	fadd d8, d8, d9
	fmov x0, d8
	cbnz x19, 1f
	ldp x20, x19, [sp, #16]
	ldp d9, d8, [sp], #32
	ret
1:	add x1, x20, x19
	ldp x20, x19, [sp, #16]
	ldp d9, d8, [sp], #32
	b _fl_x19x20
	CFI(.cfi_endproc)
Lfl_d8_end:

// frameless, 144 bytes, every pair: 0x02009f1f
	.globl _fl_all
_fl_all:
	CFI(.cfi_startproc)
	stp d15, d14, [sp, #-144]!
	stp d13, d12, [sp, #16]
	stp d11, d10, [sp, #32]
	stp d9, d8, [sp, #48]
	stp x28, x27, [sp, #64]
	stp x26, x25, [sp, #80]
	stp x24, x23, [sp, #96]
	stp x22, x21, [sp, #112]
	stp x20, x19, [sp, #128]
	CFI(.cfi_def_cfa_offset 144)
	CFI(.cfi_offset w19, -8)
	CFI(.cfi_offset w20, -16)
	CFI(.cfi_offset w21, -24)
	CFI(.cfi_offset w22, -32)
	CFI(.cfi_offset w23, -40)
	CFI(.cfi_offset w24, -48)
	CFI(.cfi_offset w25, -56)
	CFI(.cfi_offset w26, -64)
	CFI(.cfi_offset w27, -72)
	CFI(.cfi_offset w28, -80)
	CFI(.cfi_offset b8, -88)
	CFI(.cfi_offset b9, -96)
	CFI(.cfi_offset b10, -104)
	CFI(.cfi_offset b11, -112)
	CFI(.cfi_offset b12, -120)
	CFI(.cfi_offset b13, -128)
	CFI(.cfi_offset b14, -136)
	CFI(.cfi_offset b15, -144)
	mov x19, x0
	add x20, x19, #1
	add x21, x20, #1
	add x22, x21, #1
	add x23, x22, #1
	add x24, x23, #1
	add x25, x24, #1
	add x26, x25, #1
	add x27, x26, #1
	add x28, x27, #1
	fmov d8, x19
	fmov d9, x20
	fmov d10, x21
	fmov d11, x22
	fmov d12, x23
	fmov d13, x24
	fmov d14, x25
	fmov d15, x26
	add x0, x27, x28
	ldp x20, x19, [sp, #128]
	ldp x22, x21, [sp, #112]
	ldp x24, x23, [sp, #96]
	ldp x26, x25, [sp, #80]
	ldp x28, x27, [sp, #64]
	ldp d9, d8, [sp, #48]
	ldp d11, d10, [sp, #32]
	ldp d13, d12, [sp, #16]
	ldp d15, d14, [sp], #144
	ret
	CFI(.cfi_endproc)
Lfl_all_end:

// frame, x19/x20 x21/x22 (clang's shape): 0x04000003
	.globl _fr_pairs
_fr_pairs:
	CFI(.cfi_startproc)
	stp x22, x21, [sp, #-48]!
	stp x20, x19, [sp, #16]
	stp x29, x30, [sp, #32]
	add x29, sp, #32
	CFI(.cfi_def_cfa w29, 16)
	CFI(.cfi_offset w30, -8)
	CFI(.cfi_offset w29, -16)
	CFI(.cfi_offset w19, -24)
	CFI(.cfi_offset w20, -32)
	CFI(.cfi_offset w21, -40)
	CFI(.cfi_offset w22, -48)
	mov x19, x0
	mov x20, x1
	mov x21, x2
	mov x22, x3
	bl _fl_x19x20
	cbz x0, 1f
	add x0, x0, x21
	ldp x29, x30, [sp, #32]
	ldp x20, x19, [sp, #16]
	ldp x22, x21, [sp], #48
	ret
1:	add x0, x22, x19
	add x0, x0, x20
	ldp x29, x30, [sp, #32]
	ldp x20, x19, [sp, #16]
	ldp x22, x21, [sp], #48
	ret
	CFI(.cfi_endproc)
Lfr_pairs_end:

// frame, x19/x20 and d8/d9, locals below the frame record: 0x04000101
	.globl _fr_d8
_fr_d8:
	CFI(.cfi_startproc)
	stp d9, d8, [sp, #-48]!
	stp x20, x19, [sp, #16]
	stp x29, x30, [sp, #32]
	add x29, sp, #32
	CFI(.cfi_def_cfa w29, 16)
	CFI(.cfi_offset w30, -8)
	CFI(.cfi_offset w29, -16)
	CFI(.cfi_offset w19, -24)
	CFI(.cfi_offset w20, -32)
	CFI(.cfi_offset b8, -40)
	CFI(.cfi_offset b9, -48)
	sub sp, sp, #32
	mov x19, x0
	fmov d8, x0
	fmov d9, x1
	str x19, [sp, #8]
	bl _fl_d8
	ldr x20, [sp, #8]
	add x0, x0, x20
	fmov x1, d8
	add x0, x0, x1
	add sp, sp, #32
	ldp x29, x30, [sp, #32]
	ldp x20, x19, [sp, #16]
	ldp d9, d8, [sp], #48
	ret
	CFI(.cfi_endproc)
Lfr_d8_end:

// frame, every pair: 0x04000f1f
	.globl _fr_all
_fr_all:
	CFI(.cfi_startproc)
	stp d15, d14, [sp, #-160]!
	stp d13, d12, [sp, #16]
	stp d11, d10, [sp, #32]
	stp d9, d8, [sp, #48]
	stp x28, x27, [sp, #64]
	stp x26, x25, [sp, #80]
	stp x24, x23, [sp, #96]
	stp x22, x21, [sp, #112]
	stp x20, x19, [sp, #128]
	stp x29, x30, [sp, #144]
	add x29, sp, #144
	CFI(.cfi_def_cfa w29, 16)
	CFI(.cfi_offset w30, -8)
	CFI(.cfi_offset w29, -16)
	CFI(.cfi_offset w19, -24)
	CFI(.cfi_offset w20, -32)
	CFI(.cfi_offset w21, -40)
	CFI(.cfi_offset w22, -48)
	CFI(.cfi_offset w23, -56)
	CFI(.cfi_offset w24, -64)
	CFI(.cfi_offset w25, -72)
	CFI(.cfi_offset w26, -80)
	CFI(.cfi_offset w27, -88)
	CFI(.cfi_offset w28, -96)
	CFI(.cfi_offset b8, -104)
	CFI(.cfi_offset b9, -112)
	CFI(.cfi_offset b10, -120)
	CFI(.cfi_offset b11, -128)
	CFI(.cfi_offset b12, -136)
	CFI(.cfi_offset b13, -144)
	CFI(.cfi_offset b14, -152)
	CFI(.cfi_offset b15, -160)
	mov x19, x0
	add x20, x19, #1
	add x21, x20, #1
	add x22, x21, #1
	add x23, x22, #1
	add x24, x23, #1
	add x25, x24, #1
	add x26, x25, #1
	add x27, x26, #1
	add x28, x27, #1
	fmov d8, x19
	fmov d9, x20
	fmov d10, x21
	fmov d11, x22
	fmov d12, x23
	fmov d13, x24
	fmov d14, x25
	fmov d15, x26
	bl _fl_all
	add x0, x0, x28
	ldp x29, x30, [sp, #144]
	ldp x20, x19, [sp, #128]
	ldp x22, x21, [sp, #112]
	ldp x24, x23, [sp, #96]
	ldp x26, x25, [sp, #80]
	ldp x28, x27, [sp, #64]
	ldp d9, d8, [sp, #48]
	ldp d11, d10, [sp, #32]
	ldp d13, d12, [sp, #16]
	ldp d15, d14, [sp], #160
	ret
	CFI(.cfi_endproc)
Lfr_all_end:

#ifdef HAND
	.section __LD,__compact_unwind,regular,debug
	.p2align 3
	ENTRY(fl_x19x20, 0x02001001)
	ENTRY(fl_locals, 0x02004003)
	ENTRY(fl_x21x22, 0x02001002)
	ENTRY(fl_d8, 0x02002101)
	ENTRY(fl_all, 0x02009f1f)
	ENTRY(fr_pairs, 0x04000003)
	ENTRY(fr_d8, 0x04000101)
	ENTRY(fr_all, 0x04000f1f)
#endif
