/* SPDX-License-Identifier: MIT */
/*
 * qs_stats: one daemon instance's statistics, gathered once as data
 * (struct qs_stats_view) and rendered as the control socket's text or JSON
 * answer (`stats`, `stats json`; docs/DAEMON.md). The Prometheus text is
 * daemon/prom.h's.
 *
 * Pure functions, as qs_prom_render: they read what they are given and
 * write text, no I/O, no clock, no allocation, so tests check every field
 * in-process.
 */
#ifndef QS_STATS_H
#define QS_STATS_H

#include <stddef.h>

#include "qlcshape/engine.h"

#include "host/emu_vol.h"

#include "prom.h"

/* Rates over the interval since the previous answer. */
struct qs_stats_rates {
	double read_iops, write_iops;
	double read_mbs, write_mbs; /* client bytes, MB/s (10^6) */
	double destage_mbs;	    /* engine destage bytes, MB/s */
};

struct qs_stats_view {
	const char *backend;			 /* "engine" or "ram" */
	double interval_s;			 /* what the rates are over */
	const struct qs_prom_frontend *frontend; /* the ublk frontend's counters */
	struct qs_stats_rates rate;
	const struct qs_engine_stats *engine;	 /* NULL: no engine (ram backend) */
	const struct qs_emu_stats *emu;		 /* NULL: the QLC is not emulated */
};

/*
 * Render v into out (len bytes, NUL-terminated when len > 0): the text
 * answer (lines of "name  values") or the JSON one (one object). Any
 * thread; v and what it points to are only read and stay the caller's.
 * Returns 0, or -ENOSPC when out was too small (out then holds a truncated
 * text).
 */
int qs_stats_render_text(const struct qs_stats_view *v, char *out, size_t len);
int qs_stats_render_json(const struct qs_stats_view *v, char *out, size_t len);

#endif
