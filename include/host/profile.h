/* SPDX-License-Identifier: MIT */
/*
 * Drive profiles: the parameters of one device model (include/host/model.h), read
 * from an INI file in conf/profiles/. Every key and its meaning is listed in
 * docs/MODEL.md; each profile file says where each figure comes from.
 */
#ifndef QS_HOST_PROFILE_H
#define QS_HOST_PROFILE_H

#include <stddef.h>
#include <stdint.h>

enum qs_media {
	QS_MEDIA_NAND = 0, /* out-of-place: mapping, write buffer, GC */
	QS_MEDIA_SCM = 1,  /* in-place (Optane-class): no IU penalty, no GC */
};

/* The write pattern an endurance rating was measured with (fio's rw names). */
enum qs_endurance_rw {
	QS_ENDURANCE_NONE = 0,	    /* no rating in the profile */
	QS_ENDURANCE_RANDWRITE = 1, /* random writes of endurance_bs_bytes */
	QS_ENDURANCE_WRITE = 2,	    /* sequential writes of endurance_bs_bytes */
};

struct qs_profile {
	char name[64];
	enum qs_media media;
	uint64_t capacity_bytes;   /* user capacity of the real drive */
	uint32_t iu_bytes;	   /* indirection unit (mapping granularity) */
	double op_pct;		   /* spare NAND over user capacity, percent */
	uint32_t channels;
	uint32_t dies_per_channel;
	uint32_t unit_ius;	   /* IUs in one die program unit */
	uint32_t superblocks;	   /* GC units the model keeps at any scale */
	uint32_t gc_free_low;	   /* GC runs when fewer free superblocks */
	uint64_t t_read_ns;	   /* die read of one IU (array to register) */
	uint64_t t_prog_ns;	   /* die program of one program unit */
	uint64_t t_erase_ns;	   /* die block erase */
	uint32_t block_units;	   /* program units in one real erase block */
	double channel_mbps;	   /* one channel's transfer rate, MB/s */
	double link_read_mbps;	   /* host link, device to host, MB/s */
	double link_write_mbps;	   /* host link, host to device, MB/s */
	uint32_t ctrl_units;	   /* controller cores handling commands */
	uint64_t ctrl_ns;	   /* controller time per command */
	uint64_t write_buffer_bytes; /* PLP-protected DRAM write buffer */
	int plp;		   /* 1: power-loss protected (flush is free) */
	uint32_t ftl_regions;	   /* LBA regions with their own spare and GC (0 = 1) */
	uint32_t prog_passes;	   /* passes of one unit program; reads wait for one (0 = 1) */
	uint32_t unit_major;	   /* 1: a stream fills one die's unit at a time */
	uint32_t gc_paced;	   /* 1: GC a little per host unit near the quota */
	/*
	 * Power (all three or none; 0: no cap): the drive's active and idle
	 * power, W, and what one die program draws, mW. Die programs share
	 * power_w - power_idle_w: at most that over prog_mw run at once.
	 */
	double power_w, power_idle_w, prog_mw;
	/*
	 * Endurance rating of the real drive (capacity_bytes): petabytes
	 * (1e15 bytes) written over its life with the pattern endurance_rw of
	 * endurance_bs_bytes blocks, a whole number of IUs. All three are set
	 * or none (endurance_pbw 0, endurance_rw QS_ENDURANCE_NONE): the
	 * loader checks it. The bench's projected drive life uses it.
	 */
	double endurance_pbw;
	enum qs_endurance_rw endurance_rw;
	uint32_t endurance_bs_bytes;
	/*
	 * NAND bytes the drive programs per byte written under that pattern,
	 * its GC included (1..100; 0 = not given, taken as 1): the rating
	 * times this is the drive's NAND program budget, which the bench's
	 * client-bytes-writable figure divides by a run's NAND bytes per
	 * client byte. Optional, only with a rating.
	 */
	double endurance_prog_amp;
};

/*
 * Load a profile from an INI file (section [drive]). On error returns
 * -EINVAL (or -errno when the file cannot be read) and writes into err a
 * message naming the file, the line, the key, the value and the allowed
 * range. p is owned by the caller and fully written on success.
 */
int qs_profile_load(const char *path, struct qs_profile *p, char *err,
		    size_t errlen);

/*
 * Find a shipped data file, file (e.g. "profiles/p5316-30t.ini" or
 * "bench/default.fio"), in the places it can be: ./conf/FILE (a source
 * tree, or a copy the user edits), then PREFIX/share/qlcshape/FILE for a
 * program running as PREFIX/bin/NAME (where `make install` puts conf/'s
 * profiles and jobs; found from /proc/self/exe, so no path is compiled
 * in). Writes the path found into path and returns 0; else -ENOENT, with
 * both places tried named in err. Any time, any thread.
 */
int qs_data_find(const char *file, char *path, size_t pathlen, char *err, size_t errlen);

/*
 * Find a profile: NAME itself when it contains a '/' or ends in ".ini";
 * else NAME.ini in $QS_PROFILE_DIR when that is set, else through
 * qs_data_find("profiles/NAME.ini"). Writes the path into path. Returns 0,
 * or -ENOENT with the places tried in err.
 */
int qs_profile_find(const char *name, char *path, size_t pathlen, char *err, size_t errlen);

/*
 * qs_profile_find without the error: the path found, or the first place
 * tried (so that loading it reports the missing file by name).
 */
void qs_profile_path(const char *name, char *buf, size_t buflen);

/* fio's name of an endurance pattern ("randwrite", "write", "none"). */
const char *qs_profile_endurance_rw_name(enum qs_endurance_rw rw);

/* Total dies of the profile. */
static inline uint32_t qs_profile_dies(const struct qs_profile *p)
{
	return p->channels * p->dies_per_channel;
}

#endif
