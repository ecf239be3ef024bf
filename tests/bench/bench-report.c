/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-report.c - the table, the JSON, and the targets they show
 *
 * Reads what the scenarios measured (BenchRun) and says it: medians and
 * spreads per contender, ratios against the floor (posix_spawn+pidfd),
 * against g_spawn_async and between twins (sections 6 and 7), and the
 * targets met or missed.  It reports: no figure fails the run.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Statistics over a GArray of doubles (sorted in place). */
static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
percentile (GArray *a, double p)
{
  double *v = (double *) a->data;
  double pos, frac;
  gsize lo;

  if (a->len == 0)
    return NAN;
  g_array_sort (a, cmp_double);
  pos = p / 100.0 * (a->len - 1);
  lo = (gsize) pos;
  frac = pos - lo;
  if (lo + 1 >= a->len)
    return v[a->len - 1];
  return v[lo] * (1 - frac) + v[lo + 1] * frac;
}

static double
median (GArray *a)
{
  return percentile (a, 50);
}

typedef struct {
  const char *name;
  const char *contender;
  double value;
  double limit;
} Target;

static GArray *targets;

/* The median of another contender's samples, NaN if it is not running. */
#define other_median(k, field, i) ((k) < 0 ? NAN : median (run->results[k].field[i]))

static double
ratio (double a, double b)
{
  return (isnan (a) || isnan (b) || b == 0) ? NAN : a / b;
}

static void
add_target (const char *name, const char *contender, double value, double limit)
{
  Target t = { name, contender, value, limit };

  if (!isnan (value))
    g_array_append_val (targets, t);
}

static gboolean
is_libspawn (const BenchContender *c)
{
  return c->backend >= 0;
}

void
bench_report_compute_targets (const BenchRun *run)
{
  int fl = bench_find_contender (run, "posix_spawn+pidfd");
  int gs = bench_find_contender (run, "g_spawn_async+child_watch");
  gsize k;

  targets = g_array_new (FALSE, FALSE, sizeof (Target));
  for (k = 0; k < run->n_contenders; k++)
    {
      const BenchResults *r = &run->results[k];
      const char *name = run->contenders[k].name;

      if (!is_libspawn (&run->contenders[k]))
        continue;
      if (r->seq[0]->len > 0)
        {
          add_target ("large/small parent", name,
                      ratio (median (r->seq[1]), median (r->seq[0])), 1.3);
          add_target ("sequential vs posix_spawn+pidfd", name,
                      ratio (median (r->seq[0]), other_median (fl, seq, 0)), 1.1);
          add_target ("sequential vs g_spawn_async+child_watch", name,
                      ratio (median (r->seq[0]), other_median (gs, seq, 0)), 0.8);
        }
      if (r->conc[1]->len > 0)
        {
          add_target ("1000 concurrent vs posix_spawn+pidfd", name,
                      ratio (median (r->conc[1]), other_median (fl, conc, 1)), 1.2);
          add_target ("1000 vs 100 concurrent", name,
                      ratio (median (r->conc[1]), median (r->conc[0])), 12);
        }
    }

  /* Issue 27: where the series can start children vfork()-style, the
   * parent's size should not matter.  Only a target where it can: on a
   * kernel without clone4 the series is stock GLib, which forks. */
  for (k = 0; k < run->n_contenders && bench_series_clonefd (); k++)
    if (run->contenders[k].series_of != NULL && run->results[k].seq[0]->len > 0)
      add_target ("large/small parent (GLib + series)", run->contenders[k].name,
                  ratio (median (run->results[k].seq[1]),
                         median (run->results[k].seq[0])), 1.1);
}

/* For a "X (GLib + series)" contender, the index of stock "X"; else -1. */
static int
series_twin (const BenchRun *run, gsize k)
{
  const char *series_of = run->contenders[k].series_of;

  return series_of != NULL ? bench_find_contender (run, series_of) : -1;
}

