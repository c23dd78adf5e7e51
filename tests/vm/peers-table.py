#!/usr/bin/env python3
"""make peers: the guest's results (one JSON object a line: the case, the
workload, fio's JSON, `qlcshape stats --json` after the write-back and
before the measured run) to the
table printed and build/peers.json (docs/COMPARISON.md says what each
column means).

    peers-table.py RESULTS.jsonl OUT.json WALL-SECONDS
"""
import json
import sys

src, out, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])


def delta(st, st0, section, keys):
    """The counters KEYS of SECTION in st less those in st0 (absent there: 0);
    a key st lacks is left out."""
    now, before = st.get(section) or {}, st0.get(section) or {}
    return {k: now[k] - before.get(k, 0) for k in keys if now.get(k) is not None}


rows = []
with open(src) as f:
    for n, line in enumerate(f, 1):
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except ValueError as e:
            sys.exit(f"{src}:{n}: not JSON ({e}): the guest's results are damaged")
        row = {"workload": r["workload"], "case": r["case"], "note": r["note"].strip()}
        fio, st = r.get("fio"), r.get("stats")
        if fio:
            j = fio["jobs"][0]
            rd, wr = j["read"], j["write"]
            row["client_iops"] = round(rd["iops"] + wr["iops"], 1)
            row["client_mbs"] = round((rd["bw_bytes"] + wr["bw_bytes"]) / 1e6, 2)
            row["client_write_bytes"] = wr["io_bytes"]
            row["client_read_bytes"] = rd["io_bytes"]
        if st:
            # The measured run's counters: after it less before it (stats0,
            # read after log placement's warm-up; none in older results).
            st0 = r.get("stats0") or {}
            q = delta(st, st0, "qlc", ("writes", "write_bytes", "whole_iu_writes"))
            emu = delta(st, st0, "emu", ("partial_iu_writes", "rmw", "nand_prog_bytes"))
            gc = delta(st, st0, "gc", ("victims", "write_bytes"))
            row["qlc_writes"] = q.get("writes")
            row["qlc_write_bytes"] = q.get("write_bytes")
            if q.get("writes") is not None and q.get("whole_iu_writes") is not None:
                row["qlc_whole_iu_pct"] = round(100 * q["whole_iu_writes"] / q["writes"], 2) \
                    if q["writes"] else 0.0
            row["emu_partial_iu_writes"] = emu.get("partial_iu_writes")
            row["emu_rmw"] = emu.get("rmw")
            row["emu_nand_prog_bytes"] = emu.get("nand_prog_bytes")
            # How late the emulated drive completed against its model (the
            # guest's CPU; over the daemon's life), and whether log
            # placement's GC ran in the measured run.
            row["emu_late_us_mean"] = st.get("emu", {}).get("late_us_mean")
            row["gc_victims"] = gc.get("victims")
            row["gc_write_bytes"] = gc.get("write_bytes")
            if fio and row["client_write_bytes"] and emu.get("nand_prog_bytes") is not None:
                row["nand_per_client_byte"] = round(emu["nand_prog_bytes"] / row["client_write_bytes"], 3)
        rows.append(row)

with open(out, "w") as f:
    json.dump({"wall_seconds": wall, "rows": rows}, f, indent=1)
    f.write("\n")


def cell(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


print()
print("Client IOPS and MB/s are those of the emulator under qemu TCG (the guest's")
print("CPU, not the drive); the drive columns are the emulated QLC's own counters.")
for wl in dict.fromkeys(r["workload"] for r in rows):
    print(f"\n{wl}")
    print(f"  {'case':<15}{'IOPS':>9}{'MB/s':>9}{'whole-IU %':>12}{'partial IU':>12}"
          f"{'RMW':>10}{'NAND/client':>13}{'GC victims':>12}  note")
    for r in rows:
        if r["workload"] != wl:
            continue
        print(f"  {r['case']:<15}{cell(r.get('client_iops'), '{:.0f}'):>9}"
              f"{cell(r.get('client_mbs'), '{:.1f}'):>9}"
              f"{cell(r.get('qlc_whole_iu_pct'), '{:.2f}'):>12}"
              f"{cell(r.get('emu_partial_iu_writes')):>12}{cell(r.get('emu_rmw')):>10}"
              f"{cell(r.get('nand_per_client_byte'), '{:.3f}'):>13}"
              f"{cell(r.get('gc_victims')):>12}  {r['note']}")
print(f"\nwall time {wall} s; JSON: {out}")
