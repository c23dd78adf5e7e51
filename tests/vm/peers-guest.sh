#!/bin/bash
# The runs of make peers (docs/COMPARISON.md), inside the Debian guest that
# tests/vm/peers.sh boots: qlcshape and the kernel's own caches in front of
# the same emulated QLC drive, with the same fast device.
#
# Devices: /dev/vdb backs the emulated drive's data (a sparse file on the
# host); /dev/vdc receives the results (one JSON object a line, written
# after every case so that a run cut short keeps what it measured); the
# fast device is /dev/ram0 (brd, 128 MiB), made again for every case so
# that no case inherits another's cache.
#
# Each case, for each workload: qlcshaped started afresh (the emulated
# drive's model is preconditioned at every start, so each case begins with
# the same full, steady drive and zeroed counters), the cache stacked or
# formatted, fio, every cache written back until clean, then the daemon's
# `qlcshape stats --json` (the emulated drive's own counters) before the
# stack is taken down. Progress lines start "qs-peers: "; the end of the
# runs prints "QS-PEERS: DONE".
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# start_daemon, stop_daemon, drain_bounded, step, fail (fail ends the runs:
# it is used only where nothing after could be measured).
. /qs/common.sh

arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
RUNTIME=$(arg qs_runtime)
SPAN=$(arg qs_span)
ONLY=$(arg qs_only) # a workload name to run alone (a quick check); empty: all
# After a boot that crashed, the host boots again from the case after the
# last one with a result (qs_after; empty: from the first).
AFTER=$(arg qs_after)
CONF=/tmp/peers.ini
OUT=/tmp/peers.jsonl
say() { echo "qs-peers: $*"; }
: >"$OUT"

say "kernel $(uname -r), $(nproc) CPUs, runtime ${RUNTIME} s per run, span $SPAN"
timeout 120 udevadm settle
[ -b /dev/vdb ] && [ -b /dev/vdc ] || fail "no /dev/vdb (the emulated drive's data) or /dev/vdc (results)"
# The data disk is kept across boots: a bcache superblock left by a boot
# that crashed in the bcache case would have udev register the next
# case's /dev/ublkb0 (the emulated drive maps it 1:1 onto /dev/vdb).
wipefs -q -a /dev/vdb
for m in ublk_drv dm_writecache dm_cache dm_cache_smq bcache; do
	modprobe "$m" || fail "modprobe $m: the guest kernel lacks it"
done

# One line of results: the case, the workload, fio's JSON and the stats'
# after the run and before it. The notes are plain words (no quotes) by
# construction.
emit() { # workload case note fio-json-file stats-json-file stats0-json-file
	local f
	{
		printf '{"workload": "%s", "case": "%s", "note": "%s"' "$1" "$2" "$3"
		for f in fio:"$4" stats:"$5" stats0:"${6:-}"; do
			printf ', "%s": ' "${f%%:*}"
			if [ -s "${f#*:}" ]; then tr -d '\n' <"${f#*:}"; else printf null; fi
		done
		printf '}\n'
	} >>"$OUT"
	# The whole file each time: the host reads the disk up to the first NUL.
	dd if="$OUT" of=/dev/vdc bs=1M conv=fsync status=none || say "writing the results to /dev/vdc failed"
}

# A fresh fast device: brd again, so every case starts with an empty one.
fresh_fast() {
	rmmod brd 2>/dev/null
	[ -e /dev/ram0 ] && fail "/dev/ram0 still exists after rmmod brd (held by a previous case)"
	modprobe brd rd_nr=1 rd_size=131072 max_part=0 || fail "modprobe brd"
	udevadm settle
}

