#!/bin/bash
# The checks of the systemd guest, run inside the VM by
# qs-guest-test.service (tests/vm/systemd.sh builds the guest and reads
# the console). qs_phase=1 or 2 on the kernel command line says which boot
# this is:
#
# boot 1: 1 enable       qlcshaped --format-only, then systemctl enable --now
#                        qlcshaped@qlc0: active only once /dev/ublkb0 exists,
#                        StatusText says serving
#         2 fstab-write  ext4 on /dev/ublkb0, an /etc/fstab line for it,
#                        mounted, files written and their checksums kept
#         3 kill9        SIGKILL of the main PID under fio with verify on a
#                        file of that ext4: systemd restarts the daemon, user
#                        recovery keeps /dev/ublkb0, fio completes and verifies
#         4 watchdog     SIGSTOP of the main PID: the watchdog (WatchdogSec)
#                        kills it and systemd restarts it
#         then systemctl reboot: the shutdown unmounts, stops (and drains)
# boot 2: 2 fstab-reboot the ext4 mounted at boot, the files intact
#         6 security     systemd-analyze security: exposure at most 2.5
#         7 metrics      DEPLOYMENT.md's metrics service and timer, scraped
#                        by node_exporter (textfile and systemd collectors)
#         5 stop-drain   the mount stopped, then systemctl stop drains
#                        (StatusText seen); journalctl -u has the daemon's lines
#
# Each check prints "QS-SD: PASS N name: ..." or "QS-SD: FAIL N name: why";
# the end of a boot's checks "QS-SD-PHASE N: DONE". Details go on
# "qs-sd: " lines. Every wait is bounded.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
UNIT=qlcshaped@qlc0.service
CONF=/etc/qlcshape/qlc0.ini
MNT=/srv/qlc0
STATE=/var/lib/qs-systemd-test

say() { echo "qs-sd: $*"; }
pass() { echo "QS-SD: PASS $*"; }
fail() { echo "QS-SD: FAIL $*"; FAILED=1; }
FAILED=0
t_start=$(cut -d' ' -f1 /proc/uptime)
step() { say "[$(cut -d' ' -f1 /proc/uptime) s] $*"; }
prop() { systemctl show -p "$1" --value "$UNIT"; }
# The daemon's journal of this boot, as an operator reads it.
journal_tail() { journalctl -b -u "$UNIT" --no-pager -o cat | tail -n "${1:-25}" | sed 's/^/qs-sd: journal: /'; }

