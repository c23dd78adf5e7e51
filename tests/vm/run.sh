#!/usr/bin/env bash
# End-to-end tests of qlcshaped in a VM, on four kernels:
#   612  bookworm-backports 6.12 (ublk_drv module, ioctl-encoded opcodes)
#   61   Debian 12's stock 6.1 with ublk_drv built out of tree (legacy opcodes)
#   tbpo the newest kernel of trixie-backports (7.3 when this was written)
#   sid  the newest kernel of sid (7.2 when this was written)
#
#   tests/vm/run.sh [612|61|tbpo|sid]...   (default: all four; `make vmtest`)
#
# One part alone, for development and measurements (not part of vmtest):
#   QS_VM_ONLY=ks tests/vm/run.sh 612   the kill-during-stop runs only
#   QS_VM_ONLY=rt tests/vm/run.sh 612   restart time over SIGKILLs under fio
#                                       (tests/vm/restart-time.sh; QS_VM_ARGS
#                                       adds kernel arguments, e.g.
#                                       "qs_kills=20 qs_mode=passthrough")
#   QS_VM_ONLY=pc tests/vm/run.sh 612   the power-cut chains only
#                                       (QS_VM_PC_ONLY=NAME: one chain,
#                                       QS_VM_PC_CUTS, QS_VM_PC_SEED)
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
# build/vm/console-KERNEL[-pl1|-pl2].log. Then, on the first kernel only,
# the power cuts: chains of boots over NBD disks with volatile caches, cut
# by SIGKILL of qemu (pc_all below; QS_VM_PC_CUTS=N cuts per chain, default
# 8). Prints PASS/FAIL per kernel and test; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
VM=$PWD/build/vm
TIMEOUT=${QS_VM_TIMEOUT:-480}