# The daemon's configuration. The emulated P5316 is 10.5 GiB of a model
# built for 160 GiB (model_size: above the 151 GiB the profile's GC needs
# to behave as calibrated), its data on /dev/vdb; the workloads stay in its
# first $SPAN (8 GiB, 5% of the model, as the published tests confine
# theirs). 10.5 GiB leaves room for log placement's 20% over-provisioning
# above the span. placement: none (passthrough, the bare drive under the
# kernel caches), inplace or log; bypass: bypass_min or 0.
write_conf() { # placement bypass_min
	{
		echo "[devices]"
		echo "qlc = emu:p5316-30t"
		[ "$1" != none ] && echo "fast = /dev/ram0"
		echo "[engine]"
		if [ "$1" = none ]; then
			echo "mode = passthrough"
		else
			echo "mode = cache"
			echo "placement = $1"
			echo "bypass_min = $2"
			# Bands of 64 MiB: 168 of them, so that GC has choice (the
			# default 1 GiB would leave 10).
			[ "$1" = log ] && echo "band_size = 64M"
		fi
		echo "[emu]"
		echo "backing = /dev/vdb"
		echo "size = 10752M"
		echo "model_size = 160G"
		echo "precondition = seq"
		echo "[daemon]"
		echo "backend = engine"
		echo "drain_on_stop = yes"
		echo "control_socket = /run/qlcshaped.sock"
		echo "[ublk]"
		echo "queues = 1"
		echo "queue_depth = 64"
		echo "max_io = 512K"
		echo "dev_id = 0"
	} >"$CONF"
}

# The workload's fio job on DEV, the options after LOG added: 4 KiB or 64
# KiB random writes over the span, or the trace replayed from LOG (an iolog
# of trace_loop) as fast as the queue allows (iolog v2 has no times).
# io_uring, iodepth 16, direct. Both the measured run and log placement's
# warm-up run it.
fio_wl() { # workload dev log [fio options...]
	local wl=$1 dev=$2 log=$3
	shift 3
	case $wl in
	rand4k | rand64k)
		fio --name="$wl" --filename="$dev" --rw=randwrite --bs="${wl#rand}" --size="$SPAN" \
			--norandommap --direct=1 --ioengine=io_uring --iodepth=16 "$@" ;;
	trace)
		fio --name=trace --read_iolog="$log" --read_iolog_chunked=1 --replay_redirect="$dev" \
			--direct=1 --ioengine=io_uring --iodepth=16 "$@" ;;
	esac
}

# The measured run on DEV: a fixed seed (the same offsets in every case), a
# fixed runtime (the random writes time_based; the trace over and over
# until it ends: trace_loop, more passes than any run here gets through);
# JSON to /tmp/fio.json.
run_fio() { # workload dev
	local more=--time_based
	rm -f /tmp/fio.json
	if [ "$1" = trace ]; then
		more=
		[ -s /tmp/trace-loop.iolog ] || trace_loop 300 /tmp/trace-loop.iolog
	fi
	# shellcheck disable=SC2086
	fio_wl "$1" "$2" /tmp/trace-loop.iolog --randrepeat=1 --randseed=16 --runtime="$RUNTIME" \
		$more --output-format=json --output=/tmp/fio.json >/tmp/fio.log 2>&1 && return 0
	sed 's/^/qs-peers: fio: /' /tmp/fio.log /tmp/fio.json 2>/dev/null | tail -20
	return 1
}

# fio 3.33 replays an iolog once: neither loops nor time_based repeat it
# (checked on the host: loops=5 issued each request once). The trace is
# therefore written out N times over into one log, which fio reads a chunk
# at a time (read_iolog_chunked), and a run ends at its runtime or its size.
trace_loop() { # passes out
	awk -v n="$1" '$2 == "close" { next }
		NR > 1 && NF == 4 { body = body $0 "\n"; next }
		{ print }
		END { for (i = 0; i < n; i++) printf "%s", body; print "qlc close" }' /qs/trace.iolog >"$2"
}

# Bytes one pass of the trace writes.
trace_write_bytes() {
	awk '$2 == "write" { b += $4 } END { printf "%.0f\n", b }' /qs/trace.iolog
}

