/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* failnth.h - what clone4-failnth and pidfd-failnth share: the knobs of
 * the kernel's fault injection, /proc/thread-self/fail-nth's counter, and
 * a kmemleak scan as one TAP line.
 */
#pragma once

/* Writes @value to @path; 0 or -errno. */
int failnth_write_file (const char *path, const char *value);

/* Why fault injection cannot run here (no fail-nth, not root, debugfs
 * knobs not writable), or NULL once failnth_configure() has set it up. */
const char *failnth_unavailable (void);

/* Lets fail-nth reach every allocation and user copy of the caller, and
 * keeps the injected faults quiet; 0 or -errno (the knob's name printed
 * as a TAP comment). */
int failnth_configure (void);

/* How many fault points were left to pass when the call before returned;
 * 0 when the fault was injected, -errno if the counter cannot be read.
 * Leaves fail-nth at 0.  Nothing may run between that call and this. */
int failnth_remaining (int nth_fd);

/* Whether the environment variable @name is "on" (tests/run-guest sets
 * FAILNTH_EXPECT in the debug guest, PIDFD_FAILNTH_EXPECT in modern-debug):
 * the kernel has the calls under test, fault injection and kmemleak, so
 * not finding them is a failure, not a skip. */
int failnth_expected (const char *name);

/* Scans for leaks twice (kmemleak waits five seconds before it reports an
 * object) and prints TAP line @tap_n; 1 if it failed, 0 if it passed or
 * skipped (no kmemleak, and not @expected). */
int failnth_check_kmemleak (int tap_n, int expected);

/* The first failure of the current case (empty: none so far), and the
 * printf-style call that sets it; later ones are dropped. */
extern char failnth_failure[512];
void failnth_fail (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
