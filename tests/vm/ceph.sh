#!/usr/bin/env bash
# Ceph on qlcshape (issue 16): one monitor and one BlueStore OSD on
# /dev/ublkb0, in a Debian 12 guest under qemu TCG with Linux 6.12, with
# Debian's own ceph packages (16.2, Pacific).
#
#   tests/vm/ceph.sh          (make vmtest-ceph runs this)
#
# Not part of make test or make vmtest (CI time): one boot under TCG, 4 to 5
# minutes on a quiet 2-core host (docs/DAEMON.md, "The Ceph guest").
#
# 1. The root file system (tests/vm/guest-lib.sh) with ceph-mon, ceph-osd
#    and ceph-common, cached in build/vm/ceph/rootfs; QS_SD_REBUILD=1
#    builds it again.
# 2. The image with tests/vm/ceph-guest.sh as the guest script, and three
#    sparse NVMe disks: 1 GiB for the log (the fast tier), and two of
#    160 GiB that hold the emulated QLC's data, one per run (qlc =
#    emu:p5316-30t at 160 GiB, past the 151 GiB from which its model's
#    garbage collection is the calibrated one).
# 3. One boot: the guest runs the cluster twice, on the shaped device
#    (engine, log on the fast disk) and on the bare emulated drive
#    (engine.mode = passthrough), with `rados bench` writes of 4 KiB then
#    64 KiB objects (QS_CEPH_SECS seconds each, default 30), and prints the
#    daemon's counters around each bench (tests/vm/ceph-guest.sh).
#    bluestore_min_alloc_size is 65536 (one IU, the allocation unit this
#    test was written to check); QS_CEPH_MIN_ALLOC=4096 (Pacific's default
#    for SSDs, which docs/DEPLOYMENT.md recommends from these figures)
#    compares.
#
# The host turns the counters into the figures of each bench (differences
# between readings): what share of the QLC's writes were whole IUs, the
# drive's partial-IU writes, QLC bytes and NAND bytes programmed per byte
# the OSD wrote. Printed as lines and a table, written to build/ceph.json
# (build/ceph-allocN.json for QS_CEPH_MIN_ALLOC=N other than 65536).
# Exits non-zero if a run failed or its lines are missing, if with shaping
# on anything but whole IUs reached the QLC, or if the boot timed out
# (QS_VM_TIMEOUT seconds, default 3600). Console:
# build/vm/console-ceph.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
GL_NAME=ceph
GL_PKGS=ceph-mon,ceph-osd,ceph-common
GL_RECIPE=1
. tests/vm/guest-lib.sh
t0=$(date +%s)
log() { gl_log "$@"; }
command -v python3 >/dev/null || gl_die "python3 missing (it reads the counters): bash scripts/deps.sh --systemd-vm"

secs=${QS_CEPH_SECS:-30}
case $secs in '' | *[!0-9]*) gl_die "QS_CEPH_SECS='$secs': want a number of seconds" ;; esac
# BlueStore's allocation unit: 65536 (one IU), or another power of two
# from 4096 to compare.
alloc=${QS_CEPH_MIN_ALLOC:-65536}
case $alloc in 4096 | 8192 | 16384 | 32768 | 65536 | 131072) ;;
*) gl_die "QS_CEPH_MIN_ALLOC='$alloc': want a power of two from 4096 to 131072" ;;
esac
gl_check
gl_rootfs
printf "SECS=%s\nMIN_ALLOC=%s\n" "$secs" "$alloc" >"$GL_DIR/ceph-settings"
# 4G: the ceph packages take about 1 GB of the root file system, and the
# monitor's store and the logs live there too.
gl_image tests/vm/ceph-guest.sh 4G \
	tests/vm/common.sh:/usr/local/lib/qs/common.sh \
	"$GL_DIR/ceph-settings:/usr/local/lib/qs/ceph-settings"
rm -f "$GL_DIR/fast.img" "$GL_DIR/qlc1.img" "$GL_DIR/qlc2.img"
truncate -s 1G "$GL_DIR/fast.img"
truncate -s 160G "$GL_DIR/qlc1.img"
truncate -s 160G "$GL_DIR/qlc2.img"
log "image ready ($(($(date +%s) - t0)) s so far)"

# 4 GiB: the monitor, the OSD (osd_memory_target 1 GiB) and the daemon.
GL_MEM=4096
GL_QEMU_EXTRA="$(gl_nvme "$GL_DIR/fast.img" qsfast discard=unmap) $(gl_nvme "$GL_DIR/qlc1.img" qsqlc1 discard=unmap) $(gl_nvme "$GL_DIR/qlc2.img" qsqlc2 discard=unmap)"
QS_VM_TIMEOUT=${QS_VM_TIMEOUT:-3600}
con=$VM/console-ceph.log
gl_boot 1 "$con" 'kernel .*, ceph version'
grep -E '^(QS-CEPH|qs-vm)|Kernel panic|BUG:|Oops|^qemu: ' "$con" | grep -v '^QS-CEPH-STATS' || true
# What the sparse disks took on the host (the written part).
log "disk use: $(du -sh "$GL_DIR/fast.img" "$GL_DIR/qlc1.img" "$GL_DIR/qlc2.img" | awk '{ printf "%s %s  ", $2, $1 }')"
rm -f "$GL_DIR/fast.img" "$GL_DIR/qlc1.img" "$GL_DIR/qlc2.img"

