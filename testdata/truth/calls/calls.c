/*
 * Crashes around calls, for the walker's truth tests (generate.sh). The
 * mode is the first argument:
 *
 *   null      a call through a null function pointer
 *   data      a call through a pointer into non-executable data
 *   unmapped  a call through a pointer to an unmapped address
 *   tail      a fault at the end of a chain of sibling (tail) calls
 *   recurse   a fault a few hundred frames deep in a recursion
 *   abort     abort() from a few frames deep
 *
 * Every function is noipa: the compiler keeps each one whole and calls it
 * (or, for the tail chain, jumps to it), so the chain is the source's.
 */
#include <stdlib.h>
#include <string.h>

#define KEEP __attribute__((noipa))

typedef int (*fn_t)(int);

/* Set before use: the compiler cannot see what they hold. */
fn_t volatile target;
int *volatile bad_ptr;
volatile int sink;

/* Data the program never executes: the .data section is not executable. */
unsigned char data_buf[64] = {1, 2, 3, 4};

/* The calling function of the wild calls: the call is not its last act. */
KEEP int call_through(int x)
{
	int r = target(x);
	sink = r;
	return r + 1;
}

KEEP int wild_level2(int x)
{
	int r = call_through(x * 2);
	sink = r;
	return r;
}

KEEP int wild_level1(int x)
{
	int r = wild_level2(x + 1);
	sink = r;
	return r;
}

/* The tail chain: tail_top calls tail1, which jumps to tail2, which jumps
 * to tail3, which faults. */
KEEP int tail3(int x)
{
	*bad_ptr = x;
	return x;
}

KEEP int tail2(int x)
{
	return tail3(x * 3 + 1);
}

KEEP int tail1(int x)
{
	return tail2(x + 2);
}

KEEP int tail_top(int x)
{
	int r = tail1(x);
	sink = r;
	return r;
}

/* The recursion keeps a local across each call, so it stays a recursion. */
KEEP int recurse(int n)
{
	volatile int local = n;
	if (n == 0)
		*bad_ptr = local;
	int r = recurse(n - 1);
	return r + local;
}

KEEP void abort3(int x)
{
	sink = x;
	abort();
}

KEEP void abort2(int x)
{
	abort3(x + 1);
	sink = x;
}

KEEP void abort1(int x)
{
	abort2(x * 2);
	sink = x;
}

KEEP int run(const char *mode)
{
	if (strcmp(mode, "null") == 0) {
		target = 0;
		return wild_level1(1);
	}
	if (strcmp(mode, "data") == 0) {
		target = (fn_t)(void *)data_buf;
		return wild_level1(2);
	}
	if (strcmp(mode, "unmapped") == 0) {
		target = (fn_t)(void *)0x0dead000;
		return wild_level1(3);
	}
	if (strcmp(mode, "tail") == 0)
		return tail_top(4);
	if (strcmp(mode, "recurse") == 0)
		return recurse(200);
	if (strcmp(mode, "abort") == 0) {
		abort1(5);
		return 0;
	}
	return 2;
}

int main(int argc, char **argv)
{
	int r = run(argc > 1 ? argv[1] : "");
	sink = r;
	return r;
}