kernels=("$@")
[ ${#kernels[@]} -eq 0 ] && kernels=(612 61 tbpo sid)

for t in qemu-system-x86_64 busybox cpio fio mke2fs dumpe2fs mkfs.xfs; do
	command -v "$t" >/dev/null || { echo "run.sh: $t missing (bash scripts/deps.sh --vm)" >&2; exit 1; }
done
[ -x build/qlcshaped ] || make --no-print-directory build/qlcshaped
bash tests/vm/kernels.sh "${kernels[@]}"
# The stand-in for systemd's notify socket (guest.sh's sd_notify step).
mkdir -p "$VM"
${CC:-cc} -O2 -Wall -Werror -o "$VM/notify-sink" tests/vm/notify_sink.c
# The power cut's client-side checker (tests/vm/pcut.c).
${CC:-cc} -O2 -Wall -Werror -pthread -o "$VM/pcut" tests/vm/pcut.c

# add_prog: a program and its libraries into the initramfs.
. tests/vm/host-lib.sh

build_initramfs() { # kernel -> build/vm/initramfs-K.cpio
	local k=$1 root=$VM/root-$1
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,proc,sys,dev,tmp,run,qs,etc}
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh" # for the #! of /init, before --install
	install -m 0755 tests/vm/init "$root/init"
	cp tests/vm/common.sh tests/vm/guest.sh tests/vm/powerloss.sh tests/vm/ram.ini tests/vm/engine.ini \
		tests/vm/engine-recovery.ini tests/vm/powerloss.ini tests/vm/powerloss-log.ini \
		tests/vm/killstop.sh tests/vm/powercut.sh tests/vm/powercut.ini tests/vm/powercut-log.ini \
		tests/vm/killstop.ini tests/vm/restart-time.sh "$root/qs/"
	# The emulated QLC's steps, configs and drive profile (emu:/qs/p5316-30t.ini).
	cp tests/vm/emu.sh tests/vm/emu-bare.ini tests/vm/emu-shaped.ini tests/vm/emu-log.ini \
		tests/vm/emu-logpaged.ini \
		conf/profiles/p5316-30t.ini \
		"$root/qs/"
	cp "$VM/k$k/ublk_drv.ko" "$root/lib/ublk_drv.ko"
	mkdir -p "$root/lib/mods"
	cp "$VM/k$k/mods/"* "$root/lib/mods/"
	add_prog "$root" "${QS_VM_DAEMON:-build/qlcshaped}" /usr/bin/qlcshaped
	add_prog "$root" build/qlcshape /usr/bin/qlcshape
	add_prog "$root" "$(command -v fio)" /usr/bin/fio
	add_prog "$root" "$VM/notify-sink" /usr/bin/notify-sink
	add_prog "$root" "$VM/pcut" /usr/bin/pcut
	# ext4 and xfs tools for the file system step (busybox has only mke2fs).
	add_prog "$root" "$(command -v mke2fs)" /usr/local/sbin/mkfs.ext4
	add_prog "$root" "$(command -v dumpe2fs)" /usr/local/sbin/dumpe2fs
	add_prog "$root" "$(command -v mkfs.xfs)" /usr/local/sbin/mkfs.xfs
	cp /etc/mke2fs.conf "$root/etc/"
	# Uncompressed: unpacking is a copy, where decompressing under TCG is slow.
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$VM/initramfs-$k.cpio"
	rm -rf "$root"
}

# A guest kernel that panicked before /init printed its first line: none of
# the project's code had run and no disk had been written. Multi-threaded
# TCG (QEMU 7.2) does this now and then while the kernel patches its own
# text at boot: a vCPU runs a stale translation of a jump-label site, hits
# the int3 that text_poke_bp had already removed, and the kernel oopses
# ("Oops: int3" in sched_clock_cpu; seen in CI and here). Such a boot
# says nothing about qlcshape, so it is kept as LOG.early-panic-N and the
# boot is run again, at most EARLY_RETRIES times; any later panic fails.
EARLY_RETRIES=3
early_panic() { # log attempt -> 0 if the boot died before /init (log kept)
	grep -q 'Kernel panic' "$1" && ! grep -q '^qs-vm: kernel ' "$1" || return 1
	[ "$2" -le "$EARLY_RETRIES" ] || return 1
	cp "$1" "$1.early-panic-$2"
	echo "run.sh: $1: the guest kernel panicked before /init ran (none of qlcshape had run;" \
		"kept as $1.early-panic-$2): booting again" >&2
}

boot() { # kernel log [extra qemu args...] [-- extra kernel args]
	local k=$1 log=$2 append="console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init"
	local args=() try=0
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ "${1:-}" = -- ] && { shift; append="$append $*"; }
	while :; do
		try=$((try + 1))
		timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1536 \
			-nographic -no-reboot -nic none \
			-kernel "$VM/k$k/vmlinuz" -initrd "$VM/initramfs-$k.cpio" \
			-append "$append" "${args[@]}" </dev/null >"$log" 2>&1 || true
		tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
		early_panic "$log" $try || break
	done
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
	# Boot 1 reached its abrupt power-off: the kernel's own line says so,
	# whole (a printk is written at once). The guest's "qs-vm: abrupt
	# power-off" just before it can be cut by it on the serial console
	# ("qs-vm: abrupt po[    8.34] sysrq: Power Off", CI on sid).
	if [ -z "$md5" ] || ! grep -q 'sysrq: Power Off' "$VM/console-$k-$c-1.log"; then
		echo "run.sh: $VM/console-$k-$c-1.log: boot 1 did not reach its abrupt power-off" \
			"after a flush (no 'flushed md5' line or no 'sysrq: Power Off')" >&2
		return 1
	fi
	boot "$k" "$VM/console-$k-$c-2.log" "${disks[@]}" -- qs_test=pl2 "qs_md5=$md5" \
		"qs_plconf=$c"
	show "$k" "$VM/console-$k-$c-2.log"
	rm -f "$fast" "$qlc"
	grep -q '^QS-VM-RESULT: PASS' "$VM/console-$k-$c-2.log"
}

