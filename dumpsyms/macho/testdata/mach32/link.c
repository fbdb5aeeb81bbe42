/* A self-contained program for the hand-linked 32-bit executables
   (mklink): no data, no external symbols. */
__attribute__((noinline)) static void bump(int v) { __asm__ volatile("" ::"r"(v)); }

__attribute__((noinline)) int many_regs(int a, int b, int c, int d) {
	int s = 0;
	for (int i = 0; i < a; i++) {
		bump(i * b);
		s += c * d + i;
	}
	bump(s);
	return s + a + b;
}

__attribute__((noinline)) int big_frame(int n) {
	volatile char buf[3000];
	for (int i = 0; i < n; i++)
		buf[i % 3000] = (char)i;
	bump(buf[n % 3000]);
	return buf[0];
}

__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }

static inline __attribute__((always_inline)) int twice(int x) { return leaf(x) + leaf(x + 1); }

int main(int argc, char **argv) {
	(void)argv;
	bump(many_regs(argc, 2, 3, 4) + big_frame(argc) + twice(argc));
	return 0;
}
