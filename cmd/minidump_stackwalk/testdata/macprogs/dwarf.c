/* dwarf_frame(fn, cb, v) returns fn(cb, v): a frame-pointer function whose
   CFI cannot be compact unwind (the .cfi_escape makes the assembler emit
   the DWARF mode), so its unwind rules are only in __eh_frame. */
#if defined(__x86_64__)
__asm__(
  ".text\n.globl _dwarf_frame\n.p2align 4\n_dwarf_frame:\n"
  ".cfi_startproc\n"
  "pushq %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
  "movq %rsp, %rbp\n.cfi_def_cfa_register %rbp\n"
  "pushq %rbx\n.cfi_offset %rbx, -24\n"
  "pushq %rax\n"
  ".cfi_escape 0x2e, 0x00\n"
  "movq %rdi, %rbx\n"
  "movq %rsi, %rdi\n"
  "movq %rdx, %rsi\n"
  "callq *%rbx\n"
  "addq $8, %rsp\n"
  "popq %rbx\n"
  "popq %rbp\n.cfi_def_cfa %rsp, 8\n"
  "retq\n.cfi_endproc\n");
#elif defined(__aarch64__)
__asm__(
  ".text\n.globl _dwarf_frame\n.p2align 2\n_dwarf_frame:\n"
  ".cfi_startproc\n"
  "stp x20, x19, [sp, #-32]!\n.cfi_def_cfa_offset 32\n"
  "stp x29, x30, [sp, #16]\n"
  "add x29, sp, #16\n.cfi_def_cfa w29, 16\n.cfi_offset w30, -8\n.cfi_offset w29, -16\n"
  ".cfi_offset w19, -24\n.cfi_offset w20, -32\n"
  ".cfi_escape 0x2e, 0x00\n"
  "mov x19, x0\n"
  "mov x0, x1\n"
  "mov x1, x2\n"
  "blr x19\n"
  ".cfi_def_cfa wsp, 32\n"
  "ldp x29, x30, [sp, #16]\n"
  "ldp x20, x19, [sp], #32\n"
  ".cfi_def_cfa_offset 0\n"
  "ret\n.cfi_endproc\n");
#endif