/* For a "libspawn-B-wait_async" contender, the index of "libspawn-B"
 * (spawn_child_watch_add on the same backend, same run); else -1. */
static int
watch_twin (const BenchRun *run, gsize k)
{
  const char *name = run->contenders[k].name;
  g_autofree char *twin = NULL;

  if (!g_str_has_suffix (name, "-wait_async"))
    return -1;
  twin = g_strndup (name, strlen (name) - strlen ("-wait_async"));
  return bench_find_contender (run, twin);
}

/* Sections 6 and 7: each contender that has a twin (watch_twin(),
 * series_twin()) against it, as ratios of medians from the same rounds;
 * nothing, not even the heading, when no contender has one. */
static void
print_twin_ratios (const BenchRun *run, const char *heading,
                   int (*twin) (const BenchRun *run, gsize k))
{
  gboolean header = FALSE;
  gsize k;

  for (k = 0; k < run->n_contenders; k++)
    {
      const BenchResults *r = &run->results[k], *t;
      int w = twin (run, k);

      if (w < 0)
        continue;
      t = &run->results[w];
      if (!header)
        {
          printf ("\n%s\n", heading);
          printf ("%-41s %10s %10s %10s %10s\n", "contender", "seq small", "seq large",
                  "1000 conc", "latency");
          header = TRUE;
        }
      printf ("%-41s %10.3f %10.3f %10.3f %10.3f\n", run->contenders[k].name,
              ratio (median (r->seq[0]), median (t->seq[0])),
              ratio (median (r->seq[1]), median (t->seq[1])),
              ratio (median (r->conc[1]), median (t->conc[1])),
              ratio (median (r->latency), median (t->latency)));
    }
}

