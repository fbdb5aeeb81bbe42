/*
 * threads: crashes in a second thread while main waits for it in
 * pthread_join, for the walker's thread tests (see generate.sh).
 *
 *   segv   the thread's start routine calls two levels down and writes
 *          through a null pointer
 *   abort  the thread's start routine calls two levels down and aborts
 *
 * The crashing thread's walk must end at the thread's start (start_thread,
 * clone or clone3), the main thread's at _start.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile int *volatile bad;
volatile int sink;
static int mode_abort;
static volatile int joining;

int __attribute__((noinline)) t_level2(int n)
{
	if (mode_abort)
		abort();
	*bad = n; /* the crash */
	return n + sink;
}

int __attribute__((noinline)) t_level1(int n)
{
	int r = t_level2(n + 1);
	sink = r;
	return r + 1;
}

void *__attribute__((noinline)) worker(void *arg)
{
	/* Let main block in pthread_join first. */
	struct timespec ts = {0, 200 * 1000 * 1000};
	while (!joining)
		nanosleep(&ts, 0);
	nanosleep(&ts, 0);
	int r = t_level1((int)(long)arg);
	sink = r;
	return 0;
}

int __attribute__((noinline)) wait_for(pthread_t t)
{
	joining = 1;
	int r = pthread_join(t, 0);
	sink = r;
	return r + 1;
}

int main(int argc, char **argv)
{
	pthread_t t;
	mode_abort = argc > 1 && strcmp(argv[1], "abort") == 0;
	if (pthread_create(&t, 0, worker, (void *)(long)argc) != 0)
		return 1;
	return wait_for(t);
}