# Power cut, docs/DAEMON.md "Power cut" (tests/vm/powercut.sh, tests/vm/vcnbd.py, tests/vm/pcut.c): the
# guest's two disks are served by vcnbd, an NBD server on this host with a
# volatile write cache; qemu is killed with SIGKILL once the guest announces
# the cut, while pcut's writes are in flight, and vcnbd keeps, drops or
# tears each unflushed write. A chain of N cuts is N+1 boots over the same
# images: boot i checks what cut i-1 left, then formats and writes until
# cut i; the last boot only checks. Console logs:
# build/vm/console-KERNEL-pc-NAME-I.log, vcnbd's lines in the same
# directory's pc-NAME.stats.
pc_boot() { # kernel log stats fastopt qlcopt delay -- kernel args; 0 if qemu was cut
	local try=0 rc
	while :; do
		try=$((try + 1))
		rc=0
		pc_boot_once "$@" || rc=$?
		[ $rc != 0 ] && early_panic "$2" $try || return $rc
	done
}

pc_boot_once() { # as pc_boot, one boot
	local k=$1 log=$2 stats=$3 fastopt=$4 qlcopt=$5 delay=$6 append="console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init"
	shift 7
	append="$append $*"
	local s d srv=() qpid cut=1 t0=$SECONDS
	for d in fast qlc; do
		rm -f "$VM/pc-$d.sock" "$VM/pc-$d.stat"
		local opt=$fastopt vseed=$((PC_VSEED * 2))
		[ $d = qlc ] && opt=$qlcopt vseed=$((PC_VSEED * 2 + 1))
		/usr/bin/python3 tests/vm/vcnbd.py --socket "$VM/pc-$d.sock" --image "$VM/pc-$d.img" \
			--seed $vseed --stats "$VM/pc-$d.stat" $opt &
		srv+=($!)
	done
	for s in fast qlc; do
		local i=0
		until [ -S "$VM/pc-$s.sock" ]; do
			i=$((i + 1))
			[ $i -gt 100 ] && { echo "run.sh: vcnbd did not bind $VM/pc-$s.sock" >&2; kill "${srv[@]}"; return 2; }
			sleep 0.1
		done
	done
	qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1536 -nographic -no-reboot -nic none \
		-kernel "$VM/k$k/vmlinuz" -initrd "$VM/initramfs-$k.cpio" -append "$append" \
		-drive "file=nbd+unix:///?socket=$VM/pc-fast.sock,if=virtio,format=raw,discard=unmap" \
		-drive "file=nbd+unix:///?socket=$VM/pc-qlc.sock,if=virtio,format=raw,discard=unmap" \
		-drive "file=$VM/pc-log.img,if=virtio,format=raw,cache=writethrough" \
		</dev/null >"$log" 2>&1 &
	qpid=$!
	while kill -0 $qpid 2>/dev/null; do
		if grep -q '^qs-vm: power cut now' "$log"; then
			# The cut moment: the announcement, plus a seeded delay
			# (0 to 0.8 s) while the writes go on.
			sleep "$delay"
			kill -9 $qpid
			cut=0
			break
		fi
		if [ $((SECONDS - t0)) -gt "$TIMEOUT" ]; then
			echo "run.sh: $log: no power cut announced within $TIMEOUT s" >&2
			kill -9 $qpid
			break
		fi
		sleep 0.1
	done
	wait $qpid 2>/dev/null || true
	# A vcnbd whose qemu never connected (qemu failed at start) would wait
	# in accept for ever: give the others 10 s to write their stats.
	local i=0 alive=1
	while [ $alive = 1 ] && [ $i -lt 100 ]; do
		alive=0
		for s in "${srv[@]}"; do kill -0 "$s" 2>/dev/null && alive=1; done
		i=$((i + 1))
		[ $alive = 1 ] && sleep 0.1
	done
	for s in "${srv[@]}"; do
		kill -0 "$s" 2>/dev/null || continue
		echo "run.sh: vcnbd (pid $s) still waiting for qemu 10 s after it ended; see $log" >&2
		kill "$s"
	done
	wait "${srv[@]}" || true
	tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
	cat "$VM/pc-fast.stat" "$VM/pc-qlc.stat" 2>/dev/null | sed 's/^/vcnbd: /' | tee -a "$stats"
	return $cut
}

