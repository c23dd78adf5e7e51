#!/usr/bin/env bash
# test_layers: the include lines keep the layers of docs/ARCHITECTURE.md:
# cache <- host <- {daemon, bench}. Each folder may include:
#
#   include/qlcshape/  "qlcshape/..."
#   cache/             "qlcshape/..." and its own files
#   include/host/      "qlcshape/...", "host/..."
#   daemon/, bench/    "qlcshape/...", "host/..." and their own files
#
# so the daemon never includes the bench, the host layer neither program,
# and nothing reaches up with "../". The Makefile copies this script to
# BUILD/tests/test_layers. It first checks itself on a small tree with one
# wrong include (which it must refuse), then checks the sources.
# Prints the lines it refuses; exits 0 when there are none, 1 otherwise.
set -u

# The source tree: QS_SRCDIR (scripts/run-tests.sh sets it), else the
# tree this script is in (bash tests/test_layers.sh).
src=${QS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$src/include/qlcshape/engine.h" ] || { echo "test_layers: FAIL: no include/qlcshape/engine.h in $src; set QS_SRCDIR to the source tree"; exit 1; }

# check ROOT: print each include line a folder may not have; status 1 if any
check() {
	local root=$1 bad=0 dir allow f inc
	for dir in include/qlcshape cache include/host daemon bench; do
		case $dir in
		include/qlcshape) allow='^qlcshape/' ;;
		cache) allow='^qlcshape/' ;;
		include/host) allow='^(qlcshape|host)/' ;;
		*) allow='^(qlcshape|host)/' ;;
		esac
		for f in "$root/$dir"/*.[ch]; do
			[ -f "$f" ] || continue
			while IFS= read -r inc; do
				# a file of the folder itself, or a path the folder may reach
				if [[ $inc != */* && $dir != include/* && -f "$root/$dir/$inc" ]]; then
					continue
				fi
				[[ $inc =~ $allow ]] && continue
				echo "test_layers: ${f#"$root"/}: #include \"$inc\" is outside what $dir/ may include"
				bad=1
			done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
		done
	done
	return $bad
}

tmp=$(mktemp -d /tmp/qs_test_layers_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include/qlcshape" "$tmp/include/host" "$tmp/cache" "$tmp/daemon" "$tmp/bench"
printf '#include "qlcshape/engine.h"\n#include "x.h"\n' >"$tmp/daemon/a.c"
touch "$tmp/daemon/x.h"
printf '#include "host/env.h"\n' >"$tmp/bench/b.c"
if ! check "$tmp" >/dev/null; then
	echo "test_layers: FAIL: the check refuses a tree that keeps the layers"
	exit 1
fi
printf '#include "../bench/run.h"\n' >"$tmp/daemon/c.c"
if check "$tmp" >/dev/null; then
	echo "test_layers: FAIL: the check accepts a daemon file that includes the bench"
	exit 1
fi

if check "$src"; then
	echo "test_layers: PASS"
	exit 0
fi
echo "test_layers: FAIL"
exit 1
