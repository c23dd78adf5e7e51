#!/usr/bin/env bash
# The ublk floor (make vmtest-scale; docs/DAEMON.md, "The ublk floor"): the
# minimal ublk server (tests/vm/ublk_min.c: liburing only, one thread and
# io_uring per queue, every request served at once from RAM) at 1 and 2
# queues under fio, 4K random reads and 64K sequential reads, in one boot.
#
#   tests/vm/scale.sh [KERNEL]   KERNEL a key of tests/vm/kernels.sh; default:
#                                the newer of tbpo and sid
#
# qemu TCG with two vCPUs under multi-threaded TCG (one host thread per
# vCPU; no -icount, which would run the vCPUs in turn). QS_SCALE_RUNTIME:
# fio's seconds per run (default 10); QS_VM_TIMEOUT: the boot's limit
# (default 600 s). The guest side is tests/vm/scale-guest.sh (qs_test=scale
# in tests/vm/init). Prints the table; console: build/vm/console-KERNEL-scale.log.
# A benchmark: exits non-zero only if something did not work, never on a figure.
set -euo pipefail
cd "$(dirname "$0")/../.."
VM=$PWD/build/vm
MIN=build/tests/vm/ublk_min
TIMEOUT=${QS_VM_TIMEOUT:-600}
RUNTIME=${QS_SCALE_RUNTIME:-10}

log() { echo "scale.sh: $*" >&2; }

for t in qemu-system-x86_64 busybox cpio fio timeout; do
	command -v "$t" >/dev/null || { log "$t missing (bash scripts/deps.sh --vm)"; exit 1; }
done
[ -x $MIN ] || make --no-print-directory SAN=0 $MIN

# The newest kernel the suite boots: tbpo and sid carry whatever series is
# newest in each suite, and either may be ahead.
newest_kernel() {
	local c
	for c in tbpo sid; do echo "$(cat "$VM/k$c/version") $c"; done | sort -V | tail -1 | cut -d' ' -f2
}
if [ $# -gt 0 ]; then
	k=$1
	bash tests/vm/kernels.sh "$k"
else
	bash tests/vm/kernels.sh tbpo sid
	k=$(newest_kernel)
fi

# add_prog: a program and its libraries into the initramfs.
. tests/vm/host-lib.sh

# Only what the floor needs: busybox, ublk_drv, fio, ublk_min; no other
# module (the empty mods/order), as each insmod is slow under TCG.
build_initramfs() { # kernel -> $VM/initramfs-scale-K.cpio
	local root=$VM/root-scale-$1
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib/mods,proc,sys,dev,tmp,run,qs,etc}
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	install -m 0755 tests/vm/init "$root/init"
	cp tests/vm/common.sh tests/vm/scale-guest.sh "$root/qs/"
	cp "$VM/k$1/ublk_drv.ko" "$root/lib/ublk_drv.ko"
	: >"$root/lib/mods/order"
	add_prog "$root" "$(command -v fio)" /usr/bin/fio
	add_prog "$root" $MIN /usr/bin/ublk_min
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$VM/initramfs-scale-$1.cpio"
	rm -rf "$root"
}

# As run.sh: a kernel that panicked before /init printed its first line
# (multi-threaded TCG's int3 oops while the kernel patches its text) is
# booted again, at most 3 times, its console kept as LOG.early-panic-N.
# The last boot's wall, user and system seconds go to LOG.time: the guest
# cannot see the host CPU its vCPUs did not get (TCG reports no steal).
boot() { # kernel log
	local try=0 TIMEFORMAT='%R %U %S'
	while :; do
		try=$((try + 1))
		{ time timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 \
			-m 1536 -nographic -no-reboot -nic none \
			-kernel "$VM/k$1/vmlinuz" -initrd "$VM/initramfs-scale-$1.cpio" \
			-append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init qs_test=scale qs_rt=$RUNTIME" \
			</dev/null >"$2" 2>&1; } 2>"$2.time" || true
		tr -d '\r' <"$2" >"$2.tmp" && mv "$2.tmp" "$2"
		grep -q 'Kernel panic' "$2" && ! grep -q '^qs-vm: kernel ' "$2" && [ $try -le 3 ] || return 0
		cp "$2" "$2.early-panic-$try"
		log "$2: the guest kernel panicked before /init ran; booting again"
	done
}

log="$VM/console-$k-scale.log"
build_initramfs "$k"
start=$(date +%s)
load=$(cut -d' ' -f1-3 /proc/loadavg)
boot "$k" "$log"
echo "vmtest-scale: kernel $(cat "$VM/k$k/version"), qemu TCG (thread=multi) with 2 vCPUs on" \
	"$(nproc) host CPUs, host load average $load at start; fio $RUNTIME s per run"
sed -n 's/^qs-vm: scale: //p' "$log"
# How much of the host qemu got: with 2 free host cores up to about 2 (plus
# its I/O thread); less means the vCPUs waited for the host, in the figures.
awk '{ printf "vmtest-scale: qemu ran %.0f s and used %.0f s of host CPU: %.2f host cores on average\n",
	$1, $2 + $3, ($2 + $3) / $1 }' "$log.time"
if grep -q '^QS-VM-RESULT: PASS' "$log"; then
	echo "vmtest-scale: done ($(($(date +%s) - start)) s; console: $log)"
	exit 0
fi
grep -E '^qs-vm:|QS-VM-RESULT|Kernel panic|BUG:|WARNING:|Oops' "$log" | tail -40 || true
echo "vmtest-scale: FAIL (console: $log)"
exit 1
