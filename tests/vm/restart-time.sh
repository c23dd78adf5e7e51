#!/bin/sh
# Restart time after SIGKILL under load (issue 19), inside the VM; not part
# of `make vmtest` (it takes minutes): QS_VM_ONLY=rt tests/vm/run.sh 612.
#
# A daemon with user recovery (queues 2, depth 32, as tests/vm/engine-
# recovery.ini, drain_on_stop = no) serves fio 4k random writes at iodepth
# 32 (one job: its requests all go to the hardware queue of the CPU it runs
# on, so that queue can have every tag in flight). qs_kills=N times (default
# 20): 2 s of fio, then SIGKILL, then a new daemon (log recovery, re-attach);
# the time from the kill to "/dev/ublkb0 ready" is printed with the device's
# in-flight count at the kill, and the part of it after log recovery (the
# re-attach: START_USER_RECOVERY to END_USER_RECOVERY). fio runs across all of it and must see no
# error. qs_mode=passthrough runs the engine in passthrough instead.
. /qs/common.sh

n=$(sed -n 's/.*qs_kills=\([0-9]*\).*/\1/p' /proc/cmdline)
n=${n:-20}
mode=$(sed -n 's/.*qs_mode=\([a-z]*\).*/\1/p' /proc/cmdline)
mode=${mode:-cache}
QS_QUIET=1
cfg=/tmp/rt.ini
{
	echo "[devices]"
	[ "$mode" = cache ] && echo "fast = /tmp/fast.img"
	echo "qlc = /tmp/qlc.img"
	echo "iu = 64K"
	echo "[engine]"
	echo "mode = $mode"
	[ "$mode" = cache ] && echo "dram_buffer = 16M"
	echo "[daemon]"
	echo "backend = engine"
	echo "drain_on_stop = no"
	echo "control_socket = /run/qlcshaped.sock"
	echo "[ublk]"
	echo "queues = 2"
	echo "queue_depth = 32"
	echo "max_io = 512K"
	echo "dev_id = 0"
	echo "user_recovery = yes"
} >$cfg
dd if=/dev/zero of=/tmp/fast.img bs=1M count=0 seek=64 2>/dev/null
dd if=/dev/zero of=/tmp/qlc.img bs=1M count=0 seek=1024 2>/dev/null

step "restart time: $n SIGKILLs under fio 4k randwrite iodepth 32, engine mode $mode"
run_daemon $cfg --format
head -1 /tmp/qlcshaped.log | sed 's/^/qs-vm:   /'
fio --name=rt --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --iodepth=32 \
	--rw=randwrite --bs=4k --size=256M --time_based --runtime=100000 \
	>/tmp/fio-rt.log 2>&1 &
fpid=$!
: >/tmp/rt.times
k=1
while [ $k -le $n ]; do
	sleep 2
	kill -0 $fpid 2>/dev/null || { cat /tmp/fio-rt.log; fail "fio ended"; }
	infl=$(awk '{ print $1 + $2 }' /sys/block/ublkb0/inflight)
	t0=$(cut -d' ' -f1 /proc/uptime)
	kill -9 $pid
	wait $pid
	# run_daemon, watching for the end of log recovery on the way: the
	# re-attach is what follows it.
	: >/tmp/qlcshaped.log
	unshare -m --propagation private /usr/bin/qlcshaped --config $cfg >/tmp/qlcshaped.log 2>&1 &
	pid=$!
	tr=
	i=0
	until grep -q "/dev/ublkb0 ready" /tmp/qlcshaped.log; do
		[ -z "$tr" ] && grep -q "engine open:" /tmp/qlcshaped.log &&
			tr=$(cut -d' ' -f1 /proc/uptime)
		i=$((i + 1))
		[ $i -gt 9000 ] && fail "kill $k: /dev/ublkb0 not ready within 90 s"
		kill -0 $pid 2>/dev/null || fail "kill $k: qlcshaped exited early"
		sleep 0.01
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	[ -z "$tr" ] && tr=$t1
	grep -q "re-attached by user recovery" /tmp/qlcshaped.log || fail "kill $k: no re-attach"
	s=$(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }')
	r=$(echo "$tr $t1" | awk '{ printf "%.2f", $2 - $1 }')
	echo "$s $r" >>/tmp/rt.times
	echo "qs-vm: restart $k: $infl in flight at the kill, ready after $s s ($r s after the log was recovered)"
	k=$((k + 1))
done
kill -0 $fpid 2>/dev/null || { cat /tmp/fio-rt.log; fail "fio ended"; }
kill -INT $fpid
wait $fpid || true
grep -E "err=|IOPS=" /tmp/fio-rt.log | sed 's/^/qs-vm: fio: /'
grep -q "err= 0" /tmp/fio-rt.log || { cat /tmp/fio-rt.log; fail "fio saw errors across the kills"; }
summary() { # column what
	cut -d' ' -f$1 /tmp/rt.times | sort -n | awk -v what="$2" '{ t[NR] = $1; s += $1; if ($1 > 10) slow++ }
		END { printf "qs-vm: %s over %d kills: min %.2f s, median %.2f s, mean %.2f s, max %.2f s, %d over 10 s\n",
			what, NR, t[1], t[int((NR + 1) / 2)], s / NR, t[NR], slow }'
}
summary 1 "restart time (kill to ready)"
summary 2 "re-attach time (log recovered to ready)"
kill -TERM $pid
wait $pid || fail "exit status $?"
exit 0