# Log placement's steady state, before its measured run. Its mapping starts
# empty at --format, so a 20 s run from there writes into free bands and its
# GC never runs (gc.victims 0 in the first runs): the NAND figure would
# leave out log placement's own cost. Every other stack maps LBAs 1:1 onto
# the drive, whose model starts full and steady, and their 128 MiB caches
# fill within the run. So, as the published tests fill a drive first: the
# span written in order (1 MiB writes), then the workload itself until it
# has written 1.5 times what the free bands hold (GC starts once they run
# out, and runs for the last third); the random workloads with a seed other
# than the measured run's, whose offsets would otherwise be the oldest data
# in the log. Then the log drained, so that the measured run starts, as
# every other case does, with nothing in its fast tier; the counters are
# read after that (stats0 in the results): the table gives the measured
# run alone.
warm_log() { # workload dev
	local free band bytes common="--eta=never --output=/tmp/warm.log"
	# shellcheck disable=SC2086
	fio --name=fill --filename="$2" --rw=write --bs=1M --iodepth=4 --size="$SPAN" \
		--direct=1 --ioengine=io_uring $common ||
		{ say "log warm-up: the fill failed"; return 1; }
	set -- "$1" "$2" $(/usr/bin/qlcshape stats --json --config "$CONF" |
		sed -n 's/.*"bands": {"total": [0-9]*, "free": \([0-9]*\),.*"bytes": \([0-9]*\),.*/\1 \2/p')
	free=${3:-0} band=${4:-0}
	bytes=$((free * band * 3 / 2))
	[ "$bytes" -gt 0 ] || { say "log warm-up: no free bands in qlcshape stats"; return 1; }
	say "log warm-up: span filled, $free free bands of $band bytes; writing $((bytes >> 20)) MiB of $1"
	# The random writes stop at that size; the trace, whose reads would
	# count towards a size, after as many passes as write it.
	local more=--io_size=$bytes
	if [ "$1" = trace ]; then
		more=
		trace_loop $((bytes / $(trace_write_bytes) + 1)) /tmp/warm.iolog
	fi
	# shellcheck disable=SC2086
	fio_wl "$1" "$2" /tmp/warm.iolog $more --randseed=61 $common ||
		{ say "log warm-up: fio failed"; sed 's/^/qs-peers: fio: /' /tmp/warm.log | tail -5; return 1; }
	rm -f /tmp/warm.iolog
	drain_bounded "log warm-up" "$CONF"
	say "log warm-up: done, $(/usr/bin/qlcshape stats --json --config "$CONF" |
		sed -n 's/.*"gc": {"victims": \([0-9]*\),.*/\1/p') GC victims so far"
}

# Wait, at most $1 seconds of guest time, until the command "$2" succeeds.
# The command may `set --`, which would replace this function's arguments:
# they are copied first.
wait_until() { # seconds command
	local i=0 n=$(($1 * 2)) cmd=$2
	while ! eval "$cmd"; do
		i=$((i + 1))
		[ $i -gt $n ] && return 1
		sleep 0.5
	done
}

# dm-cache's table over /dev/ublkb0 with POLICY (smq to run, cleaner to
# write everything back): 128-sector (64 KiB) blocks, writeback.
dmcache_table() { # policy
	echo "0 $DEVSZ cache /dev/mapper/peers-cmeta /dev/mapper/peers-cdata /dev/ublkb0 128 1 writeback $1 0"
}

# The stack of each case on /dev/ublkb0 and /dev/ram0 (DEVSZ: the size of
# /dev/ublkb0 in sectors, set by run_case: this runs in a subshell); prints
# the device fio writes to.
stack_up() { # case
	case $1 in
	bare | inplace | log | inplace-bypass) echo /dev/ublkb0 ;;
	writecache)
		# ssd mode (s), 4 KiB blocks, no optional arguments: the
		# defaults (writeback from 50% of the cache down to 45%).
		dmsetup create peers-wc --table "0 $DEVSZ writecache s /dev/ublkb0 /dev/ram0 4096 0" >&2 ||
			return 1
		echo /dev/mapper/peers-wc ;;
	dmcache)
		# 8 MiB of metadata, the rest data, both on ram0; 64 KiB cache
		# blocks (one IU: a dm-cache block is what it writes back), smq,
		# writeback.
		dmsetup create peers-cmeta --table "0 16384 linear /dev/ram0 0" >&2 &&
			dmsetup create peers-cdata --table "0 $((262144 - 16384)) linear /dev/ram0 16384" >&2 &&
			dmsetup create peers-cache --table "$(dmcache_table smq)" >&2 ||
			return 1
		echo /dev/mapper/peers-cache ;;
	bcache)
		# 64 KiB buckets; the backing device's data offset left at
		# make-bcache's default (8 KiB: what a user gets).
		make-bcache -b 64k --writeback -C /dev/ram0 -B /dev/ublkb0 >/tmp/bcache.log 2>&1 ||
			{ sed 's/^/qs-peers: make-bcache: /' /tmp/bcache.log >&2; return 1; }
		udevadm settle
		# udev's bcache rule registers both; do it here if it did not.
		[ -e /sys/block/ublkb0/bcache ] || echo /dev/ublkb0 >/sys/fs/bcache/register 2>/dev/null
		[ -e /sys/block/ram0/bcache ] || echo /dev/ram0 >/sys/fs/bcache/register 2>/dev/null
		wait_until 30 '[ -b /dev/bcache0 ] && [ -e /sys/block/bcache0/bcache/cache ]' ||
			{ say "bcache0 did not appear attached" >&2; return 1; }
		echo writeback >/sys/block/bcache0/bcache/cache_mode
		say "bcache: data offset $(bcache-super-show /dev/ublkb0 2>/dev/null | sed -n 's/^dev.data.first_sector[[:space:]]*//p') sectors, cache mode $(cat /sys/block/bcache0/bcache/cache_mode)" >&2
		echo /dev/bcache0 ;;
	esac
}

