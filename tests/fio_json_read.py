#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A reader of fio's JSON output (fio --output-format=json), as a tool that
consumes fio's results would read it: it knows fio's layout and nothing of
the qlcshape bench. tests/test_fio_json.sh first runs it on the JSON of a
real fio run, then on the bench's --output-format=json, so the bench's JSON
is read by a consumer that was checked against fio's own.

    fio_json_read.py FILE|-    prints one line per job and direction;
                               exits 1 naming every check that failed

Checks, each one a property of fio 3.33's JSON:
  - the top level has "fio version" ("fio-..."), "timestamp", "time",
    "jobs" (a list);
  - a job has "jobname", "groupid", "error", "job options" (strings) and
    read/write/trim objects (or "mixed", with unified_rw_reporting);
  - a direction has io_bytes, io_kbytes = io_bytes / 1024 (rounded down),
    bw_bytes, bw = bw_bytes / 1024, iops, runtime (ms), total_ios, and
    slat_ns, clat_ns, lat_ns each with min, max, mean, stddev, N;
  - iops and bw_bytes agree with total_ios, io_bytes and runtime (within
    the rounding of runtime to whole milliseconds);
  - clat's N is total_ios; min <= mean <= max; percentiles, where present,
    are keyed by fio's default list printed with "%f" and never decrease.
"""
import json
import sys

PCT_KEYS = ["%f" % p for p in (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95,
                               99, 99.5, 99.9, 99.95, 99.99)]
LAT_KEYS = ("slat_ns", "clat_ns", "lat_ns")
DIR_INTS = ("io_bytes", "io_kbytes", "bw_bytes", "bw", "runtime", "total_ios")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class Reader:
    def __init__(self):
        self.errors = []

    def bad(self, where, what):
        self.errors.append("%s: %s" % (where, what))

    def lat(self, where, lat, total_ios, kind):
        for k in ("min", "max", "N"):
            if not is_int(lat.get(k)):
                self.bad(where, "%s.%s is not an integer" % (kind, k))
                return
        for k in ("mean", "stddev"):
            if not is_num(lat.get(k)):
                self.bad(where, "%s.%s is not a number" % (kind, k))
                return
        n = lat["N"]
        if kind == "clat_ns" and n != total_ios:
            self.bad(where, "clat_ns.N %d is not total_ios %d" % (n, total_ios))
        if n and not lat["min"] <= lat["mean"] <= lat["max"]:
            self.bad(where, "%s: mean %f outside [min %d, max %d]" %
                     (kind, lat["mean"], lat["min"], lat["max"]))
        if lat["stddev"] < 0:
            self.bad(where, "%s.stddev is negative" % kind)
        pct = lat.get("percentile")
        if pct is None:
            return
        if list(pct.keys()) != PCT_KEYS:
            self.bad(where, "%s.percentile keys %s are not fio's default list" %
                     (kind, list(pct.keys())))
            return
        vals = [pct[k] for k in PCT_KEYS]
        if not all(is_int(v) for v in vals) or vals != sorted(vals):
            self.bad(where, "%s.percentile values are not non-decreasing "
                     "integers" % kind)

    def direction(self, where, d):
        for k in DIR_INTS:
            if not is_int(d.get(k)):
                self.bad(where, "%s is not an integer" % k)
                return None
        if not is_num(d.get("iops")):
            self.bad(where, "iops is not a number")
            return None
        if d["io_kbytes"] != d["io_bytes"] >> 10:
            self.bad(where, "io_kbytes %d is not io_bytes / 1024" % d["io_kbytes"])
        if d["bw"] != d["bw_bytes"] // 1024:
            self.bad(where, "bw %d is not bw_bytes / 1024" % d["bw"])
        rt = d["runtime"]
        if rt > 0:
            # runtime is whole ms: the rates may be off by half a ms of it
            tol = 0.5 / rt + 0.01
            for rate, amount in (("iops", d["total_ios"]), ("bw_bytes", d["io_bytes"])):
                want = amount * 1000.0 / rt
                if abs(d[rate] - want) > tol * max(want, d[rate]) + 1:
                    self.bad(where, "%s %s does not match %d over %d ms" %
                             (rate, d[rate], amount, rt))
        elif d["total_ios"] and rt == 0:
            self.bad(where, "I/Os without a runtime")
        for k in LAT_KEYS:
            if not isinstance(d.get(k), dict):
                self.bad(where, "%s is missing" % k)
                continue
            self.lat(where, d[k], d["total_ios"], k)
        return d

    def job(self, i, job):
        where = "jobs[%d]" % i
        name = job.get("jobname")
        if not isinstance(name, str):
            self.bad(where, "jobname is not a string")
            return []
        where = "job '%s'" % name
        if not is_int(job.get("groupid")) or not is_int(job.get("error")):
            self.bad(where, "groupid or error is not an integer")
        opts = job.get("job options")
        if not isinstance(opts, dict) or \
           not all(isinstance(v, str) for v in opts.values()):
            self.bad(where, "job options is not an object of strings")
        dirs = [k for k in ("read", "write", "trim", "mixed") if k in job]
        if not dirs or ("mixed" not in dirs and dirs != ["read", "write", "trim"]):
            self.bad(where, "directions %s: want read, write, trim (or mixed)" % dirs)
        lines = []
        for k in dirs:
            d = self.direction("%s %s" % (where, k), job[k])
            if d and d["total_ios"]:
                c = d["clat_ns"]
                p = c.get("percentile", {})
                lines.append("%-44s %-5s %12.0f IOPS %10.1f MiB/s  clat mean %9.1f us"
                             "  p50 %9.1f  p99 %9.1f  p99.9 %9.1f" %
                             (name, k, d["iops"], d["bw"] / 1024.0, c["mean"] / 1000.0,
                              p.get(PCT_KEYS[6], 0) / 1000.0, p.get(PCT_KEYS[12], 0) / 1000.0,
                              p.get(PCT_KEYS[14], 0) / 1000.0))
        return lines

    def doc(self, d):
        if not isinstance(d, dict):
            self.bad("top", "not an object")
            return []
        ver = d.get("fio version")
        if not isinstance(ver, str) or not ver.startswith("fio-"):
            self.bad("top", "fio version %r" % (ver,))
        if not is_int(d.get("timestamp")) or not isinstance(d.get("time"), str):
            self.bad("top", "timestamp or time missing")
        jobs = d.get("jobs")
        if not isinstance(jobs, list) or not jobs:
            self.bad("top", "no jobs")
            return []
        lines = []
        for i, job in enumerate(jobs):
            if isinstance(job, dict):
                lines += self.job(i, job)
            else:
                self.bad("jobs[%d]" % i, "not an object")
        return lines


def main(argv):
    if len(argv) != 2:
        print("usage: fio_json_read.py FILE|-", file=sys.stderr)
        return 2
    try:
        text = sys.stdin.read() if argv[1] == "-" else open(argv[1]).read()
        d = json.loads(text)
    except (OSError, ValueError) as e:
        print("fio_json_read: %s: %s" % (argv[1], e))
        return 1
    r = Reader()
    lines = r.doc(d)
    for line in lines:
        print(line)
    for e in r.errors:
        print("fio_json_read: %s: %s" % (argv[1], e))
    njobs = len(d.get("jobs", [])) if isinstance(d, dict) else 0
    print("fio_json_read: %s: %s, %d jobs, %s" %
          (argv[1], d.get("fio version") if isinstance(d, dict) else "?", njobs,
           "checks failed: %d" % len(r.errors) if r.errors else "every check passed"))
    return 1 if r.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
