#!/usr/bin/env bash
# Prepare the guest kernels for the VM tests, cached under build/vm/:
#
#   build/vm/k612/  bookworm-backports linux-image-6.12.*-amd64 (ublk_drv is a
#                   module there): vmlinuz, ublk_drv.ko, version, mods/ (the
#                   file system modules the guest mounts with, load order in
#                   mods/order)
#   build/vm/k61/   Debian 12's stock 6.1 kernel, built without ublk, plus
#                   ublk_drv.ko compiled out of tree from linux-source-6.1's
#                   drivers/block/ublk_drv.c against linux-headers-6.1.*-amd64;
#                   mods/ as above
#   build/vm/ktbpo/ the newest complete kernel of trixie-backports (Debian 13)
#   build/vm/ksid/  the newest of sid (unstable): as k612, whatever series
#                   they carry (7.3 and 7.2 when this was written)
#
#   tests/vm/kernels.sh [612|61|tbpo|sid]...   (default: all four)
#
# Everything comes from Debian packages through apt-get. The newer kernels
# are fetched with a private sources list whose archive URI is read at run time
# from this machine's own apt sources: the system's sources are not touched
# and no host name is written anywhere. A kernel whose files are already in
# place is not fetched again.
set -euo pipefail
cd "$(dirname "$0")/../.."
VM=$PWD/build/vm
mkdir -p "$VM"

log() { echo "kernels.sh: $*" >&2; }

# Without modinfo the module list would silently lack every dependency
# (a command substitution's failure does not stop the script), and the
# guest would fail to load ext4 or xfs much later; say so now.
for t in modinfo dpkg-deb xz zstd; do
	command -v "$t" >/dev/null ||
		{ log "$t missing: bash scripts/deps.sh --vm installs it"; exit 1; }
done

# debian_uri: the machine's own archive URI (shared with tests/vm/systemd.sh).
. tests/vm/debian-uri.sh

# apt-get / apt-cache with the private backports lists.
APTDIR=$VM/apt
papt() {
	local tool=$1; shift
	"$tool" -o Dir::Etc::SourceList="$APTDIR/sources.list" \
		-o Dir::Etc::SourceParts="$APTDIR/no-parts" \
		-o Dir::State::Lists="$APTDIR/lists" \
		-o Dir::Cache::Archives="$APTDIR/archives" \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root -qq "$@"
}

# Newest package matching a regex, by version order of the name.
newest() { sort -V | tail -1; }

extract_deb() { # deb dir
	rm -rf "$2" && mkdir -p "$2" && dpkg-deb -x "$1" "$2"
}

# Copy module $2 and its dependencies (decompressed) from the unpacked image
# $1 into $3, appending load order to $3/order. Built-in modules are
# absent from the tree and need nothing.
collect_mods() { # root name dest
	local root=$1 name=$2 dest=$3 ko dep deps
	grep -qx "$name" "$dest/order" 2>/dev/null && return 0
	ko=$(find "$root/lib/modules" -name "$name.ko*" | head -1)
	[ -n "$ko" ] || return 0
	# An assignment of its own, so that modinfo's failure stops the script
	# (in the for loop's word list it would go unnoticed).
	deps=$(modinfo -F depends "$ko") || { log "modinfo $ko failed"; return 1; }
	for dep in ${deps//,/ }; do
		collect_mods "$root" "$dep" "$dest"
	done
	case "$ko" in
	*.xz) xz -dc "$ko" >"$dest/$name.ko" ;;
	*.zst) zstd -dcq "$ko" >"$dest/$name.ko" ;;
	*) cp "$ko" "$dest/$name.ko" ;;
	esac
	echo "$name" >>"$dest/order"
}

# What the guest needs besides ublk_drv: file systems for the mount tests,
# virtio disks for the power-loss test. A kernel prepared for another list
# is prepared again (mods/wanted records the list).
GUEST_MODS="crc32c_generic ext4 ext2 xfs virtio_pci virtio_blk"
mods_ok() { [ "$(cat "$1/mods/wanted" 2>/dev/null)" = "$GUEST_MODS" ]; }

