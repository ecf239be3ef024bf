/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench.h - what the benchmark's scenarios and its contenders share
 *
 * A contender is one way of starting a child and learning that it ended:
 * start() launches argv and arranges for bench_exited (slot) to be called
 * when the end is delivered; wait() runs the contender's own event loop
 * until every pending child has been delivered.
 */
#pragma once

#include <glib.h>

typedef struct {
  gint64 done_ns;    /* CLOCK_MONOTONIC when the exit reached us */
  gpointer handle;   /* the contender's own object, released in cleanup() */
  int fd;
  int pid;
} BenchSlot;

typedef struct _BenchContender BenchContender;
struct _BenchContender {
  const char *name;
  const char *family;  /* "libspawn", "SpawnProcess", "glib", "raw" */
  int backend;         /* a SpawnBackend for libspawn families, else -1 */
  /* Measured in the series helper (bench.c, "GLib + series"): the name of
   * the contender it runs there; NULL for contenders measured here. */
  const char *series_of;
  /* Before a batch of starts (chooses the libspawn backend). */
  void (*setup) (BenchContender *c);
  /* Starts @argv; bench_exited (@slot) is called once its end is known. */
  void (*start) (BenchContender *c, const char * const *argv, BenchSlot *slot);
  /* Returns once bench_pending is 0. */
  void (*wait) (BenchContender *c);
  /* After wait(), per slot; may be NULL. */
  void (*cleanup) (BenchContender *c, BenchSlot *slot);
};

/* Children started and not yet delivered, across the current batch. */
extern int bench_pending;

gint64 bench_now_ns (void);
void bench_exited (BenchSlot *slot);
G_GNUC_NORETURN void bench_die (const char *format, ...) G_GNUC_PRINTF (1, 2);
/* Iterates the thread-default main context until bench_pending is 0. */
void bench_main_loop_wait (BenchContender *c);

/* Fill @out with the contenders of each file; return how many. */
gsize bench_raw_contenders (BenchContender *out, gsize max);
gsize bench_glib_contenders (BenchContender *out, gsize max);
