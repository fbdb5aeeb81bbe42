#!/bin/sh
# tools/socorro/run.sh SOCORRO_GIT_DIR: signs every dump of ../shared/corpus
# and testdata/ as Socorro does, and compares (docs/compat.md, "Socorro").
# Each dump is walked by gobreakpad into rust-minidump's JSON report, which
# Socorro's own signature generator (socorro/signature of the given Socorro
# repository, a bare git directory or a checkout; run with python3 and a
# stand-in for its one dependency, glom) signs; gobreakpad signs the same
# walk with Socorro's lists and bare module names (must agree) and with its
# own defaults (differ where docs/compat.md says). Prints the differences
# and, last, "socorro: N dumps, socorro lists agree A, default lists agree D".
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
src=${1:?usage: tools/socorro/run.sh SOCORRO_GIT_DIR}
corpus=${CORPUS:-$root/../shared/corpus}
work=$(mktemp -d "${TMPDIR:-/tmp}/socorro-cmp.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/py/socorro" "$work/json"
git -C "$src" archive HEAD socorro/signature | tar -x -C "$work/py"
: > "$work/py/socorro/__init__.py"
cp tools/socorro/glom.py "$work/py/"
{
	if [ -f "$corpus/cases.tsv" ]; then
		awk -F'\t' -v c="$corpus" '{ s = ""; n = split($4, a, " "); for (i = 1; i <= n; i++) s = s " " c "/" a[i]; print c "/" $2 "\t" s }' "$corpus/cases.tsv"
		find "$corpus" -name '*.dmp' | sort | while read -r d; do
			grep -q "	${d#"$corpus"/}	" "$corpus/cases.tsv" || printf '%s\t\n' "$d"
		done
	fi
	find testdata -name '*.dmp' | sort | while read -r d; do
		s=$(dirname "$d")/symbols
		if [ -d "$s" ]; then printf '%s\t%s\n' "$d" "$s"; else printf '%s\t\n' "$d"; fi
	done
} > "$work/dumps.tsv"
go run ./tools/socorro "$work/json" "$work/py/socorro/signature/siglists" < "$work/dumps.tsv" > "$work/ours.tsv" 2> "$work/walk.err" || { cat "$work/walk.err" >&2; exit 2; }
cut -f2 "$work/ours.tsv" | grep -v '^ERR$' | xargs python3 tools/socorro/sign.py "$work/py" > "$work/socorro.tsv"
awk -F'\t' '
	NR == FNR { soc[$1] = $2; next }
	$2 == "ERR" { next }
	{ n++; s = soc[$2]
	  if ($4 == s) a++; else print "differs (socorro lists): " $1 ": ours \"" $4 "\", socorro \"" s "\""
	  if ($3 == s) d++ }
	END { printf "socorro: %d dumps, socorro lists agree %d, default lists agree %d\n", n, a, d; exit (a != n) }
' "$work/socorro.tsv" "$work/ours.tsv"
