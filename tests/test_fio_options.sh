#!/usr/bin/env bash
# test_fio_options: every option of the installed fio's own list (fio
# --cmdhelp=all: 217 in fio 3.33), and of every engine it lists (fio
# --enghelp, then --enghelp=ENGINE: 57 more), is known to the bench (issue
# 33); every engine too, as the value of ioengine. Each
# goes alone, with the value 1, into a one-job file that qlcshape bench run
# loads; the bench must not answer "unknown key": the option is then
# implemented, accepted without effect, refused with a reason, or its value
# 1 is refused saying what is allowed. A line bs=3 after it is refused in
# every case, so that the load stops before any simulation and the test
# takes a second or two.
#
# The Makefile copies this script to BUILD/tests/test_fio_options; the tool
# is BUILD/qlcshape next to it. Prints the counts, and each option answered
# with "unknown key" and PASS or FAIL; exits 0 on PASS (or SKIP without fio),
# 1 on FAIL.
set -u

src=${QS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tool=${QS_TOOL:-$(cd "$(dirname "$0")/.." && pwd)/qlcshape}
[ -x "$tool" ] || { echo "test_fio_options: FAIL: no $tool (build it first)"; exit 1; }
if ! command -v fio >/dev/null 2>&1; then
	echo "test_fio_options: SKIP: no fio here (bash scripts/deps.sh installs it)"
	exit 0
fi

tmp=$(mktemp -d /tmp/qs_fio_options.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$src" || exit 1

# fio's list: "name   : text", sub-options indented; the name is the
# first word of each line
fio --cmdhelp=all | awk -F: '{ gsub(/[ \t]/, "", $1); if ($1 != "") print $1 }' \
	>"$tmp/opts"
n=$(wc -l <"$tmp/opts")
if [ "$n" -lt 100 ]; then
	echo "test_fio_options: FAIL: fio --cmdhelp=all listed $n options (want at least 100)"
	exit 1
fi
# The engines this fio has (fio --enghelp: "Available IO engines:", then
# one a line) and their own options (fio --enghelp=ENGINE), which job
# files set with their ioengine: the bench runs those of the engines that
# move blocks on its own engine, without effect, and refuses the others'
# with the engine's reason.
fio --enghelp 2>/dev/null | awk 'NR > 1 { gsub(/[ \t]/, ""); if ($0 != "") print }' >"$tmp/engines"
if [ "$(wc -l <"$tmp/engines")" -lt 10 ]; then
	echo "test_fio_options: FAIL: fio --enghelp listed $(wc -l <"$tmp/engines") engines (want at least 10)"
	exit 1
fi
ne=0
while read -r eng; do
	fio --enghelp="$eng" 2>/dev/null | awk -F: '{ gsub(/[ \t]/, "", $1); if ($1 != "" && $1 !~ /^IOengine/) print $1 }' \
		>"$tmp/eng"
	ne=$((ne + $(wc -l <"$tmp/eng")))
	cat "$tmp/eng" >>"$tmp/opts"
done <"$tmp/engines"
sort -u -o "$tmp/opts" "$tmp/opts"
if [ "$ne" -lt 10 ]; then
	echo "test_fio_options: FAIL: fio --enghelp listed $ne engine options (want at least 10)"
	exit 1
fi
n=$(wc -l <"$tmp/opts")

unknown=0 took=0 refused=0 badval=0 other=0
while read -r o; do
	printf '[j]\n%s=1\nbs=3\n' "$o" >"$tmp/o.fio"
	out=$("$tool" bench run "$tmp/o.fio" 2>&1 >/dev/null)
	case $out in
	*"unknown key"*)
		echo "test_fio_options: unknown key: $o: $out"
		unknown=$((unknown + 1)) ;;
	*":3: [j] key 'bs' value '3'"*) took=$((took + 1)) ;;
	*":2: [j] key '$o' value '1': refused: "*) refused=$((refused + 1)) ;;
	*":2: [j] key '$o' value '1': allowed: "*) badval=$((badval + 1)) ;;
	*)
		echo "test_fio_options: unexpected answer for $o: $out"
		other=$((other + 1)) ;;
	esac
done <"$tmp/opts"

echo "fio options (with every engine's own): $n; with the value 1: accepted $took, refused with a reason" \
	"$refused, the value refused $badval, unknown $unknown"
# Every engine as ioengine's value: taken (it moves blocks: the bench's
# engine runs its I/O) or refused with the reason; never an error without one.
etook=0 erefused=0
while read -r eng; do
	printf '[j]\nioengine=%s\nbs=3\n' "$eng" >"$tmp/o.fio"
	out=$("$tool" bench run "$tmp/o.fio" 2>&1 >/dev/null)
	case $out in
	*":3: [j] key 'bs' value '3'"*) etook=$((etook + 1)) ;;
	*":2: [j] key 'ioengine' value '$eng': refused: fio's "*) erefused=$((erefused + 1)) ;;
	*)
		echo "test_fio_options: unexpected answer for ioengine=$eng: $out"
		other=$((other + 1)) ;;
	esac
done <"$tmp/engines"
echo "fio engines: $(wc -l <"$tmp/engines"); run on the bench's engine $etook, refused with a reason $erefused"
if [ "$unknown" -ne 0 ] || [ "$other" -ne 0 ]; then
	echo "test_fio_options: FAIL: $unknown unknown, $other unexpected answers"
	exit 1
fi
echo "test_fio_options: PASS"
