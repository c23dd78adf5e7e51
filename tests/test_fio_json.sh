#!/usr/bin/env bash
# test_fio_json: the bench's --output-format=json is read by a consumer of
# fio's JSON (tests/fio_json_read.py, written for fio's layout only):
#
#   1. fio itself runs a small job on a file with --output-format=json; the
#      reader accepts that JSON (so it reads real fio output), and refuses
#      copies with a wrong figure, a missing key and fio's percentile keys
#      printed otherwise (so its checks can fail);
#   2. qlcshape bench run runs the same job file (its engine and file
#      options ignored in simulation) with --output-format=json, to stdout
#      and with --output F; the reader accepts both, one fio job per job and
#      variant, and stdout holds nothing but the JSON;
#   3. group_reporting sums a group into one fio job, unified_rw_reporting
#      gives fio's "mixed", normal,json writes the table and then the JSON,
#      json+ is refused saying why;
#   4. a trace replay's summary line goes to stderr with the notes, and
#      stdout stays fio's JSON.
#
# The Makefile copies this script to BUILD/tests/test_fio_json; the tool is
# BUILD/qlcshape next to it. Prints the reader's lines and PASS or FAIL with
# the reasons; exits 0 on PASS (or SKIP without fio or python3), 1 on FAIL.
set -u

fails=0
bad() {
	echo "test_fio_json: $*"
	fails=$((fails + 1))
}

