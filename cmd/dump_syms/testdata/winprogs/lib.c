/* The DLL of prog.cpp's dll crash: lib_apply -> lib_step, which writes
 * through the null pointer the program passes. */
#define NOINLINE __attribute__((noinline))

volatile int lib_sink;

NOINLINE static int lib_step(volatile int *p, int n) {
	*p = n * 5; /* the crash */
	return n + 1;
}

__declspec(dllexport) int lib_apply(volatile int *p, int n) {
	int r = lib_step(p, n + 2);
	lib_sink = r;
	return r * 2;
}
