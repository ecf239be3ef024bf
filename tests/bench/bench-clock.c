/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-clock.c - the clock every figure is read with, bench_now_ns()
 *
 * One scale across processes: the series helper takes this process's
 * calibration (bench_clock_calibration()), and the latency child writes
 * both clocks, its TSC converted with bench_clock_tsc_to_ns().
 */
#include "bench.h"

#include <stdio.h>
#include <time.h>

/* The clock: CLOCK_MONOTONIC, or where that only moves once a tick (our
 * TCG guests: their kernel finds the TSC unstable and falls back to
 * jiffies) the TSC, calibrated against CLOCK_MONOTONIC over a second. */
static gboolean use_tsc;
static guint64 tsc0;
static double ns_per_tsc;

static gint64
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_TSC 1
static guint64
tsc (void)
{
  return __builtin_ia32_rdtsc ();
}
#else
#define HAVE_TSC 0
static guint64
tsc (void)
{
  return 0;
}
#endif

/* Waits for CLOCK_MONOTONIC to move, and returns both clocks right then. */
static void
tick_edge (gint64 *ns, guint64 *t)
{
  gint64 start = monotonic_ns ();

  while ((*ns = monotonic_ns ()) == start)
    ;
  *t = tsc ();
}

/* The smallest step CLOCK_MONOTONIC makes, in ns: clock_getres() says 1 ns
 * whenever high-resolution timers are on, even over a jiffies clocksource. */
static gint64
monotonic_step (void)
{
  gint64 start = monotonic_ns (), prev = start, now, step = G_MAXINT64;

  while ((now = monotonic_ns ()) - start < 20 * 1000000)
    {
      if (now != prev)
        step = MIN (step, now - prev);
      prev = now;
    }
  return step;
}

gboolean
bench_clock_init (const char *clock_opt, const char *calibration, GError **error)
{
  gint64 n0, n1;
  guint64 t0, t1;

  if (calibration != NULL)
    {
      /* The series helper: the parent's calibration, so both processes'
       * figures are on one scale. */
      if (sscanf (calibration, "%la %" G_GUINT64_FORMAT, &ns_per_tsc, &tsc0) != 2)
        {
          g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                               "bad --clock-calibration");
          return FALSE;
        }
      use_tsc = TRUE;
      return TRUE;
    }
  if (clock_opt == NULL || g_str_equal (clock_opt, "auto"))
    use_tsc = HAVE_TSC && monotonic_step () > 1000;
  else if (g_str_equal (clock_opt, "tsc"))
    use_tsc = TRUE;
  else if (g_str_equal (clock_opt, "monotonic"))
    use_tsc = FALSE;
  else
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--clock: auto, monotonic or tsc");
      return FALSE;
    }
  if (!use_tsc)
    return TRUE;
  if (!HAVE_TSC)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "no TSC on this machine");
      return FALSE;
    }
  tick_edge (&n0, &t0);
  g_usleep (G_USEC_PER_SEC);
  tick_edge (&n1, &t1);
  ns_per_tsc = (double) (n1 - n0) / (double) (t1 - t0);
  tsc0 = t0;
  return TRUE;
}

/* The calibration bench_clock_init() takes back in another process. */
char *
bench_clock_calibration (void)
{
  return g_strdup_printf ("%a %" G_GUINT64_FORMAT, ns_per_tsc, tsc0);
}

gboolean
bench_clock_uses_tsc (void)
{
  return use_tsc;
}

gint64
bench_clock_tsc_to_ns (guint64 t)
{
  return (gint64) ((double) (gint64) (t - tsc0) * ns_per_tsc);
}

gint64
bench_now_ns (void)
{
  return use_tsc ? bench_clock_tsc_to_ns (tsc ()) : monotonic_ns ();
}
