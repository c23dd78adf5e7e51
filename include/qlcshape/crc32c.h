/* SPDX-License-Identifier: MIT */
#ifndef QLCSHAPE_CRC32C_H
#define QLCSHAPE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC32C (Castagnoli), as used by iSCSI, ext4 and NVMe. Start with crc = 0;
 * chaining is allowed: qs_crc32c(qs_crc32c(0, a, n), b, m) equals the CRC
 * of a followed by b. Uses the SSE4.2 crc32 instruction when the CPU has it
 * (checked once at start-up), else a table. Pure function, thread-safe.
 */
uint32_t qs_crc32c(uint32_t crc, const void *buf, size_t len);

/* The software implementation, exposed so tests can compare both paths. */
uint32_t qs_crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
