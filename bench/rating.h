/* SPDX-License-Identifier: MIT */
/*
 * The endurance rating the projected-life figures (qs_report_life_years,
 * qs_report_wear_fill) use: the profile's endurance_pbw (a conf/profiles
 * file, checked by the profile loader: a pattern of whole IUs, the drive of
 * capacity_gb), which times the profile's endurance_prog_amp (the model's
 * NAND bytes per byte under that pattern, docs/MODEL.md) is the NAND
 * budget; shared by the simulation (bench/run.c) and the real-time driver
 * (bench/rt.c).
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
