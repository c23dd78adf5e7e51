/* SPDX-License-Identifier: MIT */
/*
 * Published endurance ratings of the drives the bench has profiles for,
 * for the projected-life figure (qs_report_life_years). The profile format
 * has no key for the rating, so the figures live here, by profile name.
 */
#ifndef QS_BENCH_RATING_H
#define QS_BENCH_RATING_H

#include <stdint.h>

/*
 * The endurance rating for 64 KiB random writes (whole IUs) of the drive
 * whose profile is named name (struct qs_profile.name): *bytes written
 * over the drive's life, and the *capacity the rating is for. Returns 0,
 * or -ENOENT (outputs untouched) when no rating is known for that name.
 */
int qs_rating_lookup(const char *name, double *bytes, uint64_t *capacity);

#endif