void
bench_report_print_table (const BenchRun *run, const char *kernel)
{
  int fl = bench_find_contender (run, "posix_spawn+pidfd");
  int gs = bench_find_contender (run, "g_spawn_async+child_watch");
  double load[3] = { 0 };
  gsize k, i;

  getloadavg (load, 3);
  printf ("libspawn benchmark: %s, kernel %s, %ld CPUs, GLib %u.%u.%u, "
          "load %.2f %.2f %.2f, clock %s\n", run->label, kernel, sysconf (_SC_NPROCESSORS_ONLN),
          glib_major_version, glib_minor_version, glib_micro_version,
          load[0], load[1], load[2],
          bench_clock_uses_tsc () ? "TSC calibrated against CLOCK_MONOTONIC" : "CLOCK_MONOTONIC");
  {
    g_autofree char *summary = bench_series_summary (run);

    printf ("GLib + series rows: %s\n", summary);
  }

  if (run->results[0].seq[0]->len > 0)
    {
      printf ("\n1-2. sequential spawn + exit notification of /bin/true, µs per child,\n"
              "     median [p25-p75] of %d (%d rounds of %d, interleaved)\n",
              run->seq_rounds * run->seq_batch, run->seq_rounds, run->seq_batch);
      printf ("%-41s %22s %22s %8s %8s %8s\n", "contender", "small parent",
              g_strdup_printf ("%d MiB parent", run->large_mib), "lg/sm", "/floor", "/g_spawn");
      for (k = 0; k < run->n_contenders; k++)
        {
          const BenchResults *r = &run->results[k];
          char a[32], b[32];

          g_snprintf (a, sizeof (a), "%.0f [%.0f-%.0f]", median (r->seq[0]),
                      percentile (r->seq[0], 25), percentile (r->seq[0], 75));
          g_snprintf (b, sizeof (b), "%.0f [%.0f-%.0f]", median (r->seq[1]),
                      percentile (r->seq[1], 25), percentile (r->seq[1], 75));
          printf ("%-41s %22s %22s %8.2f %8.2f %8.2f\n", run->contenders[k].name, a, b,
                  ratio (median (r->seq[1]), median (r->seq[0])),
                  ratio (median (r->seq[0]), other_median (fl, seq, 0)),
                  ratio (median (r->seq[0]), other_median (gs, seq, 0)));
        }
    }

  if (run->results[0].conc[0]->len > 0)
    {
      printf ("\n3. %d and %d children at once (each sleeps %d ms), ms until every exit\n"
              "   is delivered, median [min-max] of %d rounds\n",
              run->conc_small, run->conc_large, run->sleep_ms, run->conc_rounds);
      printf ("%-41s %22s %22s %8s %8s\n", "contender",
              g_strdup_printf ("%d children", run->conc_small),
              g_strdup_printf ("%d children", run->conc_large), "big/sm", "/floor");
      for (k = 0; k < run->n_contenders; k++)
        {
          const BenchResults *r = &run->results[k];
          char a[32], b[32];

          g_snprintf (a, sizeof (a), "%.1f [%.1f-%.1f]", median (r->conc[0]),
                      percentile (r->conc[0], 0), percentile (r->conc[0], 100));
          g_snprintf (b, sizeof (b), "%.1f [%.1f-%.1f]", median (r->conc[1]),
                      percentile (r->conc[1], 0), percentile (r->conc[1], 100));
          printf ("%-41s %22s %22s %8.2f %8.2f\n", run->contenders[k].name, a, b,
                  ratio (median (r->conc[1]), median (r->conc[0])),
                  ratio (median (r->conc[1]), other_median (fl, conc, 1)));
        }
    }

  if (run->results[0].latency->len > 0)
    {
      printf ("\n4. exit-notification latency, child's last instruction to callback, µs\n"
              "   (%d samples each, interleaved)\n", run->latency_samples);
      printf ("%-41s %10s %10s %10s\n", "contender", "median", "p90", "p99");
      for (k = 0; k < run->n_contenders; k++)
        {
          const BenchResults *r = &run->results[k];

          printf ("%-41s %10.1f %10.1f %10.1f\n", run->contenders[k].name,
                  median (r->latency), percentile (r->latency, 90),
                  percentile (r->latency, 99));
        }
    }

  if (run->results[0].have_memory)
    {
      printf ("\n5. cost per watched child with %d live children (fresh process each)\n",
              run->memory_children);
      printf ("%-41s %14s %10s %14s\n", "contender", "RSS KiB/child", "fds/child",
              "threads added");
      for (k = 0; k < run->n_contenders; k++)
        {
          const BenchResults *r = &run->results[k];

          printf ("%-41s %14.2f %10.2f %14.0f\n", run->contenders[k].name,
                  (r->rss_kib_after - r->rss_kib_before) / run->memory_children,
                  (r->fds_after - r->fds_before) / run->memory_children,
                  r->threads_after - r->threads_before);
        }
    }

  if (run->results[0].seq[0]->len > 0 || run->results[0].latency->len > 0)
    print_twin_ratios (run,
                       "6. spawn_child_wait_async() against spawn_child_watch_add(), same\n"
                       "   backend, same run: ratio of medians (1.00 = no overhead)", watch_twin);
  print_twin_ratios (run,
                     "7. GLib + series against stock GLib, same interleaved rounds:\n"
                     "   ratio of medians (below 1.00 = the series is faster)", series_twin);

  if (targets->len > 0)
    {
      printf ("\ntargets\n");
      for (i = 0; i < targets->len; i++)
        {
          Target *t = &g_array_index (targets, Target, i);

          printf ("  %-6s %-40s %-41s %7.2f (limit %.2f)\n",
                  t->value <= t->limit ? "met" : "MISSED", t->name, t->contender,
                  t->value, t->limit);
        }
    }
}

/* JSON by hand: names are ours, free of quotes and backslashes. */
static void
json_num (GString *s, double v)
{
  if (isnan (v) || isinf (v))
    g_string_append (s, "null");
  else
    g_string_append_printf (s, "%.6g", v);
}

