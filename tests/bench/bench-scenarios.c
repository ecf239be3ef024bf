/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-scenarios.c - seq, concurrent and latency: every contender in turn
 *
 * Each scenario runs in rounds of every contender, the order rotated each
 * round, so that a slow spell of the machine falls on all of them alike.
 * A series contender's turn is a request to the helper (bench-series.c);
 * every other contender's is a unit taken here (bench-units.c).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void
bench_scenario_warm_up (BenchRun *run)
{
  gsize k;

  for (k = 0; k < run->n_contenders; k++)
    {
      BenchContender *c = &run->contenders[k];

      if (c->series_of != NULL)
        bench_series_ask (NULL, "warm %s", c->series_of);
      else
        {
          if (c->setup != NULL)
            c->setup (c);
          bench_unit_warm (c);
        }
    }
}

void
bench_scenario_seq (BenchRun *run)
{
  int round, phase, i;
  gsize j;

  for (round = 0; round < run->seq_rounds; round++)
    for (phase = 0; phase < 2; phase++)
      {
        char *big = NULL;

        if (phase == 1)
          {
            big = g_malloc ((gsize) run->large_mib << 20);
            memset (big, round + 1, (gsize) run->large_mib << 20);
            if (bench_series_running ())
              bench_series_ask (NULL, "big %d %d", run->large_mib, round + 1);
          }
        for (j = 0; j < run->n_contenders; j++)
          {
            gsize k = (j + round) % run->n_contenders;
            BenchContender *c = &run->contenders[k];

            if (c->series_of != NULL)
              {
                bench_series_ask (run->results[k].seq[phase], "seq %s %d",
                                  c->series_of, run->seq_batch);
                continue;
              }
            if (c->setup != NULL)
              c->setup (c);
            for (i = 0; i < run->seq_batch; i++)
              {
                double us = bench_unit_seq (c);

                g_array_append_val (run->results[k].seq[phase], us);
              }
          }
        g_free (big);
        if (phase == 1 && bench_series_running ())
          bench_series_ask (NULL, "free");
        fprintf (stderr, "\rseq: round %d/%d", round + 1, run->seq_rounds);
      }
  fprintf (stderr, "\n");
}

void
bench_scenario_concurrent (BenchRun *run)
{
  int sizes[2] = { run->conc_small, run->conc_large };
  int round, s;
  gsize j;

  for (round = 0; round < run->conc_rounds; round++)
    for (s = 0; s < 2; s++)
      for (j = 0; j < run->n_contenders; j++)
        {
          gsize k = (j + round) % run->n_contenders;
          BenchContender *c = &run->contenders[k];

          if (c->series_of != NULL)
            bench_series_ask (run->results[k].conc[s], "conc %s %d %d",
                              c->series_of, sizes[s], run->sleep_ms);
          else
            {
              double v;

              if (c->setup != NULL)
                c->setup (c);
              v = bench_unit_conc (c, run->child_path, sizes[s], run->sleep_ms);
              g_array_append_val (run->results[k].conc[s], v);
            }
          fprintf (stderr, "\rconcurrent: round %d/%d, %d children, %-41s",
                   round + 1, run->conc_rounds, sizes[s], c->name);
        }
  fprintf (stderr, "\n");
}

void
bench_scenario_latency (BenchRun *run)
{
  char *file = g_build_filename (run->tmpdir, "stamp", NULL);
  int fd, i;
  gsize j;

  fd = open (file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    bench_die ("%s: %s", file, g_strerror (errno));
  for (i = 0; i < run->latency_samples; i++)
    {
      for (j = 0; j < run->n_contenders; j++)
        {
          gsize k = (j + i) % run->n_contenders;
          BenchContender *c = &run->contenders[k];
          double us;

          if (c->series_of != NULL)
            {
              bench_series_ask (run->results[k].latency, "lat %s", c->series_of);
              continue;
            }
          if (c->setup != NULL)
            c->setup (c);
          us = bench_unit_latency (c, run->child_path, file, fd);
          g_array_append_val (run->results[k].latency, us);
        }
      if (i % 10 == 9 || i + 1 == run->latency_samples)
        fprintf (stderr, "\rlatency: %d/%d", i + 1, run->latency_samples);
    }
  fprintf (stderr, "\n");
  close (fd);
  g_unlink (file);
  g_free (file);
}
