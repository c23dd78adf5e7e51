#!/usr/bin/env bash
# End-to-end tests of qlcshaped in a VM, on two kernels:
#   612  bookworm-backports 6.12 (ublk_drv module, ioctl-encoded opcodes)
#   61   Debian 12's stock 6.1 with ublk_drv built out of tree (legacy opcodes)
#
#   tests/vm/run.sh [612|61]...      (default: both; `make vmtest` runs this)
#
# One part alone, for development and measurements (not part of vmtest):
#   QS_VM_ONLY=ks tests/vm/run.sh 612   the kill-during-stop runs only
#   QS_VM_ONLY=rt tests/vm/run.sh 612   restart time over SIGKILLs under fio
#                                       (tests/vm/restart-time.sh; QS_VM_ARGS
#                                       adds kernel arguments, e.g.
#                                       "qs_kills=20 qs_mode=passthrough")
#   QS_VM_DAEMON=FILE                   put FILE in the image as qlcshaped
#                                       (e.g. a build of another commit, for
#                                       a before/after comparison)
#
# For each kernel: prepare it (tests/vm/kernels.sh, cached in build/vm/),
# build an initramfs (busybox-static, ublk_drv.ko, build/qlcshaped, fio and
# the libraries ldd lists, tests/vm/{init,guest.sh,ram.ini}), boot it under
# qemu TCG (this host has no KVM and no ublk) and read the verdict the guest
# prints. qemu exits 0 even after a guest panic, so only a
# "QS-VM-RESULT: PASS" line on the console counts. Then the power-loss test:
# two boots over two virtio disks (tests/vm/powerloss.sh). Console logs:
# build/vm/console-KERNEL[-pl1|-pl2].log. Prints PASS/FAIL per kernel and
# test; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
VM=$PWD/build/vm
TIMEOUT=${QS_VM_TIMEOUT:-480}

