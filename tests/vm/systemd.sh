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
#    (about 500 MB): mmdebstrap (Debian's own tool, scripts/deps.sh
#    --systemd-vm) from this machine's own archive URI (tests/vm/debian-uri.sh,
#    as tests/vm/kernels.sh: no host name is written anywhere), suites
#    bookworm and bookworm-backports; packages: systemd, udev, fio, e2fsprogs,
#    curl, prometheus-node-exporter, the daemon's runtime libraries, and the
#    exact linux-image package of
#    build/vm/k612 (so /lib/modules matches the kernel booted, and udev and
#    systemd-modules-load find ublk_drv, nvme and virtio as on a real
#    machine). Debian's initramfs-tools makes the initrd (MODULES=list:
#    virtio and ext4 only, so that it stays small to unpack under TCG).
#    build/vm/systemd/stamp records the recipe; a different recipe or kernel
#    builds it again. QS_SD_REBUILD=1 forces that.
# 2. Each run: a copy of that tree, the tree under test installed into it
#    with `make install DESTDIR=... PREFIX=/usr` (unit in /lib/systemd/system,
#    ExecStart=/usr/bin/qlcshaped), the guest script tests/vm/systemd-guest.sh
#    and its unit tests/vm/qs-systemd-test.service, then an ext4 image made
#    from it with mke2fs -d (no loop device or mount needed):
#    build/vm/systemd/root.img. Two empty NVMe disks (qemu's emulated NVMe
#    controller: namespaces are blkext devices, which the unit's
#    DeviceAllow=block-blkext admits as shipped): fast tier 256 MiB, and
#    1 GiB that backs the emulated QLC (qlc = emu:p5316-30t, 64 KiB IU).
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
VM=$PWD/build/vm
SD=$VM/systemd
TIMEOUT=${QS_VM_TIMEOUT:-900}
t0=$(date +%s)

log() { echo "systemd.sh: $*" >&2; }
die() { log "$*"; exit 1; }

for t in qemu-system-x86_64 mmdebstrap mke2fs timeout; do
	command -v "$t" >/dev/null ||
		die "$t missing: run bash scripts/deps.sh --systemd-vm (as root)"
done
[ "$(id -u)" = 0 ] ||
	die "must run as root: mmdebstrap --mode=root and mke2fs -d keep the files' owners (root)"
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] ||
	die "/usr/share/keyrings/debian-archive-keyring.gpg missing: bash scripts/deps.sh --systemd-vm"
bash tests/vm/kernels.sh 612
KVER=$(cat "$VM/k612/version")
. tests/vm/debian-uri.sh

# What the guest needs: systemd as init, udev, dbus (systemctl and
# systemd-analyze talk to PID 1 over it), the checks' tools, the daemon's
# runtime libraries (docs/DEPLOYMENT.md, Install) and the kernel's modules.
PKGS="systemd,systemd-sysv,udev,dbus,kmod,e2fsprogs,fio,procps,curl,prometheus-node-exporter"
PKGS="$PKGS,liburing2,libnvme1,libjemalloc2,libiniparser1,linux-image-$KVER"
# Changing anything here or in build_rootfs: bump the recipe number.
RECIPE="5 $PKGS"

build_rootfs() {
	local uri key=/usr/share/keyrings/debian-archive-keyring.gpg
	uri=$(debian_uri) || die "no Debian archive for 'bookworm' in this machine's apt sources (/etc/apt/sources.list*)"
	rm -rf "$SD/rootfs" "$SD/rootfs.new" "$SD/stamp"
	mkdir -p "$SD"
	log "building the root file system with mmdebstrap (a few minutes; log: $SD/mmdebstrap.log)"
	# --essential-hook runs before the kernel package is installed, so its
	# initrd is built with this configuration: the modules to find the
	# root disk, nothing else (MODULES=most would make it ten times larger,
	# and every byte is unpacked by the emulated CPU).
	if ! mmdebstrap --variant=apt --mode=root \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$PKGS" \
		--essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" &&
			echo MODULES=list >"$1/etc/initramfs-tools/conf.d/qlcshape-vm.conf" &&
			printf "virtio_pci\nvirtio_blk\next4\n" >>"$1/etc/initramfs-tools/modules"' \
		bookworm "$SD/rootfs.new" \
		"deb [signed-by=$key] $uri bookworm main" \
		"deb [signed-by=$key] $uri bookworm-backports main" >"$SD/mmdebstrap.log" 2>&1; then
		tail -20 "$SD/mmdebstrap.log" >&2
		die "mmdebstrap failed (whole log: $SD/mmdebstrap.log)"
	fi
	local r=$SD/rootfs.new
	[ -f "$r/boot/initrd.img-$KVER" ] || die "$r/boot/initrd.img-$KVER missing: initramfs-tools did not run (see $SD/mmdebstrap.log)"
	# A fixed machine ID: an empty one would make systemd treat each boot
	# as the first (systemd-firstboot, presets).
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$r/etc/machine-id"
	echo >>"$r/etc/machine-id"
	echo qlcshape-vm >"$r/etc/hostname"
	echo "LABEL=qsroot / ext4 errors=remount-ro 0 1" >"$r/etc/fstab"
	# The unit's device rules are resolved when it starts, so ublk_drv must
	# be loaded before (docs/DEPLOYMENT.md, Install).
	echo ublk_drv >"$r/etc/modules-load.d/ublk.conf"
	# A persistent journal: boot 2 reads boot 1's shutdown (the drain).
	mkdir -p "$r/var/log/journal"
	# Nothing else on the console (the host reads the checks from it), no
	# timers that would run apt or scrubs in the middle of the checks.
	local u
	for u in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer \
		apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer; do
		ln -sf /dev/null "$r/etc/systemd/system/$u"
	done
	cmp -s "$r/boot/vmlinuz-$KVER" "$VM/k612/vmlinuz" ||
		die "$r/boot/vmlinuz-$KVER differs from $VM/k612/vmlinuz (same package version?)"
	echo "$RECIPE $KVER" >"$SD/stamp.new"
	mv "$r" "$SD/rootfs"
	mv "$SD/stamp.new" "$SD/stamp"
	log "root file system ready in $SD/rootfs ($(du -sh "$SD/rootfs" | cut -f1))"
}