# Every dirty block written back to the emulated drive, within 300 s of
# guest time; prints how it went (a note for the results).
write_back() { # case
	local s
	s=$(cut -d' ' -f1 /proc/uptime)
	case $1 in
	bare) ;;
	inplace | log | inplace-bypass)
		drain_bounded "$1" "$CONF" ;;
	writecache)
		# flush_on_suspend, then suspend: the suspend returns once every
		# dirty block is written back (the way the kernel's
		# documentation removes a writecache). Written-back blocks stay
		# in the cache for reads, so its free count says nothing here.
		dmsetup message peers-wc 0 flush_on_suspend &&
			timeout 300 dmsetup suspend peers-wc &&
			dmsetup resume peers-wc ||
			{ echo "not written back (suspend with flush_on_suspend failed or took over 300 s)"; return; } ;;
	dmcache)
		# The cleaner policy writes every dirty block back. status:
		# 0 SIZE cache MD-BLOCK MD-USED BLOCK USED READ-HITS READ-MISSES
		# WRITE-HITS WRITE-MISSES DEMOTIONS PROMOTIONS DIRTY ...
		dmsetup suspend peers-cache &&
			dmsetup reload peers-cache --table "$(dmcache_table cleaner)" &&
			dmsetup resume peers-cache || { echo "the cleaner policy could not be loaded"; return; }
		wait_until 300 'set -- $(dmsetup status peers-cache); [ "${14}" = 0 ]' ||
			{ echo "not clean after 300 s: $(dmsetup status peers-cache | cut -d' ' -f1-14)"; return; } ;;
	bcache)
		echo 0 >/sys/block/bcache0/bcache/writeback_percent
		wait_until 300 '[ "$(cat /sys/block/bcache0/bcache/state)" = clean ]' ||
			{ echo "not clean after 300 s: dirty_data $(cat /sys/block/bcache0/bcache/dirty_data)"; return; } ;;
	esac
	echo "clean after $(awk -v a="$s" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.0f", b - a }') s"
}

