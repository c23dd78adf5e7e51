/* SPDX-License-Identifier: MIT */
/*
 * qs_splitmix64: the small deterministic generator everything above the
 * engine seeds from (workloads, calibration, the engine benchmark, the
 * tests): Vigna's splitmix64, one 64-bit state, advanced by each call. Any
 * thread; the state is the caller's.
 */
#ifndef QS_HOST_RAND_H
#define QS_HOST_RAND_H

#include "qlcshape/splitmix64.h" /* qs_splitmix64: one, the engine's too */

#endif