if [ -n "${QS_SD_REBUILD:-}" ] || [ "$(cat "$SD/stamp" 2>/dev/null)" != "$RECIPE $KVER" ]; then
	build_rootfs
else
	log "reusing the root file system in $SD/rootfs ($(cat "$SD/stamp" | cut -c1-40)...)"
fi

# The tree under test, into a copy of the cached tree.
run=$SD/run-root
rm -rf "$run"
cp -a "$SD/rootfs" "$run"
make --no-print-directory SAN=0 install DESTDIR="$run" PREFIX=/usr >"$SD/install.log" 2>&1 ||
	{ tail -20 "$SD/install.log" >&2; die "make install DESTDIR=$run PREFIX=/usr failed (log: $SD/install.log)"; }
install -D -m 0755 tests/vm/systemd-guest.sh "$run/usr/local/libexec/qs-systemd-test"
install -D -m 0644 tests/vm/qs-systemd-test.service "$run/etc/systemd/system/qs-systemd-test.service"
mkdir -p "$run/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/qs-systemd-test.service \
	"$run/etc/systemd/system/multi-user.target.wants/qs-systemd-test.service"
cp "$run/boot/initrd.img-$KVER" "$SD/initrd.img"
rm -f "$SD/root.img"
# 2 GiB, sparse; the tree is about 500 MB.
mke2fs -q -t ext4 -L qsroot -d "$run" "$SD/root.img" 2G ||
	die "mke2fs -d $run $SD/root.img failed"
rm -rf "$run"
rm -f "$SD/fast.img" "$SD/qlc.img"
truncate -s 256M "$SD/fast.img"
truncate -s 1G "$SD/qlc.img"
log "image ready ($(($(date +%s) - t0)) s so far)"

# One boot of the guest; qs_phase=N tells the guest script which checks to
# run. As tests/vm/run.sh: a kernel that panicked before userspace printed
# anything (TCG's int3 oops while the kernel patches its text at boot) is
# booted again, at most 3 times, its console kept as LOG.early-panic-N.
boot() { # phase log
	local p=$1 out=$2 try=0 s
	while :; do
		try=$((try + 1))
		s=$(date +%s)
		timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 2048 \
			-nographic -no-reboot -nic none \
			-kernel "$VM/k612/vmlinuz" -initrd "$SD/initrd.img" \
			-append "root=LABEL=qsroot rw console=ttyS0 panic=-1 quiet loglevel=4 systemd.show_status=0 qs_phase=$p" \
			-drive "file=$SD/root.img,if=virtio,format=raw" \
			-drive "file=$SD/fast.img,if=none,id=fast,format=raw" \
			-device nvme,serial=qsfast,drive=fast,logical_block_size=4096,physical_block_size=4096 \
			-drive "file=$SD/qlc.img,if=none,id=qlc,format=raw" \
			-device nvme,serial=qsqlc,drive=qlc,logical_block_size=4096,physical_block_size=4096 \
			</dev/null >"$out" 2>&1 || echo "qemu: exit status $? (124: timeout $TIMEOUT s)" >>"$out"
		tr -d '\r' <"$out" >"$out.tmp" && mv "$out.tmp" "$out"
		log "boot $p: $(($(date +%s) - s)) s (console: $out)"
		if grep -q 'Kernel panic' "$out" && ! grep -q 'qs-sd: phase ' "$out" && [ $try -le 3 ]; then
			cp "$out" "$out.early-panic-$try"
			log "boot $p: the kernel panicked before the guest script ran; booting again"
			continue
		fi
		return 0
	done
}

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
