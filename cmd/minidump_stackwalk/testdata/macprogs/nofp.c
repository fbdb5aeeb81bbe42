/* Frameless functions of prog (built with -fomit-frame-pointer). */
volatile long sink;
long sys_apply(long (*cb)(long), long v); /* libsys.dylib */
long fp_callback(long v);
long dwarf_frame(long (*fn)(long (*)(long), long), long (*cb)(long), long v); /* dwarf.c */

/* nofp_leaf: a leaf without frame; the crash is its store through p. */
__attribute__((noinline)) long nofp_leaf(long *p, long v) {
	*p = v; /* the crash */
	return v + sink;
}

/* nofp_regs: frameless, not a leaf, values kept in callee-saved registers. */
__attribute__((noinline)) long nofp_regs(long n) {
	long a = n + sink, b = n * sink, c = a ^ b, d = a - b;
	long r = dwarf_frame(sys_apply, fp_callback, a + 1);
	return r + a * b + c * d;
}

/* nofp_big: frameless with a frame over 2 KiB (x86_64: compact unwind's
   frameless-indirect mode). */
__attribute__((noinline)) long nofp_big(long n) {
	volatile char buf[3000];
	long a = n + sink;
	buf[n % 3000] = (char)n;
	long r = nofp_regs(a + buf[(n * 7) % 3000]);
	return r + a + buf[0];
}

/* nofp_huge: frameless with a frame over 4 KiB (arm64: sp moved by a
   shifted immediate, sub sp, sp, #0x1, lsl #12). */
__attribute__((noinline)) long nofp_huge(long n) {
	volatile char buf[6000];
	buf[n % 6000] = (char)n;
	long r = nofp_big(n + buf[(n * 7) % 6000]);
	return r + buf[0];
}
