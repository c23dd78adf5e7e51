/* SPDX-License-Identifier: MIT */
/*
 * The endurance rating the projected-life figure (qs_report_life_years)
 * uses: the profile's endurance_pbw (a conf/profiles file, checked by the
 * profile loader: a pattern of whole IUs, the drive of capacity_gb), shared
 * by the simulation (bench/run.c) and the real-time driver (bench/rt.c).
 */
#ifndef QS_BENCH_RATING_H
#define QS_BENCH_RATING_H

#include <stdint.h>

#include "host/profile.h"

/*
 * The endurance rating of the drive of profile p: *bytes written over the
 * drive's life (endurance_pbw x 1e15) and the *capacity the rating is for
 * (the profile's capacity). Returns 0, or -ENOENT (outputs untouched) when
 * the profile has no rating. May be called at any time; p stays the
 * caller's.
 */
int qs_rating_lookup(const struct qs_profile *p, double *bytes, uint64_t *capacity);

#endif
