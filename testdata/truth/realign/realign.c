/*
 * realign: crashes a couple of frames below functions that realign the
 * stack pointer, for the walker's realigned-stack tests (see generate.sh).
 *
 *   over   over_aligned keeps a 64-byte-aligned local array: gcc realigns
 *          the stack (on x86 through a DRAP register, with
 *          DW_CFA_def_cfa_expression and DW_CFA_expression rules) and calls
 *          mid, which calls leaf, which writes through a null pointer
 *   drap   drap_aligned has a variable-length array beside a 64-byte-aligned
 *          one: gcc then realigns through a DRAP register on x86-64 too
 *          (r10: "lea r10,[rsp+8]; and rsp,-64; push [r10-8]; push rbp";
 *          the CFA is read back from the stack by an expression); then
 *          mid, then leaf crashes
 *   force  (x86) forced has force_align_arg_pointer: it realigns the
 *          incoming stack to 16 bytes; then mid, then leaf crashes
 *
 * On i386 main itself realigns the stack (and esp,-16) in both modes.
 */
#include <string.h>

volatile int *volatile bad;
volatile int sink;

#if defined(__i386__) || defined(__x86_64__)
#define FORCE_ALIGN __attribute__((force_align_arg_pointer))
#else
#define FORCE_ALIGN
#endif

int __attribute__((noinline)) leaf(int n)
{
	*bad = n; /* the crash */
	return n + sink;
}

int __attribute__((noinline)) mid(int *p, int n)
{
	int r = leaf(n + p[0]);
	sink = r;
	return r + 1;
}

int __attribute__((noinline)) over_aligned(int n)
{
	int buf[16] __attribute__((aligned(64)));
	for (int i = 0; i < 16; i++)
		buf[i] = n + i + sink;
	int r = mid(buf, n);
	sink = r;
	return r + buf[3];
}

int __attribute__((noinline)) drap_aligned(int n)
{
	int vla[n + 4];
	int buf[16] __attribute__((aligned(64)));
	for (int i = 0; i < n + 4; i++)
		vla[i] = n + i + sink;
	buf[2] = vla[1];
	int r = mid(buf + 2, n);
	sink = r;
	return r + vla[3];
}

int __attribute__((noinline)) FORCE_ALIGN forced(int n)
{
	int buf[4];
	for (int i = 0; i < 4; i++)
		buf[i] = n * i + sink;
	int r = mid(buf, n);
	sink = r;
	return r + buf[1];
}

int main(int argc, char **argv)
{
	int r;
	if (argc > 1 && strcmp(argv[1], "force") == 0)
		r = forced(argc);
	else if (argc > 1 && strcmp(argv[1], "drap") == 0)
		r = drap_aligned(argc);
	else
		r = over_aligned(argc);
	sink = r; /* no tail call: main stays on the stack */
	return 0;
}
