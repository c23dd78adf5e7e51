#!/usr/bin/env bash
# Run every test program in BUILD/tests (default build/san), each with a time
# limit, and print one closing line: "N passed, N failed".
#
# Programs run QS_TEST_JOBS at a time (default: the CPUs). Each is
# single-threaded and CPU-bound, and CI's time goes to a few long sweeps,
# so one program per CPU roughly halves the suite on 2 cores. A program's
# output is kept in a file and printed whole when it ends, so the log reads
# as if they had run one after another. The slowest go first (the crash
# and fault sweeps), so that no long one starts last.
set -u
dir=${1:-build/san}/tests
# The shell tests read the source tree (man pages, includes, helpers).
QS_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
export QS_SRCDIR
jobs=${QS_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
out=$(mktemp -d /tmp/qs_run_tests.XXXXXX) || exit 1
trap 'rm -rf "$out"' EXIT

progs=()
for first in test_crash test_fault test_crash_paged; do
	[ -x "$dir/$first" ] && progs+=("$dir/$first")
done
for t in "$dir"/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.o|*.d) continue ;; esac
	case "$(basename "$t")" in test_crash|test_fault|test_crash_paged) continue ;; esac
	progs+=("$t")
done
if [ ${#progs[@]} -eq 0 ]; then
	echo "no test programs found in $dir" >&2
	exit 1
fi

# One program: its output to $out/NAME.log, its verdict to $out/NAME.rc.
run_one() { # path
	local name t0 rc=0
	name=$(basename "$1")
	t0=$SECONDS
	timeout 1200 "$1" >"$out/$name.log" 2>&1 || rc=$?
	# Written aside and renamed: the loop below takes the file's being
	# there for the verdict, and could read it empty between the shell's
	# creating it and the echo (CI read an empty verdict once: a passed
	# program counted as failed, "exit " and no time).
	echo "$rc $((SECONDS - t0))" >"$out/$name.rc.tmp"
	mv "$out/$name.rc.tmp" "$out/$name.rc"
}

pass=0; fail=0; failed=()
# Print a finished program's output and verdict, once.
report() { # name
	local name=$1 rc secs
	read -r rc secs <"$out/$name.rc"
	echo "== $name"
	cat "$out/$name.log"
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "== $name: passed in $secs s"
	else
		fail=$((fail + 1)); failed+=("$name")
		echo "== $name: FAILED (exit $rc) after $secs s"
	fi
	rm -f "$out/$name.rc"
}

running=()
for t in "${progs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n 2>/dev/null || true
	done
	run_one "$t" &
	running+=("$(basename "$t")")
	# report whatever has finished, in start order
	while [ ${#running[@]} -gt 0 ] && [ -f "$out/${running[0]}.rc" ]; do
		report "${running[0]}"
		running=("${running[@]:1}")
	done
done
wait
for name in "${running[@]}"; do
	report "$name"
done

[ ${#failed[@]} -gt 0 ] && echo "failed programs: ${failed[*]}"
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
