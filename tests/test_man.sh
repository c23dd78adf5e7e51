#!/usr/bin/env bash
# test_man: the man pages build with scdoc, render with man(1) without groff
# warnings, and name every option and config key the code has today.
#
# The Makefile copies this script to BUILD/tests/test_man, so
# scripts/run-tests.sh runs it with the C tests. The lists of options and
# keys are read from the sources (getopt_long tables, the config parser's
# key table, the tool's command table), so an option or key added to the
# code without a line in its page fails here.
#
# Prints PASS or FAIL with the reasons; exits 0 on PASS, 1 on FAIL.
set -u

fails=0
bad() {
	echo "test_man: $*"
	fails=$((fails + 1))
}

# The source tree: QS_SRCDIR (scripts/run-tests.sh sets it), else the
# tree this script is in (bash tests/test_man.sh).
src=${QS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
if [ ! -f "$src/man/qlcshaped.8.scd" ]; then
	echo "test_man: FAIL: no man/qlcshaped.8.scd in $src; set QS_SRCDIR to the source tree"
	exit 1
fi
for tool in scdoc man; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "test_man: FAIL: $tool not found (scripts/deps.sh installs scdoc; man is man-db)"
		exit 1
	fi
done

tmp=$(mktemp -d /tmp/qs_man.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1. Build and render each page; groff's warnings count as failures.
for scd in "$src"/man/*.scd; do
	page=$(basename "$scd" .scd)
	if ! scdoc <"$scd" >"$tmp/$page" 2>"$tmp/err"; then
		bad "scdoc $page: $(cat "$tmp/err")"
		continue
	fi
	MANWIDTH=80 man --warnings=all -l "$tmp/$page" >"$tmp/$page.txt" 2>"$tmp/err"
	[ -s "$tmp/err" ] && bad "man -l $page warns: $(head -3 "$tmp/err")"
	lines=$(wc -l <"$tmp/$page.txt")
	[ "$lines" -gt 50 ] || bad "man -l $page rendered only $lines lines"
	echo "man -l $page: $lines lines"
done

# 2. Every option and key of the code is in its page (in bold, as written).
need() { # PAGE-SOURCE TEXT WHAT
	grep -qF -- "$2" "$1" || bad "$(basename "$1") does not document $3 ($2)"
}
n=0
# The daemon's long options (getopt_long table of daemon/qlcshaped.c).
for o in $(sed -n 's/^[[:space:]]*{"\([a-z-]*\)", \(required\|no\)_argument.*/\1/p' \
	"$src/daemon/qlcshaped.c"); do
	need "$src/man/qlcshaped.8.scd" "*--$o*" "qlcshaped --$o"
	n=$((n + 1))
done
# Every config key (the parser's table in include/host/config.c).
while read -r section key; do
	need "$src/man/qlcshaped.ini.5.scd" "*$key* =" "[$section] $key"
	grep -q "^# \[$section\]" "$src/man/qlcshaped.ini.5.scd" ||
		bad "qlcshaped.ini.5.scd has no section [$section]"
	n=$((n + 1))
done < <(sed -n 's/^[[:space:]]*{"\([a-z]*\)", "\([a-z_]*\)", CFG_.*/\1 \2/p' \
	"$src/include/host/config.c")
# The tool's commands (bench/main.c) and their long options.
for c in $(sed -n 's/^[[:space:]]*{"bench", "\([a-z-]*\)".*/\1/p' "$src/bench/main.c"); do
	need "$src/man/qlcshape.1.scd" "*bench $c*" "qlcshape bench $c"
	n=$((n + 1))
done
for f in "$src"/bench/*.c; do
	[ "$f" = "$src/bench/main.c" ] && continue
	for o in $(sed -n 's/^[[:space:]]*{"\([a-z-]*\)", \(required\|no\)_argument.*/\1/p' "$f"); do
		need "$src/man/qlcshape.1.scd" "*--$o*" "qlcshape --$o ($(basename "$f"))"
		n=$((n + 1))
	done
done
echo "checked $n options, keys and commands against the pages"
# Fewer than today's count means the extraction broke, and nothing was checked.
[ "$n" -ge 40 ] || bad "found only $n options and keys in the sources: the extraction broke"

if [ "$fails" -gt 0 ]; then
	echo "test_man: FAIL ($fails problems)"
	exit 1
fi
echo "test_man: PASS"
