# Sourced by the Debian guest tests (tests/vm/systemd.sh, tests/vm/peers.sh,
# tests/vm/ceph.sh): one way to build a Debian 12 root file system with
# systemd as PID 1, install the tree under test into it, and boot it under
# qemu TCG with Linux 6.12. The caller sets:
#
#   GL_NAME   the guest's name: its files live in build/vm/$GL_NAME
#   GL_PKGS   extra Debian packages, comma-separated, beyond the base set
#   GL_RECIPE a number bumped whenever the caller changes what its root
#             file system holds (the base recipe has its own, below)
#
# and then calls gl_rootfs, gl_image SCRIPT, and gl_boot for each boot.
# Every function dies with a message naming the file or tool on failure.

VM=$PWD/build/vm
GL_DIR=$VM/$GL_NAME
GL_KEY=/usr/share/keyrings/debian-archive-keyring.gpg

gl_log() { echo "${GL_NAME}: $*" >&2; }
gl_die() { gl_log "$*"; exit 1; }

# The tools, root, the keyring, the 6.12 kernel (downloaded once).
gl_check() {
	local t
	for t in qemu-system-x86_64 mmdebstrap mke2fs timeout; do
		command -v "$t" >/dev/null ||
			gl_die "$t missing: run bash scripts/deps.sh --systemd-vm (as root)"
	done
	[ "$(id -u)" = 0 ] ||
		gl_die "must run as root: mmdebstrap --mode=root and mke2fs -d keep the files' owners (root)"
	[ -f "$GL_KEY" ] ||
		gl_die "$GL_KEY missing: bash scripts/deps.sh --systemd-vm"
	bash tests/vm/kernels.sh 612
	GL_KVER=$(cat "$VM/k612/version")
}

# What every guest needs: systemd as init, udev, dbus (systemctl and
# systemd-analyze talk to PID 1 over it), common tools, the daemon's
# runtime libraries (docs/DEPLOYMENT.md, Install) and the kernel's modules.
gl_base_pkgs() {
	echo "systemd,systemd-sysv,udev,dbus,kmod,e2fsprogs,fio,procps,curl,linux-image-$GL_KVER,liburing2,libnvme1,libjemalloc2,libiniparser1"
}

# Build $GL_DIR/rootfs unless its stamp matches the recipe (or
# QS_SD_REBUILD=1 forces it): mmdebstrap from this machine's own archive
# URI (tests/vm/debian-uri.sh, as tests/vm/kernels.sh: no host name is
# written anywhere), suites bookworm and bookworm-backports.
gl_rootfs() {
	local pkgs recipe
	pkgs="$(gl_base_pkgs)${GL_PKGS:+,$GL_PKGS}"
	# Changing anything in this function: bump the first number.
	recipe="base 1 $GL_NAME ${GL_RECIPE:-0} $pkgs $GL_KVER"
	if [ -z "${QS_SD_REBUILD:-}" ] && [ "$(cat "$GL_DIR/stamp" 2>/dev/null)" = "$recipe" ]; then
		gl_log "reusing the root file system in $GL_DIR/rootfs"
		return 0
	fi
	. tests/vm/debian-uri.sh
	local uri r=$GL_DIR/rootfs.new u
	uri=$(debian_uri) || gl_die "no Debian archive for 'bookworm' in this machine's apt sources (/etc/apt/sources.list*)"
	rm -rf "$GL_DIR/rootfs" "$r" "$GL_DIR/stamp"
	mkdir -p "$GL_DIR"
	gl_log "building the root file system with mmdebstrap (a few minutes; log: $GL_DIR/mmdebstrap.log)"
	# --essential-hook runs before the kernel package is installed, so its
	# initrd is built with this configuration: the modules to find the
	# root disk, nothing else (MODULES=most would make it ten times larger,
	# and every byte is unpacked by the emulated CPU).
	if ! mmdebstrap --variant=apt --mode=root \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$pkgs" \
		--essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" &&
			echo MODULES=list >"$1/etc/initramfs-tools/conf.d/qlcshape-vm.conf" &&
			printf "virtio_pci\nvirtio_blk\next4\n" >>"$1/etc/initramfs-tools/modules"' \
		bookworm "$r" \
		"deb [signed-by=$GL_KEY] $uri bookworm main" \
		"deb [signed-by=$GL_KEY] $uri bookworm-backports main" >"$GL_DIR/mmdebstrap.log" 2>&1; then
		tail -20 "$GL_DIR/mmdebstrap.log" >&2
		gl_die "mmdebstrap failed (whole log: $GL_DIR/mmdebstrap.log)"
	fi
	[ -f "$r/boot/initrd.img-$GL_KVER" ] ||
		gl_die "$r/boot/initrd.img-$GL_KVER missing: initramfs-tools did not run (see $GL_DIR/mmdebstrap.log)"
	# A fixed machine ID: an empty one would make systemd treat each boot
	# as the first (systemd-firstboot, presets).
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$r/etc/machine-id"
	echo >>"$r/etc/machine-id"
	echo qlcshape-vm >"$r/etc/hostname"
	echo "LABEL=qsroot / ext4 errors=remount-ro 0 1" >"$r/etc/fstab"
	# The unit's device rules are resolved when it starts, so ublk_drv must
	# be loaded before (docs/DEPLOYMENT.md, Install).
	echo ublk_drv >"$r/etc/modules-load.d/ublk.conf"
	# A persistent journal: a second boot reads the first one's shutdown.
	mkdir -p "$r/var/log/journal"
	# Nothing else on the console (the host reads the checks from it), no
	# timers that would run apt or scrubs in the middle of the checks.
	for u in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer \
		apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer; do
		ln -sf /dev/null "$r/etc/systemd/system/$u"
	done
	cmp -s "$r/boot/vmlinuz-$GL_KVER" "$VM/k612/vmlinuz" ||
		gl_die "$r/boot/vmlinuz-$GL_KVER differs from $VM/k612/vmlinuz (same package version?)"
	echo "$recipe" >"$GL_DIR/stamp.new"
	mv "$r" "$GL_DIR/rootfs"
	mv "$GL_DIR/stamp.new" "$GL_DIR/stamp"
	gl_log "root file system ready in $GL_DIR/rootfs ($(du -sh "$GL_DIR/rootfs" | cut -f1))"
}

