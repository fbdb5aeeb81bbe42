/* A function whose frame needs a stack probe, for dump_syms' x86_64 sweep
 * (../mkx64): deep's 20000-byte frame is allocated in its prolog by
 * "mov eax, N; call ___chkstk_ms; sub rsp, rax", so a stack overflow stops
 * in ___chkstk_ms (which has no unwind information) with deep's return
 * address at its "sub rsp, rax", inside deep's prolog.
 *
 *   main -> outer -> deep, which writes through a null pointer
 */
#define NOINLINE __attribute__((noinline))

volatile int sink;
volatile int *volatile target; /* always null */

NOINLINE int deep(int n) {
	volatile char buf[20000];
	buf[n] = (char)n;
	*target = buf[n / 2]; /* the crash */
	return buf[0];
}

NOINLINE int outer(int n) {
	int r = deep(n + 1);
	sink = r;
	return r + 1;
}

int main(int argc, char **argv) {
	(void)argv;
	int r = outer(argc);
	sink = r;
	return 0;
}
