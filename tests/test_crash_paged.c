/* SPDX-License-Identifier: MIT */
/*
 * The crash sweep of log placement with the map paged (tests/test_crash.c,
 * test_crash_sweep_paged), built as a program of its own: it takes about
 * as long as the other two sweeps together under the sanitizers, and
 * scripts/run-tests.sh runs programs side by side, one per CPU.
 */
#define QS_CRASH_PAGED_PROGRAM 1
#include "test_crash.c"
