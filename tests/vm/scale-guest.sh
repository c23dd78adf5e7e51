#!/bin/sh
# Runs inside the VM (tests/vm/scale.sh, qs_test=scale): the ublk floor.
# For 1 and 2 queues, the minimal ublk server (tests/vm/ublk_min.c) on a
# 256 MiB RAM disk: first a short fio write with flushes and crc32c verify
# (does it work?), then, each on a fresh server (whose exit lines count what
# each queue served), fio 4K random reads and 64K sequential reads for qs_rt
# seconds (default 10). One fio job per queue, iodepth 32 each, job i pinned
# to CPU i: blk-mq maps each CPU to one hardware queue, so only a submitter
# on each CPU loads every queue (one job would keep one queue busy whatever
# the count), and the depth per queue stays the same from 1 queue to 2.
# Prints the table as "qs-vm: scale:" lines. A benchmark: it fails only if
# something does not work (the device does not appear, fio fails or finds
# bad data, the server does not stop cleanly), never on a figure.
. /qs/common.sh

SIZE=$((256 << 20))
DEPTH=64
RT=$(sed -n 's/.*qs_rt=\([0-9]*\).*/\1/p' /proc/cmdline)
RT=${RT:-10}

# Busy jiffies of all CPUs (user nice system irq softirq steal; USER_HZ is
# 100 on x86), and the server's own (utime + stime, all its threads).
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
srv_cpu() { awk '{ print $14 + $15 }' "/proc/$spid/stat"; }

start_min() { # queues
	# Emptied here: the background child truncates it only once it runs, and
	# the wait below must not find the previous server's "ready" line.
	: >/tmp/min.log
	/usr/bin/ublk_min --queues "$1" --depth $DEPTH --size $SIZE >/tmp/min.log 2>&1 &
	spid=$!
	i=0
	until grep -q ' ready: ' /tmp/min.log; do
		i=$((i + 1))
		[ $i -gt 600 ] && { cat /tmp/min.log; fail "ublk_min: no device within 60 s"; }
		kill -0 $spid 2>/dev/null || { cat /tmp/min.log; fail "ublk_min exited early"; }
		sleep 0.1
	done
	dev=$(sed -n 's/^ublk_min: \(\/dev\/ublkb[0-9]*\) ready: .*/\1/p' /tmp/min.log)
	[ -b "$dev" ] || { cat /tmp/min.log; fail "ublk_min said ready, but no block device $dev"; }
	n=$(ls -d /sys/block/"${dev#/dev/}"/mq/[0-9]* | wc -l)
	[ "$n" = "$1" ] || fail "$dev has $n hardware queues, ublk_min was asked for $1"
}

stop_min() {
	kill -TERM $spid
	i=0
	while kill -0 $spid 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 300 ] && { cat /tmp/min.log; fail "ublk_min did not exit within 30 s of SIGTERM"; }
		sleep 0.1
	done
	rc=0
	wait $spid || rc=$?
	[ $rc = 0 ] || { cat /tmp/min.log; fail "ublk_min exit status $rc"; }
	[ ! -e "$dev" ] || fail "$dev still exists after ublk_min stopped"
}

# What each queue served, from ublk_min's exit lines: field 4 reads, 8 flushes.
per_queue() { # field -> "q0/q1/..."
	awk -v f="$1" '/^ublk_min: queue [0-9]+: / { s = s (s == "" ? "" : "/") $f } END { print s }' \
		/tmp/min.log
}

check_works() { # queues
	step "ublk_min, $1 queue(s): fio 4k random writes with flushes, verify crc32c"
	start_min "$1"
	fio --name=works --filename="$dev" --direct=1 --ioengine=io_uring --iodepth=16 \
		--rw=randwrite --bs=4k --size=8M --fsync=32 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --randrepeat=0 >/tmp/fio-works.log 2>&1 ||
		{ cat /tmp/fio-works.log; fail "fio verify through ublk_min ($1 queues)"; }
	stop_min
	sed 's/^/qs-vm:   /' /tmp/min.log
	# Flushes reach a server only with the volatile cache attribute set.
	per_queue 8 | grep -q '[1-9]' || fail "ublk_min served no flush ($1 queues)"
}

# One measurement on a fresh server; appends its table row to /tmp/scale.rows.
measure() { # queues label rw bs
	q=$1
	start_min "$q"
	step "ublk_min, $q queue(s): $2 for $RT s"
	b0=$(busy)
	s0=$(srv_cpu)
	# Each job reads its own part of the device (sequential jobs must not overlap).
	fio --name="$2" --filename="$dev" --direct=1 --ioengine=io_uring --iodepth=32 \
		--rw="$3" --bs="$4" --numjobs="$q" --size=$((SIZE / q)) --offset_increment=$((SIZE / q)) \
		--cpus_allowed=0-1 --cpus_allowed_policy=split --norandommap --time_based \
		--runtime="$RT" --group_reporting --output-format=terse >/tmp/fio.terse 2>/tmp/fio.err ||
		{ cat /tmp/fio.terse /tmp/fio.err; fail "fio $2 ($q queues)"; }
	b1=$(busy)
	s1=$(srv_cpu)
	stop_min
	# terse v3: 5 error, 6 KiB read, 7 KiB/s, 8 IOPS.
	awk -F';' -v q="$q" -v wl="$2" -v bs="$4" -v gb=$((b1 - b0)) -v sb=$((s1 - s0)) \
		-v perq="$(per_queue 4)" '
		$5 != 0 { exit 1 }
		{ kib = bs; sub(/k$/, "", kib); ios = $6 / kib; mbs = $7 * 1024 / 1e6
		  # one line: busybox awk takes no newline inside an argument list
		  fmt = "qs-vm: scale: %6d  %-12s %9d %9.1f %11.1f %12.1f  %s\n"
		  printf fmt, q, wl, $8, mbs, gb * 10000 / ios, sb * 10000 / ios, perq }' \
		/tmp/fio.terse >>/tmp/scale.rows ||
		{ cat /tmp/fio.terse; fail "fio $2 ($q queues) reported an error"; }
	sed "s/^qs-vm: scale:/qs-vm:   row:/" /tmp/scale.rows | tail -1
}

step "the ublk floor: ublk_min, $(nproc) CPUs, fio ${RT} s per run"
: >/tmp/scale.rows
for nq in 1 2; do
	check_works "$nq"
	measure "$nq" 4k-randread randread 4k
	measure "$nq" 64k-seqread read 64k
done
echo "qs-vm: scale: queues  workload          IOPS      MB/s  guest us/IO  server us/IO  reads per queue"
cat /tmp/scale.rows
echo "qs-vm: scale: guest us/IO: busy time of all $(nproc) vCPUs (fio's included) per I/O; server: ublk_min's threads'"
exit 0
