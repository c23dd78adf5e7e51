#!/usr/bin/env bash
# Install the Debian 12 packages qlcshape needs to build and test, only those
# that are missing. Safe to run again: with everything present it does nothing.
#
#   scripts/deps.sh          build and test dependencies
#   scripts/deps.sh --vm     also what the VM end-to-end tests need
#   scripts/deps.sh --fuzz   also clang (Debian 12: clang 14, with libFuzzer
#                            and the sanitizers' runtimes) for make fuzz
#   scripts/deps.sh --systemd-vm  also what make vmtest-systemd and make
#                            vmtest-ceph need: the VM
#                            tests' packages, and mmdebstrap (Debian's own
#                            tool) to build the guest's Debian 12 root file
#                            system
set -euo pipefail

pkgs=(build-essential pkg-config liburing-dev libnvme-dev libjemalloc-dev
      libiniparser-dev libcmocka-dev fio blktrace scdoc systemd man-db)
case "${1:-}" in
--vm|--systemd-vm)
	pkgs+=(qemu-system-x86 busybox-static cpio kmod xz-utils zstd e2fsprogs xfsprogs python3)
	# debian-archive-keyring: mmdebstrap checks the archive's signatures.
	[ "$1" = --systemd-vm ] && pkgs+=(mmdebstrap debian-archive-keyring)
	;;
--fuzz) pkgs+=(clang) ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "deps.sh: missing packages (${missing[*]}) and not root; run as root: sudo $0" >&2
		exit 1
	fi
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