static void
json_stats (GString *s, GArray *a)
{
  g_string_append (s, "{\"n\": ");
  json_num (s, a->len);
  g_string_append (s, ", \"median\": ");
  json_num (s, median (a));
  g_string_append (s, ", \"p25\": ");
  json_num (s, percentile (a, 25));
  g_string_append (s, ", \"p75\": ");
  json_num (s, percentile (a, 75));
  g_string_append (s, ", \"p90\": ");
  json_num (s, percentile (a, 90));
  g_string_append (s, ", \"p99\": ");
  json_num (s, percentile (a, 99));
  g_string_append (s, ", \"min\": ");
  json_num (s, percentile (a, 0));
  g_string_append (s, ", \"max\": ");
  json_num (s, percentile (a, 100));
  g_string_append (s, "}");
}

/* The JSON of print_twin_ratios(): @r against its twin @t. */
static void
json_twin_ratios (GString *s, const BenchResults *r, const BenchResults *t)
{
  g_string_append (s, "{\"seq_small\": ");
  json_num (s, ratio (median (r->seq[0]), median (t->seq[0])));
  g_string_append (s, ", \"seq_large\": ");
  json_num (s, ratio (median (r->seq[1]), median (t->seq[1])));
  g_string_append (s, ", \"conc_large\": ");
  json_num (s, ratio (median (r->conc[1]), median (t->conc[1])));
  g_string_append (s, ", \"latency\": ");
  json_num (s, ratio (median (r->latency), median (t->latency)));
  g_string_append (s, "}");
}

