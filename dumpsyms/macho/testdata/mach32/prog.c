/* 32-bit Mach-O test program (make.sh): functions whose compact unwind
   encodings cover the i386 modes when built with and without frame
   pointers. */
extern volatile int sink;
void bump(int v);

/* callee-saved registers, a small frame */
__attribute__((noinline)) int many_regs(int a, int b, int c, int d) {
	int s = 0;
	for (int i = 0; i < a; i++) {
		bump(i * b);
		s += c * d + i;
	}
	bump(s);
	return s + a + b;
}

/* a frame too big for the immediate frameless mode */
__attribute__((noinline)) int big_frame(int n) {
	volatile char buf[3000];
	for (int i = 0; i < n; i++)
		buf[i % 3000] = (char)i;
	bump(buf[n % 3000]);
	return buf[0];
}

/* a leaf */
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }

static inline __attribute__((always_inline)) int twice(int x) { return leaf(x) + leaf(x + 1); }

int main(int argc, char **argv) {
	(void)argv;
	sink = many_regs(argc, 2, 3, 4) + big_frame(argc) + twice(argc);
	return 0;
}
