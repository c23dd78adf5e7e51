/* SPDX-License-Identifier: MIT */
/*
 * Tiny drive profiles (INI text, section [drive]) for the bench tests,
 * small and fast enough to run under ASan: write them to a file and load
 * them as any profile.
 */
#ifndef QS_TPROF_H
#define QS_TPROF_H

/* A 1 GB QLC: 64 KiB IU, 2 channels x 2 dies, 7% spare, power-loss safe. */
extern const char tprof_tiny_qlc[];

/* A 1 GB Optane-class fast tier: 4 KiB IU, 4 channels, microsecond media. */
extern const char tprof_tiny_scm[];

#endif
