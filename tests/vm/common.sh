# Sourced by the guest scripts inside the VM (guest.sh, powerloss.sh, and
# emu.sh or killstop.sh run alone): what they share.
fail() { echo "qs-vm: FAIL: $*"; [ -f /tmp/qlcshaped.log ] && sed 's/^/qs-vm: daemon: /' /tmp/qlcshaped.log; exit 1; }
step() { echo "qs-vm: step [$(cut -d" " -f1 /proc/uptime) s] $*"; }

# run_daemon CONFIG [ARGS...]: start qlcshaped in the background ($pid) and
# wait until /dev/ublkb0 is ready.
run_daemon() {
	config=$1
	shift
	# Empty the log here: the background child truncates it only when it
	# runs, and the wait below must not see the previous instance's lines.
	: >/tmp/qlcshaped.log
	# Its own mount namespace: the device is mounted in this one, never in
	# the daemon's (see docs/DAEMON.md). unshare execs, so $! is the daemon.
	unshare -m --propagation private /usr/bin/qlcshaped --config "$config" "$@" \
		>/tmp/qlcshaped.log 2>&1 &
	pid=$!
	i=0
	while ! grep -q "/dev/ublkb0 ready" /tmp/qlcshaped.log; do
		i=$((i + 1))
		[ $i -gt 900 ] && fail "/dev/ublkb0 not ready within 90 s"
		kill -0 $pid 2>/dev/null || fail "qlcshaped exited early"
		sleep 0.1
	done
	# QS_QUIET=1: the caller prints what it wants of the log (a failure above still prints it).
	[ -n "${QS_QUIET:-}" ] || sed 's/^/qs-vm: daemon: /' /tmp/qlcshaped.log
}

stop_daemon() { # what
	step "stop qlcshaped ($1, SIGTERM)"
	kill -TERM $pid
	i=0
	while kill -0 $pid 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 600 ] && fail "qlcshaped did not exit within 60 s of SIGTERM"
		sleep 0.1
	done
	wait $pid
	rc=$?
	sed 's/^/qs-vm: daemon: /' /tmp/qlcshaped.log | tail -6
	[ $rc -eq 0 ] || fail "qlcshaped exit status $rc"
	[ ! -e /dev/ublkb0 ] || fail "/dev/ublkb0 still exists after stop"
	[ ! -e /dev/ublkc0 ] || fail "/dev/ublkc0 still exists after stop"
}

start_daemon() { # what config [--format]
	step "start qlcshaped ($1)"
	config=$2
	shift 2
	run_daemon "$config" "$@"
}

# drain_bounded WHAT CONFIG: qlcshape drain with a time limit (the guest's
# clock: TCG is slow), so that a drain that never ends fails here, with the
# engine's state, instead of running into qemu's timeout. QS_DRAIN_S
# seconds, default 150 (the Ceph guest's log holds more).
drain_bounded() { # what config
	timeout "${QS_DRAIN_S:-150}" /usr/bin/qlcshape drain --config "$2" >/tmp/drain-b.txt 2>&1 && return 0
	cat /tmp/drain-b.txt
	echo "qs-vm: engine state: $(/usr/bin/qlcshape stats --state --config "$2" 2>&1)"
	/usr/bin/qlcshape stats --config "$2" 2>&1 | sed 's/^/qs-vm: stats: /'
	fail "qlcshape drain ($1) did not answer within ${QS_DRAIN_S:-150} s"
}
