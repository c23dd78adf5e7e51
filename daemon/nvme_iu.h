/* SPDX-License-Identifier: MIT */
/*
 * qs_iu: finding the QLC drive's indirection unit (IU).
 *
 * Sources, first that answers wins, and the daemon logs which:
 *  1. NVMe Identify Namespace through libnvme: when NSFEAT bit 4 (OPTPERF)
 *     is set, NPWG (preferred write granularity), NPWA (preferred write
 *     alignment) and NOWS (optimal write size) are valid; each is 0-based and
 *     counts logical blocks of the namespace's current LBA format.
 *  2. sysfs queue/minimum_io_size and optimal_io_size of the block device
 *     (the kernel's NVMe driver derives io_min from NPWG, so this also covers
 *     drives behind a partition, dm or a driver that hides Identify).
 *  3. The config's devices.iu.
 *  4. 64 KiB, with a warning: over-estimating the IU costs a little host-side
 *     read-fill; under-estimating it costs the drive-side read-modify-write
 *     this daemon exists to avoid.
 *
 * Decoding is separate from I/O so tests can feed canned Identify data.
 */
#ifndef QS_NVME_IU_H
#define QS_NVME_IU_H

#include <stddef.h>
#include <stdint.h>

struct nvme_id_ns;

enum qs_iu_source {
	QS_IU_NVME = 0,
	QS_IU_SYSFS = 1,
	QS_IU_CONFIG = 2,
	QS_IU_DEFAULT = 3,
};

#define QS_IU_MIN 4096u
#define QS_IU_MAX (1u << 20) /* the engine's and ublk's largest I/O */
#define QS_IU_FALLBACK (64u << 10)

/* What Identify Namespace says, in bytes. */
struct qs_iu_nvme {
	uint32_t lba_bytes;  /* current LBA format's data size */
	uint64_t npwg_bytes; /* preferred write granularity */
	uint64_t npwa_bytes; /* preferred write alignment */
	uint64_t nows_bytes; /* optimal write size */
};

/*
 * Decode ns (as returned by the device: little-endian fields). Returns 0,
 * -ENODATA when NSFEAT bit 4 is clear (the fields are not reported), or
 * -EINVAL when the LBA format is unusable.
 */
int qs_iu_decode_id_ns(const struct nvme_id_ns *ns, struct qs_iu_nvme *out);

/*
 * The IU those fields imply: the larger of NPWG and NPWA when one divides
 * the other (a write must be both whole and aligned to avoid the drive's
 * read-modify-write), if that is a power of two in QS_IU_MIN..QS_IU_MAX.
 * NOWS, a throughput hint, does not enter. Returns 0 or -EINVAL.
 */
int qs_iu_from_nvme(const struct qs_iu_nvme *n, uint32_t *iu);

/*
 * The IU sysfs values imply: minimum_io_size when it is a power of two above
 * 4096 (a plain 512/4096 says nothing beyond the logical block size) and at
 * most QS_IU_MAX. optimal_io_size is used when minimum_io_size says nothing
 * and it qualifies the same way. Returns 0 or -ENODATA.
 */
int qs_iu_from_sysfs(uint32_t min_io, uint32_t opt_io, uint32_t *iu);

/*
 * Run the chain above for path (a block device, a regular file, or anything
 * else: then only config and default apply). config_iu is 0 for "auto".
 * Always succeeds: writes the IU, its source and a one-line account for the
 * log into msg. Needs CAP_SYS_ADMIN for Identify; without it, sysfs.
 */
void qs_iu_detect(const char *path, uint32_t config_iu, uint32_t *iu,
		  enum qs_iu_source *source, char *msg, size_t msglen);

const char *qs_iu_source_name(enum qs_iu_source s);

#endif
