#!/bin/sh
# Runs inside the VM (see tests/vm/run.sh). Phase 1, qlcshaped with the RAM
# test backend: block-layer parameters, fio verify=crc32c, discard read-back,
# clean stop. Phase 2, qlcshaped with the engine over two files: fio verify,
# drain on stop, only whole-IU writes reached the QLC, data unchanged across a
# restart (log recovery). Then SIGKILL at each moment of a stop and a
# restart after each (tests/vm/killstop.sh). Phase 3, the emulated QLC
# (tests/vm/emu.sh): fio bare and shaped, whole IUs only with shaping on. Prints "qs-vm: ..." lines;
# exits non-zero on the first failure.
. /qs/common.sh

check_discard() { # what
	step "discard reads back zeroes ($1)"
	dd if=/dev/urandom of=/tmp/pat bs=64k count=4 2>/dev/null
	dd if=/tmp/pat of=/dev/ublkb0 bs=64k seek=512 count=4 oflag=direct 2>/dev/null ||
		fail "dd write"
	# Two whole IUs in the middle, then one 4 KiB block inside the last IU.
	blkdiscard -o $((512 * 65536 + 65536)) -l 131072 /dev/ublkb0 || fail "blkdiscard"
	blkdiscard -o $((515 * 65536 + 8192)) -l 4096 /dev/ublkb0 || fail "blkdiscard 4k"
	dd if=/dev/ublkb0 of=/tmp/back bs=64k skip=512 count=4 iflag=direct 2>/dev/null ||
		fail "dd read"
	dd if=/dev/zero of=/tmp/zero bs=64k count=2 2>/dev/null
	dd if=/tmp/back of=/tmp/a bs=64k count=1 2>/dev/null
	dd if=/tmp/pat of=/tmp/b bs=64k count=1 2>/dev/null
	cmp /tmp/a /tmp/b >/dev/null || fail "data before the discarded range changed"
	dd if=/tmp/back of=/tmp/mid bs=64k skip=1 count=2 2>/dev/null
	cmp /tmp/mid /tmp/zero >/dev/null || fail "discarded IUs do not read back as zeroes"
	# Last IU: blocks 0-1 kept, block 2 zero, blocks 3-15 kept.
	for blk in 0 1 2 3 15; do
		dd if=/tmp/back of=/tmp/a bs=4k skip=$((48 + blk)) count=1 2>/dev/null
		if [ $blk = 2 ]; then
			dd if=/dev/zero of=/tmp/b bs=4k count=1 2>/dev/null
		else
			dd if=/tmp/pat of=/tmp/b bs=4k skip=$((48 + blk)) count=1 2>/dev/null
		fi
		cmp /tmp/a /tmp/b >/dev/null || fail "4 KiB discard: block $blk of the last IU is wrong"
	done
	echo "qs-vm:   discard ok"
}

start_daemon "ram backend" /qs/ram.ini

step "queue limits"
q=/sys/block/ublkb0/queue
for f in logical_block_size physical_block_size minimum_io_size optimal_io_size \
	discard_granularity write_cache fua max_sectors_kb; do
	echo "qs-vm:   $f = $(cat $q/$f 2>/dev/null)"
done
[ "$(cat $q/logical_block_size)" = 4096 ] || fail "logical block size"
[ "$(cat $q/physical_block_size)" = 65536 ] || fail "physical block size"
[ "$(cat $q/minimum_io_size)" = 65536 ] || fail "minimum_io_size"
[ "$(cat $q/optimal_io_size)" = 65536 ] || fail "optimal_io_size"
[ "$(cat $q/discard_granularity)" = 65536 ] || fail "discard_granularity"
[ "$(cat $q/write_cache)" = "write back" ] || fail "write_cache (flushes would never be sent)"

