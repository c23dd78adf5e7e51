#!/usr/bin/env bash
# test_dram_cmd: qlcshape dram, the sizing command (bench/dram_cmd.c):
#   1. its rows add up to its total, one instance and twelve;
#   2. log placement with a dram_limit plans within it, and the map pages
#      grow by what a larger limit adds; in place, a limit below what the
#      whole log's index needs plans a window of the log and a bound on
#      dirty IUs within it;
#   3. a dram_limit below the floor, a bad option and a fast device too
#      small are refused with a message naming the option, exit status
#      not 0, nothing on stdout.
#
# The Makefile copies this script to BUILD/tests/test_dram_cmd; the tool is
# BUILD/qlcshape next to it. Prints PASS or FAIL with the reasons; exits 0
# on PASS, 1 on FAIL.
set -u

fails=0
bad() {
	echo "test_dram_cmd: $*"
	fails=$((fails + 1))
}
tool=${QS_TOOL:-$(cd "$(dirname "$0")/.." && pwd)/qlcshape}
[ -x "$tool" ] || { echo "test_dram_cmd: FAIL: no $tool (build it first)"; exit 1; }
tmp=$(mktemp -d /tmp/qs_dram.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The MiB column of every part, summed, against the total row.
sum_ok() {
	awk '/ MiB/ && !/^engine/ { v = $(NF - ($0 ~ /GiB$/ ? 3 : 1)); if ($1 == "total") t = v; else s += v }
	     END { d = s - t; if (d < 0) d = -d; exit !(t > 0 && d < 0.5) }' "$1"
}

# 1. the rows and the total, in place and log, 1 and 12 instances
for p in inplace log; do
	for n in 1 12; do
		if ! "$tool" dram --qlc-size 8T --log 100G --placement $p --instances $n \
			>"$tmp/out" 2>"$tmp/err"; then
			bad "dram --placement $p --instances $n failed: $(cat "$tmp/err")"
			continue
		fi
		sum_ok "$tmp/out" || bad "$p x$n: the parts do not add up to the total: $(cat "$tmp/out")"
		if [ $n = 12 ]; then
			one=$(awk '$1 == "total" { print $2 }' "$tmp/out")
			all=$(awk '$1 == "total" { print $4 }' "$tmp/out")
			awk -v a="$one" -v b="$all" 'BEGIN { exit !(b > 0 && (a * 12 / 1024 - b) ^ 2 < 0.01) }' ||
				bad "$p: 12 instances take $all GiB, not 12 x $one MiB"
		fi
	done
done
grep -q "per QLC block" "$tmp/out" || bad "log placement shows no per-QLC-block row"

# 2. a budget: the plan stays within it, and more budget is more map pages
pages() { awk '$1 == "map" && $2 == "pages" { print $3 }' "$1"; }
"$tool" dram --qlc-size 8T --log 16G --placement log --dram-limit 4G >"$tmp/a" 2>&1 ||
	bad "dram --dram-limit 4G failed: $(cat "$tmp/a")"
"$tool" dram --qlc-size 8T --log 16G --placement log --dram-limit 5G >"$tmp/b" 2>&1 ||
	bad "dram --dram-limit 5G failed: $(cat "$tmp/b")"
total=$(awk '$1 == "total" { print $2 }' "$tmp/a")
awk -v t="$total" 'BEGIN { exit !(t > 0 && t <= 4096) }' || bad "4G budget planned $total MiB"
awk -v a="$(pages "$tmp/a")" -v b="$(pages "$tmp/b")" 'BEGIN { exit !(b - a > 1000 && b - a <= 1024) }' ||
	bad "1G more budget gave map pages $(pages "$tmp/a") -> $(pages "$tmp/b") MiB"
grep -q "what dram_limit leaves" "$tmp/a" || bad "no map_dram_limit line: $(cat "$tmp/a")"
# in place, a budget under what the whole log's index needs: a window of the
# log and a fixed dirty-IU pool, within the budget
"$tool" dram --qlc-size 8T --log 100G --placement inplace --dram-limit 200M >"$tmp/c" 2>&1 ||
	bad "dram --placement inplace --dram-limit 200M failed: $(cat "$tmp/c")"
total=$(awk '$1 == "total" { print $2 }' "$tmp/c")
awk -v t="$total" 'BEGIN { exit !(t > 190 && t <= 200) }' || bad "200M budget planned $total MiB"
win=$(awk '/^log in use at most/ { print $6 }' "$tmp/c")
awk -v w="$win" 'BEGIN { exit !(w > 0 && w < 100 * 2^30) }' || bad "no window under the 100G log: $(cat "$tmp/c")"
grep -q "^dirty IUs at most" "$tmp/c" || bad "no dirty-IU bound: $(cat "$tmp/c")"

# 3. refusals: status, a message naming what to change, stdout empty
refuse() {
	local want=$1
	shift
	if "$tool" dram "$@" >"$tmp/out" 2>"$tmp/err"; then
		bad "dram $* succeeded"
	elif ! grep -q -- "$want" "$tmp/err"; then
		bad "dram $*: '$want' not in: $(cat "$tmp/err")"
	elif [ -s "$tmp/out" ]; then
		bad "dram $*: wrote to stdout: $(cat "$tmp/out")"
	fi
}
refuse "needs at least" --qlc-size 64T --log 1T --placement log --dram-limit 1G
refuse "raise dram_limit" --qlc-size 8T --log 100G --placement inplace --dram-limit 40M
refuse "--log 'x'" --qlc-size 8T --log x
refuse "one of --qlc-size and --profile" --log 1G
refuse "too small" --qlc-size 8T --fast-size 1M --placement log
refuse "op_pct" --qlc-size 8T --log 1G --placement log --op-pct 60

if [ $fails -eq 0 ]; then
	echo "test_dram_cmd: PASS"
	exit 0
fi
echo "test_dram_cmd: FAIL ($fails)"
exit 1
