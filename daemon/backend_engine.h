/* SPDX-License-Identifier: MIT */
/*
 * qs_engb: the production backend, the write-shaping engine behind the
 * qs_backend interface. The interface was shaped after the engine's client
 * API, so each op is a direct call; this file exists so the frontend never
 * depends on the engine's types.
 */
#ifndef QS_BACKEND_ENGINE_H
#define QS_BACKEND_ENGINE_H

#include "backend.h"
#include "qlcshape/engine.h"

/*
 * Fill bk to submit to e (which must have completed its open). e stays
 * owned by the caller and must outlive every request submitted through bk.
 */
void qs_engb_init(struct qs_backend *bk, struct qs_engine *e);

#endif