step "fio 4k random write + verify crc32c (with fsync)"
fio --name=rw4k --filename=/dev/ublkb0 --direct=1 --ioengine=psync --rw=randwrite --bs=4k \
	--size=4M --numjobs=1 --fsync=64 --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--randrepeat=0 --output-format=normal >/tmp/fio1.log 2>&1 || { cat /tmp/fio1.log; fail "fio 4k"; }
grep -E "IOPS=|err=" /tmp/fio1.log | sed 's/^/qs-vm: fio: /'

step "fio 64k mixed, iodepth 16 (io_uring), verify crc32c"
fio --name=mix64k --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --iodepth=16 \
	--rw=randrw --rwmixread=30 --bs=64k --size=64M --offset=64M --verify=crc32c \
	--do_verify=1 --verify_fatal=1 --randrepeat=0 >/tmp/fio2.log 2>&1 ||
	{ cat /tmp/fio2.log; fail "fio 64k"; }
grep -E "IOPS=|err=" /tmp/fio2.log | sed 's/^/qs-vm: fio: /'

check_discard "ram backend"

stop_daemon "ram backend"

# The engine over files: shaping on, data across a restart, whole IUs only.
dd if=/dev/zero of=/tmp/fast.img bs=1M count=0 seek=64 2>/dev/null
# 1 GiB, sparse: mkfs.xfs with a stripe unit needs a 64 MB log inside one of
# its four allocation groups.
dd if=/dev/zero of=/tmp/qlc.img bs=1M count=0 seek=1024 2>/dev/null
start_daemon "engine backend, format" /qs/engine.ini --format

step "fio 4k random write + verify crc32c through the engine (with fsync)"
fio --name=e4k --filename=/dev/ublkb0 --direct=1 --ioengine=psync --rw=randwrite --bs=4k \
	--size=4M --fsync=64 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 \
	>/tmp/fio3.log 2>&1 || { cat /tmp/fio3.log; fail "fio 4k (engine)"; }
grep -E "IOPS=|err=" /tmp/fio3.log | sed 's/^/qs-vm: fio: /'

step "fio 64k mixed, iodepth 16 (io_uring), verify crc32c through the engine"
fio --name=e64k --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --iodepth=16 \
	--rw=randrw --rwmixread=30 --bs=64k --size=32M --offset=32M --verify=crc32c \
	--do_verify=1 --verify_fatal=1 --randrepeat=0 >/tmp/fio4.log 2>&1 ||
	{ cat /tmp/fio4.log; fail "fio 64k (engine)"; }
grep -E "IOPS=|err=" /tmp/fio4.log | sed 's/^/qs-vm: fio: /'

check_discard "engine"

step "control socket: qlcshape stats, policy, drain"
qs() { /usr/bin/qlcshape "$@" --config /qs/engine.ini; }
[ "$(stat -c %a /run/qlcshaped.sock)" = 600 ] || fail "control socket mode is not 0600"
qs stats >/tmp/stats.txt || fail "stats"
sed 's/^/qs-vm:   /' /tmp/stats.txt
grep -q "^qlc .*whole-IU" /tmp/stats.txt || fail "stats lacks the QLC line"
qs stats --json >/tmp/stats.json || fail "stats --json"
grep -q "^engine dram *[1-9][0-9]* bytes: index " /tmp/stats.txt || fail "stats lacks the engine's DRAM"
grep -q '"whole_iu_pct"' /tmp/stats.json || fail "stats json lacks whole_iu_pct"
grep -q '"memory": {"index": [0-9]*, ' /tmp/stats.json || fail "stats json lacks memory"
qs stats --prometheus >/tmp/stats.prom || fail "stats --prometheus"
sed 's/^/qs-vm: prom: /' /tmp/stats.prom
grep -q '^# TYPE qlcshape_qlc_whole_iu_writes_total counter$' /tmp/stats.prom ||
	fail "prometheus text lacks the TYPE line of qlcshape_qlc_whole_iu_writes_total"
grep -q '^qlcshape_qlc_whole_iu_writes_total{config="engine"} [0-9]' /tmp/stats.prom ||
	fail "prometheus text lacks qlcshape_qlc_whole_iu_writes_total{config=\"engine\"}"
