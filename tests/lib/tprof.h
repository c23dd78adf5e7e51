/* SPDX-License-Identifier: MIT */
/*
 * Tiny drive profiles for the tests, small and fast enough to run under
 * ASan: INI text (section [drive]) to write to a file and load as any
 * profile, and a struct for tests that build models directly.
 */
#ifndef QS_TPROF_H
#define QS_TPROF_H

#include "host/profile.h"

/* A 1 GB QLC: 64 KiB IU, 2 channels x 2 dies, 7% spare, power-loss safe. */
extern const char tprof_tiny_qlc[];

/* A 1 GB Optane-class fast tier: 4 KiB IU, 4 channels, microsecond media. */
extern const char tprof_tiny_scm[];

/*
 * A small QLC-like drive as a struct, for tests that build models directly:
 * 256 MiB, 64 KiB IU, 4 channels x 2 dies, 4 IUs per program unit, 64
 * superblocks, 10% spare, power-loss safe; named name. A test that wants
 * another drive changes the fields that differ.
 */
void tprof_small_qlc(struct qs_profile *p, const char *name);

#endif
