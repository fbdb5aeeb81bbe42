#!/bin/sh
# cmpwalk.sh BASE NEW: compares the outputs of two minidump_stackwalk builds
# (e.g. one of the previous commit and one of the working tree:
#   git stash; go build -o /tmp/base ./cmd/minidump_stackwalk; git stash pop
#   go build -o /tmp/new ./cmd/minidump_stackwalk
#   tools/cmpwalk.sh /tmp/base /tmp/new)
# over every case of the shared corpus (cases.tsv: the dump and its symbol
# paths), human, -m, -s, -c, -b and --json each, and prints the runs whose
# outputs differ and a count ("N runs, M differ"). Exit 1 when any differs.
# The corpus is ../shared/corpus beside the checkout, or $GOBREAKPAD_CORPUS.
set -u
base=$1 new=$2
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${GOBREAKPAD_CORPUS:-$root/../shared/corpus}
[ -f "$corpus/cases.tsv" ] || { echo "cmpwalk: no corpus at $corpus" >&2; exit 2; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
runs=0 differ=0
while IFS="$(printf '\t')" read -r name dump _ paths; do
	set --
	for p in $paths; do set -- "$@" "$corpus/$p"; done
	for flag in "" -m -s -c -b --json; do
		runs=$((runs + 1))
		"$base" $flag "$corpus/$dump" "$@" >"$tmp/a" 2>/dev/null
		"$new" $flag "$corpus/$dump" "$@" >"$tmp/b" 2>/dev/null
		if ! cmp -s "$tmp/a" "$tmp/b"; then
			differ=$((differ + 1))
			echo "differs: $name ${flag:-(human)}"
		fi
	done
done <"$corpus/cases.tsv"
echo "$runs runs, $differ differ"
[ "$differ" -eq 0 ]
