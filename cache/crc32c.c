/* SPDX-License-Identifier: MIT */
/*
 * CRC32C. Every log record's data is checksummed on the write path, so this
 * is on the engine's hottest path: a 4 KiB block must cost well under the
 * time of a 4 KiB memcpy.
 *
 * Hardware path: the crc32 instruction has a latency of 3 cycles and a
 * throughput of 1 per cycle, so one dependent chain runs at a third of the
 * possible speed. We run three independent chains over three adjacent
 * stretches of STRETCH bytes and merge them. Merging needs "advance this CRC
 * state over STRETCH zero bytes", a linear map on 32 bits, which we apply
 * with four 256-entry tables built once at start-up.
 */
#include <stdbool.h>
#include <string.h>

#include "qlcshape/crc32c.h"

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */
#define STRETCH 1360u	 /* 3 * 1360 = 4080: one chunk per 4 KiB block */

static uint32_t sw_table[8][256];
static uint32_t shift_table[4][256]; /* advance a state over STRETCH zeroes */
static bool have_hw;

/* Multiply a and b modulo POLY (reflected bit order). */
static uint32_t gf_mul(uint32_t a, uint32_t b)
{
	uint32_t p = 0;
	for (int i = 0; i < 32; i++) {
		if (a & 0x80000000u)
			p ^= b;
		a <<= 1;
		b = (b & 1) ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

/* x^(8n) mod POLY, reflected. */
static uint32_t xpow8n(uint64_t n)
{
	uint32_t result = 0x80000000u; /* x^0 */
	uint32_t sq = 0x00800000u;     /* x^8 */
	while (n) {
		if (n & 1)
			result = gf_mul(result, sq);
		sq = gf_mul(sq, sq);
		n >>= 1;
	}
	return result;
}

__attribute__((constructor)) static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
		sw_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			sw_table[t][i] = (sw_table[t - 1][i] >> 8) ^
					 sw_table[0][sw_table[t - 1][i] & 0xff];
	uint32_t k = xpow8n(STRETCH);
	for (int j = 0; j < 4; j++)
		for (uint32_t v = 0; v < 256; v++)
			shift_table[j][v] = gf_mul(v << (8 * j), k);
	__builtin_cpu_init();
	have_hw = __builtin_cpu_supports("sse4.2");
}

static inline uint32_t shift_stretch(uint32_t s)
{
	return shift_table[0][s & 0xff] ^ shift_table[1][(s >> 8) & 0xff] ^
	       shift_table[2][(s >> 16) & 0xff] ^ shift_table[3][s >> 24];
}

static uint32_t sw_update(uint32_t s, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		s = (s >> 8) ^ sw_table[0][(s ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= s;
		s = sw_table[7][w & 0xff] ^ sw_table[6][(w >> 8) & 0xff] ^
		    sw_table[5][(w >> 16) & 0xff] ^ sw_table[4][(w >> 24) & 0xff] ^
		    sw_table[3][(w >> 32) & 0xff] ^ sw_table[2][(w >> 40) & 0xff] ^
		    sw_table[1][(w >> 48) & 0xff] ^ sw_table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		s = (s >> 8) ^ sw_table[0][(s ^ *p++) & 0xff];
	return s;
}

uint32_t qs_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	return ~sw_update(~crc, buf, len);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t hw_update(uint32_t s,
							    const unsigned char *p,
							    size_t len)
{
	uint64_t s0 = s;
	while (len && ((uintptr_t)p & 7)) {
		s0 = __builtin_ia32_crc32qi((uint32_t)s0, *p++);
		len--;
	}
	while (len >= 3 * STRETCH) {
		uint64_t s1 = 0, s2 = 0, w0, w1, w2;
		const unsigned char *a = p, *b = p + STRETCH, *c = p + 2 * STRETCH;
		for (unsigned i = 0; i < STRETCH; i += 8) {
			memcpy(&w0, a + i, 8);
			memcpy(&w1, b + i, 8);
			memcpy(&w2, c + i, 8);
			s0 = __builtin_ia32_crc32di(s0, w0);
			s1 = __builtin_ia32_crc32di(s1, w1);
			s2 = __builtin_ia32_crc32di(s2, w2);
		}
		/* state(A|B|C) = shift(shift(sA) ^ sB) ^ sC, sB/sC from zero */
		s0 = shift_stretch(shift_stretch((uint32_t)s0) ^ (uint32_t)s1) ^ (uint32_t)s2;
		p += 3 * STRETCH;
		len -= 3 * STRETCH;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		s0 = __builtin_ia32_crc32di(s0, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		s0 = __builtin_ia32_crc32qi((uint32_t)s0, *p++);
	return (uint32_t)s0;
}
#endif

uint32_t qs_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (have_hw)
		return ~hw_update(~crc, buf, len);
#endif
	return ~sw_update(~crc, buf, len);
}