secs_run=$(($(date +%s) - t0))
# Another allocation unit is a comparison: it leaves build/ceph.json alone.
out=build/ceph.json
[ "$alloc" = 65536 ] || out=build/ceph-alloc$alloc.json
echo
python3 - "$con" "$out" "$secs_run" "$secs" "$alloc" <<'EOF'
# The figures of each bench from the counters read around it: the
# difference between the reading after it and the one before.
import json, sys
con, out, wall, secs, alloc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
stats, bench, passed = {}, {}, set()
for line in open(con, errors="replace"):
    line = line.rstrip("\n")
    if line.startswith("QS-CEPH-STATS "):
        _, mode, point, js = line.split(" ", 3)
        stats[(mode, point)] = json.loads(js)
    elif line.startswith("QS-CEPH-BENCH "):
        f = line.split()
        bench[(f[1], f[2])] = {k: float(v) for k, v in (x.split("=") for x in f[3:])}
    elif line.startswith("QS-CEPH: PASS "):
        passed.add(line.split()[2].rstrip(":"))

def delta(a, b, *path):
    x, y = a, b
    for p in path:
        x, y = x[p], y[p]
    return y - x

runs, ok = [], True
for mode in ("shaped", "bare"):
    if mode not in passed:
        print(f"vmtest-ceph {mode}: FAIL (no PASS line on the console)")
        ok = False
        continue
    for size, before, after in ((4096, "ready", "4k"), (65536, "4k", "64k")):
        a, b = stats.get((mode, before)), stats.get((mode, after))
        r = bench.get((mode, str(size)))
        if not (a and b and r):
            print(f"vmtest-ceph {mode} {size}: FAIL (counters or bench summary missing)")
            ok = False
            continue
        client = delta(a, b, "client", "write_bytes")
        qw = delta(a, b, "qlc", "writes")
        whole = delta(a, b, "qlc", "whole_iu_writes")
        runs.append({
            "mode": mode, "object_bytes": size,
            "bench_secs": r.get("secs"), "bench_writes": r.get("writes"),
            "bench_mbs": r.get("mbs"), "bench_iops": r.get("iops"),
            "bench_latency_s": r.get("lat_s"),
            "client_write_bytes": client, "client_writes": delta(a, b, "client", "writes"),
            "client_flushes": delta(a, b, "client", "flushes"),
            "qlc_writes": qw, "qlc_write_bytes": delta(a, b, "qlc", "write_bytes"),
            "qlc_whole_iu_writes": whole,
            "qlc_whole_iu_share": whole / qw if qw else None,
            "drive_writes": delta(a, b, "emu", "writes"),
            "drive_partial_iu_writes": delta(a, b, "emu", "partial_iu_writes"),
            "drive_rmw": delta(a, b, "emu", "rmw"),
            "nand_prog_bytes": delta(a, b, "emu", "nand_prog_bytes"),
            "qlc_bytes_per_client_byte":
                delta(a, b, "qlc", "write_bytes") / client if client else None,
            "nand_bytes_per_client_byte":
                delta(a, b, "emu", "nand_prog_bytes") / client if client else None,
            "read_fill_bytes": delta(a, b, "qlc", "read_fill_bytes"),
        })

# With shaping on, after a drain, the QLC must have had whole IUs only (the
# engine's count) and the drive no partial-IU write (its own count).
for r in runs:
    if r["mode"] == "shaped" and (r["qlc_whole_iu_writes"] != r["qlc_writes"]
                                  or r["drive_partial_iu_writes"]):
        print(f"vmtest-ceph shaped {r['object_bytes']}: FAIL (writes that were not whole IUs "
              f"reached the QLC: {r['qlc_whole_iu_writes']} whole of {r['qlc_writes']}, "
              f"{r['drive_partial_iu_writes']} partial-IU writes in the drive)")
        ok = False

def num(v, fmt):
    return "-" if v is None else format(v, fmt)

for r in runs:
    print(f"vmtest-ceph {r['mode']} {r['object_bytes']}: rados bench {num(r['bench_mbs'], '.3f')} MB/s, "
          f"{num(r['bench_iops'], '.0f')} IOPS; the OSD wrote {r['client_write_bytes']} bytes in "
          f"{r['client_writes']} writes; the QLC got {r['qlc_writes']} writes, "
          f"{r['qlc_whole_iu_writes']} whole IUs ({num(r['qlc_whole_iu_share'] and 100 * r['qlc_whole_iu_share'], '.2f')}%), "
          f"the drive {r['drive_partial_iu_writes']} partial-IU writes; QLC bytes per client byte "
          f"{num(r['qlc_bytes_per_client_byte'], '.2f')}, NAND bytes per client byte "
          f"{num(r['nand_bytes_per_client_byte'], '.2f')}")
print()
print("| objects | run | rados bench MB/s | OSD writes (MiB) | QLC writes | whole IUs | partial-IU writes in the drive | QLC B / client B | NAND B / client B |")
print("|---|---|---|---|---|---|---|---|---|")
for r in runs:
    share = r["qlc_whole_iu_share"]
    print(f"| {r['object_bytes'] // 1024} KiB | {r['mode']} | {num(r['bench_mbs'], '.3f')} | "
          f"{r['client_writes']:,} ({r['client_write_bytes'] / 2**20:.1f}) | {r['qlc_writes']:,} | "
          f"{r['qlc_whole_iu_writes']:,} ({num(share and 100 * share, '.2f')}%) | "
          f"{r['drive_partial_iu_writes']:,} | {num(r['qlc_bytes_per_client_byte'], '.2f')} | "
          f"{num(r['nand_bytes_per_client_byte'], '.2f')} |")
json.dump({"bench_secs": secs, "bluestore_min_alloc_size": alloc, "wall_secs": wall, "pass": ok, "runs": runs,
           "readings": {f"{m} {p}": v for (m, p), v in stats.items()}},
          open(out, "w"), indent=1)
print()
print(f"vmtest-ceph: {'PASS' if ok else 'FAIL'} (bluestore_min_alloc_size {alloc}, {wall} s; console {con}; figures in {out})")
sys.exit(0 if ok else 1)
EOF
