/*
 * sigcrash: crashes inside a signal handler, for the walker's signal-frame
 * tests (see generate.sh).
 *
 *   abort  a SIGSEGV handler (installed with signal(): an old-style frame
 *          on i386) that calls abort(): the dump is taken at SIGABRT, with
 *          raise, abort, the handler, the kernel's signal frame and the
 *          interrupted level2 on the stack
 *   segv   a SIGSEGV handler (sigaction with SA_SIGINFO and SA_RESETHAND:
 *          an rt frame) that writes through a null pointer itself
 *   segvold  the same with the handler installed by signal() (an
 *          old-style frame on i386): the kernel kills the process at the
 *          handler's own fault, SIGSEGV being blocked in its handler
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

volatile int *volatile bad;
volatile int sink;

static void __attribute__((noinline)) on_segv_abort(int sig)
{
	(void)sig;
	abort();
}

static void __attribute__((noinline)) on_segv_crash(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	sink = sig;
	*bad = 2;
}

static void __attribute__((noinline)) on_segv_crash_old(int sig)
{
	sink = sig;
	*bad = 3;
}

int __attribute__((noinline)) level2(int n)
{
	*bad = n; /* the interrupted instruction */
	return n + sink;
}

int __attribute__((noinline)) level1(int n)
{
	int r = level2(n + 1);
	sink = r;
	return r + 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "segv") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_segv_crash;
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
		sigaction(SIGSEGV, &sa, 0);
	} else if (argc > 1 && strcmp(argv[1], "segvold") == 0) {
		signal(SIGSEGV, on_segv_crash_old);
	} else {
		signal(SIGSEGV, on_segv_abort);
	}
	return level1(argc);
}
