# Sourced by guest.sh (it needs step, fail, start_daemon and stop_daemon):
# the emulated QLC, qlc = emu:p5316-30t (the bench's model of the P5316
# 30.72 TB in real time, 256 MiB). The same two fio jobs run on it bare
# (tests/vm/emu-bare.ini: engine.mode = passthrough, every request reaches
# the emulated drive as it is; data in RAM) and with shaping on
# (tests/vm/emu-shaped.ini: the engine's log on a tmpfs file in front; data
# in a tmpfs file, checked unchanged across a daemon restart), and
# their figures are printed as "qs-vm: emu ..." lines. Under TCG the guest's
# CPU, not the model, limits the client figures; what the emulated drive
# did (partial-IU writes, read-modify-writes, write amplification inside the
# drive) is printed from the daemon's exit line. With shaping on, the QLC
# must have received whole IUs only: checked from `qlcshape stats` after a
# drain, and from the emulated drive's own count of partial-IU writes.

emu_fio() { # mode rw bs size
	step "fio $2 $3 on the emulated QLC, $1: up to 12 s, iodepth 16, verify crc32c as it writes"
	fio --name=emu-$1-$2-$3 --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring \
		--iodepth=16 --rw=$2 --bs=$3 --size=$4 --runtime=12 --verify=crc32c \
		--verify_backlog=256 --verify_fatal=1 --randrepeat=0 >/tmp/fio-emu.log 2>&1 ||
		{ cat /tmp/fio-emu.log; fail "fio $2 $3 on the emulated QLC ($1)"; }
	grep -q "err= 0" /tmp/fio-emu.log || { cat /tmp/fio-emu.log; fail "fio reported an error"; }
	grep -E "^ *write: IOPS=" /tmp/fio-emu.log | sed "s/^ */qs-vm: emu $1 $2 $3: /"
}

emu_drive_line() { # mode -> prints and sets $emu_line
	emu_line=$(grep "emulated QLC: .* reads" /tmp/qlcshaped.log)
	[ -n "$emu_line" ] || fail "the daemon did not report the emulated QLC at exit"
	echo "qs-vm: emu $1 drive: ${emu_line#*emulated QLC: }"
}

# Drain, then from qlcshape stats: the QLC got writes, all of them whole IUs.
emu_whole_ius() { # mode second-stats-line-to-print
	drain_bounded "$1" "$emu_conf"
	qs_emu stats >/tmp/stats-emu.txt || fail "qlcshape stats ($1)"
	sed -n "s/^qlc  */qs-vm: emu $1 stats: qlc /p; s/^$2  */qs-vm: emu $1 stats: $2 /p" \
		/tmp/stats-emu.txt
	qline=$(grep "^qlc " /tmp/stats-emu.txt)
	qw=$(echo "$qline" | sed -n 's/^qlc *\([0-9]*\) writes.*/\1/p')
	qwhole=$(echo "$qline" | sed -n 's/.*), \([0-9]*\) whole-IU.*/\1/p')
	[ -n "$qw" ] && [ "$qw" -gt 0 ] || fail "no QLC writes after the drain ($1)"
	[ "$qw" = "$qwhole" ] || fail "the QLC got writes that are not whole IUs, $1 ($qwhole of $qw)"
}

qs_emu() { /usr/bin/qlcshape "$@" --config "$emu_conf"; }

# Bare: the emulated drive alone behind the passthrough engine.
emu_conf=/qs/emu-bare.ini
start_daemon "emulated QLC, bare (passthrough)" $emu_conf
grep -q "IU 65536 bytes from the emulated drive's profile p5316-30t" /tmp/qlcshaped.log ||
	fail "the IU did not come from the emulated drive's profile"
