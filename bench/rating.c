/* SPDX-License-Identifier: MIT */
/* Published endurance ratings by profile name (see rating.h). */
#include <errno.h>
#include <string.h>

#include "rating.h"

/*
 * Spec-sheet ratings for the 64 KiB random-write pattern, from
 * shared/reference/drives.md (Solidigm D5-P5316): PB written, capacity TB.
 */
static const struct {
	const char *name;
	double pbw;
	double capacity_tb;
} rating_table[] = {
	{"p5316-30t", 22.93, 30.72},
	{"p5316-15t", 10.78, 15.36},
};

int qs_rating_lookup(const char *name, double *bytes, uint64_t *capacity)
{
	for (size_t i = 0; i < sizeof(rating_table) / sizeof(rating_table[0]); i++)
		if (!strcmp(rating_table[i].name, name)) {
			*bytes = rating_table[i].pbw * 1e15;
			*capacity = (uint64_t)(rating_table[i].capacity_tb * 1e12);
			return 0;
		}
	return -ENOENT;
}
