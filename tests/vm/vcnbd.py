#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vcnbd: an NBD server with a volatile write cache, for the VM power-cut test.

  vcnbd.py --socket PATH --image FILE --seed N --stats FILE [--keep-cache] [--lie-flush]

Serves FILE over a Unix socket to one client (qemu's NBD block driver) and
behaves like a drive with a volatile write cache and no power-loss
protection: writes, trims and write-zeroes are visible to reads at once
but reach FILE only when a flush arrives. FUA is not advertised, so qemu
turns a FUA write into a write and a flush.

When the connection ends without NBD_CMD_DISC (qemu killed with SIGKILL:
the power cut), every write, trim and write-zeroes since the last flush is
independently kept, dropped or torn at 4 KiB (each 4 KiB-aligned piece of
it kept or dropped on its own), from a random stream seeded with --seed;
the kept parts reach FILE in arrival order. A clean end (NBD_CMD_DISC, as
qemu sends when the guest powers off) persists the cache, like a drive
told to shut down.

--keep-cache: the cut loses nothing (the drive has power-loss protection);
  used for the runs where only the other disk's cache is lost.
--lie-flush: acknowledge flushes without persisting anything (a broken
  drive), so the whole session is exposed to the cut; the checker's
  self-test must then find violations.

Writes one line to --stats at the end: what the cut did. The protocol
subset: fixed newstyle handshake, NBD_OPT_GO / NBD_OPT_INFO /
NBD_OPT_EXPORT_NAME (every other option is answered "unsupported", so
qemu falls back to simple replies), then READ, WRITE, FLUSH, TRIM,
WRITE_ZEROES and DISC.
"""
import argparse
import os
import random
import socket
import struct
import sys

BLK = 4096
ZERO = bytes(BLK)

# Handshake (all integers big-endian on the wire).
INIT_MAGIC = b"NBDMAGIC"
OPTS_MAGIC = 0x49484156454F5054  # "IHAVEOPT"
REP_MAGIC = 0x3E889045565A9
FLAG_FIXED_NEWSTYLE = 1 << 0
FLAG_NO_ZEROES = 1 << 1
OPT_EXPORT_NAME, OPT_ABORT, OPT_INFO, OPT_GO = 1, 2, 6, 7
REP_ACK, REP_INFO = 1, 3
REP_ERR_UNSUP = (1 << 31) + 1
INFO_EXPORT = 0
# Transmission flags: flush, trim and write-zeroes; no FUA, no multi-conn.
TFLAGS = (1 << 0) | (1 << 2) | (1 << 5) | (1 << 6)

REQ_MAGIC = 0x25609513
REPLY_MAGIC = 0x67446698
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM, CMD_WRITE_ZEROES = 0, 1, 2, 3, 4, 6
EINVAL = 22


def block_pieces(off, length):
    """The 4 KiB-aligned pieces of bytes [off, off + length), in order: (block, offset
    in the block, bytes); only an unaligned head or tail is shorter than 4 KiB."""
    pos, end = off, off + length
    while pos < end:
        b = pos // BLK
        lo = pos - b * BLK
        hi = min(BLK, end - b * BLK)
        yield b, lo, hi - lo
        pos = b * BLK + hi


def recv_exact(conn, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


class Drive:
    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR)
        self.size = os.fstat(self.fd).st_size
        self.cache = {}    # 4 KiB block number -> its 4096 bytes, not yet flushed
        self.pending = []  # (offset, length, data or None for zeroes), arrival order
        self.flushes = 0  # NBD_CMD_FLUSH received (acknowledged, honoured or not)

    def _block(self, b):
        got = self.cache.get(b)
        if got is not None:
            return got
        data = os.pread(self.fd, BLK, b * BLK)
        return data + bytes(BLK - len(data))

    def read(self, off, length):
        out = bytearray()
        for b, lo, n in block_pieces(off, length):
            out += self._block(b)[lo:lo + n]
        return bytes(out)

    def write(self, off, length, data):
        """data None: zeroes (trim and write-zeroes both read back as zeroes)."""
        self.pending.append((off, length, data))
        for b, lo, n in block_pieces(off, length):
            at = b * BLK + lo - off  # where the piece starts in data
            if n == BLK:
                blk = ZERO if data is None else data[at:at + BLK]
            else:
                cur = bytearray(self._block(b))
                cur[lo:lo + n] = bytes(n) if data is None else data[at:at + n]
                blk = bytes(cur)
            self.cache[b] = blk

    def flush(self):
        # The image is a host file and the host does not crash in this test:
        # what is written to it survives qemu's SIGKILL, so no fsync.
        for b in sorted(self.cache):
            os.pwrite(self.fd, self.cache[b], b * BLK)
        self.cache.clear()
        self.pending.clear()

    def cut(self, rng):
        """The power cut: each unflushed write kept, dropped or torn at 4 KiB."""
        kept = dropped = torn = 0
        pieces_kept = pieces = 0
        for off, length, data in self.pending:
            parts = [(b * BLK + lo, n) for b, lo, n in block_pieces(off, length)]
            fate = rng.randrange(3) if len(parts) > 1 else rng.randrange(2)
            if fate == 0:
                keep = parts
                kept += 1
            elif fate == 1:
                keep = []
                dropped += 1
            else:
                keep = [p for p in parts if rng.randrange(2)]
                torn += 1
                pieces += len(parts)
                pieces_kept += len(keep)
            for pos, n in keep:
                os.pwrite(self.fd, bytes(n) if data is None else data[pos - off:pos - off + n], pos)
        self.cache.clear()
        self.pending.clear()
        return kept, dropped, torn, pieces_kept, pieces


def negotiate(conn, drive):
    """Fixed newstyle handshake; returns once the client chose the export."""
    conn.sendall(INIT_MAGIC + struct.pack(">QH", OPTS_MAGIC, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES))
    (cflags,) = struct.unpack(">I", recv_exact(conn, 4))
    while True:
        magic, opt, length = struct.unpack(">QII", recv_exact(conn, 16))
        if magic != OPTS_MAGIC:
            raise ValueError("bad option magic %#x" % magic)
        payload = recv_exact(conn, length)
        if opt == OPT_EXPORT_NAME:
            # No reply header: size, flags, then padding unless NO_ZEROES.
            conn.sendall(struct.pack(">QH", drive.size, TFLAGS) +
                         (b"" if cflags & FLAG_NO_ZEROES else bytes(124)))
            return
        if opt in (OPT_GO, OPT_INFO):
            info = struct.pack(">HQH", INFO_EXPORT, drive.size, TFLAGS)
            conn.sendall(struct.pack(">QIII", REP_MAGIC, opt, REP_INFO, len(info)) + info)
            conn.sendall(struct.pack(">QIII", REP_MAGIC, opt, REP_ACK, 0))
            if opt == OPT_GO:
                return
            continue
        if opt == OPT_ABORT:
            conn.sendall(struct.pack(">QIII", REP_MAGIC, opt, REP_ACK, 0))
            raise EOFError
        conn.sendall(struct.pack(">QIII", REP_MAGIC, opt, REP_ERR_UNSUP, 0))


def serve(conn, drive, lie_flush):
    """Transmission phase; returns True on NBD_CMD_DISC, False on a cut."""
    while True:
        try:
            hdr = recv_exact(conn, 28)
        except (EOFError, ConnectionResetError):
            return False
        magic, _flags, cmd, handle, off, length = struct.unpack(">IHHQQI", hdr)
        if magic != REQ_MAGIC:
            raise ValueError("bad request magic %#x" % magic)
        err, data = 0, b""
        if cmd == CMD_WRITE:
            try:
                payload = recv_exact(conn, length)
            except (EOFError, ConnectionResetError):
                return False  # cut while the write's data was arriving: never acknowledged
        if cmd != CMD_FLUSH and cmd != CMD_DISC and off + length > drive.size:
            err = EINVAL
        elif cmd == CMD_READ:
            data = drive.read(off, length)
        elif cmd == CMD_WRITE:
            drive.write(off, length, payload)
        elif cmd in (CMD_TRIM, CMD_WRITE_ZEROES):
            drive.write(off, length, None)
        elif cmd == CMD_FLUSH:
            drive.flushes += 1
            if not lie_flush:
                drive.flush()
        elif cmd == CMD_DISC:
            return True
        else:
            err = EINVAL
        try:
            conn.sendall(struct.pack(">IIQ", REPLY_MAGIC, err, handle) + data)
        except (BrokenPipeError, ConnectionResetError):
            return False


def main():
    ap = argparse.ArgumentParser(description="NBD server with a volatile write cache")
    ap.add_argument("--socket", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--stats", required=True)
    ap.add_argument("--keep-cache", action="store_true")
    ap.add_argument("--lie-flush", action="store_true")
    a = ap.parse_args()
    try:
        drive = Drive(a.image)
    except OSError as e:
        sys.exit("vcnbd: %s: %s (create the image first, e.g. truncate -s 64M %s)"
                 % (a.image, e.strerror, a.image))
    if os.path.exists(a.socket):
        os.unlink(a.socket)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(a.socket)
    srv.listen(1)
    conn, _ = srv.accept()
    srv.close()
    os.unlink(a.socket)
    try:
        negotiate(conn, drive)
        clean = serve(conn, drive, a.lie_flush)
    except EOFError:
        clean = False
    name = os.path.basename(a.image)
    if clean or a.keep_cache:
        n = len(drive.pending)
        drive.flush()
        line = "%s: %s, %d flushes, %d unflushed writes persisted" % (
            name, "clean disconnect" if clean else "cut, cache kept (--keep-cache)",
            drive.flushes, n)
    else:
        k, d, t, pk, p = drive.cut(random.Random(a.seed))
        line = ("%s: cut, %d flushes%s, unflushed writes: %d kept, %d dropped, %d torn "
                "(%d of %d 4 KiB pieces kept)" % (name, drive.flushes,
                " (lied about)" if a.lie_flush else "", k, d, t, pk, p))
    with open(a.stats, "w") as f:
        f.write(line + "\n")


if __name__ == "__main__":
    main()
