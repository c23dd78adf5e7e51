/* SPDX-License-Identifier: MIT */
/* Endurance rating of a profile (see rating.h). */
#include <errno.h>

#include "rating.h"

int qs_rating_lookup(const struct qs_profile *p, double *bytes, uint64_t *capacity)
{
	if (!(p->endurance_pbw > 0))
		return -ENOENT;
	*bytes = p->endurance_pbw * 1e15;
	*capacity = p->capacity_bytes;
	return 0;
}