# A chain of cuts. name: for the logs; conf: the daemon's config in the
# guest (powercut or powercut-log); fastopt/qlcopt: vcnbd options per disk
# ("" loses the cache, --keep-cache keeps it, --lie-flush lies); cuts: how
# many; raw=1: the checker's self-test (no daemon, pcut on the QLC disk,
# must find violations). Seeds and cut moments come from QS_VM_PC_SEED.
pc_chain() { # kernel name conf fastopt qlcopt cuts raw chain# -> 0 if passed
	local k=$1 name=$2 conf=$3 fastopt=$4 qlcopt=$5 n=$6 raw=$7 c=$8 i log seed at check=0 args delay
	local stats=$VM/pc-$k-$name.stats
	rm -f "$VM"/pc-{fast,qlc,log}.img "$stats"
	truncate -s 16M "$VM/pc-fast.img"
	truncate -s 256M "$VM/pc-qlc.img"
	truncate -s 1M "$VM/pc-log.img"
	for ((i = 1; i <= n + 1; i++)); do
		log=$VM/console-$k-pc-$name-$i.log
		args="qs_test=pc qs_pcconf=$conf qs_pccheck=$check qs_pcraw=$raw"
		seed= at= delay=
		if [ $i -le "$n" ]; then
			seed=$((PC_SEED * 10000 + c * 1000 + i))
			# Cut moments from 300 to 2299 operations: after the 16 MiB
			# log has wrapped (about 480 operations of 34 KiB on average).
			at=$((300 + (seed * 7919) % 2000))
			args="$args qs_pcseed=$seed qs_pcat=$at"
			delay=0.$((seed % 5 * 2))
		fi
		if [ -n "$seed" ]; then
			echo "power cut $name boot $i of $((n + 1)): seed $seed, cut $delay s after $at operations" >>"$stats"
		else
			echo "power cut $name boot $i of $((n + 1)): check only" >>"$stats"
		fi
		PC_VSEED=${seed:-0}
		if pc_boot "$k" "$log" "$stats" "$fastopt" "$qlcopt" "${delay:-0}" -- $args; then
			[ $i -le "$n" ] || { echo "$log: the check-only boot was cut?" >>"$stats"; return 1; }
		elif [ $i -le "$n" ]; then
			show "$k" "$log"
			return 1
		fi
		grep -E '^qs-vm: pcut:' "$log" | tee -a "$stats"
		# The engine's counters last sampled before the cut (powercut.sh).
		[ $i -le "$n" ] && grep -E '^qs-vm: pcstat:' "$log" | tail -1 | tee -a "$stats"
		if [ "$raw" = 1 ] && [ $check = 1 ]; then
			# The self-test: the drive lied about flushes, the checker
			# must say so.
			grep -q '^qs-vm: pcut: .* [1-9][0-9]* violations$' "$log" || { show "$k" "$log"; return 1; }
		elif [ $check = 1 ]; then
			grep -q '^qs-vm: pcut: .* 0 violations$' "$log" || { show "$k" "$log"; return 1; }
		fi
		if [ $i -gt "$n" ] && [ "$raw" != 1 ]; then
			grep -q '^QS-VM-RESULT: PASS' "$log" || { show "$k" "$log"; return 1; }
		fi
		check=1
	done
	rm -f "$VM"/pc-{fast,qlc,log}.img
}
PC_SEED=${QS_VM_PC_SEED:-1}
# Cuts per chain for in place and log placement (the QLC-only and fast-only
# chains have half as many, the self-test one): QS_VM_PC_CUTS, or make
# vmtest PC_CUTS=N.
PC_CUTS=${QS_VM_PC_CUTS:-8}

