#!/bin/bash
# The Ceph guest's script, run inside the VM by qs-guest-test.service
# (tests/vm/ceph.sh builds the guest and reads the console). Two runs of
# the same thing, one monitor and one BlueStore OSD on /dev/ublkb0, set up
# by hand (no cephadm, no ceph-volume, no network beyond loopback):
#
#   shaped  qlcshaped with the engine, its log on the fast NVMe disk, in
#           front of the emulated QLC (qlc = emu:p5316-30t, 160 GiB, its
#           data on the first big NVMe disk)
#   bare    qlcshaped with engine.mode = passthrough: every request of the
#           OSD reaches the emulated QLC as it is (data on the second one)
#
# In each: a pool of size 1, `rados bench` writes of 4 KiB objects, then of
# 64 KiB objects (SECS seconds each, 16 in flight), and around each
# bench the daemon's counters (`qlcshape stats --json`), after a drain when
# shaping is on so that what the bench wrote has reached the drive. The
# host computes the figures from these lines on the serial console:
#
#   QS-CEPH-STATS MODE POINT {json}    POINT: ready, 4k, 64k
#   QS-CEPH-BENCH MODE SIZE key=value...
#   QS-CEPH: PASS|FAIL MODE: ...
#   QS-CEPH: DONE                      the end; then the guest powers off
#
# Details go on "qs-vm: " lines (tests/vm/common.sh's step and fail). Every
# wait is bounded.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. /usr/local/lib/qs/common.sh

# SECS, the seconds of each bench, and MIN_ALLOC, BlueStore's allocation
# unit: tests/vm/ceph.sh writes them here.
. /usr/local/lib/qs/ceph-settings
QS_DRAIN_S=900         # drain_bounded: the whole log may be dirty under TCG
MON=/var/lib/ceph/mon/ceph-a
OSD=/var/lib/ceph/osd/ceph-0
mon_pid=
osd_pid=
pid=

# However the script ends (common.sh's fail exits), the guest powers off,
# so that qemu ends instead of running into the host's timeout.
finish() {
	echo "QS-CEPH: DONE"
	systemctl poweroff
}
trap finish EXIT

say() { echo "qs-vm: $*"; }
# The ceph CLI with a bound wait: without a monitor it would retry forever.
c() { timeout 120 ceph --connect-timeout 60 "$@"; }

# /dev/disk/by-id link of the NVMe disk whose serial is $1 (udev makes them
# once the nvme driver has probed the controllers).
disk() { # serial
	local d i=0
	timeout 120 udevadm settle
	while [ $i -lt 300 ]; do
		d=$(ls /dev/disk/by-id/nvme-*"$1"* 2>/dev/null | grep -v -- '-part' | head -1)
		[ -n "$d" ] && { echo "$d"; return 0; }
		sleep 0.2
		i=$((i + 1))
	done
	fail "no /dev/disk/by-id link for the NVMe disk with serial $1 (qemu -device nvme,serial=$1)"
}

# /etc/ceph/ceph.conf of a one-node cluster on loopback. auth none: there
# is no one else on the guest, and keyrings would only add steps (the
# reclaim setting is the secure one, whose default makes HEALTH_WARN).
# bluestore_min_alloc_size: what the host asked for, 65536 (one IU) by
# default (it is fixed at mkfs).
# The memory and thread settings keep the OSD within the guest's 4 GiB and
# its 2 emulated CPUs.
ceph_conf() { # fsid
	mkdir -p /etc/ceph /var/run/ceph
	cat >/etc/ceph/ceph.conf <<-EOF
	[global]
	fsid = $1
	mon_initial_members = a
	mon_host = v2:127.0.0.1:3300
	public_network = 127.0.0.0/8
	ms_bind_ipv6 = false
	auth_cluster_required = none
	auth_service_required = none
	auth_client_required = none
	auth_allow_insecure_global_id_reclaim = false
	osd_pool_default_size = 1
	osd_pool_default_min_size = 1
	mon_allow_pool_size_one = true
	mon_warn_on_pool_no_redundancy = false
	osd_crush_chooseleaf_type = 0
	[osd]
	osd_objectstore = bluestore
	bluestore_min_alloc_size = $MIN_ALLOC
	osd_memory_target = 1073741824
	osd_op_num_shards = 2
	osd_op_num_threads_per_shard = 1
	EOF
}

