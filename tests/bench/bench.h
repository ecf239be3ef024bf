/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench.h - what the benchmark's files share (bench.c lists them)
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
  /* Measured in the series helper (bench-series.c): the name of the
   * contender it runs there; NULL for contenders measured here. */
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

#define BENCH_MAX_CONTENDERS 24

/* What one contender measured. */
typedef struct {
  GArray *seq[2];      /* µs per child: small parent, large parent */
  GArray *conc[2];     /* ms per batch: conc_small, conc_large children */
  GArray *latency;     /* µs */
  gboolean have_memory;
  double rss_kib_before, rss_kib_after;
  double fds_before, fds_after;
  double threads_before, threads_after;
} BenchResults;

/* One invocation: its sizes, its contenders and what they measured.
 * main() fills it in from the options, the scenarios add to results[k]
 * for contenders[k], the report reads it. */
typedef struct {
  gboolean quick;
  int seq_rounds, seq_batch;
  int large_mib;
  int conc_rounds, conc_small, conc_large, sleep_ms;
  int latency_samples;
  int memory_children;
  char *label;
  char *tmpdir;
  char *child_path;     /* bench-child, next to this program */
  /* GLib + series: the lib directory, or why there are no such rows. */
  char *series_libdir;
  char *series_absent;
  BenchContender contenders[BENCH_MAX_CONTENDERS];
  BenchResults results[BENCH_MAX_CONTENDERS];
  gsize n_contenders;
} BenchRun;

/* bench-clock.c: CLOCK_MONOTONIC, or a TSC calibrated against it. */
gboolean bench_clock_init (const char *clock_opt, const char *calibration, GError **error);
gint64 bench_now_ns (void);
gboolean bench_clock_uses_tsc (void);
/* A TSC reading (ours or a child's) on the bench_now_ns() scale. */
gint64 bench_clock_tsc_to_ns (guint64 t);
char *bench_clock_calibration (void);

/* bench-units.c: what a contender calls back, one batch of children, and
 * the measurements (units) a scenario or the series helper takes. */

/* Children started and not yet delivered, across the current batch. */
extern int bench_pending;

void bench_exited (BenchSlot *slot);
G_GNUC_NORETURN void bench_die (const char *format, ...) G_GNUC_PRINTF (1, 2);
/* Iterates the thread-default main context until bench_pending is 0. */
void bench_main_loop_wait (BenchContender *c);
/* One batch: start every argv (all at once), wait for every end. */
void bench_run_batch (BenchContender *c, const char * const *argv, BenchSlot *slots, int n);
double bench_unit_seq (BenchContender *c);
double bench_unit_conc (BenchContender *c, const char *child_path, int n, int ms);
double bench_unit_latency (BenchContender *c, const char *child_path, const char *file, int fd);
void bench_unit_warm (BenchContender *c);
/* The index of the contender called @name, or -1. */
int bench_find_contender (const BenchRun *run, const char *name);

/* Fill @out with the contenders of each file; return how many. */
gsize bench_raw_contenders (BenchContender *out, gsize max);
gsize bench_glib_contenders (BenchContender *out, gsize max);

/* bench-series.c: GLib + series, measured in a helper process. */
void bench_series_start (const BenchRun *run, const char *self);
void bench_series_stop (void);
/* Whether the helper runs (it is asked for the series contenders' turns). */
gboolean bench_series_running (void);
void bench_series_ask (GArray *out, const char *format, ...) G_GNUC_PRINTF (2, 3);
int bench_series_helper_main (BenchRun *run);
/* Whether the helper's g_spawn_async() gave its child a clone fd. */
gboolean bench_series_clonefd (void);
/* What the table and the JSON say about the series rows. */
char *bench_series_summary (const BenchRun *run);

/* bench-scenarios.c: every contender, interleaved. */
void bench_scenario_warm_up (BenchRun *run);
void bench_scenario_seq (BenchRun *run);
void bench_scenario_concurrent (BenchRun *run);
void bench_scenario_latency (BenchRun *run);

/* bench-memory.c: a fresh process per contender. */
void bench_memory_scenario (BenchRun *run, const char *self);
int bench_memory_child_main (BenchRun *run, const char *name);

/* bench-many.c: N children alive at once, exits spread (--scenarios many). */
void bench_many_scenario (BenchRun *run, const char *sizes, int spread_ms, int rounds);
void bench_many_print (const BenchRun *run);
void bench_many_write_json (const BenchRun *run, const char *path);

/* bench-report.c: the table, the JSON, and the targets they show. */
void bench_report_compute_targets (const BenchRun *run);
void bench_report_print_table (const BenchRun *run, const char *kernel);
void bench_report_write_json (const BenchRun *run, const char *path, const char *kernel);