# A chain's totals from its stats file: cuts, vcnbd's unflushed writes
# kept/dropped/torn, pcut's blocks checked and violations.
pc_sum() { # stats
	awk '/^vcnbd: .*: cut, .*unflushed writes: / {
		for (i = 2; i < NF; i++) {
			if ($(i + 1) == "kept," && $(i - 1) == "writes:") k += $i
			if ($(i + 1) == "dropped,") d += $i
			if ($(i + 1) == "torn") t += $i
		} }
	/^power cut .* seed / { cuts++ }
	/^qs-vm: pcut: [0-9]+ blocks checked/ { b += $3; v += $(NF - 1) }
	/^qs-vm: pcstat: / {
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^throttled/ && $(i - 1) > 0) thr++
			if ($i ~ /^paced/ && $(i - 1) > 0) pac++
			if ($i == "IUs" && $(i + 1) > 0) dst++
		} }
	END { printf "%d cuts, unflushed writes at the cuts %d kept, %d dropped, %d torn; " \
		"%d blocks checked, %d violations; at the cut, destage had run in %d, " \
		"writes had been throttled in %d, paced in %d\n", cuts, k, d, t, b, v, dst, thr, \
		pac }' "$1"
}

# All the power-cut chains on one kernel; sets verdict[K-pc-NAME].
pc_all() { # kernel -> 0 if all passed
	local k=$1 name conf fo qo n raw start rc=0 half=$(((PC_CUTS + 1) / 2)) c=0
	while read -r name conf fo qo n raw; do
		c=$((c + 1))
		[ "$fo" = - ] && fo=
		[ "$qo" = - ] && qo=
		# QS_VM_PC_ONLY=NAME: that chain alone (development).
		[ -n "${QS_VM_PC_ONLY:-}" ] && [ "$QS_VM_PC_ONLY" != "$name" ] && continue
		start=$(date +%s)
		if pc_chain "$k" "$name" "$conf" "$fo" "$qo" "$n" "$raw" $c; then
			verdict[$k-pc-$name]="PASS ($(($(date +%s) - start)) s: $(pc_sum "$VM/pc-$k-$name.stats"))"
		else
			verdict[$k-pc-$name]="FAIL (see $VM/pc-$k-$name.stats, consoles $VM/console-$k-pc-$name-*.log)"
			rc=1
		fi
		echo "vmtest kernel $k power cut $name: ${verdict[$k-pc-$name]}"
	done <<-EOT
	inplace powercut - - $PC_CUTS 0
	log powercut-log - - $PC_CUTS 0
	qlc-only powercut --keep-cache - $half 0
	fast-only powercut - --keep-cache $half 0
	selftest powercut - --lie-flush 1 1
	EOT
	return $rc
}

declare -A verdict
if [ "${QS_VM_ONLY:-}" = pc ]; then
	failed=0
	for k in "${kernels[@]}"; do
		build_initramfs "$k"
		pc_all "$k" || failed=1
	done
	exit $failed
fi
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

failed=0
for k in "${kernels[@]}"; do
	start=$(date +%s)
	build_initramfs "$k"
	log=$VM/console-$k.log
	if [ "$k" = "${kernels[0]}" ]; then
		boot "$k" "$log"
	else
		boot "$k" "$log" -- qs_emu=0 # the emulated QLC's steps: first kernel only
	fi
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
# The power cut on the first kernel only (6.12 by default): CI's time.
pk=${kernels[0]}
pc_all "$pk" || failed=1
echo
for k in "${kernels[@]}"; do
	echo "vmtest kernel $k: ${verdict[$k]}"
	echo "vmtest kernel $k power loss: ${verdict[$k-powerloss]}"
	echo "vmtest kernel $k power loss (log placement): ${verdict[$k-powerloss-log]}"
done
for name in inplace log qlc-only fast-only selftest; do
	echo "vmtest kernel $pk power cut $name: ${verdict[$pk-pc-$name]}"
done
exit $failed
