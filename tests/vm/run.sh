#!/usr/bin/env bash
# End-to-end tests of qlcshaped in a VM, on two kernels:
#   612  bookworm-backports 6.12 (ublk_drv module, ioctl-encoded opcodes)
#   61   Debian 12's stock 6.1 with ublk_drv built out of tree (legacy opcodes)
#
#   tests/vm/run.sh [612|61]...      (default: both; `make vmtest` runs this)
#
# For each kernel: prepare it (tests/vm/kernels.sh, cached in build/vm/),
# build an initramfs (busybox-static, ublk_drv.ko, build/qlcshaped, fio and
# the libraries ldd lists, tests/vm/{init,guest.sh,ram.ini}), boot it under
# qemu TCG (this host has no KVM and no ublk) and read the verdict the guest
# prints. qemu exits 0 even after a guest panic, so only a
# "QS-VM-RESULT: PASS" line on the console counts. Console logs:
# build/vm/console-KERNEL.log. Prints PASS/FAIL per kernel; exits non-zero
# if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
VM=$PWD/build/vm
TIMEOUT=${QS_VM_TIMEOUT:-240}

kernels=("$@")
[ ${#kernels[@]} -eq 0 ] && kernels=(612 61)

for t in qemu-system-x86_64 busybox cpio fio; do
	command -v "$t" >/dev/null || { echo "run.sh: $t missing (bash scripts/deps.sh --vm)" >&2; exit 1; }
done
[ -x build/qlcshaped ] || make --no-print-directory build/qlcshaped
bash tests/vm/kernels.sh "${kernels[@]}"

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
	cp tests/vm/guest.sh tests/vm/ram.ini tests/vm/engine.ini tests/vm/engine-recovery.ini "$root/qs/"
	cp "$VM/k$k/ublk_drv.ko" "$root/lib/ublk_drv.ko"
	mkdir -p "$root/lib/mods"
	cp "$VM/k$k/mods/"* "$root/lib/mods/"
	add_prog "$root" build/qlcshaped /usr/bin/qlcshaped
	add_prog "$root" "$(command -v fio)" /usr/bin/fio
	# Uncompressed: unpacking is a copy, where decompressing under TCG is slow.
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$VM/initramfs-$k.cpio"
	rm -rf "$root"
}

boot() { # kernel
	local k=$1 log=$VM/console-$1.log
	timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1024 \
		-nographic -no-reboot -nic none \
		-kernel "$VM/k$k/vmlinuz" -initrd "$VM/initramfs-$k.cpio" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init" \
		</dev/null >"$log" 2>&1 || true
	tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
}

declare -A verdict
failed=0
for k in "${kernels[@]}"; do
	start=$(date +%s)
	build_initramfs "$k"
	boot "$k"
	secs=$(($(date +%s) - start))
	log=$VM/console-$k.log
	grep -E '^qs-vm:|QS-VM-RESULT|Kernel panic|BUG:|WARNING:|Oops' "$log" | sed "s/^/[$k] /" || true
	if grep -q '^QS-VM-RESULT: PASS' "$log"; then
		verdict[$k]="PASS (${secs} s, kernel $(cat "$VM/k$k/version"))"
	else
		verdict[$k]="FAIL (${secs} s, kernel $(cat "$VM/k$k/version"); console: $log)"
		failed=1
	fi
done
echo
for k in "${kernels[@]}"; do
	echo "vmtest kernel $k: ${verdict[$k]}"
done
exit $failed