# Wait until the unit is active with a main PID other than $1 (a restart):
# $2 x 5 polls 0.2 s apart, so at least $2 seconds (more under TCG, where
# each poll's two systemctl calls take time). Prints nothing; 0 if it happened.
wait_restarted() { # old-pid seconds
	local i=0 n=$(($2 * 5)) st pid
	while [ $i -lt $n ]; do
		st=$(prop ActiveState)
		pid=$(prop MainPID)
		[ "$st" = active ] && [ "$pid" != 0 ] && [ "$pid" != "$1" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

# Why the fstab mount is not there.
mount_diag() {
	systemctl status --no-pager srv-qlc0.mount 2>&1 | sed 's/^/qs-sd: status: /'
	journalctl -b --no-pager -o cat -u srv-qlc0.mount -u 'systemd-fsck@*' | tail -20 |
		sed 's/^/qs-sd: journal: /'
	ls -l /dev/disk/by-uuid/ | sed 's/^/qs-sd: /'
}

# The daemon's restarts must leave the file system alone: still mounted,
# no unmount tried (a restart propagated to the mount would try one).
mount_untouched() {
	local u
	u=$(journalctl -b -o cat -u srv-qlc0.mount | grep -E 'Unmount|unmount')
	[ -z "$u" ] && [ "$(systemctl show -p ActiveState --value srv-qlc0.mount)" = active ] && return 0
	echo "$u" | sed 's/^/qs-sd: journal: /'
	say "srv-qlc0.mount: $(systemctl show -p ActiveState --value srv-qlc0.mount)"
	return 1
}

done_phase() {
	step "phase $PHASE checks ended after $(awk -v a="$t_start" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.0f", b - a }') s"
	echo "QS-SD-PHASE $PHASE: DONE"
}

PHASE=$(sed -n 's/.*qs_phase=\([0-9]\).*/\1/p' /proc/cmdline)
say "phase ${PHASE:-?}: kernel $(uname -r), systemd $(systemctl --version | head -1 | cut -d' ' -f2), up $(cut -d' ' -f1 /proc/uptime) s"
say "system state: $(timeout 120 systemctl is-system-running --wait 2>&1)"
systemctl --failed --no-legend --plain | sed 's/^/qs-sd: failed unit: /'
mkdir -p "$STATE"

phase1() {
	# --- 1 enable -------------------------------------------------------
	step "1: ublk_drv, the NVMe disks, the config"
	grep -q '^ublk_drv ' /proc/modules && [ -c /dev/ublk-control ] ||
		{ fail "1 enable: ublk_drv not loaded by systemd-modules-load (/etc/modules-load.d/ublk.conf)"; return 1; }
	local fast= qlc= i=0
	# udev makes the by-id links once the nvme driver has probed the
	# controllers, which may still run when this starts.
	timeout 120 udevadm settle
	while [ $i -lt 300 ]; do
		fast=$(ls /dev/disk/by-id/nvme-*qsfast* 2>/dev/null | grep -v -- '-part' | head -1)
		qlc=$(ls /dev/disk/by-id/nvme-*qsqlc* 2>/dev/null | grep -v -- '-part' | head -1)
		[ -n "$fast" ] && [ -n "$qlc" ] && break
		sleep 0.2
		i=$((i + 1))
	done
	say "fast tier $fast -> $(readlink -f "$fast"), QLC $qlc -> $(readlink -f "$qlc")"
	[ -b "$fast" ] && [ -b "$qlc" ] ||
		{ ls -l /dev/nvme* /dev/disk/by-id/ 2>&1 | sed 's/^/qs-sd: /'
		  lsmod | grep -E 'nvme|virtio' | sed 's/^/qs-sd: lsmod: /'
		  journalctl -b -k -o cat | grep -i nvme | sed 's/^/qs-sd: kernel: /'
		  fail "1 enable: no by-id links for the NVMe disks qsfast and qsqlc"; return 1; }
	ldd /usr/bin/qlcshaped | grep -q 'not found' &&
		{ ldd /usr/bin/qlcshaped | sed 's/^/qs-sd: /'; fail "1 enable: qlcshaped misses libraries"; return 1; }
	# As docs/DEPLOYMENT.md, "One instance per QLC drive", with the QLC
	# emulated (docs/DAEMON.md, Emulated QLC) over the second NVMe disk:
	# qemu's NVMe reports NPWG = one logical block, so over the raw disk
	# the IU would be 4 KiB; the profile's is 64 KiB, as on the real drive.
	# The profile is found by name where make install put it.
	# idle_ms = 0 and a late destage keep data dirty, so that the stop of
	# check 5 has something to drain.
	cat >"$CONF" <<-EOF
	[devices]
	fast = $fast
	qlc = emu:p5316-30t
	[engine]
	dram_buffer = 16M
	[policy]
	idle_ms = 0
	start_pct = 80
	urgent_pct = 90
	[daemon]
	control_socket = /run/qlcshaped/qlc0.sock
	drain_on_stop = yes
	[ublk]
	dev_id = 0
	user_recovery = yes
	[emu]
	backing = $qlc
	size = 1G
	EOF
	# The instance waits for its devices, as docs/DEPLOYMENT.md says: the
	# unit's After=systemd-udev-trigger.service does not wait for the
	# devices to be probed, and at boot the daemon started before udev had
	# made the by-id links ("cannot open: No such file or directory"; only
	# Restart= got it going, and a mount that required it failed).
	local fdev qdev
	fdev=$(systemd-escape --path --suffix=device "$fast")
	qdev=$(systemd-escape --path --suffix=device "$qlc")
	mkdir -p /etc/systemd/system/qlcshaped@qlc0.service.d
	cat >/etc/systemd/system/qlcshaped@qlc0.service.d/devices.conf <<-EOF
	[Unit]
	Requires=$fdev $qdev
	After=$fdev $qdev
	EOF
	sed 's/^/qs-sd: drop-in: /' /etc/systemd/system/qlcshaped@qlc0.service.d/devices.conf
	systemctl daemon-reload
	step "1: qlcshaped --config $CONF --format-only"
	mkdir -p -m 0700 /run/qlcshaped
	timeout 300 qlcshaped --config "$CONF" --format-only >/tmp/format.log 2>&1
	local rc=$?
	sed 's/^/qs-sd: format: /' /tmp/format.log
	[ $rc = 0 ] || { fail "1 enable: qlcshaped --format-only exited $rc"; return 1; }
	step "1: systemctl enable --now $UNIT"
	if ! timeout 600 systemctl enable --now "$UNIT" 2>&1 | sed 's/^/qs-sd: /'; then :; fi
	# Type=notify: systemctl start returns once READY=1 arrived, which the
	# daemon sends only once the device exists. So the device must be
	# there the moment the unit is active.
	local st dev=no
	st=$(prop ActiveState)
	[ -b /dev/ublkb0 ] && dev=yes
	local status
	status=$(prop StatusText)
	say "ActiveState=$st, /dev/ublkb0 present: $dev, StatusText=$status, UnitFileState=$(prop UnitFileState)"
	say "WatchdogUSec=$(prop WatchdogUSec), NotifyAccess=$(prop NotifyAccess), Restart=$(prop Restart)"
	journal_tail 12
	say "io_timeout of ublkb0: $(cat /sys/block/ublkb0/queue/io_timeout 2>&1) ms (the unit's ReadWritePaths=/sys/devices/virtual)"
	if journalctl -b -u "$UNIT" -o cat | grep -q 'cannot set /sys/block/ublkb0/queue/io_timeout'; then
		say "note: the daemon could not set io_timeout under the unit's sandbox (journal above)"
	fi
	[ "$st" = active ] || { fail "1 enable: $UNIT is '$st' after systemctl enable --now"; return 1; }
	[ $dev = yes ] || { fail "1 enable: $UNIT active but /dev/ublkb0 missing"; return 1; }
	case "$status" in
	"serving /dev/ublkb0"*) ;;
	*) fail "1 enable: StatusText is '$status', want 'serving /dev/ublkb0'"; return 1 ;;
	esac
	[ "$(prop UnitFileState)" = enabled ] || { fail "1 enable: $UNIT not enabled"; return 1; }
	pass "1 enable: --format-only, enable --now: active with /dev/ublkb0 present, StatusText=$status"

	# --- 2 fstab, first half ---------------------------------------------
	step "2: ext4 on /dev/ublkb0, an fstab line, files"
	if ! mkfs.ext4 -q -F -b 4096 /dev/ublkb0 >/tmp/mkfs.log 2>&1; then
		sed 's/^/qs-sd: /' /tmp/mkfs.log
		fail "2 fstab-write: mkfs.ext4 /dev/ublkb0"
		return 1
	fi
	local uuid
	uuid=$(blkid -s UUID -o value /dev/ublkb0)
	mkdir -p "$MNT"
	# docs/DEPLOYMENT.md, "File systems on top": by the device's name
	# (stable with a fixed ublk.dev_id), nofail, ordered after its
	# instance (so it mounts once the device exists and unmounts before
	# the daemon stops at shutdown). Not UUID=: systemd 252's udev makes
	# no by-uuid links for ublkb* (its 60-persistent-storage.rules skips
	# them), and with in-place placement the raw QLC drive carries the same
	# file system signature once destaged, so the link names the QLC drive
	# (phase 2 prints it). Not x-systemd.requires=: systemd 252 propagates
	# every automatic restart of the daemon (Restart=) to units that
	# require it, so the mount is unmounted while the daemon is dead and
	# the device quiesced: umount hung in D state until systemd gave up
	# 270 s later, and only then was the daemon started again.
	echo "/dev/ublkb0 $MNT ext4 defaults,nofail,x-systemd.after=$UNIT 0 2" >>/etc/fstab
	say "fstab: $(tail -1 /etc/fstab)"
	systemctl daemon-reload
	if ! timeout 180 systemctl start srv-qlc0.mount; then
		mount_diag
		fail "2 fstab-write: systemctl start srv-qlc0.mount"
		return 1
	fi
	findmnt -n "$MNT" | sed 's/^/qs-sd: /'
	head -c 8M /dev/urandom >"$MNT/random" &&
		cp /usr/bin/qlcshaped "$MNT/qlcshaped" &&
		mkdir -p "$MNT/dir" && echo qlcshape >"$MNT/dir/small" ||
		{ fail "2 fstab-write: writing files to $MNT"; return 1; }
	(cd "$MNT" && sha256sum random qlcshaped dir/small) >"$STATE/files.sha256"
	sync
	sed 's/^/qs-sd: /' "$STATE/files.sha256"
	echo "$uuid" >"$STATE/uuid"
	pass "2 fstab-write: ext4 (UUID $uuid) on /dev/ublkb0 in /etc/fstab, mounted at $MNT, 3 files written (checked after the reboot)"

	# --- 3 kill -9 under fio ------------------------------------------------
	step "3: SIGKILL of the main PID under fio with verify"
	local pid0 nr0 w0 fpid i
	pid0=$(prop MainPID)
	nr0=$(prop NRestarts)
	w0=$(awk '{print $5}' /sys/block/ublkb0/stat)
	fio --name=kill9 --filename="$MNT/fio.dat" --size=16M --direct=1 --ioengine=io_uring \
		--iodepth=8 --rw=randwrite --bs=4k --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--randrepeat=0 >/tmp/fio-kill9.log 2>&1 &
	fpid=$!
	# Kill once fio has written 1024 blocks past the layout: surely still
	# running, whatever the speed of the emulated CPU.
	i=0
	while [ "$(awk '{print $5}' /sys/block/ublkb0/stat)" -lt $((w0 + 1024)) ]; do
		i=$((i + 1))
		kill -0 $fpid 2>/dev/null || break
		[ $i -gt 1200 ] && break
		sleep 0.1
	done
	if ! kill -0 $fpid 2>/dev/null; then
		sed 's/^/qs-sd: fio: /' /tmp/fio-kill9.log
		fail "3 kill9: fio ended before the kill"
	else
		kill -9 "$pid0"
		say "SIGKILL to main PID $pid0 after $(($(awk '{print $5}' /sys/block/ublkb0/stat) - w0)) writes"
		sleep 0.5
		local kept=no
		[ -b /dev/ublkb0 ] && kept=yes
		if ! wait_restarted "$pid0" 180; then
			journal_tail
			fail "3 kill9: $UNIT not active again with a new PID within 180 s"
			kill $fpid 2>/dev/null
		else
			local pid1 nr1 frc
			pid1=$(prop MainPID)
			nr1=$(prop NRestarts)
			timeout 600 tail --pid=$fpid -f /dev/null
			wait $fpid
			frc=$?
			grep -E 'IOPS=|err=' /tmp/fio-kill9.log | sed 's/^/qs-sd: fio: /'
			journalctl -b -u "$UNIT" -o cat | grep -E 're-attach|ready|Main process exited|Scheduled restart' |
				tail -6 | sed 's/^/qs-sd: journal: /'
			if [ $kept != yes ]; then
				fail "3 kill9: /dev/ublkb0 vanished with the daemon (user recovery)"
			elif [ $frc != 0 ]; then
				sed 's/^/qs-sd: fio: /' /tmp/fio-kill9.log | tail -20
				fail "3 kill9: fio exited $frc across the kill"
			elif ! journalctl -b -u "$UNIT" -o cat | grep -q 're-attached by user recovery'; then
				fail "3 kill9: the restarted daemon did not re-attach by user recovery"
			elif ! mount_untouched; then
				fail "3 kill9: systemd touched $MNT during the restart (above)"
			elif [ "$nr1" -le "$nr0" ]; then
				fail "3 kill9: NRestarts $nr0 -> $nr1"
			else
				pass "3 kill9: PID $pid0 killed, restarted as $pid1 (NRestarts $nr0 -> $nr1), /dev/ublkb0 kept, re-attached, fio verified"
			fi
		fi
	fi

	# --- 4 watchdog ----------------------------------------------------------
	step "4: SIGSTOP of the main PID: the watchdog"
	local wd
	wd=$(prop WatchdogUSec)
	pid0=$(prop MainPID)
	nr0=$(prop NRestarts)
	kill -STOP "$pid0"
	local ts=$SECONDS
	say "SIGSTOP to main PID $pid0 (WatchdogUSec=$wd)"
	if ! wait_restarted "$pid0" 240; then
		journal_tail
		fail "4 watchdog: $UNIT not restarted within 240 s of SIGSTOP (WatchdogUSec=$wd)"
		kill -CONT "$pid0" 2>/dev/null
	else
		local secs=$((SECONDS - ts))
		journalctl -b -u "$UNIT" -o cat | grep -iE 'watchdog|Main process exited|Scheduled restart|re-attach' |
			tail -5 | sed 's/^/qs-sd: journal: /'
		if ! journalctl -b -u "$UNIT" -o cat | grep -q 'Watchdog timeout'; then
			fail "4 watchdog: restarted, but the journal has no 'Watchdog timeout' from systemd"
		elif [ "$secs" -gt 120 ]; then
			fail "4 watchdog: the restart took ${secs} s after SIGSTOP (WatchdogUSec=$wd)"
		elif ! mount_untouched; then
			fail "4 watchdog: systemd touched $MNT during the restart (above)"
		elif (cd "$MNT" && sha256sum --quiet -c "$STATE/files.sha256") >/dev/null 2>&1; then
			pass "4 watchdog: stopped PID $pid0 killed by the watchdog ($wd) and restarted as $(prop MainPID) after ${secs} s (NRestarts $nr0 -> $(prop NRestarts)); files intact"
		else
			fail "4 watchdog: files in $MNT differ after the restart"
		fi
	fi

	# Dirty data for the drain of the shutdown that follows.
	head -c 4M /dev/urandom >"$MNT/dirty" && sync
	(cd "$MNT" && sha256sum dirty) >>"$STATE/files.sha256"
	say "dirty IUs before the reboot: $(qlcshape stats --json --config "$CONF" 2>&1 | sed -n 's/.*"dirty_ius": \([0-9]*\).*/\1/p')"
}

