/* crasher: a small program that dies in a known call chain, for the capture
 * tests. The first argument picks what it does:
 *   segv     write through a null pointer in crash_here (main > level1 > level2 > level3 > crash_here)
 *   abort    call abort() from crash_here
 *   fpe      divide by zero in crash_here
 *   ill      execute ud2 in crash_here (x86 only; elsewhere an invalid instruction word)
 *   trap     execute a breakpoint instruction in crash_here
 *   badsp    point the stack pointer at unmapped memory, then write through a null pointer
 *   threads  start worker threads that block, then crash the chain in a worker thread
 *   fork     fork a child that exits 0, wait for it, then segv
 *   child    fork a child that segvs; the parent waits and exits with status 5
 *   exec     exec this program again with "segv"
 *   handled  catch SIGSEGV with a handler that exits with status 3, then segv
 *   exit N   exit with status N without crashing
 * The functions are noinline so each one has its own frame. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *mode;
static volatile int zero;

__attribute__((noinline)) void crash_here(int depth) {
	if (strcmp(mode, "abort") == 0) {
		abort();
	} else if (strcmp(mode, "fpe") == 0) {
		volatile int x = depth / zero;
		(void)x;
	} else if (strcmp(mode, "ill") == 0) {
#if defined(__i386__) || defined(__x86_64__)
		__asm__ volatile("ud2");
#else
		__asm__ volatile(".inst 0x00000000");
#endif
	} else if (strcmp(mode, "trap") == 0) {
#if defined(__i386__) || defined(__x86_64__)
		__asm__ volatile("int3");
#else
		__asm__ volatile("brk #0");
#endif
	} else if (strcmp(mode, "badsp") == 0) {
#if defined(__x86_64__)
		__asm__ volatile("mov $0x10, %%rsp\n\tmovl $0, 0" ::: "memory");
#elif defined(__i386__)
		__asm__ volatile("mov $0x10, %%esp\n\tmovl $0, 0" ::: "memory");
#else
		__asm__ volatile("mov x9, #16\n\tmov sp, x9\n\tstr wzr, [x9]" ::: "x9", "memory");
#endif
	}
	*(volatile int *)(long)zero = depth;
}

__attribute__((noinline)) void level3(int d) { crash_here(d + 1); __asm__ volatile(""); }
__attribute__((noinline)) void level2(int d) { level3(d + 1); __asm__ volatile(""); }
__attribute__((noinline)) void level1(int d) { level2(d + 1); __asm__ volatile(""); }

static void *blocker(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *crasher_thread(void *arg) {
	(void)arg;
	usleep(100 * 1000);
	level1(0);
	return NULL;
}

static void on_segv(int sig) {
	(void)sig;
	_exit(3);
}

int main(int argc, char **argv) {
	mode = argc > 1 ? argv[1] : "segv";
	if (strcmp(mode, "exit") == 0)
		return argc > 2 ? atoi(argv[2]) : 0;
	if (strcmp(mode, "handled") == 0) {
		signal(SIGSEGV, on_segv);
		mode = "segv";
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
		mode = "segv";
	}
	if (strcmp(mode, "child") == 0) {
		mode = "segv";
		pid_t pid = fork();
		if (pid == 0)
			level1(0);
		waitpid(pid, NULL, 0);
		return 5;
	}
	if (strcmp(mode, "exec") == 0) {
		execl("/proc/self/exe", argv[0], "segv", (char *)NULL);
		return 99;
	}
	if (strcmp(mode, "threads") == 0) {
		pthread_t t[4];
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, blocker, NULL);
		mode = "segv";
		pthread_create(&t[3], NULL, crasher_thread, NULL);
		pthread_join(t[3], NULL);
		return 0;
	}
	level1(0);
	return 0;
}