grep -q '^qlcshape_engine_memory_bytes{config="engine",part="other"} [1-9]' /tmp/stats.prom ||
	fail "prometheus text lacks the engine's DRAM (qlcshape_engine_memory_bytes)"
qs policy set fifo partial=hold hold_ms=200 >/tmp/pol.txt || fail "policy set"
grep -q "policy fifo partial=hold hold_ms=200" /tmp/pol.txt || fail "policy answer"
if qs policy set bogus >/tmp/pol2.txt 2>&1; then fail "a bogus policy was accepted"; fi
grep -q "policy name 'bogus'" /tmp/pol2.txt || fail "bogus policy error message"
grep -q '"dirty_ius": 0,' /tmp/stats.json && fail "nothing dirty before the drain (idle destage on?)"
qs drain >/tmp/drain.txt || fail "drain"
grep -q "^drained" /tmp/drain.txt || fail "drain answer"
sed 's/^/qs-vm:   /' /tmp/drain.txt
qs stats --json >/tmp/stats2.json || fail "qlcshape stats --json after drain"
grep -q '"dirty_ius": 0,' /tmp/stats2.json || fail "dirty IUs left after drain"

step "checksum, restart, checksum"
sum1=$(dd if=/dev/ublkb0 bs=1M count=64 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
stop_daemon "engine backend, drain"
grep -q "engine closed cleanly" /tmp/qlcshaped.log || fail "no clean engine close"
line=$(grep "engine: .* QLC writes" /tmp/qlcshaped.log)
qw=$(echo "$line" | sed -n 's/.*engine: \([0-9]*\) QLC writes.*/\1/p')
qwhole=$(echo "$line" | sed -n 's/.*, \([0-9]*\) whole-IU.*/\1/p')
echo "qs-vm:   QLC writes $qw, whole-IU $qwhole"
[ -n "$qw" ] && [ "$qw" -gt 0 ] || fail "no QLC writes after drain"
[ "$qw" = "$qwhole" ] || fail "QLC received writes that are not whole IUs ($qwhole of $qw)"
# sd_notify: from this start to the stop after the file system test, the
# daemon talks to a fake NOTIFY_SOCKET with a 1 s watchdog.
/usr/bin/notify-sink /run/notify.sock /dev/ublkb0 >/tmp/notify.log 2>&1 &
sink=$!
i=0
until [ -S /run/notify.sock ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "notify-sink did not bind /run/notify.sock"
	sleep 0.05
done
export NOTIFY_SOCKET=/run/notify.sock WATCHDOG_USEC=1000000
start_daemon "engine backend, recover" /qs/engine.ini
unset NOTIFY_SOCKET WATCHDOG_USEC
sum2=$(dd if=/dev/ublkb0 bs=1M count=64 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
echo "qs-vm:   md5 before $sum1 after $sum2"
[ "$sum1" = "$sum2" ] || fail "data changed across the restart"
step "ext2 file system on /dev/ublkb0: files and md5 across a daemon restart"
mke2fs -q -b 4096 /dev/ublkb0 >/tmp/mkfs.log 2>&1 || { cat /tmp/mkfs.log; fail "mke2fs"; }
mkdir -p /mnt
mount -t ext2 /dev/ublkb0 /mnt || fail "mount"
dd if=/dev/urandom of=/mnt/random bs=64k count=128 2>/dev/null || fail "write a file"
cp /bin/busybox /mnt/busybox || fail "copy a file"
mkdir /mnt/dir && echo "qlcshape" >/mnt/dir/small || fail "small file"
(cd /mnt && md5sum random busybox dir/small) >/tmp/fs.md5
sed 's/^/qs-vm:   /' /tmp/fs.md5
umount /mnt || fail "umount"
step "sd_notify while running: STATUS= of the recovery, then READY=1 once the device exists"
sed 's/^/qs-vm:   notify: /' /tmp/notify.log | grep -v WATCHDOG
notify_seq() { grep -v '^WATCHDOG=1 ' /tmp/notify.log | cut -d' ' -f1 | tr '\n' ' '; }
[ "$(notify_seq)" = "STATUS=recovering STATUS=log READY=1 STATUS=serving " ] ||
	fail "notify sequence while running: '$(notify_seq)'"
grep -q '^STATUS=log recovered dev=0$' /tmp/notify.log ||
	fail "STATUS=log recovered missing, or sent once the device existed"
grep -q '^READY=1 dev=1$' /tmp/notify.log || fail "READY=1 arrived before /dev/ublkb0 existed"
pings=$(grep -c '^WATCHDOG=1 ' /tmp/notify.log)
echo "qs-vm:   notify: $pings WATCHDOG=1 pings so far"
[ "$pings" -ge 2 ] || fail "fewer than 2 watchdog pings with WATCHDOG_USEC=1000000"
stop_daemon "engine backend, file system written"
step "sd_notify on stop: STOPPING=1, then STATUS= of the drain, nothing after"
kill $sink
sed 's/^/qs-vm:   notify: /' /tmp/notify.log | grep -v WATCHDOG
if grep -q "^qlcshaped: draining" /tmp/qlcshaped.log; then
	want="STATUS=recovering STATUS=log READY=1 STATUS=serving STOPPING=1 STATUS=draining "
else
	want="STATUS=recovering STATUS=log READY=1 STATUS=serving STOPPING=1 "
fi
[ "$(notify_seq)" = "$want" ] || fail "notify sequence: '$(notify_seq)', want '$want'"
start_daemon "engine backend, file system check" /qs/engine.ini
mount -t ext2 /dev/ublkb0 /mnt || fail "mount after restart"
(cd /mnt && md5sum -c /tmp/fs.md5) >/dev/null || fail "file checksums differ after restart"
echo "qs-vm:   md5 of 3 files match after restart"
umount /mnt || fail "umount after restart"

# docs/DEPLOYMENT.md: mkfs reads io_min = io_opt = the IU (64 KiB) from the
# queue limits and aligns the file system to it.
step "ext4 and xfs on /dev/ublkb0 pick up the 64 KiB IU"
/usr/local/sbin/mkfs.ext4 -q -F -b 4096 /dev/ublkb0 >/tmp/mkfs.log 2>&1 ||
	{ cat /tmp/mkfs.log; fail "mkfs.ext4"; }
/usr/local/sbin/dumpe2fs -h /dev/ublkb0 2>/dev/null | grep -i '^RAID' >/tmp/raid.txt
sed 's/^/qs-vm:   ext4: /' /tmp/raid.txt
grep -q '^RAID stride: *16$' /tmp/raid.txt || fail "ext4 RAID stride is not 16 blocks (64 KiB)"
grep -q '^RAID stripe width: *16$' /tmp/raid.txt || fail "ext4 RAID stripe width is not 16 blocks"
mount -t ext4 /dev/ublkb0 /mnt || fail "mount ext4"
cp /bin/busybox /mnt/busybox && sync || fail "write to ext4"
cmp /bin/busybox /mnt/busybox || fail "ext4 file differs"
umount /mnt || fail "umount ext4"
# mkfs.xfs ignores a stripe unit equal to the physical block size (here
# both are the IU), so plain mkfs.xfs does not align; DEPLOYMENT.md gives
# the IU explicitly. The data section's geometry is the first sunit line.
/usr/local/sbin/mkfs.xfs -f -K /dev/ublkb0 >/tmp/mkfs.log 2>&1 || { cat /tmp/mkfs.log; fail "mkfs.xfs"; }
echo "qs-vm:   xfs data, plain mkfs.xfs: $(grep -o 'sunit=[0-9]* *swidth=[0-9]* blks' /tmp/mkfs.log | head -1)"
/usr/local/sbin/mkfs.xfs -f -d su=64k,sw=1 /dev/ublkb0 >/tmp/mkfs.log 2>&1 ||
	{ cat /tmp/mkfs.log; fail "mkfs.xfs -d su=64k,sw=1"; }
su=$(grep -o 'sunit=[0-9]* *swidth=[0-9]* blks' /tmp/mkfs.log | head -1)
echo "qs-vm:   xfs data, mkfs.xfs -d su=64k,sw=1: $su"
echo "$su" | grep -q '^sunit=16 *swidth=16 blks$' ||
	{ cat /tmp/mkfs.log; fail "xfs data sunit/swidth are not 16 blocks (64 KiB)"; }
mount -t xfs /dev/ublkb0 /mnt || fail "mount xfs"
cp /bin/busybox /mnt/busybox && sync || fail "write to xfs"
cmp /bin/busybox /mnt/busybox || fail "xfs file differs"
umount /mnt || fail "umount xfs"
stop_daemon "engine backend, after recovery"

# kill -9 in the middle of fio: the device stays (user recovery), a new
# daemon re-attaches, the requeued requests are served, fio verifies.
start_daemon "engine backend, user recovery" /qs/engine-recovery.ini
step "fio 4k random write + verify, qlcshaped killed with SIGKILL midway"
fio --name=kill9 --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --iodepth=8 \
	--rw=randwrite --bs=4k --size=8M --offset=96M --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --randrepeat=0 >/tmp/fio5.log 2>&1 &
fpid=$!
# Kill once fio has completed 256 of its 2048 writes: early enough that it is
# surely still running, whatever the host's speed (a fixed sleep raced with a
# fast host).
i=0
while [ "$(awk '{print $5}' /sys/block/ublkb0/stat)" -lt 256 ]; do
	i=$((i + 1))
	[ $i -gt 600 ] && fail "fio wrote fewer than 256 blocks in 60 s"
	kill -0 $fpid 2>/dev/null || { cat /tmp/fio5.log; fail "fio ended before the kill"; }
	sleep 0.1
done
kill -0 $fpid 2>/dev/null || { cat /tmp/fio5.log; fail "fio ended before the kill"; }
kill -9 $pid
wait $pid
echo "qs-vm:   qlcshaped killed (SIGKILL)"
[ -b /dev/ublkb0 ] || fail "/dev/ublkb0 vanished with the daemon (no user recovery)"
start_daemon "engine backend, re-attach" /qs/engine-recovery.ini
grep -q "re-attached by user recovery" /tmp/qlcshaped.log || fail "daemon did not re-attach"
wait $fpid || { cat /tmp/fio5.log; fail "fio across the daemon kill"; }
grep -E "IOPS=|err=" /tmp/fio5.log | sed 's/^/qs-vm: fio: /'
# A drain asked over the control socket, then SIGTERM while it may still run:
# the stop waits for it, the daemon exits 0.
/usr/bin/qlcshape drain --config /qs/engine-recovery.ini >/tmp/drain2.txt 2>&1 &
dpid=$!
i=0
until grep -q "drain requested over the control socket" /tmp/qlcshaped.log; do
	i=$((i + 1))
	[ $i -gt 400 ] && { cat /tmp/drain2.txt; fail "the control drain never started"; }
	sleep 0.05
done
stop_daemon "engine backend, after user recovery, drain requested"
wait $dpid
echo "qs-vm:   control drain answered: $(head -1 /tmp/drain2.txt)"

. /qs/killstop.sh

# The emulated QLC's steps exercise the engine and the drive model, not
# the kernel: they run on the first kernel only (qs_emu=0 on the others,
# tests/vm/run.sh), which keeps CI inside its time.
if grep -q 'qs_emu=0' /proc/cmdline; then
	echo "qs-vm: emulated QLC steps: run on the first kernel only"
else
	. /qs/emu.sh
fi

echo "qs-vm: all steps passed"
exit 0
