/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-units.c - one measurement (a unit), and what contenders call back
 *
 * A unit runs one batch with one contender and times it: a /bin/true
 * (seq), n children that sleep, all at once (conc), a child that stamps
 * the clock as its last act (latency).  The scenarios take units in this
 * process, the series helper in its own (bench-series.c).  Contenders
 * report each delivered exit with bench_exited().
 */
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_pending;

void
bench_exited (BenchSlot *slot)
{
  if (slot->done_ns != 0 || bench_pending <= 0)
    bench_die ("an exit was delivered twice, or for no child");
  slot->done_ns = bench_now_ns ();
  bench_pending--;
}

void
bench_die (const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  fprintf (stderr, "bench: ");
  vfprintf (stderr, format, ap);
  fprintf (stderr, "\n");
  va_end (ap);
  exit (1);
}

void
bench_main_loop_wait (BenchContender *c G_GNUC_UNUSED)
{
  while (bench_pending > 0)
    g_main_context_iteration (NULL, TRUE);
}

void
bench_run_batch (BenchContender *c, const char * const *argv, BenchSlot *slots, int n)
{
  int i;

  for (i = 0; i < n; i++)
    {
      memset (&slots[i], 0, sizeof (slots[i]));
      slots[i].fd = -1;
      c->start (c, argv, &slots[i]);
    }
  c->wait (c);
  if (c->cleanup != NULL)
    for (i = 0; i < n; i++)
      c->cleanup (c, &slots[i]);
}

/* One child of /bin/true: µs from the start until its exit is delivered. */
double
bench_unit_seq (BenchContender *c)
{
  const char *argv[] = { "/bin/true", NULL };
  BenchSlot slot;
  gint64 t0 = bench_now_ns ();

  bench_run_batch (c, argv, &slot, 1);
  return (slot.done_ns - t0) / 1e3;
}

/* @n children that sleep @ms, all at once: ms until the last exit. */
double
bench_unit_conc (BenchContender *c, const char *child_path, int n, int ms)
{
  char ms_s[16];
  const char *argv[] = { child_path, "sleep", ms_s, NULL };
  BenchSlot *slots = g_new0 (BenchSlot, n);
  gint64 t0, last = 0;
  int i;

  g_snprintf (ms_s, sizeof (ms_s), "%d", ms);
  t0 = bench_now_ns ();
  bench_run_batch (c, argv, slots, n);
  for (i = 0; i < n; i++)
    last = MAX (last, slots[i].done_ns);
  g_free (slots);
  return (last - t0) / 1e6;
}

/* One child that stamps @file as its last act: µs from the stamp to the
 * callback.  @fd is @file, open. */
double
bench_unit_latency (BenchContender *c, const char *child_path, const char *file, int fd)
{
  const char *argv[] = { child_path, "stamp", file, NULL };
  gint64 zero[2] = { 0, 0 }, stamp[2];
  BenchSlot slot;

  if (pwrite (fd, zero, sizeof (zero), 0) != sizeof (zero))
    bench_die ("%s: %s", file, g_strerror (errno));
  bench_run_batch (c, argv, &slot, 1);
  if (pread (fd, stamp, sizeof (stamp), 0) != sizeof (stamp) || stamp[0] == 0)
    bench_die ("%s: the child left no timestamp", c->name);
  return (slot.done_ns - (bench_clock_uses_tsc () ? bench_clock_tsc_to_ns (stamp[1])
                                                 : stamp[0])) / 1e3;
}

void
bench_unit_warm (BenchContender *c)
{
  const char *argv[] = { "/bin/true", NULL };
  BenchSlot slots[3];

  bench_run_batch (c, argv, slots, G_N_ELEMENTS (slots));
}

int
bench_find_contender (const BenchRun *run, const char *name)
{
  gsize k;

  for (k = 0; k < run->n_contenders; k++)
    if (g_str_equal (run->contenders[k].name, name))
      return k;
  return -1;
}
