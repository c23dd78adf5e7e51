# Sourced by guest.sh (it needs step, fail and run_daemon from common.sh):
# a restart always works, whatever moment a kill lands in (issue 19). A
# daemon with a fixed ublk.dev_id 0 gets SIGTERM and then SIGKILL at several
# moments of its stop: at once (STOP_DEV in flight), 30 ms later, during the
# drain of a full log, during the close; and once SIGKILL while serving
# without user recovery, after which the kernel stops the device itself and
# keeps it (/dev/ublkc0 without /dev/ublkb0): the stale device the next
# start must delete. Half the runs have user recovery, half not. After each
# kill a new daemon must start on dev_id 0 (printing what it did with what
# it found, and how long it took), and fio must read back every block
# written (verify_only). A second instance of dev_id 0 while one runs must
# be refused, naming the owner. Log: tests/vm/killstop.ini (16 MiB, destage
# held until 95% full).

QS_QUIET=1 # ks_restart prints what the restarts did
ks_rec=/qs/killstop.ini
ks_norec=/tmp/killstop-norec.ini
sed 's/^user_recovery = yes$/user_recovery = no/' $ks_rec >$ks_norec
grep -q '^user_recovery = no$' $ks_norec || fail "killstop: no user_recovery = no config"
dd if=/dev/zero of=/tmp/ks-fast.img bs=1M count=0 seek=16 2>/dev/null
dd if=/dev/zero of=/tmp/ks-qlc.img bs=1M count=0 seek=256 2>/dev/null

# 24 MiB of 32 KiB random writes over the first 64 MiB, more than the log
# holds; the same seed writes (and verify_only expects) the same data.
ks_fio() { # write|verify
	set -- "$1" --name=ks --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring \
		--iodepth=16 --rw=randwrite --bs=32k --size=64M --io_size=24M --randseed=19 \
		--verify=crc32c --verify_fatal=1
	if [ "$1" = write ]; then
		shift
		fio "$@" --do_verify=0 --end_fsync=1 >/tmp/fio-ks.log 2>&1 ||
			{ cat /tmp/fio-ks.log; fail "killstop: fio write"; }
	else
		shift
		fio "$@" --verify_only=1 >/tmp/fio-ks.log 2>&1 ||
			{ cat /tmp/fio-ks.log; fail "killstop: fio verify_only: data lost across the kill"; }
	fi
}

# Wait until the daemon's log has a line matching $1 (ERE), up to $2 tenths of s.
ks_wait_log() {
	i=0
	until grep -Eq "$1" /tmp/qlcshaped.log; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && fail "killstop: no '$1' in the daemon's log"
		kill -0 $pid 2>/dev/null || fail "killstop: the daemon exited before '$1'"
		sleep 0.01
	done
}

ks_kill() { # what
	kill -9 $pid 2>/dev/null
	wait $pid
	cp /tmp/qlcshaped.log /tmp/qlcshaped-killed.log
	echo "qs-vm:   SIGKILL $1; its last line: $(tail -1 /tmp/qlcshaped-killed.log)"
	echo "qs-vm:   left behind: $(ls /dev/ublkc0 /dev/ublkb0 2>/dev/null | tr '\n' ' ')"
}

ks_restart() { # config
	t0=$(cut -d' ' -f1 /proc/uptime)
	run_daemon "$1"
	t1=$(cut -d' ' -f1 /proc/uptime)
	grep -E "ublk: device 0 (exists|deleted|cannot)|ready" /tmp/qlcshaped.log | sed 's/^/qs-vm:   restart: /'
	echo "qs-vm:   restart took $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s"
	ks_fio verify
	echo "qs-vm:   every block written reads back"
}

step "kill while serving without user recovery: the kernel keeps a stopped device"
run_daemon $ks_norec --format
ks_fio write
ks_kill "while serving (no user recovery)"
# The kernel stops the device itself (6.12 at once, 6.1 within 5 s) but
# keeps it until DEL_DEV: the leftover every later start used to trip on.
[ -e /dev/ublkc0 ] || fail "killstop: /dev/ublkc0 vanished; this step tests nothing"
ks_restart $ks_norec
grep -q "ublk: device 0 exists (.*deleting it to create a fresh one" /tmp/qlcshaped.log ||
	fail "killstop: the stale device was not deleted and replaced"

step "a second instance on dev_id 0 while one serves is refused"
sed 's|^control_socket = .*|control_socket = /run/qs-second.sock|' /qs/ram.ini >/tmp/ks-second.ini
if /usr/bin/qlcshaped --config /tmp/ks-second.ini >/tmp/second.log 2>&1; then
	fail "killstop: a second daemon took over a device in use"
fi
sed 's/^/qs-vm:   second: /' /tmp/second.log | grep -E "in use|exit"
grep -q "ublk device 0 (/dev/ublkb0) is in use by qlcshaped, pid $pid, which is running" \
	/tmp/second.log || fail "killstop: the refusal does not name the running owner"
dd if=/dev/ublkb0 of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null ||
	fail "killstop: the first daemon's device broke"

# Kill the daemon serving now (what it leaves is the next start's to
# handle: more of the same paths), then start one with the given config.
ks_serve() { # config
	kill -9 $pid
	wait $pid
	run_daemon "$1"
}

step "SIGTERM, then SIGKILL at once (STOP_DEV in flight), user recovery"
ks_serve $ks_rec
kill -TERM $pid
ks_kill "right after SIGTERM"
ks_restart $ks_rec

step "SIGTERM, then SIGKILL 30 ms later, no user recovery"
ks_serve $ks_norec
kill -TERM $pid
sleep 0.03
ks_kill "30 ms after SIGTERM"
ks_restart $ks_norec

in_drain=0
for cfg in $ks_rec $ks_norec; do
	step "SIGKILL during the drain of a full log ($(grep '^user_recovery' $cfg))"
	ks_serve $cfg
	ks_fio write
	kill -TERM $pid
	ks_wait_log "^qlcshaped: draining$" 300
	sleep 0.02
	ks_kill "during the drain"
	if grep -Eq "^qlcshaped: (drained|drain:)" /tmp/qlcshaped-killed.log; then
		echo "qs-vm:   note: the drain ended before the kill"
	else
		in_drain=$((in_drain + 1))
	fi
	# The stop deletes the device before it drains: nothing is left.
	[ ! -e /dev/ublkc0 ] || fail "killstop: /dev/ublkc0 left behind by a kill during the drain"
	ks_restart $cfg
	grep -q "ublk: device 0 exists" /tmp/qlcshaped.log &&
		fail "killstop: a device was found after a kill during the drain"
done
# A drain that always ended before the kill would leave this untested.
[ $in_drain -gt 0 ] || fail "killstop: neither kill landed during the drain"

step "SIGKILL during the close (after the drain), user recovery"
ks_serve $ks_rec
ks_fio write
kill -TERM $pid
ks_wait_log "^qlcshaped: (drained|nothing to drain)" 600
ks_kill "during the close"
ks_restart $ks_rec

step "clean stop after the kills"
kill -TERM $pid
wait $pid || fail "killstop: exit status $? on the last stop"
[ ! -e /dev/ublkc0 ] && [ ! -e /dev/ublkb0 ] || fail "killstop: a device left after a clean stop"
rm -f /tmp/ks-fast.img /tmp/ks-qlc.img
unset QS_QUIET
