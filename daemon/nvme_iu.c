/* SPDX-License-Identifier: MIT */
/* qs_iu: IU detection (Identify Namespace, sysfs, config, default). */
#include "nvme_iu.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libnvme.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static bool iu_ok(uint64_t v)
{
	return v >= QS_IU_MIN && v <= QS_IU_MAX && !(v & (v - 1));
}

int qs_iu_decode_id_ns(const struct nvme_id_ns *ns, struct qs_iu_nvme *out)
{
	unsigned fmt, ds;

	if (!(ns->nsfeat & NVME_NS_FEAT_IO_OPT))
		return -ENODATA;
	/* FLBAS: bits 3:0 index the format, bits 6:5 extend it beyond 16. */
	fmt = (ns->flbas & NVME_NS_FLBAS_LOWER_MASK) |
	      ((unsigned)(ns->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 1);
	if (fmt > ns->nlbaf || fmt >= 64)
		return -EINVAL;
	ds = ns->lbaf[fmt].ds; /* log2 of the data size */
	if (ds < 9 || ds > 16)
		return -EINVAL;
	out->lba_bytes = 1u << ds;
	/* 0-based counts of logical blocks. */
	out->npwg_bytes = ((uint64_t)le16toh(ns->npwg) + 1) << ds;
	out->npwa_bytes = ((uint64_t)le16toh(ns->npwa) + 1) << ds;
	out->nows_bytes = ((uint64_t)le16toh(ns->nows) + 1) << ds;
	return 0;
}

int qs_iu_from_nvme(const struct qs_iu_nvme *n, uint32_t *iu)
{
	uint64_t g = n->npwg_bytes, a = n->npwa_bytes, v;

	if (!g || !a)
		return -EINVAL;
	if (g % a && a % g)
		return -EINVAL;
	v = g > a ? g : a;
	if (!iu_ok(v))
		return -EINVAL;
	*iu = (uint32_t)v;
	return 0;
}

int qs_iu_from_sysfs(uint32_t min_io, uint32_t opt_io, uint32_t *iu)
{
	if (min_io > QS_IU_MIN && iu_ok(min_io)) {
		*iu = min_io;
		return 0;
	}
	if (opt_io > QS_IU_MIN && iu_ok(opt_io)) {
		*iu = opt_io;
		return 0;
	}
	return -ENODATA;
}

const char *qs_iu_source_name(enum qs_iu_source s)
{
	switch (s) {
	case QS_IU_NVME: return "nvme-identify";
	case QS_IU_SYSFS: return "sysfs";
	case QS_IU_CONFIG: return "config";
	case QS_IU_DEFAULT: return "default";
	}
	return "?";
}

static int iu_read_u32(const char *path, uint32_t *v)
{
	FILE *f = fopen(path, "re");
	unsigned long x;
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%lu", &x) == 1;
	fclose(f);
	if (!ok || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/* queue/ of a whole disk, or of a partition's parent. */
static int iu_sysfs_queue(dev_t rdev, const char *name, uint32_t *v)
{
	char p[160];

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/%s", major(rdev), minor(rdev), name);
	if (iu_read_u32(p, v) == 0)
		return 0;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../queue/%s", major(rdev), minor(rdev),
		 name);
	return iu_read_u32(p, v);
}

void qs_iu_detect(const char *path, uint32_t config_iu, uint32_t *iu, enum qs_iu_source *source,
		  char *msg, size_t msglen)
{
	char nvme_why[128] = "not a block device", sysfs_why[96] = "not a block device";
	struct stat st;

	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		struct nvme_id_ns ns;
		struct qs_iu_nvme n;
		__u32 nsid;
		uint32_t mn = 0, op = 0;
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			snprintf(nvme_why, sizeof(nvme_why), "open: %s", strerror(errno));
		} else if (nvme_get_nsid(fd, &nsid) < 0) {
			snprintf(nvme_why, sizeof(nvme_why), "not an NVMe namespace");
		} else if (nvme_identify_ns(fd, nsid, &ns) != 0) {
			snprintf(nvme_why, sizeof(nvme_why), "Identify Namespace failed");
		} else if (qs_iu_decode_id_ns(&ns, &n) == -ENODATA) {
			snprintf(nvme_why, sizeof(nvme_why), "NSFEAT bit 4 clear (no NPWG/NPWA)");
		} else if (qs_iu_from_nvme(&n, iu) != 0) {
			snprintf(nvme_why, sizeof(nvme_why),
				 "unusable NPWG %llu / NPWA %llu bytes (LBA %u)",
				 (unsigned long long)n.npwg_bytes,
				 (unsigned long long)n.npwa_bytes, n.lba_bytes);
		} else {
			close(fd);
			*source = QS_IU_NVME;
			snprintf(msg, msglen,
				 "%s: IU %u bytes from nvme-identify (NPWG %llu, NPWA %llu, NOWS "
				 "%llu bytes, LBA %u)",
				 path, *iu, (unsigned long long)n.npwg_bytes,
				 (unsigned long long)n.npwa_bytes,
				 (unsigned long long)n.nows_bytes, n.lba_bytes);
			return;
		}
		if (fd >= 0)
			close(fd);
		if (iu_sysfs_queue(st.st_rdev, "minimum_io_size", &mn) ||
		    iu_sysfs_queue(st.st_rdev, "optimal_io_size", &op)) {
			snprintf(sysfs_why, sizeof(sysfs_why), "queue limits unreadable");
		} else if (qs_iu_from_sysfs(mn, op, iu) == 0) {
			*source = QS_IU_SYSFS;
			snprintf(msg, msglen,
				 "%s: IU %u bytes from sysfs (minimum_io_size %u, optimal_io_size "
				 "%u; nvme: %s)",
				 path, *iu, mn, op, nvme_why);
			return;
		} else {
			snprintf(sysfs_why, sizeof(sysfs_why),
				 "minimum_io_size %u, optimal_io_size %u say nothing", mn, op);
		}
	}
	if (config_iu) {
		*iu = config_iu;
		*source = QS_IU_CONFIG;
		snprintf(msg, msglen, "%s: IU %u bytes from config (nvme: %s; sysfs: %s)", path,
			 *iu, nvme_why, sysfs_why);
		return;
	}
	*iu = QS_IU_FALLBACK;
	*source = QS_IU_DEFAULT;
	snprintf(msg, msglen,
		 "%s: IU %u bytes by default, nothing reported it (nvme: %s; sysfs: %s); set "
		 "devices.iu if the drive's IU differs",
		 path, *iu, nvme_why, sysfs_why);
}