# docs/DEPLOYMENT.md, Metrics: the timer and service given there, written as
# they are printed, and node_exporter (Debian's prometheus-node-exporter)
# with its textfile collector on their directory and its systemd collector
# (the "unit failed" alert). One scrape over loopback must carry the
# daemon's metrics and the unit's state.
metrics() {
	step "7: qlcshape-metrics@qlc0 and node_exporter"
	local d=/var/lib/node_exporter/textfile
	mkdir -p "$d"
	cat >/etc/systemd/system/qlcshape-metrics@.service <<-'EOF'
	[Service]
	Type=oneshot
	ExecStart=/bin/sh -c 'qlcshape stats --prometheus --config /etc/qlcshape/%i.ini \
	    > /var/lib/node_exporter/textfile/qlcshape-%i.prom.$$ && \
	    mv /var/lib/node_exporter/textfile/qlcshape-%i.prom.$$ \
	       /var/lib/node_exporter/textfile/qlcshape-%i.prom'
	EOF
	cat >/etc/systemd/system/qlcshape-metrics@.timer <<-'EOF'
	[Timer]
	OnActiveSec=15s
	OnUnitActiveSec=15s
	EOF
	echo "ARGS=\"--collector.textfile.directory=$d --collector.systemd\"" \
		>/etc/default/prometheus-node-exporter
	systemctl daemon-reload
	systemctl restart prometheus-node-exporter
	systemctl start qlcshape-metrics@qlc0.timer
	# The first run now rather than in 15 s.
	if ! timeout 120 systemctl start qlcshape-metrics@qlc0.service; then
		journalctl -b -u qlcshape-metrics@qlc0.service -o cat | tail -5 | sed 's/^/qs-sd: journal: /'
		fail "7 metrics: qlcshape-metrics@qlc0.service failed"
		return
	fi
	ls -l "$d" | sed 's/^/qs-sd: /'
	local i=0
	until curl -sf http://localhost:9100/metrics >/tmp/metrics.txt; do
		i=$((i + 1))
		[ $i -gt 120 ] && break
		sleep 0.5
	done
	grep -E '^qlcshape_(info|qlc_whole_iu_writes_total|dirty_ius)|^node_textfile_scrape_error|^node_systemd_unit_state\{name="qlcshaped@qlc0.service",state="active"' \
		/tmp/metrics.txt | sed 's/^/qs-sd: scrape: /'
	if ! [ -s /tmp/metrics.txt ]; then
		systemctl status --no-pager prometheus-node-exporter 2>&1 | tail -5 | sed 's/^/qs-sd: /'
		fail "7 metrics: node_exporter did not answer on localhost:9100 within 60 s"
	elif ! grep -q '^qlcshape_info{.*config="qlc0".*} 1$' /tmp/metrics.txt; then
		fail "7 metrics: no qlcshape_info{config=\"qlc0\"} 1 in node_exporter's scrape"
	elif ! grep -q '^node_textfile_scrape_error 0$' /tmp/metrics.txt; then
		fail "7 metrics: node_exporter's textfile collector reports an error"
	elif ! grep -qE '^node_systemd_unit_state\{name="qlcshaped@qlc0.service",state="active"[^}]*\} 1$' /tmp/metrics.txt; then
		fail "7 metrics: no node_systemd_unit_state active = 1 for qlcshaped@qlc0.service"
	elif [ "$(systemctl show -p ActiveState --value qlcshape-metrics@qlc0.timer)" != active ]; then
		fail "7 metrics: qlcshape-metrics@qlc0.timer is not active"
	else
		pass "7 metrics: DEPLOYMENT.md's metrics service and timer, node_exporter scrape has qlcshape_info{config=\"qlc0\"} and the unit active"
	fi
}