emu_fio bare randwrite 4k 64M
emu_fio bare randwrite 64k 256M
qs_emu stats >/tmp/stats-emu.txt || fail "qlcshape stats (bare)"
sed -n 's/^qlc  */qs-vm: emu bare stats: qlc /p; s/^emulated qlc  */qs-vm: emu bare stats: emulated qlc /p' \
	/tmp/stats-emu.txt
grep -q "^emulated qlc .* partial-IU" /tmp/stats-emu.txt || fail "stats lacks the emulated QLC line"
qs_emu stats --json >/tmp/stats-emu.json || fail "qlcshape stats --json (bare)"
grep -q '"partial_iu_writes": [1-9]' /tmp/stats-emu.json ||
	fail "stats json: no partial-IU writes in the emulated drive after bare 4 KiB writes"
stop_daemon "emulated QLC, bare"
emu_drive_line bare
partial=$(echo "$emu_line" | sed -n 's/.*in the drive \([0-9]*\) partial-IU writes.*/\1/p')
[ -n "$partial" ] && [ "$partial" -gt 0 ] ||
	fail "bare 4 KiB writes reached the emulated drive, yet it counted no partial-IU writes"

# Shaped: the engine's log in front of the same emulated drive.
emu_conf=/qs/emu-shaped.ini
dd if=/dev/zero of=/tmp/emu-fast.img bs=1M count=0 seek=64 2>/dev/null
start_daemon "emulated QLC, shaped, format" $emu_conf --format
emu_fio shaped randwrite 4k 64M
emu_fio shaped randwrite 64k 256M
step "drain, then qlcshape stats: only whole IUs reached the emulated QLC"
emu_whole_ius shaped "emulated qlc"
sum1=$(dd if=/dev/ublkb0 bs=1M count=64 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
stop_daemon "emulated QLC, shaped"
emu_drive_line shaped
echo "$emu_line" | grep -q "in the drive 0 partial-IU writes" ||
	fail "the emulated drive counted partial-IU writes with shaping on"
# The emulated drive's data is in a file: a restarted daemon (log recovery,
# a freshly preconditioned model) reads the same blocks.
start_daemon "emulated QLC, shaped, restart over the file-backed drive" $emu_conf
sum2=$(dd if=/dev/ublkb0 bs=1M count=64 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
echo "qs-vm:   md5 of the first 64 MiB before $sum1 after $sum2"
[ "$sum1" = "$sum2" ] || fail "data on the file-backed emulated QLC changed across a restart"
stop_daemon "emulated QLC, shaped, after the restart"
rm -f /tmp/emu-qlc.img /tmp/emu-fast.img

# Log placement (tests/vm/emu-log.ini): destage packs blocks into bands, GC
# runs over op 20%. fio verifies as it writes; only whole IUs reach the
# drive, and none partial; then kill -9 and a restart (log and map
# recovery, the device the dead daemon left deleted and created again) must
# read back the same blocks, and so must a clean restart after that.
emu_conf=/qs/emu-log.ini
dd if=/dev/zero of=/tmp/emu-fast.img bs=1M count=0 seek=64 2>/dev/null
start_daemon "emulated QLC, log placement, format" $emu_conf --format
emu_fio log randwrite 4k 64M
emu_fio log randwrite 64k 192M
emu_fio log randwrite 4k 192M
step "drain, then qlcshape stats: whole IUs only, and GC ran"
emu_whole_ius log bands
grep -q "^emulated qlc .* 0 partial-IU" /tmp/stats-emu.txt ||
	fail "the emulated drive counted partial-IU writes with log placement"
qs_emu stats --json >/tmp/stats-emu.json || fail "qlcshape stats --json (log)"
grep -q '"placement": "log"' /tmp/stats-emu.json || fail "stats json: placement is not log"
sum1=$(dd if=/dev/ublkb0 bs=1M count=192 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
step "kill -9 the daemon with log placement, start again"
kill -9 $pid
wait $pid 2>/dev/null
start_daemon "emulated QLC, log placement, after kill -9" $emu_conf
grep -q "recovered map" /tmp/qlcshaped.log || fail "no map recovery reported"
sum2=$(dd if=/dev/ublkb0 bs=1M count=192 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
echo "qs-vm:   md5 of the first 192 MiB before the kill $sum1, after $sum2"
[ "$sum1" = "$sum2" ] || fail "log placement: data changed across kill -9 and recovery"
stop_daemon "emulated QLC, log placement, after the kill"
start_daemon "emulated QLC, log placement, clean restart" $emu_conf
sum3=$(dd if=/dev/ublkb0 bs=1M count=192 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
[ "$sum1" = "$sum3" ] || fail "log placement: data changed across a clean restart"
stop_daemon "emulated QLC, log placement, clean restart"
rm -f /tmp/emu-qlc.img /tmp/emu-fast.img

# Log placement with the map paged (tests/vm/emu-logpaged.ini): 1 MiB of
# map DRAM for a 3.2 MiB map. fio writes 4 KiB blocks over the whole device
# (a fixed amount, so that a second fio can verify the same blocks), then
# drains (destage looks every block up) and reads them back through map
# lookups that miss; kill -9 and a restart
# (recovery replays with pages read as needed) must keep them, and so must
# a clean restart.
emu_conf=/qs/emu-logpaged.ini
paged_fio() { # what (write|verify)
	extra="--verify_backlog=256"
	[ "$1" = verify ] && extra="--verify_only"
	fio --name=emu-paged --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --iodepth=16 \
		--rw=randwrite --bs=4k --io_size=24M --verify=crc32c --verify_fatal=1 \
		--randrepeat=1 $extra >/tmp/fio-emu.log 2>&1 ||
		{ cat /tmp/fio-emu.log; fail "fio $1 on the paged map"; }
	grep -q "err= 0" /tmp/fio-emu.log || { cat /tmp/fio-emu.log; fail "fio $1 reported an error"; }
	grep -E "^ *(write|read): IOPS=" /tmp/fio-emu.log | sed "s/^ */qs-vm: emu paged $1: /"
}
dd if=/dev/zero of=/tmp/emu-fast.img bs=1M count=0 seek=64 2>/dev/null
start_daemon "emulated QLC, log placement, paged map, format" $emu_conf --format
step "fio 4k randwrite over the whole device, 24 MiB, verify as it writes"
paged_fio write
drain_bounded "paged map" "$emu_conf"
qs_emu stats >/tmp/stats-emu.txt || fail "qlcshape stats (paged map)"
sed -n 's/^map pages  */qs-vm: emu paged stats: map pages /p' /tmp/stats-emu.txt
mline=$(grep "^map pages " /tmp/stats-emu.txt)
misses=$(echo "$mline" | sed -n 's/.* \([0-9]*\) misses.*/\1/p')
peak=$(echo "$mline" | sed -n 's/.*(peak \([0-9]*\), limit \([0-9]*\)).*/\1/p')
limit=$(echo "$mline" | sed -n 's/.*(peak \([0-9]*\), limit \([0-9]*\)).*/\2/p')
[ -n "$misses" ] && [ "$misses" -gt 820 ] ||
	fail "paged map: $misses misses, not more than the map's 820 pages"
[ -n "$peak" ] && [ "$peak" -le "$limit" ] || fail "paged map: peak $peak over the limit $limit"
step "kill -9 the daemon with the paged map, start again, verify"
kill -9 $pid
wait $pid 2>/dev/null
start_daemon "emulated QLC, paged map, after kill -9" $emu_conf
grep -q "recovered map" /tmp/qlcshaped.log || fail "no map recovery reported (paged map)"
paged_fio verify
stop_daemon "emulated QLC, paged map, after the kill"
start_daemon "emulated QLC, paged map, clean restart" $emu_conf
paged_fio verify
stop_daemon "emulated QLC, paged map, clean restart"
rm -f /tmp/emu-qlc.img /tmp/emu-fast.img
