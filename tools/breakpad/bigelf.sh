#!/bin/bash
# bigelf.sh: builds a large C++ ELF with DWARF, the input on which
# tools/breakpad/bench.sh compares Breakpad's dump_syms with ours
# (docs/performance.md). The program is generated: FILES translation units,
# each with FUNCS classes, methods, templates instantiated over std::vector,
# std::map and std::string, inline helpers and lambdas, compiled with
# g++ -g -O2 (inlined frames, location lists, many types: what real C++
# programs put in their DWARF). It is never run.
#
# Usage: tools/breakpad/bigelf.sh OUT [FILES] [FUNCS]   (defaults 6 and 40: a 17 MiB
# ELF with 8 MB of .debug_info; each unit takes g++ some 20 s of CPU)
# Writes OUT (the ELF) and OUT.src/ (the sources); does nothing when OUT
# exists and is newer than this script. Needs g++ and make.
set -euo pipefail

out=$1
files=${2:-6}
funcs=${3:-40}
self=$(readlink -f "$0")
if [ -f "$out" ] && [ "$out" -nt "$self" ]; then
	exit 0
fi
src=$out.src
mkdir -p "$src"
# put NAME: stdin into $src/NAME unless it holds that already (make then
# keeps the objects of an earlier, interrupted build).
put() {
	cat >"$src/$1.new"
	if cmp -s "$src/$1.new" "$src/$1"; then rm "$src/$1.new"; else mv "$src/$1.new" "$src/$1"; fi
}

for ((k = 0; k < files; k++)); do
	{
		cat <<EOF
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>
namespace gen$k {
template <typename T> struct Box {
	std::vector<T> items;
	std::map<std::string, T> byName;
	void add(const std::string &n, T v) { items.push_back(v); byName[n] = v; }
	T sum() const { T s{}; for (const T &x : items) s += x; return s; }
};
EOF
		for ((i = 0; i < funcs; i++)); do
			cat <<EOF
struct C${i} {
	int a = $i;
	double b = $i.5;
	std::string name = "c${k}_${i}";
	std::vector<int> v;
	virtual ~C${i}() = default;
	virtual int step(int x) const;
};
static inline int h${i}(int x) { return (x * $((i % 7 + 3))) ^ (x >> $((i % 5 + 1))); }
int C${i}::step(int x) const {
	int s = a;
	for (int y : v) s += h${i}(y + x);
	return s + static_cast<int>(b) + static_cast<int>(name.size());
}
int f${i}(int x) {
	Box<int> bi;
	Box<double> bd;
	auto c = std::make_unique<C${i}>();
	for (int j = 0; j < x % 17; j++) {
		c->v.push_back(h${i}(j));
		bi.add(std::to_string(j), j * x);
		bd.add(c->name, j / 3.0);
	}
	std::sort(c->v.begin(), c->v.end(), [x](int p, int q) { return (p ^ x) < (q ^ x); });
	return c->step(x) + bi.sum() + static_cast<int>(bd.sum());
}
EOF
		done
		echo "int run(int x) {"
		echo "	int s = 0;"
		for ((i = 0; i < funcs; i++)); do
			echo "	s += f${i}(x + $i);"
		done
		echo "	return s;"
		echo "}"
		echo "} // namespace gen$k"
	} | put "gen$k.cc"
done
{
	for ((k = 0; k < files; k++)); do echo "namespace gen$k { int run(int); }"; done
	echo "int main(int argc, char **) {"
	echo "	int s = 0;"
	for ((k = 0; k < files; k++)); do echo "	s += gen$k::run(argc);"; done
	echo "	return s & 1;"
	echo "}"
} | put main.cc
{
	printf 'OBJ = main.o'
	for ((k = 0; k < files; k++)); do printf ' gen%d.o' "$k"; done
	echo
	echo "bigelf: \$(OBJ)"
	printf '\tg++ -o $@ $(OBJ)\n'
	echo "%.o: %.cc"
	printf '\tg++ -g -O2 -c -o $@ $<\n'
} | put Makefile
make -s -C "$src" -j"$(nproc)" bigelf
mv "$src/bigelf" "$out"
