/* A small program for dumpsyms' end-to-end test: inlined helpers, a
   function split into hot and cold parts, and a recursive function. */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) int square(int x) {
  return x * x;
}

static inline __attribute__((always_inline)) int sum_squares(int a, int b) {
  return square(a) + square(b);
}

__attribute__((noinline, cold, noreturn)) static void die(const char *why) {
  fprintf(stderr, "%s\n", why);
  abort();
}

__attribute__((noinline)) int parse(const char *s) {
  if (s == NULL) {
    fprintf(stderr, "parse: ");
    die("null input");
  }
  int v = 0;
  for (; *s >= '0' && *s <= '9'; s++)
    v = v * 10 + (*s - '0');
  return v;
}

__attribute__((noinline)) int fib(int n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv) {
  int a = argc > 1 ? parse(argv[1]) : 3;
  int b = argc > 2 ? parse(argv[2]) : 4;
  printf("%d %d\n", sum_squares(a, b), fib(a));
  return 0;
}
