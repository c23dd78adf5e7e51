#!/bin/sh
# Power-loss test inside the VM, in two boots sharing two virtio disks
# (see tests/vm/run.sh):
#   pl1  format, random 4k writes over 16 MiB ending with a flush, print the
#        region's md5, start more writes elsewhere, then stop the guest
#        abruptly (sysrq 'o': no clean daemon or engine shutdown).
#   pl2  start the daemon on the unclean log (recovery), the region's md5
#        must equal the one printed by pl1 (passed as qs_md5= on the kernel
#        command line), clean stop.
# What is lost is the guest's volatile state: the daemon's memory, the
# engine's DRAM buffer, the guest page cache. Writes that reached the
# virtual disks survive, so this checks recovery of an unclean log, not
# lost device caches (the engine's fault-injecting tests cover those).
. /qs/common.sh
phase=$1
# qs_plconf= on the kernel command line: powerloss (in place, the default)
# or powerloss-log (log placement).
conf=$(sed -n 's/.*qs_plconf=\([a-z-]*\).*/\1/p' /proc/cmdline)
conf=/qs/${conf:-powerloss}.ini

start() { # args
	run_daemon "$conf" "$@"
}

region_md5() {
	dd if=/dev/ublkb0 bs=1M count=16 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1
}

case "$phase" in
pl1)
	step "power loss, boot 1: format, write, flush"
	start --format
	fio --name=pl --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --iodepth=8 \
		--rw=randwrite --bs=4k --size=16M --end_fsync=1 --randrepeat=0 \
		>/tmp/fio.log 2>&1 || { cat /tmp/fio.log; fail "fio"; }
	grep -E "IOPS=" /tmp/fio.log | sed 's/^/qs-vm: fio: /'
	echo "qs-vm: flushed md5 $(region_md5)"
	# Writes still in flight at the stop, outside the checked region.
	fio --name=after --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --iodepth=8 \
		--rw=randwrite --bs=4k --size=16M --offset=64M --time_based --runtime=30 \
		>/dev/null 2>&1 &
	sleep 2
	echo "qs-vm: abrupt power-off"
	echo o >/proc/sysrq-trigger
	sleep 30
	fail "still running after sysrq power-off"
	;;
pl2)
	want=$(sed -n 's/.*qs_md5=\([0-9a-f]*\).*/\1/p' /proc/cmdline)
	[ -n "$want" ] || fail "no qs_md5= on the kernel command line"
	step "power loss, boot 2: recover the unclean log"
	start
	grep -q "recovered log" /tmp/qlcshaped.log || fail "no log recovery reported"
	got=$(region_md5)
	echo "qs-vm:   flushed md5 $want, after recovery $got"
	[ "$got" = "$want" ] || fail "flushed data lost or changed across the power loss"
	kill -TERM $pid
	wait $pid || fail "qlcshaped exit status $?"
	sed 's/^/qs-vm: daemon: /' /tmp/qlcshaped.log | tail -3
	;;
*)
	fail "unknown phase '$phase'"
	;;
esac
exit 0
