/* libsys.dylib: stands for a system library (built with frame pointers, as
   Apple builds them; no dSYM, never in the symbol folders). */
__attribute__((visibility("default"))) long sys_apply(long (*cb)(long), long v) {
	long a = v * 5;
	long r = cb(a + 1);
	return r + a;
}
