#!/usr/bin/env bash
# make peers (docs/COMPARISON.md): qlcshape against the kernel's write
# caches (dm-writecache, bcache, dm-cache) over the same emulated QLC drive
# and the same fast device, in a Debian 12 guest under qemu TCG with Linux
# 6.12. Not part of make test or make vmtest: three boots, about 32
# minutes.
#
#   tests/vm/peers.sh
#
# Environment: QS_PEERS_RUNTIME (fio seconds per run, default 20),
# QS_PEERS_ONLY (rand4k, rand64k or trace: that workload alone),
# QS_PEERS_TRACE (the trace replayed, any format the bench reads, default
# ../shared/traces/tpcc-small.trace beside the project), QS_VM_TIMEOUT (seconds per boot,
# default 1800), QS_SD_REBUILD=1 (build the root file system again).
#
# 1. The root file system (tests/vm/guest-lib.sh), with bcache-tools and
#    dmsetup, cached in build/vm/peers/rootfs.
# 2. The trace converted to fio's iolog v2 here (qlcshape bench trace-export), installed
#    in the guest with tests/vm/peers-guest.sh, the guest script, and
#    tests/vm/common.sh (the daemon's start, stop and drain).
# 3. One boot per workload: tests/vm/peers-guest.sh runs its cases; the
#    results come back on a disk of their own (one JSON object a line),
#    the consoles go to build/vm/console-peers-WORKLOAD-BOOT.log.
# 4. tests/vm/peers-table.py prints the table and writes build/peers.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
GL_NAME=peers
GL_PKGS=bcache-tools,dmsetup
GL_RECIPE=1
# brd (128 MiB), the engine's DRAM buffer (64 MiB), the model (about 20 MiB
# for 160 GiB) and the page cache of the tools.
GL_MEM=2560
# No CMPXCHG16B in the guest's CPU. With -icount (below), Debian 12's qemu
# (7.2, whose TCG runs the instruction in a helper; later ones inline it)
# now and then left EFLAGS holding a pointer's low bits after SLUB's
# per-CPU cmpxchg16b in __kmalloc: the guest kernel double-faulted on the
# next iret (EFLAGS 8ffa4242 beside RAX ...8ffa4240, NT and VM set), in
# three of five boots of the 4K dm-cache case and one of the 4K
# writecache case. Without the flag the kernel takes its own emulation of
# that instruction, and no boot has crashed since.
GL_CPU=max,cx16=off
. tests/vm/guest-lib.sh
t0=$(date +%s)
RUNTIME=${QS_PEERS_RUNTIME:-20}
TRACE=${QS_PEERS_TRACE:-$PWD/../shared/traces/tpcc-small.trace}
# The workloads' span: 5% of the 160 GiB model (tests/vm/peers-guest.sh).
SPAN=8G
SPAN_BYTES=$((8 << 30))

command -v python3 >/dev/null || gl_die "python3 missing: bash scripts/deps.sh --systemd-vm"
[ -r "$TRACE" ] || gl_die "$TRACE: no such trace (set QS_PEERS_TRACE to a trace the bench reads)"

gl_check
gl_rootfs
# The trace as fio's iolog v2, mapped by the bench's own code (bench trace-export:
# rounded outward to 4 KiB, offsets wrapped modulo the span, a request that would
# straddle the span's end moved back to end there), so that fio replays the
# requests the bench simulates. No times: fio replays as fast as its queue
# allows. The lines name the file "qlc"; the guest's fio sends them to the
# device under test with replay_redirect. Its summary line (requests by kind)
# goes to the log. make peers has built the tool; run alone, this script
# builds it here.
make --no-print-directory -s SAN=0 build/qlcshape ||
	gl_die "make SAN=0 build/qlcshape failed"
build/qlcshape bench trace-export "$TRACE" --span "$SPAN_BYTES" -o "$GL_DIR/trace.iolog" ||
	gl_die "could not export $TRACE as a fio iolog (bench trace-export)"
