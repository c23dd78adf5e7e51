/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz harnesses (tests/fuzz/fuzz_*.c): each defines
 * LLVMFuzzerTestOneInput, which libFuzzer calls (make fuzz, clang) or
 * tests/fuzz/replay.c calls once per corpus file (make test, gcc). A
 * finding is a sanitizer report, a hang the harness detects, or an
 * invariant it checks failing: fz_fail prints it and aborts, so both
 * drivers stop at it and name the input.
 */
#ifndef QS_FZ_H
#define QS_FZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The input as a file, for loaders that take a path: one file per process
 * (under /tmp, suffix such as ".ini"), rewritten with data on every call
 * and removed at exit. Returns its path (static storage).
 */
const char *fz_file(const uint8_t *data, size_t size, const char *suffix);

/* The input being run, for fz_fail's report (the replay driver sets it). */
extern const char *fz_input_name;

/* Report a broken invariant and abort (printf-style). */
void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
