// Thunks as clang writes them for the Microsoft C++ ABI, each an S_THUNK32
// record in the PDB: adjustor thunks (C::f and L::f reached through B,
// L's without a public symbol: internal linkage) and a vcall thunk (the
// pointer to the virtual member B::g).
struct A { virtual int f(int x) { return x + 1; } int a = 1; };
struct B { virtual int f(int x) { return x + 2; } virtual int g(int x) { return x + 5; } int b = 2; };
struct C : A, B { int f(int x) override { return x + c; } int c = 3; };
namespace {
struct L : A, B { int f(int x) override { return x * c; } int c = 4; };
}
int (B::*pm)(int) = &B::g;
extern "C" __attribute__((noinline)) int call(B *b, int x) { return b->f(x) + (b->*pm)(x); }
extern "C" int mainCRTStartup() { C c; L l; return call(&c, 1) + call(&l, 2); }
extern "C" int _fltused = 0;
void operator delete(void *, decltype(sizeof(0))) noexcept {}
void operator delete(void *) noexcept {}
