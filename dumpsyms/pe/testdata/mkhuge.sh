#!/bin/sh
# mkhuge.sh OUTDIR [UNITS] [CLASSES] [TARGET]: generate UNITS (default 16)
# C++ translation units of CLASSES (default 500) classes each — class
# templates instantiated per class (containers with methods, pairs,
# callbacks), virtual functions, lambdas, inlined helpers in anonymous
# namespaces, functions taking pointers to members and arrays — and build
# them with clang-22 (-g -gcodeview, -O0 or -O1) and lld-link-22 into
# OUTDIR/huge.exe and OUTDIR/huge.pdb (TARGET: x86_64-pc-windows-msvc by
# default, or i686-pc-windows-msvc). With the defaults the PDB is about
# 60 MB: it measures dump_syms' speed and memory on a big PDB
# (docs/dump_syms.md, BenchmarkDumpHugePDB with GOBREAKPAD_HUGE_PDB). It
# is not committed. Units are compiled two at a time.
set -e
out=${1:?usage: mkhuge.sh OUTDIR [UNITS] [CLASSES] [TARGET]}
units=${2:-16}
n=${3:-500}
target=${4:-x86_64-pc-windows-msvc}
mkdir -p "$out"

# common.h: the templates every unit instantiates.
cat > "$out/common.h" <<'EOT'
typedef decltype(sizeof(0)) size_t;
namespace gen {
template <typename T, int K> struct Box {
	T v[K];
	T get(int i) const { return v[i % K]; }
	void set(int i, T x) { v[i % K] = x; }
};
template <typename T> struct Vec {
	T *p; int n, cap;
	T &at(int i) { return p[i % (n ? n : 1)]; }
	const T &at(int i) const { return p[i % (n ? n : 1)]; }
	int size() const { return n; }
	void push(const T &x) { if (n < cap) p[n++] = x; }
	template <typename F> int count(F f) const { int c = 0; for (int i = 0; i < n; i++) c += f(p[i]) ? 1 : 0; return c; }
};
template <typename A, typename B> struct Pair {
	A first; B second;
	Pair swap_with(Pair &o) { Pair t = *this; *this = o; return t; }
	bool operator==(const Pair &o) const { return first == o.first; }
};
template <typename R, typename... Args> struct Callback {
	R (*fn)(void *, Args...);
	void *ctx;
	R operator()(Args... a) const { return fn(ctx, a...); }
};
extern "C" void *opaque(void *);
struct Base {
	virtual ~Base() {}
	virtual int id() const = 0;
	virtual int visit(Base *other, int depth) { return depth ? other->id() + visit(other, depth - 1) : 0; }
};
}
EOT

u=0
while [ $u -lt "$units" ]; do
	src="$out/unit$u.cc"
	{
		echo '#include "common.h"'
		echo "namespace gen { namespace u$u {"
		i=0
		while [ $i -lt "$n" ]; do
			k=$((i % 7 + 1))
			cat <<EOT
enum class E$i : unsigned char { A, B, C };
struct C$i : Base {
	int a; double b; const char *name; E$i e;
	Vec<C$i *> kids; Pair<int, C$i *> link; Callback<int, int, const char *> cb;
	static inline int helper$i(int x) { return x * $i + 1; }
	int f(int x, const char *s, double *d) const { return helper$i(x) + (s ? s[0] : 0) + (d ? (int)*d : 0) + a; }
	int id() const override { return $i + a; }
	int visit(Base *other, int depth) override { return Base::visit(other, depth) + kids.size(); }
	template <typename U> U g(U u, C$i &other) { return u + (U)other.a; }
	int h(int (C$i::*pm)(int, const char *, double *) const, double (&arr)[$k], E$i which) const { return (this->*pm)(a, name, &arr[0]) + (int)which; }
	~C$i() override {}
};
namespace {
int local$i(C$i *c, Box<int, $k> &b) {
	b.set($i, c->f($i, "x", 0));
	return b.get($i) + c->g<long>($i, *c) + c->kids.count([c](C$i *x) { return x->a > c->a; });
}
}
int use$i(int k) {
	C$i c{}; c.a = k; c.name = "n"; c.kids.p = (C$i **)opaque(0); c.kids.cap = k; Box<int, $k> b{};
	double arr[$k] = {};
	Pair<int, C$i *> p{k, &c}; Pair<int, C$i *> q{k + 1, &c}; p.swap_with(q);
	return local$i(&c, b) + c.g<short>((short)k, c) + c.h(&C$i::f, arr, E$i::B) + c.visit(&c, 2) + (p == q);
}
EOT
			i=$((i + 1))
		done
		echo "int unit(int s) {"
		i=0
		while [ $i -lt "$n" ]; do echo "s += use$i(s);"; i=$((i + 1)); done
		echo 'return s; }'
		echo '} }'
	} > "$src"
	u=$((u + 1))
done
{
	echo 'void operator delete(void *, decltype(sizeof(0))) noexcept {}'
	echo 'void operator delete(void *) noexcept {}'
	echo 'extern "C" int _fltused = 0;'
	echo 'extern "C" void __cxa_pure_virtual() {}'
	echo 'extern "C" void *memset(void *p, int c, decltype(sizeof(0)) n) { for (decltype(n) i = 0; i < n; i++) ((volatile char *)p)[i] = (char)c; return p; }'
	echo 'extern "C" int _purecall() { return 0; }'
	u=0
	while [ $u -lt "$units" ]; do echo "namespace gen { namespace u$u { int unit(int); } }"; u=$((u + 1)); done
	echo 'extern "C" __attribute__((noinline)) void *opaque(void *p) { static char buf[4096]; return p ? p : buf; }'
	echo 'extern "C" int mainCRTStartup() { int s = 0;'
	u=0
	while [ $u -lt "$units" ]; do echo "s += gen::u$u::unit(s);"; u=$((u + 1)); done
	echo 'return s; }'
} > "$out/main.cc"

# A third of the units at -O0 (every function and instantiation out of
# line, locals), the others at -O1 (inlined calls).
cc() {
	case $1 in
	*unit*[036].cc) opt=-O0 ;;
	*) opt=-O1 ;;
	esac
	clang-22 --target="$target" $opt -g -gcodeview -fno-exceptions -fno-rtti -I"$out" -c "$1" -o "${1%.cc}.obj"
}
objs="$out/main.obj"
cc "$out/main.cc"
u=0
while [ $u -lt "$units" ]; do
	cc "$out/unit$u.cc" &
	if [ $((u + 1)) -lt "$units" ]; then
		cc "$out/unit$((u + 1)).cc" &
	fi
	wait
	objs="$objs $out/unit$u.obj"
	[ $((u + 1)) -lt "$units" ] && objs="$objs $out/unit$((u + 1)).obj"
	u=$((u + 2))
done
# shellcheck disable=SC2086
lld-link-22 /debug /nodefaultlib /entry:mainCRTStartup /subsystem:console "/out:$out/huge.exe" "/pdb:$out/huge.pdb" $objs
ls -l "$out/huge.exe" "$out/huge.pdb"