# The source tree: QS_SRCDIR (scripts/run-tests.sh sets it), else the
# tree this script is in (bash tests/test_fio_json.sh).
src=${QS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$src/tests/fio_json_read.py" ] || { echo "test_fio_json: FAIL: no tests/fio_json_read.py in $src; set QS_SRCDIR to the source tree"; exit 1; }
tool=${QS_TOOL:-$(cd "$(dirname "$0")/.." && pwd)/qlcshape}
[ -x "$tool" ] || { echo "test_fio_json: FAIL: no $tool (build it first)"; exit 1; }
for t in fio python3; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "test_fio_json: SKIP: no $t here"
		exit 0
	fi
done
reader="python3 $src/tests/fio_json_read.py"

tmp=$(mktemp -d /tmp/qs_fio_json.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
# the bench reads its drive profiles from conf/ under the current directory
cd "$src" || exit 1

# One job file for fio and the bench: random writes by two clones, then a
# sequential read (stonewall: a group of its own), on a 16 MiB file.
cat >"$tmp/job.fio" <<EOF
[global]
filename=$tmp/data
size=16m
ioengine=psync
direct=0
[randwrite]
rw=randwrite
bs=4k
numjobs=2
[seqread]
stonewall
rw=read
bs=64k
EOF

# 1. real fio, real file
if ! fio --output-format=json --output="$tmp/fio.json" "$tmp/job.fio" >"$tmp/fio.out" 2>&1; then
	bad "fio failed: $(head -5 "$tmp/fio.out")"
elif ! $reader "$tmp/fio.json"; then
	bad "the reader refuses real fio's JSON"
else
	# the reader's checks can fail: a wrong iops, a missing key, fio's
	# percentile keys printed another way
	python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
d = json.load(open(tmp + "/fio.json"))
w = d["jobs"][0]["write"]
w["iops"] = w["iops"] * 2 + 1000
json.dump(d, open(tmp + "/bad_iops.json", "w"))
d = json.load(open(tmp + "/fio.json"))
del d["jobs"][0]["read"]["lat_ns"]
json.dump(d, open(tmp + "/bad_key.json", "w"))
d = json.load(open(tmp + "/fio.json"))
p = d["jobs"][0]["write"]["clat_ns"]["percentile"]
d["jobs"][0]["write"]["clat_ns"]["percentile"] = {"%g" % float(k): v for k, v in p.items()}
json.dump(d, open(tmp + "/bad_pct.json", "w"))
EOF
	for b in bad_iops bad_key bad_pct; do
		if $reader "$tmp/$b.json" >"$tmp/$b.out" 2>&1; then
			bad "the reader accepts $b.json"
		else
			echo "reader refuses $b.json: $(grep -v 'checks failed' "$tmp/$b.out" | grep -m1 '^fio_json_read:')"
		fi
	done
fi

# 2. the bench, the same job file; stdout holds the JSON alone
bench="$tool bench run $tmp/job.fio --runtime 20ms --ramp-time 0 --workers 1"
if ! $bench --output-format=json >"$tmp/bench.json" 2>"$tmp/bench.err"; then
	bad "bench run --output-format=json failed: $(head -3 "$tmp/bench.err")"
elif ! $reader - <"$tmp/bench.json" | tee "$tmp/read.out"; then
	bad "the reader refuses the bench's JSON on stdout"
else
	# fio's entries: 2 clones of randwrite and seqread, shaping off and on
	n=$(grep -c '^randwrite (shaping off) ' "$tmp/read.out")
	[ "$n" -eq 2 ] || bad "want 2 randwrite (shaping off) jobs (one a clone), got $n"
	grep -q '^randwrite (shaping on, fifo, inplace) ' "$tmp/read.out" ||
		bad "no randwrite (shaping on, fifo, inplace) job"
	grep -q '^seqread (shaping on, fifo, inplace) *read ' "$tmp/read.out" ||
		bad "no seqread (shaping on) read line"
	grep -q 'fio-3.33-qlcshape, 6 jobs, every check passed' "$tmp/read.out" ||
		bad "want 6 jobs read without a failed check"
	grep -q 'ignored in simulation: filename, ioengine, direct' "$tmp/bench.err" ||
		bad "no ignored-in-simulation note on stderr: $(cat "$tmp/bench.err")"
	python3 - "$tmp/bench.json" <<'EOF' || bad "the qlcshape objects are not as documented"
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    q = j["qlcshape"]
    assert q["shaping"] in ("off", "on"), q
    assert q["mode"] == "sim" and isinstance(q["qlc"]["write_bytes"], int), q
    assert "wear" in q and "fast" in q and "client" in q, q
    # the engine's DRAM with shaping on only; no map in place
    m = q["memory"]
    assert (m is None) == (q["shaping"] == "off"), q
    assert m is None or 0 < m["engine_bytes"] <= m["engine_full_scale_bytes"], q
    assert q["map"] is None, q
assert len({j["groupid"] for j in d["jobs"]}) == 4, "a groupid per group and variant"
EOF
fi
if ! $bench --output-format=json --output "$tmp/bench2.json" >"$tmp/bench2.out" \
	2>"$tmp/bench2.err"; then
	bad "bench run --output F failed: $(head -3 "$tmp/bench2.err")"
else
	[ -s "$tmp/bench2.out" ] && bad "--output F left text on stdout: $(head -3 "$tmp/bench2.out")"
	$reader "$tmp/bench2.json" >/dev/null || bad "the reader refuses the --output file"
fi

# 3. group_reporting, unified_rw_reporting, normal,json, json+
cat >"$tmp/grp.fio" <<EOF
[global]
size=16m
iodepth=4
group_reporting
[w]
rw=randwrite
numjobs=3
[r]
rw=randread
[m]
new_group
rw=randrw
unified_rw_reporting=mixed
EOF
if ! $tool bench run "$tmp/grp.fio" --runtime 20ms --ramp-time 0 --shaping off \
	--output-format=normal,json --output "$tmp/grp.out" 2>"$tmp/grp.err"; then
	bad "bench run normal,json failed: $(head -3 "$tmp/grp.err")"
else
	grep -q '^job w$' "$tmp/grp.out" || bad "normal,json: no table before the JSON"
	sed -n '/^{$/,$p' "$tmp/grp.out" >"$tmp/grp.json"
	$reader "$tmp/grp.json" || bad "the reader refuses the group_reporting JSON"
	python3 - "$tmp/grp.json" <<'EOF' || bad "group_reporting or unified_rw_reporting not as fio's"
import json, sys
d = json.load(open(sys.argv[1]))
names = [j["jobname"] for j in d["jobs"]]
assert names == ["w (shaping off)", "m (shaping off)"], names
w, m = d["jobs"]
assert w["write"]["total_ios"] > 0 and w["read"]["total_ios"] > 0, "w sums r's reads"
assert "mixed" in m and "read" not in m, list(m)
assert m["mixed"]["total_ios"] > 0
EOF
fi
if $tool bench run "$tmp/grp.fio" --output-format=json+ >/dev/null 2>"$tmp/plus.err"; then
	bad "json+ accepted"
else
	grep -q "json+.*bins" "$tmp/plus.err" || bad "json+ refused without the reason: $(cat "$tmp/plus.err")"
fi

# 4. a trace replay: its summary line goes with the notes (stderr), not into
#    the JSON on stdout
# (libCacheSim's layout, 3,000 requests 10 us apart: 30 ms, a runtime in ms)
awk 'BEGIN { print "version,time,op,size,lbn"
	for (i = 1; i <= 3000; i++) printf "1,%.6f,%s,4096,%d\n", i * 1e-5, i % 2 ? "0x2a" : "0x28", i * 8 }' \
	>"$tmp/t.csv"
printf '[t]\ntrace=%s\n' "$tmp/t.csv" >"$tmp/trace.fio"
if ! $tool bench run "$tmp/trace.fio" --runtime 20ms --ramp-time 0 --shaping off \
	--output-format=json >"$tmp/trace.json" 2>"$tmp/trace.err"; then
	bad "trace replay with json failed: $(head -3 "$tmp/trace.err")"
else
	$reader "$tmp/trace.json" >/dev/null || bad "trace replay: stdout is not fio JSON"
	grep -q '^trace \[t\]' "$tmp/trace.err" || bad "trace replay: no summary line on stderr"
fi

if [ "$fails" -eq 0 ]; then
	echo "test_fio_json: PASS"
	exit 0
fi
echo "test_fio_json: FAIL ($fails)"
exit 1
