/* SPDX-License-Identifier: MIT */
/*
 * qs_config: one daemon instance's INI file (conf/qlcshaped.ini documents
 * every key).
 *
 * Parsing is strict: a malformed line, a key outside a section, an unknown
 * section or key, a repeated key, or a value outside its range stops the
 * load with one message that names the file, the line, the key, the value
 * and what is allowed. The reader is the project's own (include/host/config.c,
 * docs/DAEMON.md says why not iniparser): every refusal names the line.
 *
 * Engine settings are an overlay: qs_config_engine_conf() writes only the
 * keys the file sets over a struct qs_engine_conf the caller filled with the
 * engine's defaults (qs_engine_conf_default), so the defaults live in one
 * place, the engine. Consistency between fields is qs_engine_conf_check's.
 */
#ifndef QS_HOST_CONFIG_H
#define QS_HOST_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qlcshape/engine.h"

enum qs_backend_kind {
	QS_BACKEND_ENGINE = 0, /* the write-shaping engine (production) */
	QS_BACKEND_RAM = 1,    /* a RAM disk, no engine: frontend tests only */
};

#define QS_CONFIG_MAX_KEYS 64
/* The daemon's ring holds every ublk command (queues x queue_depth) plus
 * this many entries for the engine's own I/O; the kernel refuses a ring
 * over QS_CONFIG_RING_MAX entries with a bare EINVAL, so the reader
 * refuses the keys that would need one. */
#define QS_CONFIG_RING_EXTRA 512
#define QS_CONFIG_RING_MAX 32768 /* IORING_MAX_ENTRIES */
/* The longest line the reader takes, in bytes (newline not counted). */
#define QS_CONFIG_MAX_LINE 4096

struct qs_config {
	char *file;	      /* the file loaded */
	/* [devices] */
	char *fast;	      /* fast-tier (log) device or file; NULL if unset */
	char *qlc;	      /* QLC device or file, or "emu:PROFILE"; NULL for ram */
	uint32_t iu_bytes;    /* 0 = auto-detect */
	/* [engine] and [policy]: meaningful only where qs_config_is_set() */
	struct qs_engine_conf engine;
	/* [daemon] */
	char *control_socket;
	bool drain_on_stop;
	enum qs_backend_kind backend;
	uint64_t ram_size;    /* backend = ram: device size */
	/* [emu]: the emulated QLC, when devices.qlc = emu:PROFILE */
	char *emu_backing;	  /* "ram", "none" or an absolute path; NULL: ram */
	uint64_t emu_size;	  /* the emulated drive's size in bytes */
	uint64_t emu_model_size;  /* the model's capacity; 0: auto (emu_size) */
	int emu_precondition;	  /* enum qs_emu_precond: seq, random, none */
	/* [ublk] */
	uint32_t queues;
	uint32_t queue_depth;
	uint32_t max_io_bytes; /* per-request buffer, also max_sectors */
	int32_t dev_id;	       /* -1: the kernel picks */
	bool user_recovery;
	/* which table keys the file set (internal to the parser) */
	bool set[QS_CONFIG_MAX_KEYS];
	int line[QS_CONFIG_MAX_KEYS];
};

/*
 * Load and validate path into c (zeroed first; defaults for the non-engine
 * keys are filled in). Returns 0, or -EINVAL / -errno with one message in
 * err. On success the caller owns c's strings and frees them with
 * qs_config_free(); on error nothing needs freeing.
 */
int qs_config_load(struct qs_config *c, const char *path, char *err, size_t errlen);
void qs_config_free(struct qs_config *c);

/* Whether the file set "section.key" (e.g. "engine.log_qd"). */
bool qs_config_is_set(const struct qs_config *c, const char *name);

/* The line that set "section.key", or 0 if the file did not set it. */
int qs_config_key_line(const struct qs_config *c, const char *name);

/*
 * Check the finished engine settings (defaults + overlay + IU) with
 * qs_engine_conf_check, and with qlc_bytes != 0 against a QLC of that size
 * too (qs_engine_conf_check_qlc: the client size, log placement's bands),
 * and with fast_bytes != 0 as well engine.dram_limit against both devices
 * (qs_engine_conf_check_dram);
 * on error write a message naming the file, the line and key responsible
 * (or that the value is the engine's default) and the engine's reason.
 * Returns 0 or -EINVAL.
 */
int qs_config_check_engine(const struct qs_config *c, const struct qs_engine_conf *conf,
			   uint64_t qlc_bytes, uint64_t fast_bytes, char *err, size_t errlen);

/* Write the engine keys the file set over conf (see above). */
void qs_config_engine_conf(const struct qs_config *c, struct qs_engine_conf *conf);

/*
 * devices.fast and devices.qlc must be two things: the same regular file
 * (or a link to it, or a second name of its inode) or the same block
 * device would put the log into the QLC's data. 0, or -EINVAL with a
 * message naming both keys, their lines and paths. A path that cannot be
 * stat'ed is left to the open, which names it; overlapping partitions of
 * one disk are not detected.
 */
int qs_config_check_devices(const struct qs_config *c, char *err, size_t errlen);

/*
 * qlcshaped --format-only: whether this config has a log to format (the
 * engine backend in cache mode). 0, or -EINVAL with a message naming the
 * key (and its line) that leaves no log: --format-only used to say "log
 * formatted" and exit 0 in passthrough mode.
 */
int qs_config_check_format_only(const struct qs_config *c, char *err, size_t errlen);

/*
 * The log's geometry is fixed at format: a later change of engine.segment_blocks
 * in the file has no effect until --format (the engine reads the segment
 * size from the superblock; other mismatches, of placement, band size, IU
 * and size, the engine refuses). sb_blocks holds the fast device's first
 * two 4 KiB blocks (the superblock copies), fast_size its size. Returns 1
 * with a warning in msg naming the file, line, key, the file's value, the
 * log's value and that --format applies it (erasing the log); 0 when the
 * file agrees, does not set the key, or no valid superblock is there (the
 * open reports that). Any thread; reads only.
 */
int qs_config_check_log(const struct qs_config *c, const void *sb_blocks, uint64_t fast_size,
			char *msg, size_t len);

/*
 * Parse a byte size: a number with an optional K, M, G or T suffix (powers
 * of 1024, "KiB" and "k" accepted too). Returns 0 or -EINVAL (also on
 * overflow). Used by the config and by command-line options.
 */
int qs_config_parse_size(const char *s, uint64_t *out);

#endif
