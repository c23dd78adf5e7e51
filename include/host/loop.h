/* SPDX-License-Identifier: MIT */
/*
 * qs_hloop: the turn of a real-time event loop that runs an engine, the one
 * both programs use (the daemon's main loop, the bench's emu and dev
 * modes): the engine's timer raced against the caller's own deadline, the
 * ring run, the timer fired.
 */
#ifndef QS_HOST_LOOP_H
#define QS_HOST_LOOP_H

#include <stdint.h>

#include "qlcshape/engine.h"

#include "host/env.h"
#include "host/uloop.h"

/*
 * One turn: wait on l for at most wait_ns (UINT64_MAX: no limit of the
 * caller's), less if h's timer deadline comes sooner, dispatch what
 * completed, then run e's timer if its deadline has passed. e may be NULL
 * (no engine open). Call from the loop's thread; l, h and e stay the
 * caller's. Returns 0, or -errno from io_uring (a signal's -EINTR counts
 * as 0: the caller's loop looks at its state again anyway).
 */
int qs_hloop_turn(struct qs_uloop *l, struct qs_henv *h, struct qs_engine *e, uint64_t wait_ns);

#endif
