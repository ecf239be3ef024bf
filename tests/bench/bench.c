/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench: spawn and exit-notification costs of libspawn and its alternatives
 *
 * Every contender runs in the same process, interleaved (rounds of A, B,
 * C…, the order rotated each round), so that their ratios hold on a noisy
 * machine.  Scenarios:
 *
 *   seq         start /bin/true and wait for its exit to be delivered, one
 *               child at a time; each round once from a small parent and
 *               once with 1 GiB of touched memory (allocated, memset, freed
 *               again within the round)
 *   concurrent  start 100, then 1000 children that each sleep briefly;
 *               time from the first start until every exit is delivered
 *   latency     the child writes CLOCK_MONOTONIC just before _exit(); the
 *               parent reads the clock in its callback
 *   memory      VmRSS and open fds of a fresh copy of this program before
 *               and with 1000 live, watched children (one copy per
 *               contender, so that no contender inherits another's heap)
 *
 * With --glib-series LIBDIR, GLib's contenders are measured a second time
 * against the GLib built with glib/patches (vm/build-glib), as
 * "... (GLib + series)" rows.  One process can hold one libglib, so those
 * rows run in a helper: a copy of this program started once, under
 * LD_LIBRARY_PATH=LIBDIR, that takes one measurement at a time over a pipe
 * ("seq NAME N", "conc NAME N MS", "lat NAME", "big MIB SEED", ...).  The
 * scenarios ask it at the series contenders' turns in the same
 * rotated rounds as every other contender, so stock and series GLib are
 * interleaved and their ratio holds as the others do.  The helper times
 * with the clock this process calibrated, and holds its own touched 1 GiB
 * during the large-parent pass (what a fork copies is the forking
 * process's memory).
 *
 * Prints a table; --json FILE writes every figure and ratio.  It reports,
 * it never fails on a number: the exit status is 0 unless something
 * could not be measured at all.
 *
 * This file parses the options, assembles the contenders and runs the
 * scenarios in order.  The rest, in the order of a run:
 *
 *   contenders-glib.c, contenders-raw.c  the ways of starting a child
 *   bench-clock.c      the clock (CLOCK_MONOTONIC, or a calibrated TSC)
 *   bench-units.c      one timed batch of one contender; bench_exited()
 *   bench-series.c     the GLib + series helper, both ends of its pipe
 *   bench-scenarios.c  seq, concurrent, latency: rotated rounds
 *   bench-memory.c     memory: a fresh copy of this program per contender
 *   bench-report.c     the table, the JSON and the targets
 */
#include "bench.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#define SERIES_SUFFIX " (GLib + series)"

/* Sizes: the defaults; --quick lowers them for guests under TCG. */
static BenchRun the_run = {
  .seq_rounds = 10, .seq_batch = 20,
  .large_mib = 1024,
  .conc_rounds = 5, .conc_small = 100, .conc_large = 1000, .sleep_ms = 10,
  .latency_samples = 200,
  .memory_children = 1000,
};
static char *scenarios_opt;
static char *many_sizes_opt = "1000,4000,16000";
static int many_spread_ms = 3000;
static int many_rounds = 1;
static char *many_json_path;
static char *json_path;
static char *only_opt;
static char *memory_child;
static gboolean series_helper;  /* this process is the helper */
static char *clock_opt;
static char *clock_calibration; /* the helper's: "NS_PER_TSC TSC0" (%a) */

static gboolean
want_scenario (const char *name)
{
  g_auto (GStrv) list = NULL;

  if (scenarios_opt == NULL)
    return TRUE;
  list = g_strsplit (scenarios_opt, ",", -1);
  return g_strv_contains ((const char * const *) list, name);
}

static void
rm_tmpdir (void)
{
  if (the_run.tmpdir != NULL && memory_child == NULL)
    g_rmdir (the_run.tmpdir);
}

static void
select_contenders (BenchRun *run)
{
  g_auto (GStrv) only = NULL;
  gsize k, n = 0;

  if (only_opt == NULL)
    return;
  only = g_strsplit (only_opt, ",", -1);
  for (k = 0; k < run->n_contenders; k++)
    {
      if (g_strv_contains ((const char * const *) only, run->contenders[k].name))
        run->contenders[n++] = run->contenders[k];
    }
  run->n_contenders = n;
}

int
main (int argc, char **argv)
{
  BenchRun *run = &the_run;
  GOptionEntry entries[] = {
    { "quick", 0, 0, G_OPTION_ARG_NONE, &run->quick, "Fewer rounds and samples (for guests under TCG)", NULL },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write every figure and ratio to FILE", "FILE" },
    { "label", 0, 0, G_OPTION_ARG_STRING, &run->label, "Name of this run (default: host, or guest-VARIANT)", "NAME" },
    { "scenarios", 0, 0, G_OPTION_ARG_STRING, &scenarios_opt, "Only these of seq,concurrent,latency,memory,many (many only when named)", "LIST" },
    { "many-sizes", 0, 0, G_OPTION_ARG_STRING, &many_sizes_opt, "Children alive at once in the many scenario (default 1000,4000,16000)", "LIST" },
    { "many-spread-ms", 0, 0, G_OPTION_ARG_INT, &many_spread_ms, "Over how long their exits are spread (default 3000)", "MS" },
    { "many-rounds", 0, 0, G_OPTION_ARG_INT, &many_rounds, "Rounds of the many scenario (default 1)", "N" },
    { "many-json", 0, 0, G_OPTION_ARG_FILENAME, &many_json_path, "Write the many scenario's figures to FILE", "FILE" },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only_opt, "Only these contenders (ratios need posix_spawn+pidfd and g_spawn_async+child_watch)", "LIST" },
    { "seq-rounds", 0, 0, G_OPTION_ARG_INT, &run->seq_rounds, "Rounds of the sequential scenario", "N" },
    { "seq-batch", 0, 0, G_OPTION_ARG_INT, &run->seq_batch, "Children per contender per round", "N" },
    { "large-mib", 0, 0, G_OPTION_ARG_INT, &run->large_mib, "Touched memory of the large parent", "MIB" },
    { "conc-rounds", 0, 0, G_OPTION_ARG_INT, &run->conc_rounds, "Rounds of the concurrent scenario", "N" },
    { "sleep-ms", 0, 0, G_OPTION_ARG_INT, &run->sleep_ms, "How long concurrent children sleep", "MS" },
    { "latency-samples", 0, 0, G_OPTION_ARG_INT, &run->latency_samples, "Latency samples per contender", "N" },
    { "memory-children", 0, 0, G_OPTION_ARG_INT, &run->memory_children, "Live children in the memory scenario", "N" },
    { "clock", 0, 0, G_OPTION_ARG_STRING, &clock_opt, "auto (default), monotonic or tsc", "CLOCK" },
    { "glib-series", 0, 0, G_OPTION_ARG_FILENAME, &run->series_libdir, "Also measure GLib's contenders against the GLib in LIBDIR (vm/build-glib's PREFIX/lib), in a helper", "LIBDIR" },
    { "glib-series-absent", 0, 0, G_OPTION_ARG_STRING, &run->series_absent, "Why there is no --glib-series (printed in the table)", "REASON" },
    { "series-helper", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &series_helper, NULL, NULL },
    { "clock-calibration", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &clock_calibration, NULL, NULL },
    { "memory-child", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &memory_child, NULL, NULL },
    { "tmpdir", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &run->tmpdir, NULL, NULL },
    { NULL },
  };
  GOptionContext *ctx = g_option_context_new ("- spawn and exit-notification benchmarks");
  GError *error = NULL;
  struct utsname uts;
  struct rlimit rl;
  g_autofree char *self = NULL, *dir = NULL;
  const char *vm;
  gsize k;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    bench_die ("%s", error->message);
  g_option_context_free (ctx);
  if (run->quick)
    {
      /* Only what was not set explicitly; defaults are recognisable. */
      if (run->seq_rounds == 10) run->seq_rounds = 5;
      if (run->seq_batch == 20) run->seq_batch = 10;
      if (run->conc_rounds == 5) run->conc_rounds = 2;
      if (run->latency_samples == 200) run->latency_samples = 50;
    }
  if (run->seq_rounds < 1 || run->seq_batch < 1 || run->conc_rounds < 1 ||
      run->latency_samples < 1 || run->memory_children < 1 || run->large_mib < 1 ||
      run->conc_small < 1 || run->conc_large < run->conc_small)
    bench_die ("counts must be positive");

  /* 1000 children, each with a descriptor or two, want more than 1024;
   * the many scenario's 16000 one each and room: root may raise the hard
   * limit too (where it may not, the scenario says what it skipped). */
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < 65536)
    {
      struct rlimit more = { 65536, 65536 };

      if (setrlimit (RLIMIT_NOFILE, &more) == 0)
        rl = more;
    }
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
    {
      rl.rlim_cur = rl.rlim_max;
      setrlimit (RLIMIT_NOFILE, &rl);
    }

  self = g_file_read_link ("/proc/self/exe", &error);
  if (self == NULL)
    bench_die ("%s", error->message);
  dir = g_path_get_dirname (self);
  run->child_path = g_build_filename (dir, "bench-child", NULL);
  if (!g_file_test (run->child_path, G_FILE_TEST_IS_EXECUTABLE))
    bench_die ("%s is missing", run->child_path);
  uname (&uts);
  if (memory_child == NULL && !bench_clock_init (clock_opt, clock_calibration, &error))
    bench_die ("%s", error->message);
  if (run->series_libdir != NULL)
    {
      char *real = realpath (run->series_libdir, NULL);

      /* The helper's /proc/self/maps names the file it mapped, resolved. */
      if (real == NULL)
        bench_die ("--glib-series %s: %s", run->series_libdir, g_strerror (errno));
      run->series_libdir = real;
    }
  vm = g_getenv ("LIBSPAWN_VM_KERNEL");
  if (run->label == NULL)
    run->label = vm != NULL ? g_strconcat ("guest-", vm, NULL) : g_strdup ("host");

  run->n_contenders = bench_glib_contenders (run->contenders, BENCH_MAX_CONTENDERS);
  if (run->series_libdir != NULL && memory_child == NULL && !series_helper)
    {
      gsize n = run->n_contenders;

      /* Next to the stock GLib rows, measured in the helper. */
      for (k = 0; k < n; k++)
        if (g_str_equal (run->contenders[k].family, "glib"))
          {
            g_assert (run->n_contenders < BENCH_MAX_CONTENDERS);
            run->contenders[run->n_contenders++] = (BenchContender) {
              .name = g_strconcat (run->contenders[k].name, SERIES_SUFFIX, NULL),
              .family = "glib-series", .backend = -1,
              .series_of = run->contenders[k].name,
            };
          }
    }
  run->n_contenders += bench_raw_contenders (run->contenders + run->n_contenders,
                                             BENCH_MAX_CONTENDERS - run->n_contenders);
  select_contenders (run);
  for (k = 0; k < run->n_contenders; k++)
    {
      run->results[k].seq[0] = g_array_new (FALSE, FALSE, sizeof (double));
      run->results[k].seq[1] = g_array_new (FALSE, FALSE, sizeof (double));
      run->results[k].conc[0] = g_array_new (FALSE, FALSE, sizeof (double));
      run->results[k].conc[1] = g_array_new (FALSE, FALSE, sizeof (double));
      run->results[k].latency = g_array_new (FALSE, FALSE, sizeof (double));
    }

  if (memory_child != NULL || series_helper)
    {
      if (run->tmpdir == NULL)
        bench_die ("--memory-child and --series-helper need --tmpdir");
      return series_helper ? bench_series_helper_main (run)
                           : bench_memory_child_main (run, memory_child);
    }

  run->tmpdir = g_dir_make_tmp ("libspawn-bench-XXXXXX", &error);
  if (run->tmpdir == NULL)
    bench_die ("%s", error->message);
  atexit (rm_tmpdir);

  for (k = 0; k < run->n_contenders; k++)
    if (run->contenders[k].series_of != NULL && !bench_series_running ())
      bench_series_start (run, self);
  if (run->series_libdir == NULL)
    {
      g_autofree char *summary = bench_series_summary (run);

      fprintf (stderr, "bench: GLib + series rows: %s\n", summary);
    }
  fprintf (stderr, "bench: %s, kernel %s; contenders:", run->label, uts.release);
  for (k = 0; k < run->n_contenders; k++)
    fprintf (stderr, " %s", run->contenders[k].name);
  fprintf (stderr, "\n");

  bench_scenario_warm_up (run);
  if (want_scenario ("seq"))
    bench_scenario_seq (run);
  if (want_scenario ("concurrent"))
    bench_scenario_concurrent (run);
  if (want_scenario ("latency"))
    bench_scenario_latency (run);
  if (want_scenario ("memory"))
    bench_memory_scenario (run, self);
  /* Heavy (16000 children): only when named. */
  if (scenarios_opt != NULL && want_scenario ("many"))
    bench_many_scenario (run, many_sizes_opt, many_spread_ms, many_rounds);

  bench_series_stop ();
  bench_report_compute_targets (run);
  bench_report_print_table (run, uts.release);
  if (json_path != NULL)
    bench_report_write_json (run, json_path, uts.release);
  bench_many_print (run);
  if (many_json_path != NULL)
    bench_many_write_json (run, many_json_path);
  return 0;
}
