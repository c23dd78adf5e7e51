/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: bench job files (bench/job.c) and the workload generator
 * (bench/workload.c). The input is the whole job file, loaded for a device
 * of FZ_CAP bytes. A refusal must name the file and hold no control bytes.
 * For an accepted file, every clone of every generated job (at most
 * FZ_CLONES of each) produces up to FZ_IOS I/Os, each of which must lie in
 * the clone's span and on the device, 4 KiB aligned, not empty, at most bs
 * long, and, when timed, not earlier than the one before. Trace jobs are not
 * opened (their path is the trace harness's input, not this one's).
 */
#include <stdio.h>
#include <string.h>

#include "../../bench/job.h"
#include "../../bench/workload.h"
#include "fz_msg.h"

#define FZ_CAP (1ull << 30)
#define FZ_CLONES 4u
#define FZ_IOS 2000

static void fz_stream(const struct qs_job *j, unsigned clone)
{
	struct qs_wl *w;
	struct qs_io io;
	uint64_t soff, slen, last_at = 0;
	char err[512] = "";
	int rc = qs_wl_open(j, clone, 12, &w, err, sizeof(err));

	fz_check_err("qs_wl_open", rc, err, NULL);
	if (rc < 0)
		return;
	qs_wl_span(w, &soff, &slen);
	if (soff + slen > FZ_CAP || soff + slen < soff)
		fz_fail("job %s clone %u: span [%llu, +%llu) past the device", j->name, clone,
			(unsigned long long)soff, (unsigned long long)slen);
	for (int i = 0; i < FZ_IOS; i++) {
		rc = qs_wl_next(w, &io);
		if (rc < 0)
			fz_fail("job %s: qs_wl_next: %s", j->name, qs_wl_error(w));
		if (rc == 0)
			break;
		if (io.op == QS_IO_SYNC)
			continue;
		if (!io.len || io.len > j->bs || io.off % 4096 || io.len % 4096 ||
		    io.off < soff || io.off + io.len > soff + slen)
			fz_fail("job %s clone %u: I/O %d [%llu, +%llu) outside span [%llu, +%llu) "
				"or not aligned (bs %llu)", j->name, clone, i,
				(unsigned long long)io.off, (unsigned long long)io.len,
				(unsigned long long)soff, (unsigned long long)slen,
				(unsigned long long)j->bs);
		if (io.timed && io.at_ns < last_at)
			fz_fail("job %s clone %u: I/O %d at %llu ns, before the previous (%llu)",
				j->name, clone, i, (unsigned long long)io.at_ns,
				(unsigned long long)last_at);
		last_at = io.at_ns;
	}
	qs_wl_close(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".fio");
	struct qs_job_file *f = NULL;
	char err[1024] = "";
	int rc = qs_job_file_load(path, FZ_CAP, &f, err, sizeof(err));

	fz_check_err("qs_job_file_load", rc, err, path);
	if (rc < 0)
		return 0;
	for (size_t i = 0; i < f->njobs; i++) {
		const struct qs_job *j = &f->jobs[i];
		if (j->trace)
			continue;
		for (unsigned c = 0; c < j->numjobs && c < FZ_CLONES; c++)
			fz_stream(j, c);
	}
	qs_job_file_free(f);
	return 0;
}
