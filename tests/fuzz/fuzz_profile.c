/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: drive profiles (include/host/profile.c) and the model they
 * build (include/host/model.c). The input is the whole profile. A refusal
 * by the loader or the model must name the file or the key and hold no
 * control bytes. A profile both accept is modelled at a small scale (at most
 * FZ_IUS IUs): a sequential fill, then FZ_WRITES writes, reads and discards
 * of sizes and places drawn from the input, after which the model's own
 * consistency check (qs_model_check) must pass and no completion may come
 * before its submission.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fz_msg.h"
#include "host/model.h"
#include "host/profile.h"

#define FZ_IUS 16384ull
#define FZ_WRITES 300

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".ini");
	struct qs_profile p;
	struct qs_model *m;
	char err[1024] = "";
	uint64_t scaled, cap, t, x = 0x9e3779b97f4a7c15ull;
	int rc = qs_profile_load(path, &p, err, sizeof(err));

	fz_check_err("qs_profile_load", rc, err, path);
	if (rc < 0)
		return 0;
	scaled = qs_model_default_bytes(&p);
	if (scaled > FZ_IUS * p.iu_bytes)
		scaled = FZ_IUS * p.iu_bytes;
	err[0] = 0;
	rc = qs_model_create(&m, &p, scaled, err, sizeof(err));
	fz_check_err("qs_model_create", rc, err, NULL);
	if (rc == -EINVAL && !strstr(err, "'"))
		fz_fail("qs_model_create: the refusal names no key: %s", err);
	if (rc < 0)
		return 0;
	cap = qs_model_capacity(m);
	t = qs_model_fill_seq(m, 0, 0, cap);
	for (size_t i = 0; i < size; i++)
		x = (x ^ data[i]) * 0x100000001b3ull;
	for (int i = 0; i < FZ_WRITES && cap; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t len = (1 + x % 64) * 4096, off = (x >> 20) % cap / 4096 * 4096;
		int op = (x >> 8) % 8 == 0 ? QS_OP_READ : (x >> 8) % 8 == 1 ? QS_OP_DISCARD
			 : (x >> 8) % 8 == 2 ? QS_OP_FLUSH : QS_OP_WRITE;
		if (off + len > cap)
			len = cap - off;
		if (!len)
			continue;
		uint64_t done = qs_model_submit(m, t, op, off, len);
		if (done < t)
			fz_fail("op %d [%llu, +%llu) completes at %llu, before its submission at %llu",
				op, (unsigned long long)off, (unsigned long long)len,
				(unsigned long long)done, (unsigned long long)t);
		t += 1000 + (x >> 40) % 100000;
	}
	if (qs_model_check(m))
		fz_fail("qs_model_check: the model's counters disagree with its map");
	qs_model_free(m);
	return 0;
}