phase2() {
	# --- 2 fstab, after the reboot -------------------------------------------
	step "2: after the reboot"
	say "previous boot's shutdown, from the journal:"
	journalctl -b -1 -u "$UNIT" -o cat --no-pager | tail -8 | sed 's/^/qs-sd: journal -1: /'
	local src cyc
	cyc=$(journalctl -b -o cat | grep -E 'ordering cycle|deleted to break')
	[ -n "$cyc" ] && echo "$cyc" | sed 's/^/qs-sd: systemd: /'
	# What udev made of the file system's UUID: no link for ublkb0, and
	# the raw QLC drive carries the signature (in-place placement).
	say "by-uuid link for the file system's UUID: $(readlink -f "/dev/disk/by-uuid/$(cat "$STATE/uuid" 2>/dev/null)" 2>&1)"
	src=$(findmnt -n -o SOURCE,FSTYPE "$MNT")
	say "$MNT: $src; $UNIT: $(prop ActiveState), $(prop StatusText)"
	systemd-analyze critical-chain srv-qlc0.mount --no-pager 2>&1 | sed 's/^/qs-sd: /'
	local bootfail
	bootfail=$(journalctl -b -o cat -u "$UNIT" | grep -E 'Failed|Dependency failed|cannot open')
	[ -n "$bootfail" ] && echo "$bootfail" | sed 's/^/qs-sd: journal: /'
	say "$UNIT at boot: NRestarts=$(prop NRestarts), active since $(prop ActiveEnterTimestampMonotonic | awk '{ printf "%.1f s", $1 / 1e6 }')"
	if [ -n "$cyc" ]; then
		mount_diag
		fail "2 fstab-reboot: systemd found an ordering cycle at boot (above)"
	elif [ -n "$bootfail" ] || [ "$(prop NRestarts)" != 0 ]; then
		mount_diag
		fail "2 fstab-reboot: $UNIT did not start at the first attempt at boot (above)"
	elif [ "$(echo $src)" != "/dev/ublkb0 ext4" ]; then
		mount_diag
		fail "2 fstab-reboot: $MNT is not ext4 on /dev/ublkb0 after the reboot ('$src')"
	elif ! (cd "$MNT" && sha256sum -c "$STATE/files.sha256") >/tmp/sum.log 2>&1; then
		sed 's/^/qs-sd: /' /tmp/sum.log
		fail "2 fstab-reboot: checksums differ after the reboot"
	else
		pass "2 fstab-reboot: $MNT mounted at boot from /dev/ublkb0, $(wc -l <"$STATE/files.sha256") files intact (sha256)"
	fi

	# --- 6 security ------------------------------------------------------------
	step "6: systemd-analyze security $UNIT"
	systemd-analyze security --no-pager "$UNIT" >/tmp/sec.log 2>&1
	grep -E '^✗|Overall' /tmp/sec.log | sed 's/^/qs-sd: /'
	local expo
	expo=$(sed -n 's/.*Overall exposure level for [^ ]*: \([0-9.]*\).*/\1/p' /tmp/sec.log)
	if [ -z "$expo" ]; then
		sed 's/^/qs-sd: /' /tmp/sec.log | tail -5
		fail "6 security: no exposure level in systemd-analyze security's output"
	elif awk -v e="$expo" 'BEGIN { exit !(e <= 2.5) }'; then
		pass "6 security: exposure $expo (at most 2.5)"
	else
		fail "6 security: exposure $expo, above 2.5"
	fi

	# --- 7 metrics ---------------------------------------------------------------
	metrics

	# --- 5 stop and drain ------------------------------------------------------
	step "5: systemctl stop $UNIT, with dirty data"
	head -c 8M /dev/urandom >"$MNT/more" && sync
	local dirty
	dirty=$(qlcshape stats --json --config "$CONF" 2>&1 | sed -n 's/.*"dirty_ius": \([0-9]*\).*/\1/p')
	say "dirty IUs before the stop: ${dirty:-?}"
	local since
	since=$(date '+%Y-%m-%d %H:%M:%S')
	# Users first (docs/DEPLOYMENT.md): the fstab line orders the mount
	# after the instance but does not require it, so a stop of the
	# instance alone would delete the device under the mounted file system.
	timeout 120 systemctl stop srv-qlc0.mount ||
		{ fail "5 stop-drain: systemctl stop srv-qlc0.mount"; return; }
	# PID 1 logs each notification it gets at debug level: the proof of
	# the STATUS= sent while draining, which a poll of StatusText misses
	# when the drain is quicker than the poll (73 ms for 135 IUs once).
	local level
	level=$(systemd-analyze log-level 2>/dev/null) || level=info
	systemd-analyze log-level debug || say "systemd-analyze log-level debug failed"
	systemctl stop --no-block "$UNIT"
	# The StatusText values the unit goes through while it stops.
	local i=0 st seen="" s
	while [ $i -lt 3000 ]; do
		s=$(prop StatusText)
		case "|$seen|" in *"|$s|"*) ;; *) seen="$seen|$s" ;; esac
		st=$(prop ActiveState)
		[ "$st" = inactive ] || [ "$st" = failed ] && break
		sleep 0.2
		i=$((i + 1))
	done
	systemd-analyze log-level "$level" || say "systemd-analyze log-level $level failed"
	say "StatusText during the stop: ${seen#|}"
	local sent
	sent=$(journalctl --since "$since" -o cat _PID=1 | grep -c 'STATUS=draining the log to the QLC' || true)
	say "PID 1 got STATUS=draining the log to the QLC... $sent times (its debug log)"
	say "after the stop: $UNIT $st (Result=$(prop Result), ExecMainStatus=$(prop ExecMainStatus)); srv-qlc0.mount $(systemctl show -p ActiveState --value srv-qlc0.mount)"
	journalctl -u "$UNIT" --since "$since" --no-pager -o short-monotonic | sed 's/^/qs-sd: journal: /'
	local j
	j=$(journalctl -u "$UNIT" --since "$since" -o cat)
	if [ "$st" != inactive ]; then
		fail "5 stop-drain: $UNIT is '$st' after the stop (Result=$(prop Result))"
	elif [ "$(systemctl show -p ActiveState --value srv-qlc0.mount)" != inactive ]; then
		fail "5 stop-drain: $MNT still mounted after systemctl stop srv-qlc0.mount"
	elif ! [ "${dirty:-0}" -gt 0 ]; then
		fail "5 stop-drain: no dirty IUs before the stop ('${dirty:-}'): nothing to check the drain with"
	elif ! echo "$seen" | grep -q 'draining the log to the QLC' && [ "${sent:-0}" -eq 0 ]; then
		fail "5 stop-drain: $dirty dirty IUs but no StatusText 'draining' seen during the stop, nor a STATUS=draining notification in PID 1's debug log"
	elif ! echo "$j" | grep -q '^qlcshaped: drained: every block is on the QLC'; then
		fail "5 stop-drain: the journal does not show the drain"
	elif ! echo "$j" | grep -q 'engine closed cleanly'; then
		fail "5 stop-drain: no 'engine closed cleanly' in the journal"
	else
		pass "5 stop-drain: $MNT unmounted, then the stop drained $dirty dirty IUs (StatusText polled: ${seen#|}; STATUS=draining notifications in PID 1's log: $sent), closed cleanly; journalctl -u shows it"
	fi
}

case "$PHASE" in
1)
	phase1 || say "the checks after this failure were not run"
	done_phase
	step "rebooting: the shutdown unmounts $MNT and stops $UNIT"
	systemctl --no-block reboot
	;;
2)
	phase2
	done_phase
	systemctl --no-block poweroff
	;;
*)
	say "no qs_phase=1|2 on the kernel command line"
	systemctl --no-block poweroff
	;;
esac
exit 0
