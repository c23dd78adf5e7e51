#!/usr/bin/env bash
# Run each libFuzzer harness for a while and print its statistics.
#
#   scripts/fuzz.sh BUILD SECONDS NAME...
#
# BUILD/fuzz/fuzz_NAME (make FUZZ=1 fuzz-bins) runs for SECONDS on
# BUILD/fuzz/corpus/NAME, a working corpus seeded from the committed
# tests/fuzz/corpus/NAME (new inputs go to the working one only; to keep
# one, copy it into tests/fuzz/corpus/NAME). A crash, leak, timeout or
# out-of-memory stops that harness and leaves the input in
# BUILD/fuzz/crashes/NAME/ (emptied when the harness starts); replay it
# with the gcc build:
#   build/san/tests/test_fuzz_NAME BUILD/fuzz/crashes/NAME/crash-...
# Prints one line per harness (executions, libFuzzer's cov and ft, crashes)
# and exits 1 if any harness found something.
set -u
build=$1 secs=$2
shift 2
found=0
printf '%-8s %12s %8s %8s %8s %8s\n' harness executions exec/s cov ft crashes
for name in "$@"; do
	bin=$build/fuzz/fuzz_$name
	work=$build/fuzz/corpus/$name
	crashes=$build/fuzz/crashes/$name
	log=$build/fuzz/$name.log
	rm -rf "$crashes"
	mkdir -p "$work" "$crashes"
	# Inputs: the format harness takes sparse fast-tier images (a few KB);
	# the config reader's lines go up to 4 KiB.
	case $name in
	format) maxlen=65536 ;;
	*) maxlen=16384 ;;
	esac
	"$bin" -max_total_time="$secs" -max_len="$maxlen" -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$crashes/" "$work" "tests/fuzz/corpus/$name" \
		>"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	n=$(find "$crashes" -type f | wc -l)
	printf '%-8s %12s %8s %8s %8s %8s\n' "$name" "${execs:-?}" "${speed:-?}" "${cov:-?}" \
		"${ft:-?}" "$n"
	if [ "$rc" -ne 0 ] || [ "$n" -ne 0 ]; then
		found=1
		echo "  $name: exit $rc; see $log and $crashes/" >&2
	fi
done
exit $found
