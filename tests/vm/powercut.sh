#!/bin/sh
# Power-cut test inside the VM (host side: pc_chain in tests/vm/run.sh). The
# two disks are NBD exports of tests/vm/vcnbd.py, drives with volatile write
# caches; /dev/vdc is a plain disk holding pcut's own log (tests/vm/pcut.c).
# One boot, from the kernel command line:
#   qs_pccheck=1  the previous boot was cut: start the daemon on what the
#                 cut left (recovery), pcut check every block, clean stop
#   qs_pcseed=N   then format, start pcut write with seed N and announce
#                 the cut after qs_pcat= operations; the host kills qemu
#                 (no seed: the last boot of a chain, check only)
#   qs_pcraw=1    the checker's self-test: no daemon, pcut on /dev/vdb
#                 itself (the host's drive lies about flushes there)
# Which daemon config: qs_pcconf= (powercut: in place; powercut-log).
. /qs/common.sh
arg() { sed -n "s/.*qs_$1=\([a-z0-9-]*\).*/\1/p" /proc/cmdline; }
conf=/qs/$(arg pcconf).ini
seed=$(arg pcseed)
# 16384 blocks: 64 MiB, four times the fast tier's 16 MiB log.
blocks=16384
if [ "$(arg pcraw)" = 1 ]; then dev=/dev/vdb; else dev=/dev/ublkb0; fi
[ -b /dev/vdc ] || fail "no /dev/vdc (pcut's log disk)"

if [ "$(arg pccheck)" = 1 ]; then
	if [ $dev = /dev/ublkb0 ]; then
		step "power cut: recover what the cut left"
		QS_QUIET=1 run_daemon "$conf"
		grep -E "recover|replay|checkpoint" /tmp/qlcshaped.log | sed 's/^/qs-vm: daemon: /'
	fi
	step "power cut: check every block against pcut's log"
	/usr/bin/pcut check $dev /dev/vdc || fail "pcut check found violations (or could not run)"
	if [ $dev = /dev/ublkb0 ]; then
		kill -TERM $pid
		wait $pid || fail "qlcshaped exit status $? after the check"
	fi
fi
[ -n "$seed" ] || exit 0
if [ $dev = /dev/ublkb0 ]; then
	step "power cut: format, pcut write (seed $seed)"
	QS_QUIET=1 run_daemon "$conf" --format
fi
if [ $dev = /dev/ublkb0 ]; then
	# What the engine was doing when the cut came: its counters every
	# 0.2 s (the host keeps the last line before the cut in the chain's
	# stats, and counts the cuts with throttled writes and destage).
	(while sleep 0.2; do
		/usr/bin/qlcshape stats --config "$conf" 2>/dev/null |
			awk '/^log / { l = $0 } /^destage / { d = $2 }
			     END { if (l != "") print "qs-vm: pcstat: " l ", destaged IUs " d }'
	done) &
fi
/usr/bin/pcut write $dev /dev/vdc "$seed" $blocks "$(arg pcat)" || fail "pcut write"
fail "pcut write ended (it runs until the power cut)"
