/* SPDX-License-Identifier: MIT */
/* One turn of a real-time event loop that runs an engine: see loop.h. */
#include <errno.h>

#include "host/loop.h"

int qs_hloop_turn(struct qs_uloop *l, struct qs_henv *h, struct qs_engine *e, uint64_t wait_ns)
{
	uint64_t t = qs_henv_timeout(h);
	int n = qs_uloop_run(l, t < wait_ns ? t : wait_ns);
	if (n < 0 && n != -EINTR)
		return n;
	if (e && qs_henv_expired(h))
		qs_engine_timer(e);
	return 0;
}