# One monitor (mkfs from a fresh monmap) and one OSD, BlueStore on
# /dev/ublkb0 through the block symlink, then a pool of size 1 that a
# first object reached.
ceph_up() { # mode
	local fsid uuid id i
	fsid=$(cat /proc/sys/kernel/random/uuid)
	uuid=$(cat /proc/sys/kernel/random/uuid)
	# The previous run's cluster, gone (monmaptool refuses to overwrite).
	rm -rf "$MON" "$OSD" /var/log/ceph/*.log /tmp/monmap /tmp/mon.keyring
	ceph_conf "$fsid"
	step "$1: ceph-mon --mkfs, start"
	monmaptool --create --addv a '[v2:127.0.0.1:3300]' --fsid "$fsid" /tmp/monmap >/tmp/mon-mkfs.log 2>&1 ||
		{ cat /tmp/mon-mkfs.log; fail "monmaptool --create /tmp/monmap failed"; }
	ceph-authtool --create-keyring /tmp/mon.keyring --gen-key -n mon. --cap mon 'allow *' >/tmp/mon-mkfs.log 2>&1 ||
		{ cat /tmp/mon-mkfs.log; fail "ceph-authtool --create-keyring /tmp/mon.keyring failed"; }
	mkdir -p "$MON"
	ceph-mon --mkfs -i a --monmap /tmp/monmap --keyring /tmp/mon.keyring >/tmp/mon-mkfs.log 2>&1 ||
		{ cat /tmp/mon-mkfs.log; fail "ceph-mon --mkfs failed"; }
	ceph-mon -f -i a >/tmp/ceph-mon.out 2>&1 &
	mon_pid=$!
	c mon stat >/tmp/mon-stat.txt 2>&1 ||
		{ cat /tmp/mon-stat.txt /tmp/ceph-mon.out; tail -20 /var/log/ceph/ceph-mon.a.log; fail "the monitor did not answer (ceph mon stat)"; }
	say "$1: $(cat /tmp/mon-stat.txt)"
	step "$1: ceph osd new, ceph-osd --mkfs on /dev/ublkb0"
	id=$(c osd new "$uuid") || fail "ceph osd new failed"
	[ "$id" = 0 ] || fail "ceph osd new gave id '$id', want 0"
	mkdir -p "$OSD"
	ln -s /dev/ublkb0 "$OSD/block"
	# debug_bluestore 10 for the mkfs alone: its log says which
	# min_alloc_size the store was made with.
	ceph-osd -i 0 --mkfs --osd-uuid "$uuid" --debug-bluestore 10 >/tmp/osd-mkfs.log 2>&1 ||
		{ tail -30 /tmp/osd-mkfs.log; tail -30 /var/log/ceph/ceph-osd.0.log; fail "ceph-osd --mkfs on /dev/ublkb0 failed"; }
	grep -h -o 'min_alloc_size 0x[0-9a-f]*' /var/log/ceph/ceph-osd.0.log | sort -u | sed "s/^/qs-vm: $1: mkfs: /"
	grep -q "min_alloc_size $(printf 0x%x "$MIN_ALLOC")" /var/log/ceph/ceph-osd.0.log ||
		fail "the OSD's mkfs log does not say min_alloc_size $(printf 0x%x "$MIN_ALLOC") (bluestore_min_alloc_size in /etc/ceph/ceph.conf)"
	step "$1: ceph-osd start"
	ceph-osd -f -i 0 >/tmp/ceph-osd.out 2>&1 &
	osd_pid=$!
	i=0
	until c osd stat -f json 2>/dev/null | grep -q '"num_up_osds":1'; do
		i=$((i + 1))
		kill -0 $osd_pid 2>/dev/null ||
			{ cat /tmp/ceph-osd.out; tail -30 /var/log/ceph/ceph-osd.0.log; fail "ceph-osd exited"; }
		[ $i -gt 120 ] && { tail -30 /var/log/ceph/ceph-osd.0.log; fail "osd.0 not up within 600 s"; }
		sleep 5
	done
	step "$1: osd.0 up; pool bench (size 1, 16 PGs)"
	c osd pool create bench 16 16 replicated >/dev/null || fail "ceph osd pool create bench failed"
	c osd pool set bench size 1 --yes-i-really-mean-it >/dev/null 2>&1
	say "$1: $(c osd pool get bench size)"
	# No manager runs (it is not needed for I/O), so PG states are not
	# reported: a first object written is what says the PGs are active.
	timeout 600 rados -p bench put probe /etc/hostname ||
		{ c -s; tail -30 /var/log/ceph/ceph-osd.0.log; fail "rados put into pool bench did not complete within 600 s"; }
	rados -p bench rm probe
	say "$1: $(c -s 2>&1 | grep -E 'health|osd:|mon:' | tr -s ' ' | tr '\n' ';')"
	c health detail 2>&1 | sed "s/^/qs-vm: $1: health: /"
}

ceph_down() { # mode
	step "$1: stop ceph-osd, ceph-mon"
	local p
	for p in $osd_pid $mon_pid; do
		kill -TERM "$p"
		timeout 120 tail --pid="$p" -f /dev/null || { kill -KILL "$p"; say "$1: pid $p killed after 120 s"; }
	done
	osd_pid=
	mon_pid=
}

# The daemon's counters as one line for the host.
snap() { # mode point
	local j
	j=$(/usr/bin/qlcshape stats --json --config "$conf" | tr -d '\n') || fail "qlcshape stats --json ($1 $2)"
	echo "QS-CEPH-STATS $1 $2 $j"
}

# rados bench writes of SIZE-byte objects for SECS seconds; its summary
# as one line for the host.
bench() { # mode size
	step "$1: rados bench write, ${2}-byte objects, $SECS s, 16 in flight"
	timeout $((SECS + 600)) rados bench -p bench "$SECS" write -b "$2" -t 16 --no-cleanup \
		--run-name "$1-$2" >/tmp/bench.txt 2>&1 ||
		{ tail -30 /tmp/bench.txt; fail "rados bench $2 ($1) failed"; }
	grep -E '^(Total time run|Total writes made|Bandwidth \(MB/sec\)|Average IOPS|Average Latency\(s\)|Max latency\(s\))' \
		/tmp/bench.txt | sed "s/^/qs-vm: $1 $2: /"
	echo "QS-CEPH-BENCH $1 $2 $(awk -F: '{ v = $2; gsub(/ /, "", v) }
		/^Total time run/ { printf "secs=%s ", v }
		/^Total writes made/ { printf "writes=%s ", v }
		/^Bandwidth \(MB\/sec\)/ { printf "mbs=%s ", v }
		/^Average IOPS/ { printf "iops=%s ", v }
		/^Average Latency\(s\)/ { printf "lat_s=%s ", v }' /tmp/bench.txt)"
}

# One run: the daemon with CONFIG over the emulated QLC, the cluster on
# it, the two benches, the counters.
run() { # mode config
	local mode=$1 drain='' fmt=''
	conf=$2
	# Shaping on: a fresh log (--format), and drains before each reading.
	[ "$mode" = shaped ] && { drain=1; fmt=--format; }
	start_daemon "$mode" "$conf" $fmt
	say "$mode: /sys/block/ublkb0: rotational $(cat /sys/block/ublkb0/queue/rotational), $(($(cat /sys/block/ublkb0/size) / 2097152)) GiB"
	ceph_up "$mode"
	[ -n "$drain" ] && drain_bounded "$mode, before the benches" "$conf"
	snap "$mode" ready
	bench "$mode" 4096
	[ -n "$drain" ] && drain_bounded "$mode, after 4 KiB" "$conf"
	snap "$mode" 4k
	bench "$mode" 65536
	[ -n "$drain" ] && drain_bounded "$mode, after 64 KiB" "$conf"
	snap "$mode" 64k
	ceph_down "$mode"
	QS_QUIET=1 stop_daemon "$mode"
	grep "emulated QLC: " /tmp/qlcshaped.log | sed "s/^/qs-vm: $mode: daemon: /"
	echo "QS-CEPH: PASS $mode: one monitor, one OSD on /dev/ublkb0, two benches"
}

say "kernel $(uname -r), $(ceph --version | cut -d' ' -f1-3), up $(cut -d' ' -f1 /proc/uptime) s, bench $SECS s, bluestore_min_alloc_size $MIN_ALLOC"
grep -q '^ublk_drv ' /proc/modules || fail "ublk_drv not loaded (/etc/modules-load.d/ublk.conf)"
fast=$(disk qsfast)
qlc1=$(disk qsqlc1)
qlc2=$(disk qsqlc2)
mkdir -p /qs

# The emulated P5316 30.72 TB at 160 GiB: past the 151 GiB from which its
# model keeps the calibrated garbage collection (docs/DAEMON.md), the data
# on a sparse disk of the host. Ceph gets the whole device.
cat >/qs/shaped.ini <<EOF
[devices]
fast = $fast
qlc = emu:p5316-30t
[emu]
backing = $qlc1
size = 160G
[daemon]
control_socket = /run/qlcshaped.sock
drain_on_stop = yes
[ublk]
dev_id = 0
EOF
cat >/qs/bare.ini <<EOF
[devices]
qlc = emu:p5316-30t
[engine]
mode = passthrough
[emu]
backing = $qlc2
size = 160G
[daemon]
control_socket = /run/qlcshaped.sock
[ublk]
dev_id = 0
EOF
run shaped /qs/shaped.ini
run bare /qs/bare.ini