# A kernel from one of the archive's suites: the newest linux-image-SERIES.N
# +debM-amd64 there (ublk_drv is a module in all of them), fetched with the
# private sources list.
prep_suite() { # dir suite series (e.g. 6.12) label
	local d=$1 suite=$2 series=$3 label=$4
	if [ -f "$d/vmlinuz" ] && [ -f "$d/ublk_drv.ko" ] && mods_ok "$d"; then return 0; fi
	local uri
	uri=$(debian_uri) || { log "no Debian archive in the machine's apt sources"; return 1; }
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/archives/partial" "$APTDIR/no-parts" "$d"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" \
		>"$APTDIR/sources.list"
	papt apt-get update
	# Debian 13's kernels split the image into packages of the same ABI
	# name (linux-binary-*, linux-modules-*), and a suite may list an image
	# whose parts it no longer carries (trixie-backports' 6.19 had no
	# modules left): take the newest whose parts are all there.
	local pkg="" cand re abi parts p ok
	re="^linux-image-${series//./\\.}[0-9.]*\\+[a-z0-9]+-amd64\$"
	for cand in $(papt apt-cache pkgnames "linux-image-$series" | grep -E "$re" | sort -rV); do
		abi=${cand#linux-image-}
		parts=$(papt apt-cache depends "$cand" | awk -v abi="$abi" \
			'/Depends:/ { n = $2; gsub(/[<>]/, "", n);
			  if (substr(n, length(n) - length(abi) + 1) == abi) print n }')
		ok=1
		for p in $parts; do
			papt apt-cache show "$p" >/dev/null 2>&1 || { ok=0; log "$cand: $p not in $suite"; break; }
		done
		[ $ok = 1 ] && { pkg=$cand; break; }
	done
	[ -n "$pkg" ] || { log "no complete linux-image-$series*-amd64 in $suite"; return 1; }
	log "fetching $pkg $(echo $parts) from $suite"
	(cd "$d" && rm -f ./*.deb && papt apt-get download "$pkg" $parts)
	rm -rf "$d/root" && mkdir -p "$d/root"
	local deb
	for deb in "$d"/*.deb; do dpkg-deb -x "$deb" "$d/root"; done
	# Merged /usr (Debian 13): the modules are under usr/lib, the kernel
	# may be too; collect_mods looks under lib/modules.
	if [ ! -d "$d/root/lib/modules" ] && [ -d "$d/root/usr/lib/modules" ]; then
		ln -s usr/lib "$d/root/lib"
	fi
	local kver
	kver=$(ls "$d/root/lib/modules")
	local img="" f
	for f in "$d/root/boot/vmlinuz-$kver" "$d/root/lib/modules/$kver/vmlinuz"; do
		[ -f "$f" ] && { img=$f; break; }
	done
	[ -n "$img" ] || { log "$pkg: no vmlinuz-$kver in /boot or the modules"; return 1; }
	cp "$img" "$d/vmlinuz"
	local ko
	ko=$(find -L "$d/root/lib/modules/$kver" -name 'ublk_drv.ko*' | head -1)
	[ -n "$ko" ] || { log "$pkg has no ublk_drv module"; return 1; }
	case "$ko" in
	*.xz) xz -dc "$ko" >"$d/ublk_drv.ko" ;;
	*.zst) zstd -dcq "$ko" >"$d/ublk_drv.ko" ;;
	*) cp "$ko" "$d/ublk_drv.ko" ;;
	esac
	rm -rf "$d/mods" && mkdir -p "$d/mods" && : >"$d/mods/order"
	for m in $GUEST_MODS; do collect_mods "$d/root" "$m" "$d/mods"; done
	echo "$GUEST_MODS" >"$d/mods/wanted"
	echo "$kver" >"$d/version"
	rm -rf "$d/root" "$d"/*.deb
	log "$label: $kver ready (modules: $(tr '\n' ' ' <"$d/mods/order"))"
}

prep_612() { prep_suite "$VM/k612" bookworm-backports 6.12. 6.12; }
# The newest kernels Debian carries, with ublk's newer features (per-I/O
# daemon and automatic buffer registration from 6.16, batched I/O commands
# later): Debian 13's backports and unstable, whatever series they hold.
prep_tbpo() { prep_suite "$VM/ktbpo" trixie-backports "" trixie-backports; }
prep_sid() { prep_suite "$VM/ksid" sid "" sid; }

prep_61() {
	local d=$VM/k61
	if [ -f "$d/vmlinuz" ] && [ -f "$d/ublk_drv.ko" ] && mods_ok "$d"; then return 0; fi
	mkdir -p "$d"
	# The ABI name (6.1.0-N) the distribution's headers package points at.
	local hdr kver
	hdr=$(apt-cache depends linux-headers-amd64 2>/dev/null |
		awk '/Depends: linux-headers-6\.1/ { print $2; exit }')
	if [ -z "$hdr" ]; then
		# A fresh machine may not have package lists yet.
		apt-get update -qq
		hdr=$(apt-cache depends linux-headers-amd64 |
			awk '/Depends: linux-headers-6\.1/ { print $2; exit }')
	fi
	[ -n "$hdr" ] || { log "cannot resolve linux-headers-amd64"; return 1; }
	kver=${hdr#linux-headers-}
	log "stock kernel $kver"
	export DEBIAN_FRONTEND=noninteractive
	dpkg-query -W -f='${Status}' "$hdr" 2>/dev/null | grep -q "install ok installed" ||
		apt-get install -y -qq --no-install-recommends "$hdr" >/dev/null
	(cd "$d" && rm -f ./*.deb &&
		apt-get download -qq -o APT::Sandbox::User=root "linux-image-$kver" linux-source-6.1)
	extract_deb "$d"/linux-image-*.deb "$d/root"
	cp "$d/root/boot/vmlinuz-$kver" "$d/vmlinuz"
	rm -rf "$d/mods" && mkdir -p "$d/mods" && : >"$d/mods/order"
	for m in $GUEST_MODS; do collect_mods "$d/root" "$m" "$d/mods"; done
	echo "$GUEST_MODS" >"$d/mods/wanted"
	# Only ublk_drv.c is needed from the source tarball.
	local tarball
	mkdir -p "$d/src"
	extract_deb "$d"/linux-source-*.deb "$d/srcdeb"
	tarball=$(find "$d/srcdeb" -name 'linux-source-6.1.tar.*' | head -1)
	tar -xf "$tarball" -C "$d/src" --strip-components=3 --wildcards '*/drivers/block/ublk_drv.c'
	cat >"$d/src/Makefile" <<-'EOF'
	obj-m := ublk_drv.o
	EOF
	# ublk_drv.c includes <uapi/linux/ublk_cmd.h>, which the 6.1 headers
	# package carries.
	make -s -C "/usr/src/linux-headers-$kver" M="$d/src" modules >"$d/build.log" 2>&1 ||
		{ cat "$d/build.log" >&2; log "ublk_drv build failed"; return 1; }
	cp "$d/src/ublk_drv.ko" "$d/ublk_drv.ko"
	# Keep no kbuild droppings under build/: the Makefile includes *.d files.
	cp "$d/src/ublk_drv.c" "$d/ublk_drv.c"
	rm -rf "$d/src"
	echo "$kver" >"$d/version"
	rm -rf "$d/root" "$d/srcdeb" "$d"/*.deb
	log "6.1: $kver ready (ublk_drv built out of tree)"
}

which=("$@")
[ ${#which[@]} -eq 0 ] && which=(612 61 tbpo sid)
for k in "${which[@]}"; do
	"prep_$k"
done