stack_down() { # case
	case $1 in
	writecache) dmsetup remove peers-wc ;;
	dmcache) dmsetup remove peers-cache && dmsetup remove peers-cdata && dmsetup remove peers-cmeta ;;
	bcache)
		echo 1 >/sys/block/bcache0/bcache/stop
		for s in /sys/fs/bcache/*-*; do [ -e "$s/unregister" ] && echo 1 >"$s/unregister"; done
		wait_until 30 '[ ! -e /dev/bcache0 ] && [ ! -e /sys/block/ram0/bcache ]' ||
			say "bcache did not let go of its devices"
		# Its superblock on the emulated drive's data: udev would
		# register it again when the next case's /dev/ublkb0 appears.
		wipefs -q -a /dev/ublkb0 ;;
	esac
}

run_case() { # workload case
	local wl=$1 c=$2 placement=none bypass=0 dev note
	case $c in
	inplace) placement=inplace ;;
	log) placement=log ;;
	inplace-bypass) placement=inplace bypass=64K ;;
	esac
	step "$wl $c"
	echo "$wl $c" >/tmp/peers.current
	fresh_fast
	write_conf $placement $bypass
	rm -f /tmp/stats.json /tmp/stats0.json
	if [ $placement = none ]; then
		QS_QUIET=1 start_daemon "$c" "$CONF"
	else
		QS_QUIET=1 start_daemon "$c" "$CONF" --format
	fi
	grep -E 'model|faithful|emulated' /tmp/qlcshaped.log | head -3 | sed 's/^/qs-peers: daemon: /'
	DEVSZ=$(blockdev --getsz /dev/ublkb0)
	if ! dev=$(stack_up "$c"); then
		emit "$wl" "$c" "setup failed" "" ""
		stack_down "$c" 2>/dev/null
		stop_daemon "$c"
		return
	fi
	if [ "$c" = log ] && ! warm_log "$wl" "$dev"; then
		emit "$wl" "$c" "warm-up failed" "" "" ""
		stack_down "$c"
		stop_daemon "$c"
		return
	fi
	# The counters before the measured run (the table subtracts them).
	/usr/bin/qlcshape stats --json --config "$CONF" >/tmp/stats0.json ||
		say "qlcshape stats --json failed"
	if run_fio "$wl" "$dev"; then
		note=$(write_back "$c" 2>&1 | tr -d '"\\' | tr '\n' ' ')
		/usr/bin/qlcshape stats --json --config "$CONF" >/tmp/stats.json ||
			say "qlcshape stats --json failed"
	else
		note="fio failed"
	fi
	say "$wl $c: $(grep -o '"iops" : [0-9.]*' /tmp/fio.json 2>/dev/null | tr '\n' ' ') $note"
	emit "$wl" "$c" "$note" /tmp/fio.json /tmp/stats.json /tmp/stats0.json
	stack_down "$c"
	stop_daemon "$c"
}

# bypass_min with log placement: the engine's configuration check decides
# (qlcshaped --format-only exits before serving anything either way).
bypass_under_log() {
	fresh_fast
	write_conf log 64K
	if timeout 120 qlcshaped --config "$CONF" --format-only >/tmp/format.log 2>&1; then
		note="accepted"
	else
		# The line naming the key, not the closing "exit 1".
		note="refused: $({ grep -m1 bypass_min /tmp/format.log || tail -1 /tmp/format.log; } | sed 's/^qlcshaped: //' | tr -d '"\\')"
	fi
	say "log-bypass: $note"
	emit rand64k log-bypass "$note" "" ""
}

# A kernel oops (bcache's bch_journal oopsed here in one run) leaves the
# cache's I/O hung, and fio with it: the case gets a line saying so, and the
# guest powers off at once (sysrq o) instead of running into the host's
# timeout. The host boots each workload on its own.
echo 1 >/proc/sys/kernel/sysrq
oops_watch() {
	while sleep 2; do
		dmesg | grep -qE 'Oops|BUG:|kernel BUG' || continue
		local what
		what=$(dmesg | grep -E 'BUG:|RIP:' | head -2 | sed 's/^\[[^]]*\] *//' | tr -d '"\\' | tr '\n' ' ')
		say "kernel oops during $(cat /tmp/peers.current): $what"
		set -- $(cat /tmp/peers.current)
		emit "$1" "$2" "kernel oops: $what" "" ""
		echo "QS-PEERS: OOPS"
		sync
		echo o >/proc/sysrq-trigger
	done
}
: >/tmp/peers.current
oops_watch &

skip=${AFTER:+1}
for wl in rand4k rand64k trace; do
	[ -n "$ONLY" ] && [ "$ONLY" != "$wl" ] && continue
	cases="bare inplace log writecache dmcache bcache"
	# The bypass rows sit with the 64 KiB case they answer for.
	[ $wl = rand64k ] && cases="bare inplace log inplace-bypass log-bypass writecache dmcache bcache"
	for c in $cases; do
		if [ -n "$skip" ]; then
			[ "$c" = "$AFTER" ] && skip=
			continue
		fi
		case $c in
		log-bypass) bypass_under_log ;;
		*) run_case $wl $c ;;
		esac
	done
done
echo "QS-PEERS: DONE"
systemctl poweroff
