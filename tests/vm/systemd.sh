#!/usr/bin/env bash
# The systemd guest (issue 16): qlcshaped@.service run by a real systemd as
# PID 1, in a Debian 12 VM under qemu TCG with Linux 6.12.
#
#   tests/vm/systemd.sh          (make vmtest-systemd runs this)
#
# Not part of make test or make vmtest (CI time): it boots a full Debian
# twice under TCG, which takes minutes (docs/DAEMON.md, "The systemd guest").
#
# 1. The root file system, built once and cached in build/vm/systemd/rootfs
#    (about 500 MB) by tests/vm/guest-lib.sh (mmdebstrap from this machine's
#    own archive URI; systemd, udev, fio, curl, the daemon's runtime
#    libraries and the exact linux-image package of build/vm/k612, so that
#    /lib/modules matches the kernel booted), plus prometheus-node-exporter.
#    QS_SD_REBUILD=1 builds it again.
# 2. Each run: the tree under test installed into a copy of it (gl_image),
#    with tests/vm/systemd-guest.sh as the guest script; two empty NVMe
#    disks (qemu's emulated NVMe controller: namespaces are blkext devices,
#    which the unit's DeviceAllow=block-blkext admits as shipped): fast
#    tier 256 MiB, and 1 GiB that backs the emulated QLC (qlc =
#    emu:p5316-30t, 64 KiB IU).
# 3. Boot 1 (qs_phase=1) and boot 2 (qs_phase=2) of the same images; the
#    guest script prints "QS-SD: PASS|FAIL N name: ..." per check and
#    "QS-SD-PHASE N: DONE" at its end; boot 1 ends with `systemctl reboot`
#    (a real shutdown: unmount, daemon stop with drain), which ends qemu
#    (-no-reboot). Consoles: build/vm/console-systemd-{1,2}.log.
#
# Exits non-zero if any check failed or is missing, or a boot timed out
# (QS_VM_TIMEOUT seconds per boot, default 900: a boot took about 2 minutes
# here). Prints the time taken.
set -euo pipefail
cd "$(dirname "$0")/../.."
GL_NAME=systemd
GL_PKGS=prometheus-node-exporter
GL_RECIPE=6
. tests/vm/guest-lib.sh
SD=$GL_DIR
t0=$(date +%s)
log() { gl_log "$@"; }

gl_check
gl_rootfs
gl_image tests/vm/systemd-guest.sh
rm -f "$SD/fast.img" "$SD/qlc.img"
truncate -s 256M "$SD/fast.img"
truncate -s 1G "$SD/qlc.img"
log "image ready ($(($(date +%s) - t0)) s so far)"
# Two NVMe disks (gl_nvme).
GL_QEMU_EXTRA="$(gl_nvme "$SD/fast.img" qsfast) $(gl_nvme "$SD/qlc.img" qsqlc)"
boot() { gl_boot "$1" "$2" 'qs-sd: phase '; }

show() { grep -E '(QS-SD|qs-sd)|Kernel panic|BUG:|Oops|^qemu: ' "$1" || true; }

failed=0
boot 1 "$VM/console-systemd-1.log"
show "$VM/console-systemd-1.log"
# Boot 2 checks what boot 1 set up: without check 1 there is nothing to boot for.
if grep -q '^QS-SD-PHASE 1: DONE' "$VM/console-systemd-1.log" &&
	grep -q '^QS-SD: PASS 1 enable:' "$VM/console-systemd-1.log"; then
	boot 2 "$VM/console-systemd-2.log"
	show "$VM/console-systemd-2.log"
	grep -q '^QS-SD-PHASE 2: DONE' "$VM/console-systemd-2.log" ||
		{ log "boot 2 did not finish (console: $VM/console-systemd-2.log)"; failed=1; }
else
	log "boot 1 did not finish or check 1 failed (console: $VM/console-systemd-1.log); no boot 2"
	failed=1
	: >"$VM/console-systemd-2.log"
fi

# Every check must have passed, and none may be missing.
echo
for c in "1 enable" "2 fstab-write" "3 kill9" "4 watchdog" "2 fstab-reboot" "6 security" "7 metrics" "5 stop-drain"; do
	line=$(grep -h "^QS-SD: [A-Z]* $c:" "$VM/console-systemd-1.log" "$VM/console-systemd-2.log" | tail -1)
	if [ -z "$line" ]; then
		echo "vmtest-systemd check $c: FAIL (no result on the console)"
		failed=1
	else
		echo "vmtest-systemd check ${line#QS-SD: }"
		case "$line" in "QS-SD: PASS "*) ;; *) failed=1 ;; esac
	fi
done
grep -hq '^QS-SD: FAIL' "$VM/console-systemd-1.log" "$VM/console-systemd-2.log" && failed=1
secs=$(($(date +%s) - t0))
if [ $failed = 0 ]; then
	echo "vmtest-systemd: PASS ($secs s; consoles $VM/console-systemd-{1,2}.log)"
else
	echo "vmtest-systemd: FAIL ($secs s; consoles $VM/console-systemd-{1,2}.log)"
fi
exit $failed