void
bench_report_write_json (const BenchRun *run, const char *path, const char *kernel)
{
  int fl = bench_find_contender (run, "posix_spawn+pidfd");
  int gs = bench_find_contender (run, "g_spawn_async+child_watch");
  GString *s = g_string_new ("{\n");
  GError *error = NULL;
  g_autofree char *now = g_date_time_format_iso8601 (g_date_time_new_now_utc ());
  double load[3] = { 0 };
  gsize k, i;

  getloadavg (load, 3);
  g_string_append_printf (s, "  \"meta\": {\"label\": \"%s\", \"kernel\": \"%s\", "
                          "\"cpus\": %ld, \"glib\": \"%u.%u.%u\", \"date\": \"%s\", "
                          "\"load_end\": [%.2f, %.2f, %.2f], \"quick\": %s, \"clock\": \"%s\",\n",
                          run->label, kernel, sysconf (_SC_NPROCESSORS_ONLN),
                          glib_major_version, glib_minor_version, glib_micro_version,
                          now, load[0], load[1], load[2], run->quick ? "true" : "false",
                          bench_clock_uses_tsc () ? "tsc" : "monotonic");
  g_string_append_printf (s, "    \"params\": {\"seq_rounds\": %d, \"seq_batch\": %d, "
                          "\"large_mib\": %d, \"conc_rounds\": %d, \"conc_small\": %d, "
                          "\"conc_large\": %d, \"sleep_ms\": %d, \"latency_samples\": %d, "
                          "\"memory_children\": %d},\n",
                          run->seq_rounds, run->seq_batch, run->large_mib, run->conc_rounds,
                          run->conc_small, run->conc_large, run->sleep_ms, run->latency_samples,
                          run->memory_children);
  {
    g_autofree char *summary = bench_series_summary (run);

    /* Paths and our own sentences: no quotes or backslashes in them. */
    g_string_append_printf (s, "    \"glib_series\": {\"libdir\": \"%s\", \"clonefd\": %s, "
                            "\"summary\": \"%s\"},\n",
                            run->series_libdir != NULL ? run->series_libdir : "",
                            bench_series_clonefd () ? "true" : "false", summary);
  }
  g_string_append (s, "    \"units\": {\"seq\": \"us per child\", \"concurrent\": "
                   "\"ms per batch\", \"latency\": \"us\", \"memory\": \"KiB, fds, threads\"}},\n");
  g_string_append (s, "  \"contenders\": [\n");
  for (k = 0; k < run->n_contenders; k++)
    {
      const BenchResults *r = &run->results[k];

      g_string_append_printf (s, "    {\"name\": \"%s\", \"family\": \"%s\"",
                              run->contenders[k].name, run->contenders[k].family);
      if (r->seq[0]->len > 0)
        {
          g_string_append (s, ",\n     \"seq_small_us\": ");
          json_stats (s, r->seq[0]);
          g_string_append (s, ",\n     \"seq_large_us\": ");
          json_stats (s, r->seq[1]);
          g_string_append (s, ",\n     \"seq_large_over_small\": ");
          json_num (s, ratio (median (r->seq[1]), median (r->seq[0])));
          g_string_append (s, ", \"seq_over_floor\": ");
          json_num (s, ratio (median (r->seq[0]), other_median (fl, seq, 0)));
          g_string_append (s, ", \"seq_over_g_spawn\": ");
          json_num (s, ratio (median (r->seq[0]), other_median (gs, seq, 0)));
        }
      if (r->conc[0]->len > 0)
        {
          g_string_append (s, ",\n     \"conc_small_ms\": ");
          json_stats (s, r->conc[0]);
          g_string_append (s, ",\n     \"conc_large_ms\": ");
          json_stats (s, r->conc[1]);
          g_string_append (s, ",\n     \"conc_large_over_small\": ");
          json_num (s, ratio (median (r->conc[1]), median (r->conc[0])));
          g_string_append (s, ", \"conc_large_over_floor\": ");
          json_num (s, ratio (median (r->conc[1]), other_median (fl, conc, 1)));
        }
      if (r->latency->len > 0)
        {
          g_string_append (s, ",\n     \"latency_us\": ");
          json_stats (s, r->latency);
        }
      if (r->have_memory)
        {
          g_string_append (s, ",\n     \"memory\": {\"rss_kib_before\": ");
          json_num (s, r->rss_kib_before);
          g_string_append (s, ", \"rss_kib_after\": ");
          json_num (s, r->rss_kib_after);
          g_string_append (s, ", \"rss_kib_per_child\": ");
          json_num (s, (r->rss_kib_after - r->rss_kib_before) / run->memory_children);
          g_string_append (s, ", \"fds_before\": ");
          json_num (s, r->fds_before);
          g_string_append (s, ", \"fds_after\": ");
          json_num (s, r->fds_after);
          g_string_append (s, ", \"fds_per_child\": ");
          json_num (s, (r->fds_after - r->fds_before) / run->memory_children);
          g_string_append (s, ", \"threads_added\": ");
          json_num (s, r->threads_after - r->threads_before);
          g_string_append (s, "}");
        }
      if (watch_twin (run, k) >= 0)
        {
          g_string_append (s, ",\n     \"over_watch_add\": ");
          json_twin_ratios (s, r, &run->results[watch_twin (run, k)]);
        }
      if (series_twin (run, k) >= 0)
        {
          g_string_append_printf (s, ",\n     \"series_of\": \"%s\", \"over_stock\": ",
                                  run->contenders[k].series_of);
          json_twin_ratios (s, r, &run->results[series_twin (run, k)]);
        }
      g_string_append_printf (s, "}%s\n", k + 1 < run->n_contenders ? "," : "");
    }
  g_string_append (s, "  ],\n  \"targets\": [\n");
  for (i = 0; i < targets->len; i++)
    {
      Target *t = &g_array_index (targets, Target, i);

      g_string_append_printf (s, "    {\"target\": \"%s\", \"contender\": \"%s\", \"value\": ",
                              t->name, t->contender);
      json_num (s, t->value);
      g_string_append (s, ", \"limit\": ");
      json_num (s, t->limit);
      g_string_append_printf (s, ", \"met\": %s}%s\n",
                              t->value <= t->limit ? "true" : "false",
                              i + 1 < targets->len ? "," : "");
    }
  g_string_append (s, "  ]\n}\n");
  if (!g_file_set_contents (path, s->str, s->len, &error))
    bench_die ("%s", error->message);
  g_string_free (s, TRUE);
}
