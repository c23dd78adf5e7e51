#!/usr/bin/env bash
# Run every test program in BUILD/tests (default build/san), each with a time
# limit, and print one closing line: "N passed, N failed".
set -u
dir=${1:-build/san}/tests
# The shell tests read the source tree (man pages, includes, helpers).
QS_SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
export QS_SRCDIR
pass=0; fail=0; failed=()
for t in "$dir"/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.o|*.d) continue ;; esac
	name=$(basename "$t")
	echo "== $name"
	t0=$SECONDS
	if timeout 1200 "$t"; then
		pass=$((pass + 1))
		echo "== $name: passed in $((SECONDS - t0)) s"
	else
		fail=$((fail + 1)); failed+=("$name")
		echo "== $name: FAILED after $((SECONDS - t0)) s"
	fi
done
[ ${#failed[@]} -gt 0 ] && echo "failed programs: ${failed[*]}"
if [ $((pass + fail)) -eq 0 ]; then
	echo "no test programs found in $dir" >&2
	exit 1
fi
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
