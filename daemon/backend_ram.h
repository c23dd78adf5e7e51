/* SPDX-License-Identifier: MIT */
/*
 * qs_ramb: a RAM disk behind the qs_backend interface. A TEST backend: it
 * exists to bring up and test the ublk frontend without the engine
 * (daemon.backend = ram). Data lives in anonymous memory and is lost at exit.
 * Completions are deferred through the loop, so the frontend sees the same
 * asynchronous contract as with the engine.
 */
#ifndef QS_BACKEND_RAM_H
#define QS_BACKEND_RAM_H

#include <stdint.h>

#include "backend.h"
#include "host/uloop.h"

struct qs_ramb;

/*
 * Create a RAM disk of size bytes (a multiple of 4096) whose completions run
 * from loop. Fills bk. Returns 0 or -errno. Free with qs_ramb_free() once no
 * request is in flight.
 */
int qs_ramb_create(struct qs_ramb **out, struct qs_uloop *loop, uint64_t size,
		   struct qs_backend *bk);
void qs_ramb_free(struct qs_ramb *r);

#endif
