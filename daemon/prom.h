/* SPDX-License-Identifier: MIT */
/*
 * qs_prom: one daemon instance's statistics in the Prometheus text
 * exposition format (version 0.0.4), ready for node_exporter's textfile
 * collector.
 *
 * A pure function: it reads the structures it is given and writes text, no
 * I/O, no clock, no allocation, so the daemon (over the control socket) and
 * the qlcshape tool can both call it and tests can check every byte.
 *
 * Names follow the Prometheus conventions: the qlcshape_ prefix, base units
 * (bytes, seconds), counters end in _total, ratios are 0..1 and end in
 * _ratio. Every sample carries the label config="NAME" (the instance's
 * config name, the systemd instance %i), so the files of 24 instances in
 * one textfile directory never collide. The label is not called "instance"
 * because Prometheus sets that one on every scraped series itself.
 * docs/DEPLOYMENT.md lists the metrics and the alerts built on them.
 */
#ifndef QS_PROM_H
#define QS_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qlcshape/engine.h"

/*
 * The daemon's own counters: what its ublk frontend served (the fields of
 * struct qs_ublk_stats, which lives in a daemon-only header) and its
 * requests in flight.
 */
struct qs_prom_frontend {
	uint64_t reads, read_bytes;
	uint64_t writes, write_bytes;
	uint64_t flushes, discards, write_zeroes;
	uint64_t errors;   /* requests completed with an error */
	uint32_t inflight; /* requests the daemon holds now */
};

struct qs_prom_input {
	const char *config;    /* label value: the instance's config name; required */
	const char *backend;   /* "engine" or "ram"; NULL: no qlcshape_info sample */
	uint32_t iu_bytes;     /* 0: not reported */
	uint64_t size_bytes;   /* client-visible size; 0: not reported */
	double start_time_s;   /* Unix time the daemon started; 0: not reported */
	const struct qs_prom_frontend *frontend; /* NULL: not reported */
	const struct qs_engine_stats *engine;	 /* NULL: no engine (ram backend) */
};

/*
 * Render in into out (len bytes, always NUL-terminated when len > 0): HELP
 * and TYPE lines, then the samples, one family at a time, ending with a
 * newline. Any thread may call it; in and what it points to are only read
 * and stay the caller's. Returns 0; -EINVAL when in->config is NULL or
 * empty; -ENOSPC when out is too small (out then holds a truncated text
 * that must not be published). About 14 KiB is enough for every metric (control replies take 16 KiB).
 */
int qs_prom_render(const struct qs_prom_input *in, char *out, size_t len);

#endif
