# Sourced by guest.sh and powerloss.sh inside the VM: what both need.
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