kernels=("$@")
[ ${#kernels[@]} -eq 0 ] && kernels=(612 61)

for t in qemu-system-x86_64 busybox cpio fio mke2fs dumpe2fs mkfs.xfs; do
	command -v "$t" >/dev/null || { echo "run.sh: $t missing (bash scripts/deps.sh --vm)" >&2; exit 1; }
done
[ -x build/qlcshaped ] || make --no-print-directory build/qlcshaped
bash tests/vm/kernels.sh "${kernels[@]}"
# The stand-in for systemd's notify socket (guest.sh's sd_notify step).
mkdir -p "$VM"
${CC:-cc} -O2 -Wall -Werror -o "$VM/notify-sink" tests/vm/notify_sink.c

# Copy a program and every library ldd lists into root, keeping paths.
add_prog() { # root src dest
	local root=$1 src=$2 dest=$3 lib
	mkdir -p "$root$(dirname "$dest")"
	cp -L "$src" "$root$dest"
	for lib in $(ldd "$src" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

build_initramfs() { # kernel -> build/vm/initramfs-K.cpio
	local k=$1 root=$VM/root-$1
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,proc,sys,dev,tmp,run,qs,etc}
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh" # for the #! of /init, before --install
	install -m 0755 tests/vm/init "$root/init"
	cp tests/vm/common.sh tests/vm/guest.sh tests/vm/powerloss.sh tests/vm/ram.ini tests/vm/engine.ini \
		tests/vm/engine-recovery.ini tests/vm/powerloss.ini tests/vm/powerloss-log.ini \
		tests/vm/killstop.sh \
		tests/vm/killstop.ini tests/vm/restart-time.sh "$root/qs/"
	# The emulated QLC's steps, configs and drive profile (emu:/qs/p5316-30t.ini).
	cp tests/vm/emu.sh tests/vm/emu-bare.ini tests/vm/emu-shaped.ini tests/vm/emu-log.ini \
		conf/profiles/p5316-30t.ini \
		"$root/qs/"
	cp "$VM/k$k/ublk_drv.ko" "$root/lib/ublk_drv.ko"
	mkdir -p "$root/lib/mods"
	cp "$VM/k$k/mods/"* "$root/lib/mods/"
	add_prog "$root" "${QS_VM_DAEMON:-build/qlcshaped}" /usr/bin/qlcshaped
	add_prog "$root" build/qlcshape /usr/bin/qlcshape
	add_prog "$root" "$(command -v fio)" /usr/bin/fio
	add_prog "$root" "$VM/notify-sink" /usr/bin/notify-sink
	# ext4 and xfs tools for the file system step (busybox has only mke2fs).
	add_prog "$root" "$(command -v mke2fs)" /usr/local/sbin/mkfs.ext4
	add_prog "$root" "$(command -v dumpe2fs)" /usr/local/sbin/dumpe2fs
	add_prog "$root" "$(command -v mkfs.xfs)" /usr/local/sbin/mkfs.xfs
	cp /etc/mke2fs.conf "$root/etc/"
	# Uncompressed: unpacking is a copy, where decompressing under TCG is slow.
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$VM/initramfs-$k.cpio"
	rm -rf "$root"
}

boot() { # kernel log [extra qemu args...] [-- extra kernel args]
	local k=$1 log=$2 append="console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init"
	local args=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ "${1:-}" = -- ] && { shift; append="$append $*"; }
	timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1536 \
		-nographic -no-reboot -nic none \
		-kernel "$VM/k$k/vmlinuz" -initrd "$VM/initramfs-$k.cpio" \
		-append "$append" "${args[@]}" </dev/null >"$log" 2>&1 || true
	tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
}

show() { # kernel log
	grep -E '^qs-vm:|QS-VM-RESULT|Kernel panic|BUG:|WARNING:|Oops' "$2" | sed "s/^/[$1] /" || true
}

# Power loss: two boots over the same two virtio disks; the first stops
# abruptly after a flush, the second must find the flushed data. conf: the
# daemon's config in the guest (powerloss: in place; powerloss-log: log
# placement), its name in the console logs' names.
powerloss() { # kernel conf -> 0 if passed
	local k=$1 c=$2 fast=$VM/pl-fast-$1.img qlc=$VM/pl-qlc-$1.img md5
	local disks=(-drive "file=$fast,if=virtio,format=raw,discard=unmap"
		     -drive "file=$qlc,if=virtio,format=raw,discard=unmap")
	rm -f "$fast" "$qlc"
	truncate -s 64M "$fast"
	truncate -s 256M "$qlc"
	boot "$k" "$VM/console-$k-$c-1.log" "${disks[@]}" -- qs_test=pl1 "qs_plconf=$c"
	show "$k" "$VM/console-$k-$c-1.log"
	md5=$(sed -n 's/^qs-vm: flushed md5 \([0-9a-f]*\)$/\1/p' "$VM/console-$k-$c-1.log")
	grep -q '^qs-vm: abrupt power-off' "$VM/console-$k-$c-1.log" && [ -n "$md5" ] || return 1
	boot "$k" "$VM/console-$k-$c-2.log" "${disks[@]}" -- qs_test=pl2 "qs_md5=$md5" \
		"qs_plconf=$c"
	show "$k" "$VM/console-$k-$c-2.log"
	rm -f "$fast" "$qlc"
	grep -q '^QS-VM-RESULT: PASS' "$VM/console-$k-$c-2.log"
}

if [ -n "${QS_VM_ONLY:-}" ]; then
	failed=0
	for k in "${kernels[@]}"; do
		build_initramfs "$k"
		log=$VM/console-$k-$QS_VM_ONLY.log
		start=$(date +%s)
		boot "$k" "$log" -- "qs_test=$QS_VM_ONLY" ${QS_VM_ARGS:-}
		show "$k" "$log"
		if grep -q '^QS-VM-RESULT: PASS' "$log"; then
			echo "vmtest kernel $k $QS_VM_ONLY: PASS ($(($(date +%s) - start)) s)"
		else
			echo "vmtest kernel $k $QS_VM_ONLY: FAIL (console: $log)"
			failed=1
		fi
	done
	exit $failed
fi

declare -A verdict
failed=0
for k in "${kernels[@]}"; do
	start=$(date +%s)
	build_initramfs "$k"
	log=$VM/console-$k.log
	boot "$k" "$log"
	secs=$(($(date +%s) - start))
	show "$k" "$log"
	if grep -q '^QS-VM-RESULT: PASS' "$log"; then
		verdict[$k]="PASS (${secs} s, kernel $(cat "$VM/k$k/version"))"
	else
		verdict[$k]="FAIL (${secs} s, kernel $(cat "$VM/k$k/version"); console: $log)"
		failed=1
	fi
	for c in powerloss powerloss-log; do
		start=$(date +%s)
		if powerloss "$k" $c; then
			verdict[$k-$c]="PASS ($(($(date +%s) - start)) s, two boots)"
		else
			verdict[$k-$c]="FAIL (consoles: $VM/console-$k-$c-1.log, $VM/console-$k-$c-2.log)"
			failed=1
		fi
	done
done
echo
for k in "${kernels[@]}"; do
	echo "vmtest kernel $k: ${verdict[$k]}"
	echo "vmtest kernel $k power loss: ${verdict[$k-powerloss]}"
	echo "vmtest kernel $k power loss (log placement): ${verdict[$k-powerloss-log]}"
done
exit $failed
