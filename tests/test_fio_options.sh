#!/usr/bin/env bash
# test_fio_options: every option of the installed fio's own list (fio
# --cmdhelp=all: 217 in fio 3.33), and of its block and file I/O engines
# (fio --enghelp=ENGINE: 21 more), is known to the bench (issue 33). Each
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
# The options of fio's block and file I/O engines (fio --enghelp=ENGINE),
# which job files for a drive set with their ioengine: the bench has one
# engine of its own, so they are accepted without effect. An engine this
# fio lacks lists nothing.
ne=0
for eng in sync psync vsync pvsync pvsync2 libaio io_uring io_uring_cmd posixaio mmap sg null; do
	fio --enghelp="$eng" 2>/dev/null | awk -F: '{ gsub(/[ \t]/, "", $1); if ($1 != "" && $1 !~ /^IOengine/) print $1 }' \
		>"$tmp/eng"
	ne=$((ne + $(wc -l <"$tmp/eng")))
	cat "$tmp/eng" >>"$tmp/opts"
done
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

echo "fio options (with the block engines' own): $n; with the value 1: accepted $took, refused with a reason" \
	"$refused, the value refused $badval, unknown $unknown"
if [ "$unknown" -ne 0 ] || [ "$other" -ne 0 ]; then
	echo "test_fio_options: FAIL: $unknown unknown, $other unexpected answers"
	exit 1
fi
echo "test_fio_options: PASS"