gl_image tests/vm/peers-guest.sh 2G tests/vm/common.sh:/qs/common.sh "$GL_DIR/trace.iolog:/qs/trace.iolog"
# -icount: the guest's clock counts instructions (shift 2: 4 ns each)
# instead of following the host's, so that a host busy with other work
# slows the run down but does not change what the guest measures.
# One boot per workload, one after the other, each with the emulated
# drive's data disk (10.5 GiB, sparse: only what is written takes space;
# cache=unsafe: the host's copy need not be durable, and the guest's
# flushes then cost it nothing) and a new results disk. A guest kernel that
# crashed (seen here: bcache oopsing in bch_journal, and double faults
# before the guest's CPU lost CMPXCHG16B, GL_CPU above) ends its boot; the
# crash is that case's row,
# and the workload is booted again from the case after it, at most twice.
: >"$GL_DIR/results.jsonl"
done_all=1
for wl in ${QS_PEERS_ONLY:-rand4k rand64k trace}; do
	after= try=0
	while :; do
		try=$((try + 1))
		# The drive's data disk is kept across boots and runs: deleting a
		# file this fragmented took minutes here (the host's ext4 discards
		# what it frees), and its old data changes no counter (the guest
		# wipes what bcache would find).
		[ -f "$GL_DIR/qlc.img" ] || truncate -s 10752M "$GL_DIR/qlc.img"
		rm -f "$GL_DIR/results.img"
		truncate -s 16M "$GL_DIR/results.img"
		GL_QEMU_EXTRA="-icount shift=2,sleep=on
 -drive file=$GL_DIR/qlc.img,if=virtio,format=raw,cache=unsafe
 -drive file=$GL_DIR/results.img,if=virtio,format=raw"
		gl_log "$wl: boot $try${after:+, from the case after $after} ($(($(date +%s) - t0)) s so far)"
		con=$VM/console-peers-$wl-$try.log
		# The guest script's arguments ride on the kernel command line.
		QS_VM_TIMEOUT=${QS_VM_TIMEOUT:-1800} gl_boot "1 qs_runtime=$RUNTIME qs_span=$SPAN qs_only=$wl qs_after=$after" \
			"$con" 'qs-peers: kernel'
		grep -E '^qs-peers: |QS-PEERS|Kernel panic|BUG:|Oops|^qemu: |FAIL' "$con" || true
		tr -d '\0' <"$GL_DIR/results.img" >"$GL_DIR/results-boot.jsonl"
		cat "$GL_DIR/results-boot.jsonl" >>"$GL_DIR/results.jsonl"
		grep -q '^QS-PEERS: DONE' "$con" && break
		# The case it was in, from the guest's step lines.
		at=$(sed -n "s/^qs-vm: step \[[^]]*\] $wl \([a-z0-9-]*\)\$/\1/p" "$con" | tail -1)
		what=$(grep -m1 -E 'Oops|BUG:|Kernel panic' "$con" | sed 's/^\[[^]]*\] *//' | tr -d '"\\')
		gl_log "$wl: the guest did not finish (in case ${at:-?}: ${what:-no oops on the console}; console: $con)"
		grep -q '"note": "kernel oops' "$GL_DIR/results-boot.jsonl" ||
			printf '{"workload": "%s", "case": "%s", "note": "guest kernel crashed: %s", "fio": null, "stats": null}\n' \
				"$wl" "${at:-?}" "${what:-no oops on the console}" >>"$GL_DIR/results.jsonl"
		# Onwards from the case after the one that crashed: the crashes
		# seen here repeated in the same case (a retry would crash again),
		# and its row says what happened.
		last=$(sed -n 's/^{"workload": "[^"]*", "case": "\([^"]*\)".*/\1/p' "$GL_DIR/results-boot.jsonl" | tail -1)
		after=${at:-${last:-$after}}
		[ $try -lt 3 ] || { gl_log "$wl: crashed 3 times, its remaining cases are not measured"; done_all=0; break; }
	done
done
secs=$(($(date +%s) - t0))
python3 tests/vm/peers-table.py "$GL_DIR/results.jsonl" build/peers.json "$secs" || exit 1
[ $done_all = 1 ] || { gl_log "not every workload finished ($secs s)"; exit 1; }
gl_log "done in $secs s (consoles: $VM/console-peers-*-*.log)"
