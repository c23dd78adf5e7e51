/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: traces (bench/trace*.c), every format. Byte 0 of the input
 * picks the options: bits 0-1 the format (auto, mqsim, msr, iolog), bit 2
 * untimed replay, bit 3 a time scale of 1000 instead of 1, bit 4 wrapping
 * into a span of 1 GiB at 4 MiB, bits 5-7 when not 0 the formats added
 * after (1 blktrace, 2 blkparse, 3 libcachesim, 4 csv with the column map
 * "time:1:us,op:2,offset:3:sector,size:4", 5 auto with that map, 6 and 7
 * auto); the rest is the trace file (a blktrace binary one too). A refusal
 * must name the file and hold no control bytes. Every request read must be 4 KiB
 * aligned, not empty, at most QS_TRACE_MAX_IO, inside the span when there
 * is one, and (timed) no later than QS_TRACE_MAX_NS after the first (the
 * reader tolerates disorder, so no order is checked).
 */
#include <stdio.h>
#include <string.h>

#include "../../bench/trace.h"
#include "../../bench/workload.h"
#include "fz_msg.h"

#define FZ_RECORDS 20000
#define FZ_SPAN_OFF (4ull << 20)
#define FZ_SPAN_LEN (1ull << 30)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qs_trace_opts o = {.timescale = 1.0};
	struct qs_trace *t;
	struct qs_io io;
	char err[1024] = "";
	const char *path;
	int rc;

	if (size < 1)
		return 0;
	static const enum qs_trace_format later[] = {
		QS_TRACE_BLKTRACE, QS_TRACE_BLKPARSE, QS_TRACE_LCS, QS_TRACE_CSV, QS_TRACE_AUTO,
		QS_TRACE_AUTO, QS_TRACE_AUTO};
	unsigned hi = data[0] >> 5;
	o.format = hi ? later[hi - 1] : (enum qs_trace_format)(data[0] & 3);
	if (hi == 4 || hi == 5)
		qs_trace_columns_parse("time:1:us,op:2,offset:3:sector,size:4", &o.cols, err,
				       sizeof(err));
	o.ignore_time = data[0] & 4;
	if (data[0] & 8)
		o.timescale = 1000.0;
	if (data[0] & 16) {
		o.span_off = FZ_SPAN_OFF;
		o.span_len = FZ_SPAN_LEN;
	}
	path = fz_file(data + 1, size - 1, ".trace");
	rc = qs_trace_open(path, &o, &t, err, sizeof(err));
	fz_check_err("qs_trace_open", rc, err, path);
	if (rc < 0)
		return 0;
	for (int i = 0; i < FZ_RECORDS; i++) {
		err[0] = 0;
		rc = qs_trace_next(t, &io, err, sizeof(err));
		fz_check_err("qs_trace_next", rc, err, path);
		if (rc <= 0)
			break;
		if (io.op == QS_IO_SYNC)
			continue;
		if (!io.len || io.len > QS_TRACE_MAX_IO || io.off % 4096 || io.len % 4096)
			fz_fail("record %d: [%llu, +%llu) empty, too large or not aligned", i,
				(unsigned long long)io.off, (unsigned long long)io.len);
		if (o.span_len && (io.off < o.span_off || io.off + io.len > o.span_off + o.span_len))
			fz_fail("record %d: [%llu, +%llu) outside the span", i,
				(unsigned long long)io.off, (unsigned long long)io.len);
		if (io.timed && io.at_ns > QS_TRACE_MAX_NS)
			fz_fail("record %d: at %llu ns, past the limit", i,
				(unsigned long long)io.at_ns);
	}
	qs_trace_close(t);
	return 0;
}
