/* SPDX-License-Identifier: MIT */
/* qs_iu: decoding canned Identify Namespace data, the sysfs rule, the fallback chain. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <libnvme.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../daemon/nvme_iu.h"
#include "ttmp.h"

_Static_assert(sizeof(struct nvme_id_ns) == 4096, "Identify Namespace is 4 KiB");

/*
 * A raw 4096-byte Identify Namespace page, laid out by byte offset as in the
 * NVMe base specification (not through libnvme's struct), so the test also
 * checks that the decoder reads the right bytes:
 *   24 NSFEAT, 25 NLBAF (0-based), 26 FLBAS,
 *   64 NPWG, 66 NPWA, 68 NPDG, 70 NPDA, 72 NOWS (16-bit little-endian),
 *   128 + 4*i LBA format i: MS (16 bits), LBADS (8 bits), RP.
 */
struct canned {
	uint8_t nsfeat, nlbaf, flbas;
	uint16_t npwg, npwa, nows;
	uint8_t lbads[20];
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static struct nvme_id_ns *build(const struct canned *c)
{
	static uint8_t page[4096] __attribute__((aligned(8)));

	memset(page, 0, sizeof(page));
	page[24] = c->nsfeat;
	page[25] = c->nlbaf;
	page[26] = c->flbas;
	put16(page + 64, c->npwg);
	put16(page + 66, c->npwa);
	put16(page + 68, 0x1234); /* NPDG: must not be read as NPWG/NPWA */
	put16(page + 70, 0x4321);
	put16(page + 72, c->nows);
	for (int i = 0; i < 20; i++)
		page[128 + 4 * i + 2] = c->lbads[i];
	return (struct nvme_id_ns *)page;
}

/* A P5316-like namespace: 4 KiB LBA format 1, NPWG = NPWA = 16 blocks. */
static void test_qlc_4k(void **state)
{
	struct canned c = {.nsfeat = 0x10 | 0x1, .nlbaf = 1, .flbas = 1,
			   .npwg = 15, .npwa = 15, .nows = 63, .lbads = {9, 12}};
	struct qs_iu_nvme n;
	uint32_t iu = 0;

	(void)state;
	assert_int_equal(qs_iu_decode_id_ns(build(&c), &n), 0);
	assert_int_equal(n.lba_bytes, 4096);
	assert_int_equal(n.npwg_bytes, 65536);
	assert_int_equal(n.npwa_bytes, 65536);
	assert_int_equal(n.nows_bytes, 262144);
	assert_int_equal(qs_iu_from_nvme(&n, &iu), 0);
	assert_int_equal(iu, 65536);
}

/* The same drive formatted with 512-byte sectors: counts scale. */
static void test_qlc_512(void **state)
{
	struct canned c = {.nsfeat = 0x10, .nlbaf = 1, .flbas = 0x10 /* MSET bit */,
			   .npwg = 127, .npwa = 7, .nows = 127, .lbads = {9, 12}};
	struct qs_iu_nvme n;
	uint32_t iu = 0;

	(void)state;
	assert_int_equal(qs_iu_decode_id_ns(build(&c), &n), 0);
	assert_int_equal(n.lba_bytes, 512);
	assert_int_equal(n.npwg_bytes, 65536);
	assert_int_equal(n.npwa_bytes, 4096);
	assert_int_equal(qs_iu_from_nvme(&n, &iu), 0);
	assert_int_equal(iu, 65536); /* the larger of granularity and alignment */
}

/* FLBAS bits 6:5 extend the format index past 15. */
static void test_flbas_high_bits(void **state)
{
	struct canned c = {.nsfeat = 0x10, .nlbaf = 17, .flbas = 0x20 | 0x1,
			   .npwg = 31, .npwa = 31, .nows = 31};
	struct qs_iu_nvme n;

	(void)state;
	c.lbads[1] = 9;
	c.lbads[17] = 12;
	assert_int_equal(qs_iu_decode_id_ns(build(&c), &n), 0);
	assert_int_equal(n.lba_bytes, 4096);
	assert_int_equal(n.npwg_bytes, 131072);
	/* Index beyond NLBAF: invalid. */
	c.nlbaf = 16;
	assert_int_equal(qs_iu_decode_id_ns(build(&c), &n), -EINVAL);
}

static void test_not_reported(void **state)
{
	struct canned c = {.nsfeat = 0x0f, .nlbaf = 0, .flbas = 0,
			   .npwg = 15, .npwa = 15, .lbads = {12}};
	struct qs_iu_nvme n;

	(void)state;
	assert_int_equal(qs_iu_decode_id_ns(build(&c), &n), -ENODATA);
	/* Unusable LBA data size. */
	c.nsfeat = 0x10;
	c.lbads[0] = 0;
	assert_int_equal(qs_iu_decode_id_ns(build(&c), &n), -EINVAL);
}

static void test_unusable_values(void **state)
{
	struct qs_iu_nvme n = {.lba_bytes = 4096};
	uint32_t iu = 0;

	(void)state;
	/* Granularity and alignment that do not divide each other. */
	n.npwg_bytes = 65536;
	n.npwa_bytes = 12288;
	assert_int_equal(qs_iu_from_nvme(&n, &iu), -EINVAL);
	/* Not a power of two. */
	n.npwg_bytes = 196608;
	n.npwa_bytes = 4096;
	assert_int_equal(qs_iu_from_nvme(&n, &iu), -EINVAL);
	/* Too large. */
	n.npwg_bytes = 32u << 20;
	assert_int_equal(qs_iu_from_nvme(&n, &iu), -EINVAL);
	/* A TLC drive's 4 KiB is a valid answer. */
	n.npwg_bytes = 4096;
	assert_int_equal(qs_iu_from_nvme(&n, &iu), 0);
	assert_int_equal(iu, 4096);
}

static void test_sysfs_rule(void **state)
{
	uint32_t iu = 0;

	(void)state;
	assert_int_equal(qs_iu_from_sysfs(65536, 262144, &iu), 0);
	assert_int_equal(iu, 65536);
	assert_int_equal(qs_iu_from_sysfs(4096, 131072, &iu), 0);
	assert_int_equal(iu, 131072);
	assert_int_equal(qs_iu_from_sysfs(512, 0, &iu), -ENODATA);
	assert_int_equal(qs_iu_from_sysfs(4096, 0, &iu), -ENODATA);
	assert_int_equal(qs_iu_from_sysfs(4096, 196608, &iu), -ENODATA);
}

/* A regular file has neither Identify nor queue limits: config, then default. */
static void test_detect_file(void **state)
{
	char path[64], msg[512];
	enum qs_iu_source src;
	uint32_t iu = 0;

	(void)state;
	ttmp_file(path, sizeof(path), "iu", NULL, NULL);
	qs_iu_detect(path, 131072, &iu, &src, msg, sizeof(msg));
	assert_int_equal(src, QS_IU_CONFIG);
	assert_int_equal(iu, 131072);
	assert_non_null(strstr(msg, "config"));
	qs_iu_detect(path, 0, &iu, &src, msg, sizeof(msg));
	assert_int_equal(src, QS_IU_DEFAULT);
	assert_int_equal(iu, QS_IU_FALLBACK);
	assert_non_null(strstr(msg, "devices.iu"));
	assert_string_equal(qs_iu_source_name(QS_IU_NVME), "nvme-identify");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qlc_4k),
		cmocka_unit_test(test_qlc_512),
		cmocka_unit_test(test_flbas_high_bits),
		cmocka_unit_test(test_not_reported),
		cmocka_unit_test(test_unusable_values),
		cmocka_unit_test(test_sysfs_rule),
		cmocka_unit_test(test_detect_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
