#!/usr/bin/env bash
# test_systemd: the unit systemd/qlcshaped@.service passes `systemd-analyze
# verify` and keeps its hardening, checked offline.
#
# The Makefile copies this script to BUILD/tests/test_systemd, so
# scripts/run-tests.sh runs it with the C tests. It needs no running systemd
# (this also works in a container whose PID 1 is not systemd): the unit is
# installed as `make install PREFIX=/usr` would, into a scratch root, and
# systemd-analyze is pointed at it with --root (its documented way to
# operate on an alternative file system tree), with --man=no since the man
# pages are not installed there. The instance is resolved by name,
# qlcshaped@qlc0.service, so %i is expanded as systemd would.
#
# verify exits 0 even when it only warns (an unknown key, a bad value are
# "ignoring" warnings), so any output at all is a failure; a deliberately
# broken copy checks that this test can fail.
#
# Prints PASS or FAIL with the reason; exits 0 on PASS, 1 on FAIL.
set -u

fail() {
	echo "test_systemd: FAIL: $*"
	exit 1
}

# The source tree: QS_SRCDIR (scripts/run-tests.sh sets it), else the
# tree this script is in (bash tests/test_systemd.sh).
src=${QS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$src/systemd/qlcshaped@.service" ] || fail "no systemd/qlcshaped@.service in $src; set QS_SRCDIR to the source tree"
unit=$src/systemd/qlcshaped@.service

command -v systemd-analyze >/dev/null 2>&1 ||
	fail "systemd-analyze not found (Debian package systemd; scripts/deps.sh installs it)"

tmp=$(mktemp -d /tmp/qs_systemd.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# A scratch root laid out as `make install PREFIX=/usr` lays out a system.
# verify checks that ExecStart= is executable: the built daemon when there is
# one next to this test, else a stand-in (only the unit is under test).
mkroot() { # ROOT UNIT-TEXT-FILE
	mkdir -p "$1/usr/bin" "$1/lib/systemd/system" "$1/etc/qlcshape"
	daemon=$(dirname "$0")/../qlcshaped
	if [ -x "$daemon" ]; then
		cp "$daemon" "$1/usr/bin/qlcshaped"
	else
		printf '#!/bin/sh\nexit 1\n' >"$1/usr/bin/qlcshaped"
		chmod 755 "$1/usr/bin/qlcshaped"
	fi
	cp "$2" "$1/lib/systemd/system/qlcshaped@.service"
	cp "$src/conf/qlcshaped.ini" "$1/etc/qlcshape/qlc0.ini"
}

verify() { # ROOT -> output of verify, status in $vrc
	vout=$(cd "$tmp" && systemd-analyze verify --root="$1" --man=no \
		qlcshaped@qlc0.service 2>&1)
	vrc=$?
}

# 1. The unit as installed (the same substitution as the Makefile's).
grep -q '@BINDIR@/qlcshaped' "$unit" || fail "ExecStart does not use @BINDIR@ (make install substitutes it)"
sed 's|@BINDIR@|/usr/bin|g' "$unit" >"$tmp/unit"
mkroot "$tmp/root" "$tmp/unit"
verify "$tmp/root"
echo "systemd-analyze verify --root=ROOT --man=no qlcshaped@qlc0.service: status $vrc, ${#vout} bytes of output"
[ -n "$vout" ] && printf '%s\n' "$vout"
[ "$vrc" -eq 0 ] || fail "systemd-analyze verify exited $vrc"
[ -z "$vout" ] || fail "systemd-analyze verify printed warnings (above)"

# 2. The check can fail: a copy with a bad value and an unknown key must
# make verify speak.
sed -e 's/^Type=notify$/Type=notifyy/' -e 's/^\[Service\]$/[Service]\nNoSuchKey=1/' \
	"$tmp/unit" >"$tmp/bad"
mkroot "$tmp/badroot" "$tmp/bad"
verify "$tmp/badroot"
[ -n "$vout" ] || fail "verify said nothing about a broken copy: this test could not fail"

# 3. Hardening, as systemd scores it (shown 0 best to 10 worst: 2.4 when
# written; --threshold takes the internal scale, ten times that). The
# threshold, 4.0, catches a removed protection, not small changes.
sec=$(cd "$tmp" && systemd-analyze security --offline=yes --root="$tmp/root" \
	--threshold=40 qlcshaped@qlc0.service 2>&1)
sec_rc=$?
printf '%s\n' "$sec" | grep 'Overall exposure'
[ "$sec_rc" -eq 0 ] || fail "systemd-analyze security: exposure above 4.0 (status $sec_rc)"

# 4. What the unit promises matches the daemon and its example config.
want() { grep -qx "$1" "$tmp/unit" || fail "unit lacks '$1'"; }
want 'Type=notify'
want 'Restart=on-failure'
want 'ExecStart=/usr/bin/qlcshaped --config /etc/qlcshape/%i.ini'
want 'DevicePolicy=closed'
want 'DeviceAllow=/dev/ublk-control rw'
want 'RuntimeDirectory=qlcshaped'
want 'OOMScoreAdjust=-1000'
# WatchdogSec= only when the daemon pings the watchdog.
if grep -q '"WATCHDOG=1"' "$src"/daemon/*.c; then
	grep -q '^WatchdogSec=' "$tmp/unit" || fail "the daemon sends WATCHDOG=1 but the unit sets no WatchdogSec="
else
	grep -q '^WatchdogSec=' "$tmp/unit" && fail "WatchdogSec= set but the daemon sends no WATCHDOG=1"
fi
# The example config's control socket must be writable under ProtectSystem=strict.
sock=$(sed -n 's/^[[:space:]]*control_socket[[:space:]]*=[[:space:]]*//p' "$src/conf/qlcshaped.ini")
case "$sock" in
/run/qlcshaped/*) ;;
*) fail "conf/qlcshaped.ini control_socket '$sock' is outside RuntimeDirectory /run/qlcshaped" ;;
esac

echo "test_systemd: PASS"