# The boot disk of one run, $GL_DIR/root.img (SIZE, default 2G, sparse): a
# copy of the cached tree, the tree under test installed with `make install
# DESTDIR=... PREFIX=/usr` (unit in /lib/systemd/system, ExecStart
# /usr/bin/qlcshaped), SCRIPT as /usr/local/libexec/qs-guest-test run once
# the boot has settled by tests/vm/qs-guest-test.service, and any further
# FILE:GUEST-PATH pairs; then an ext4 image made from it with mke2fs -d (no
# loop device or mount needed).
gl_image() { # script [size] [file:guest-path]...
	local script=$1 size=${2:-2G} run=$GL_DIR/run-root f
	shift
	[ $# -gt 0 ] && shift
	rm -rf "$run"
	cp -a "$GL_DIR/rootfs" "$run"
	make --no-print-directory SAN=0 install DESTDIR="$run" PREFIX=/usr >"$GL_DIR/install.log" 2>&1 ||
		{ tail -20 "$GL_DIR/install.log" >&2; gl_die "make install DESTDIR=$run PREFIX=/usr failed (log: $GL_DIR/install.log)"; }
	install -D -m 0755 "$script" "$run/usr/local/libexec/qs-guest-test"
	install -D -m 0644 tests/vm/qs-guest-test.service "$run/etc/systemd/system/qs-guest-test.service"
	mkdir -p "$run/etc/systemd/system/multi-user.target.wants"
	ln -sf /etc/systemd/system/qs-guest-test.service \
		"$run/etc/systemd/system/multi-user.target.wants/qs-guest-test.service"
	for f in "$@"; do
		install -D -m 0644 "${f%%:*}" "$run${f#*:}"
	done
	cp "$run/boot/initrd.img-$GL_KVER" "$GL_DIR/initrd.img"
	rm -f "$GL_DIR/root.img"
	mke2fs -q -t ext4 -L qsroot -d "$run" "$GL_DIR/root.img" "$size" ||
		gl_die "mke2fs -d $run $GL_DIR/root.img failed"
	rm -rf "$run"
}

# The qemu arguments of one disk on qemu's emulated NVMe controller, 4 KiB
# blocks, backed by FILE (raw), with SERIAL as its serial and drive id;
# OPTS: more -drive options (e.g. discard=unmap). Namespaces are blkext
# devices, which the unit's DeviceAllow=block-blkext admits as shipped.
gl_nvme() { # file serial [opts]
	echo "-drive file=$1,if=none,id=$2,format=raw${3:+,$3}
 -device nvme,serial=$2,drive=$2,logical_block_size=4096,physical_block_size=4096"
}

# One boot of the guest: qs_phase=PHASE on the kernel command line tells the
# guest script what to do; the console goes to LOG. GL_MEM (MiB, default
# 2048), GL_CPU (qemu's -cpu, default max), GL_QEMU_EXTRA (more qemu
# arguments: disks, -icount) and
# QS_VM_TIMEOUT (seconds, default 900) shape it. As tests/vm/run.sh: a
# kernel that panicked before userspace printed anything (TCG's int3 oops
# while the kernel patches its text at boot) is booted again, at most 3
# times, its console kept as LOG.early-panic-N. MARK is a string the guest
# script prints once it runs (that is how a later panic is told apart).
gl_boot() { # phase log mark
	local p=$1 out=$2 mark=$3 try=0 s
	while :; do
		try=$((try + 1))
		s=$(date +%s)
		# shellcheck disable=SC2086
		timeout "${QS_VM_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg -cpu "${GL_CPU:-max}" -smp 2 -m "${GL_MEM:-2048}" \
			-nographic -no-reboot -nic none \
			-kernel "$VM/k612/vmlinuz" -initrd "$GL_DIR/initrd.img" \
			-append "root=LABEL=qsroot rw console=ttyS0 panic=-1 quiet loglevel=4 systemd.show_status=0 qs_phase=$p" \
			-drive "file=$GL_DIR/root.img,if=virtio,format=raw" \
			${GL_QEMU_EXTRA:-} \
			</dev/null >"$out" 2>&1 || echo "qemu: exit status $? (124: timeout ${QS_VM_TIMEOUT:-900} s)" >>"$out"
		tr -d '\r' <"$out" >"$out.tmp" && mv "$out.tmp" "$out"
		gl_log "boot $p: $(($(date +%s) - s)) s (console: $out)"
		if grep -q 'Kernel panic' "$out" && ! grep -q "$mark" "$out" && [ $try -le 3 ]; then
			cp "$out" "$out.early-panic-$try"
			gl_log "boot $p: the kernel panicked before the guest script ran; booting again"
			continue
		fi
		return 0
	done
}
