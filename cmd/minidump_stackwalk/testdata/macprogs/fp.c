/* Frame-pointer functions of prog (built with -fno-omit-frame-pointer):
   main -> fp_outer -> nofp_huge -> nofp_big -> nofp_regs -> dwarf_frame -> sys_apply
   (libsys.dylib) -> fp_callback -> nofp_leaf, which crashes. */
long nofp_huge(long n);
long nofp_leaf(long *p, long v);
extern volatile long sink;

/* fp_callback is called back by libsys.dylib's sys_apply. */
__attribute__((noinline)) long fp_callback(long v) {
	long a = v * 3, b = v + sink;
	long r = nofp_leaf((long *)sink, a);
	return r + a * b;
}

__attribute__((noinline)) long fp_outer(long n) {
	long a = n + sink, b = n * sink;
	long r = nofp_huge(a);
	return r + a * b;
}

int main(void) { return (int)fp_outer(3); }
