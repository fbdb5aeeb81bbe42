#!/bin/sh
# mkbig.sh OUTDIR [N] [TARGET]: generate a C++ file with N (default 3000)
# classes, each with templates, methods and inlined helpers, and build it
# with clang-22 and lld-link-22 into OUTDIR/big.exe and OUTDIR/big.pdb
# (TARGET: i686-pc-windows-msvc by default, or x86_64-pc-windows-msvc).
# The PDB measures dump_syms' speed and memory (docs/dump_syms.md); it is
# not committed.
set -e
out=${1:?usage: mkbig.sh OUTDIR [N] [TARGET]}
n=${2:-3000}
target=${3:-i686-pc-windows-msvc}
mkdir -p "$out"
src="$out/big.cc"
{
	echo 'void operator delete(void *, decltype(sizeof(0))) noexcept {}'
	echo 'void operator delete(void *) noexcept {}'
	echo 'extern "C" int _fltused = 0;'
	echo 'namespace gen {'
	echo 'template <typename T, int K> struct Box { T v[K]; T get(int i) const { return v[i % K]; } void set(int i, T x) { v[i % K] = x; } };'
	i=0
	while [ $i -lt "$n" ]; do
		cat <<EOT
struct C$i {
	int a; double b; const char *name;
	static inline int helper$i(int x) { return x * $i + 1; }
	int f(int x, const char *s, double *d) const { return helper$i(x) + (s ? s[0] : 0) + (d ? (int)*d : 0) + a; }
	virtual ~C$i() {}
	template <typename U> U g(U u, C$i &other) { return u + (U)other.a; }
	void (*cb)(void *, int);
};
namespace { int local$i(C$i *c, Box<int, $((i % 7 + 1))> &b) { b.set($i, c->f($i, "x", 0)); return b.get($i) + c->g<long>($i, *c); } }
int use$i(int k) { C$i c; c.a = k; Box<int, $((i % 7 + 1))> b; return local$i(&c, b) + c.g<short>((short)k, c); }
EOT
		i=$((i + 1))
	done
	echo '}'
	echo 'extern "C" int mainCRTStartup() { int s = 0;'
	i=0
	while [ $i -lt "$n" ]; do echo "s += gen::use$i(s);"; i=$((i + 1)); done
	echo 'return s; }'
} > "$src"
clang-22 --target="$target" -O1 -g -gcodeview -fno-exceptions -fno-rtti -c "$src" -o "$out/big.obj"
lld-link-22 /debug /nodefaultlib /entry:mainCRTStartup /subsystem:console "/out:$out/big.exe" "/pdb:$out/big.pdb" "$out/big.obj"
ls -l "$out/big.exe" "$out/big.pdb"
