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
 * Prints a table; --json FILE writes every figure and ratio.  It reports,
 * it never fails on a number: the exit status is 0 unless something
 * could not be measured at all.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONTENDERS 20

int bench_pending;

static BenchContender contenders[MAX_CONTENDERS];
static gsize n_contenders;
static char *child_path;
static char *tmpdir;

/* Parameters; --quick lowers them for guests under TCG. */
static gboolean quick;
static int seq_rounds = 10, seq_batch = 20;
static int large_mib = 1024;
static int conc_rounds = 5, conc_small = 100, conc_large = 1000, sleep_ms = 10;
static int latency_samples = 200;
static int memory_children = 1000;
static char *scenarios_opt;
static char *json_path;
static char *label;
static char *only_opt;
static char *memory_child;

/* The clock: CLOCK_MONOTONIC, or where that only moves once a tick (our
 * TCG guests: their kernel finds the TSC unstable and falls back to
 * jiffies) the TSC, calibrated against CLOCK_MONOTONIC over a second. */
static char *clock_opt;
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

static void
clock_init (void)
{
  gint64 n0, n1;
  guint64 t0, t1;

  if (clock_opt == NULL || g_str_equal (clock_opt, "auto"))
    use_tsc = HAVE_TSC && monotonic_step () > 1000;
  else if (g_str_equal (clock_opt, "tsc"))
    use_tsc = TRUE;
  else if (g_str_equal (clock_opt, "monotonic"))
    use_tsc = FALSE;
  else
    bench_die ("--clock: auto, monotonic or tsc");
  if (!use_tsc)
    return;
  if (!HAVE_TSC)
    bench_die ("no TSC on this machine");
  tick_edge (&n0, &t0);
  g_usleep (G_USEC_PER_SEC);
  tick_edge (&n1, &t1);
  ns_per_tsc = (double) (n1 - n0) / (double) (t1 - t0);
  tsc0 = t0;
}

/* A TSC reading (ours or a child's) on the bench_now_ns() scale. */
static gint64
tsc_to_ns (guint64 t)
{
  return (gint64) ((double) (gint64) (t - tsc0) * ns_per_tsc);
}

gint64
bench_now_ns (void)
{
  return use_tsc ? tsc_to_ns (tsc ()) : monotonic_ns ();
}

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

/* One batch: start every argv (all at once), wait for every end. */
static void
run_batch (BenchContender *c, const char * const *argv, BenchSlot *slots, int n)
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

static int
find_contender (const char *name)
{
  gsize k;

  for (k = 0; k < n_contenders; k++)
    if (g_str_equal (contenders[k].name, name))
      return k;
  return -1;
}

static gboolean
want_scenario (const char *name)
{
  g_auto (GStrv) list = NULL;

  if (scenarios_opt == NULL)
    return TRUE;
  list = g_strsplit (scenarios_opt, ",", -1);
  return g_strv_contains ((const char * const *) list, name);
}

/* --- Results ---------------------------------------------------------- */

typedef struct {
  GArray *seq[2];      /* µs per child: small parent, large parent */
  GArray *conc[2];     /* ms per batch: conc_small, conc_large children */
  GArray *latency;     /* µs */
  gboolean have_memory;
  double rss_kib_before, rss_kib_after;
  double fds_before, fds_after;
  double threads_before, threads_after;
} Results;

static Results results[MAX_CONTENDERS];

static void
warm_up (void)
{
  const char *argv[] = { "/bin/true", NULL };
  BenchSlot slots[3];
  gsize k;

  for (k = 0; k < n_contenders; k++)
    {
      BenchContender *c = &contenders[k];

      if (c->setup != NULL)
        c->setup (c);
      run_batch (c, argv, slots, G_N_ELEMENTS (slots));
    }
}

static void
scenario_seq (void)
{
  const char *argv[] = { "/bin/true", NULL };
  BenchSlot slot;
  int round, phase, i;
  gsize j;

  for (round = 0; round < seq_rounds; round++)
    for (phase = 0; phase < 2; phase++)
      {
        char *big = NULL;

        if (phase == 1)
          {
            big = g_malloc ((gsize) large_mib << 20);
            memset (big, round + 1, (gsize) large_mib << 20);
          }
        for (j = 0; j < n_contenders; j++)
          {
            gsize k = (j + round) % n_contenders;
            BenchContender *c = &contenders[k];

            if (c->setup != NULL)
              c->setup (c);
            for (i = 0; i < seq_batch; i++)
              {
                gint64 t0 = bench_now_ns ();
                double us;

                run_batch (c, argv, &slot, 1);
                us = (slot.done_ns - t0) / 1e3;
                g_array_append_val (results[k].seq[phase], us);
              }
          }
        g_free (big);
        fprintf (stderr, "\rseq: round %d/%d", round + 1, seq_rounds);
      }
  fprintf (stderr, "\n");
}

static void
scenario_concurrent (void)
{
  char ms[16];
  const char *argv[] = { child_path, "sleep", ms, NULL };
  BenchSlot *slots = g_new0 (BenchSlot, conc_large);
  int sizes[2] = { conc_small, conc_large };
  int round, s, i;
  gsize j;

  g_snprintf (ms, sizeof (ms), "%d", sleep_ms);
  for (round = 0; round < conc_rounds; round++)
    for (s = 0; s < 2; s++)
      for (j = 0; j < n_contenders; j++)
        {
          gsize k = (j + round) % n_contenders;
          BenchContender *c = &contenders[k];
          gint64 t0, last = 0;
          double v;

          if (c->setup != NULL)
            c->setup (c);
          t0 = bench_now_ns ();
          run_batch (c, argv, slots, sizes[s]);
          for (i = 0; i < sizes[s]; i++)
            last = MAX (last, slots[i].done_ns);
          v = (last - t0) / 1e6;
          g_array_append_val (results[k].conc[s], v);
          fprintf (stderr, "\rconcurrent: round %d/%d, %d children, %-28s",
                   round + 1, conc_rounds, sizes[s], c->name);
        }
  fprintf (stderr, "\n");
  g_free (slots);
}

static void
scenario_latency (void)
{
  char *file = g_build_filename (tmpdir, "stamp", NULL);
  const char *argv[] = { child_path, "stamp", file, NULL };
  BenchSlot slot;
  gint64 zero[2] = { 0, 0 }, stamp[2];
  int fd, i;
  gsize j;

  fd = open (file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    bench_die ("%s: %s", file, g_strerror (errno));
  for (i = 0; i < latency_samples; i++)
    {
      for (j = 0; j < n_contenders; j++)
        {
          gsize k = (j + i) % n_contenders;
          BenchContender *c = &contenders[k];
          double us;

          if (c->setup != NULL)
            c->setup (c);
          if (pwrite (fd, zero, sizeof (zero), 0) != sizeof (zero))
            bench_die ("%s: %s", file, g_strerror (errno));
          run_batch (c, argv, &slot, 1);
          if (pread (fd, stamp, sizeof (stamp), 0) != sizeof (stamp) || stamp[0] == 0)
            bench_die ("%s: the child left no timestamp", c->name);
          us = (slot.done_ns - (use_tsc ? tsc_to_ns (stamp[1]) : stamp[0])) / 1e3;
          g_array_append_val (results[k].latency, us);
        }
      if (i % 10 == 9 || i + 1 == latency_samples)
        fprintf (stderr, "\rlatency: %d/%d", i + 1, latency_samples);
    }
  fprintf (stderr, "\n");
  close (fd);
  g_unlink (file);
  g_free (file);
}

/* --- Memory: one fresh process per contender -------------------------- */

static void
self_status (double *rss_kib, double *threads, double *fds)
{
  char *status = NULL, **lines, **l;
  DIR *dir;
  struct dirent *d;

  *rss_kib = *threads = *fds = 0;
  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    bench_die ("cannot read /proc/self/status");
  lines = g_strsplit (status, "\n", -1);
  for (l = lines; *l != NULL; l++)
    {
      if (g_str_has_prefix (*l, "VmRSS:"))
        *rss_kib = g_ascii_strtod (*l + 6, NULL);
      else if (g_str_has_prefix (*l, "Threads:"))
        *threads = g_ascii_strtod (*l + 8, NULL);
    }
  g_strfreev (lines);
  g_free (status);
  dir = opendir ("/proc/self/fd");
  if (dir == NULL)
    bench_die ("cannot read /proc/self/fd");
  while ((d = readdir (dir)) != NULL)
    if (d->d_name[0] != '.')
      (*fds)++;
  closedir (dir);
  (*fds)--; /* the directory itself */
}

/* In the fresh process: warm up, measure, start N blocked children,
 * measure, release them, wait. */
static int
memory_child_main (void)
{
  int k = find_contender (memory_child);
  BenchContender *c;
  char *fifo = g_build_filename (tmpdir, "fifo", NULL);
  const char *argv[] = { child_path, "block", fifo, NULL };
  const char *quick_argv[] = { "/bin/true", NULL };
  BenchSlot *slots = g_new0 (BenchSlot, memory_children);
  double rss0, thr0, fds0, rss1, thr1, fds1;
  char *bytes;
  int fd, i;

  if (k < 0)
    bench_die ("no contender %s here", memory_child);
  c = &contenders[k];
  if (mkfifo (fifo, 0600) < 0)
    bench_die ("mkfifo %s: %s", fifo, g_strerror (errno));
  /* Held open (read-write, so that this open does not block) until every
   * child has had its byte: a child's open() never waits for a writer. */
  fd = open (fifo, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    bench_die ("%s: %s", fifo, g_strerror (errno));
  if (c->setup != NULL)
    c->setup (c);
  /* Lazily created state (worker threads, handlers, the reaper) is a
   * one-off, not a per-child cost. */
  run_batch (c, quick_argv, slots, 3);
  memset (slots, 0, sizeof (BenchSlot) * memory_children);
  self_status (&rss0, &thr0, &fds0);

  for (i = 0; i < memory_children; i++)
    {
      slots[i].fd = -1;
      c->start (c, argv, &slots[i]);
    }
  for (i = 0; i < 10; i++)
    g_main_context_iteration (NULL, FALSE);
  self_status (&rss1, &thr1, &fds1);

  bytes = g_malloc0 (memory_children);
  if (write (fd, bytes, memory_children) != memory_children)
    bench_die ("%s: %s", fifo, g_strerror (errno));
  g_free (bytes);
  c->wait (c);
  if (c->cleanup != NULL)
    for (i = 0; i < memory_children; i++)
      c->cleanup (c, &slots[i]);
  close (fd);
  g_unlink (fifo);
  printf ("MEM %.0f %.0f %.0f %.0f %.0f %.0f\n", rss0, rss1, fds0, fds1, thr0, thr1);
  return 0;
}

static void
scenario_memory (const char *self)
{
  char n[16];
  gsize k;

  g_snprintf (n, sizeof (n), "%d", memory_children);
  for (k = 0; k < n_contenders; k++)
    {
      const char *argv[] = { self, "--memory-child", contenders[k].name,
                             "--memory-children", n, "--tmpdir", tmpdir, NULL };
      g_autofree char *out = NULL;
      GError *error = NULL;
      Results *r = &results[k];
      int status;

      fprintf (stderr, "\rmemory: %-28s", contenders[k].name);
      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_CHILD_INHERITS_STDIN,
                         NULL, NULL, &out, NULL, &status, &error))
        bench_die ("%s: %s", self, error->message);
      if (!g_spawn_check_wait_status (status, &error))
        bench_die ("memory %s: %s", contenders[k].name, error->message);
      if (out == NULL ||
          sscanf (out, "MEM %lf %lf %lf %lf %lf %lf", &r->rss_kib_before,
                  &r->rss_kib_after, &r->fds_before, &r->fds_after,
                  &r->threads_before, &r->threads_after) != 6)
        bench_die ("memory %s: no result", contenders[k].name);
      r->have_memory = TRUE;
    }
  fprintf (stderr, "\n");
}

/* --- Report ----------------------------------------------------------- */

typedef struct {
  const char *name;
  const char *contender;
  double value;
  double limit;
} Target;

static GArray *targets;

/* The median of another contender's samples, NaN if it is not running. */
#define other_median(k, field, i) ((k) < 0 ? NAN : median (results[k].field[i]))

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

static void
compute_targets (void)
{
  int fl = find_contender ("posix_spawn+pidfd");
  int gs = find_contender ("g_spawn_async+child_watch");
  gsize k;

  targets = g_array_new (FALSE, FALSE, sizeof (Target));
  for (k = 0; k < n_contenders; k++)
    {
      Results *r = &results[k];
      const char *name = contenders[k].name;

      if (!is_libspawn (&contenders[k]))
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
}

/* For a "libspawn-B-wait_async" contender, the index of "libspawn-B"
 * (spawn_child_watch_add on the same backend, same run); else -1. */
static int
watch_twin (gsize k)
{
  const char *name = contenders[k].name;
  g_autofree char *twin = NULL;

  if (!g_str_has_suffix (name, "-wait_async"))
    return -1;
  twin = g_strndup (name, strlen (name) - strlen ("-wait_async"));
  return find_contender (twin);
}

static void
print_table (const char *kernel)
{
  int fl = find_contender ("posix_spawn+pidfd");
  int gs = find_contender ("g_spawn_async+child_watch");
  double load[3] = { 0 };
  gsize k, i;

  getloadavg (load, 3);
  printf ("libspawn benchmark: %s, kernel %s, %ld CPUs, GLib %u.%u.%u, "
          "load %.2f %.2f %.2f, clock %s\n", label, kernel, sysconf (_SC_NPROCESSORS_ONLN),
          glib_major_version, glib_minor_version, glib_micro_version,
          load[0], load[1], load[2], use_tsc ? "TSC calibrated against CLOCK_MONOTONIC" : "CLOCK_MONOTONIC");

  if (results[0].seq[0]->len > 0)
    {
      printf ("\n1-2. sequential spawn + exit notification of /bin/true, µs per child,\n"
              "     median [p25-p75] of %d (%d rounds of %d, interleaved)\n",
              seq_rounds * seq_batch, seq_rounds, seq_batch);
      printf ("%-27s %22s %22s %8s %8s %8s\n", "contender", "small parent",
              g_strdup_printf ("%d MiB parent", large_mib), "lg/sm", "/floor", "/g_spawn");
      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];
          char a[32], b[32];

          g_snprintf (a, sizeof (a), "%.0f [%.0f-%.0f]", median (r->seq[0]),
                      percentile (r->seq[0], 25), percentile (r->seq[0], 75));
          g_snprintf (b, sizeof (b), "%.0f [%.0f-%.0f]", median (r->seq[1]),
                      percentile (r->seq[1], 25), percentile (r->seq[1], 75));
          printf ("%-27s %22s %22s %8.2f %8.2f %8.2f\n", contenders[k].name, a, b,
                  ratio (median (r->seq[1]), median (r->seq[0])),
                  ratio (median (r->seq[0]), other_median (fl, seq, 0)),
                  ratio (median (r->seq[0]), other_median (gs, seq, 0)));
        }
    }

  if (results[0].conc[0]->len > 0)
    {
      printf ("\n3. %d and %d children at once (each sleeps %d ms), ms until every exit\n"
              "   is delivered, median [min-max] of %d rounds\n",
              conc_small, conc_large, sleep_ms, conc_rounds);
      printf ("%-27s %22s %22s %8s %8s\n", "contender",
              g_strdup_printf ("%d children", conc_small),
              g_strdup_printf ("%d children", conc_large), "big/sm", "/floor");
      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];
          char a[32], b[32];

          g_snprintf (a, sizeof (a), "%.1f [%.1f-%.1f]", median (r->conc[0]),
                      percentile (r->conc[0], 0), percentile (r->conc[0], 100));
          g_snprintf (b, sizeof (b), "%.1f [%.1f-%.1f]", median (r->conc[1]),
                      percentile (r->conc[1], 0), percentile (r->conc[1], 100));
          printf ("%-27s %22s %22s %8.2f %8.2f\n", contenders[k].name, a, b,
                  ratio (median (r->conc[1]), median (r->conc[0])),
                  ratio (median (r->conc[1]), other_median (fl, conc, 1)));
        }
    }

  if (results[0].latency->len > 0)
    {
      printf ("\n4. exit-notification latency, child's last instruction to callback, µs\n"
              "   (%d samples each, interleaved)\n", latency_samples);
      printf ("%-27s %10s %10s %10s\n", "contender", "median", "p90", "p99");
      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];

          printf ("%-27s %10.1f %10.1f %10.1f\n", contenders[k].name,
                  median (r->latency), percentile (r->latency, 90),
                  percentile (r->latency, 99));
        }
    }

  if (results[0].have_memory)
    {
      printf ("\n5. cost per watched child with %d live children (fresh process each)\n",
              memory_children);
      printf ("%-27s %14s %10s %14s\n", "contender", "RSS KiB/child", "fds/child",
              "threads added");
      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];

          printf ("%-27s %14.2f %10.2f %14.0f\n", contenders[k].name,
                  (r->rss_kib_after - r->rss_kib_before) / memory_children,
                  (r->fds_after - r->fds_before) / memory_children,
                  r->threads_after - r->threads_before);
        }
    }

  if (results[0].seq[0]->len > 0 || results[0].latency->len > 0)
    {
      gboolean header = FALSE;

      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];
          int w = watch_twin (k);

          if (w < 0)
            continue;
          if (!header)
            {
              printf ("\n6. spawn_child_wait_async() against spawn_child_watch_add(), same\n"
                      "   backend, same run: ratio of medians (1.00 = no overhead)\n");
              printf ("%-27s %10s %10s %10s %10s\n", "contender", "seq small", "seq large",
                      "1000 conc", "latency");
              header = TRUE;
            }
          printf ("%-27s %10.3f %10.3f %10.3f %10.3f\n", contenders[k].name,
                  ratio (median (r->seq[0]), median (results[w].seq[0])),
                  ratio (median (r->seq[1]), median (results[w].seq[1])),
                  ratio (median (r->conc[1]), median (results[w].conc[1])),
                  ratio (median (r->latency), median (results[w].latency)));
        }
    }

  if (targets->len > 0)
    {
      printf ("\ntargets\n");
      for (i = 0; i < targets->len; i++)
        {
          Target *t = &g_array_index (targets, Target, i);

          printf ("  %-6s %-40s %-22s %7.2f (limit %.2f)\n",
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

static void
write_json (const char *path, const char *kernel)
{
  int fl = find_contender ("posix_spawn+pidfd");
  int gs = find_contender ("g_spawn_async+child_watch");
  GString *s = g_string_new ("{\n");
  GError *error = NULL;
  g_autofree char *now = g_date_time_format_iso8601 (g_date_time_new_now_utc ());
  double load[3] = { 0 };
  gsize k, i;

  getloadavg (load, 3);
  g_string_append_printf (s, "  \"meta\": {\"label\": \"%s\", \"kernel\": \"%s\", "
                          "\"cpus\": %ld, \"glib\": \"%u.%u.%u\", \"date\": \"%s\", "
                          "\"load_end\": [%.2f, %.2f, %.2f], \"quick\": %s, \"clock\": \"%s\",\n",
                          label, kernel, sysconf (_SC_NPROCESSORS_ONLN),
                          glib_major_version, glib_minor_version, glib_micro_version,
                          now, load[0], load[1], load[2], quick ? "true" : "false",
                          use_tsc ? "tsc" : "monotonic");
  g_string_append_printf (s, "    \"params\": {\"seq_rounds\": %d, \"seq_batch\": %d, "
                          "\"large_mib\": %d, \"conc_rounds\": %d, \"conc_small\": %d, "
                          "\"conc_large\": %d, \"sleep_ms\": %d, \"latency_samples\": %d, "
                          "\"memory_children\": %d},\n",
                          seq_rounds, seq_batch, large_mib, conc_rounds, conc_small,
                          conc_large, sleep_ms, latency_samples, memory_children);
  g_string_append (s, "    \"units\": {\"seq\": \"us per child\", \"concurrent\": "
                   "\"ms per batch\", \"latency\": \"us\", \"memory\": \"KiB, fds, threads\"}},\n");
  g_string_append (s, "  \"contenders\": [\n");
  for (k = 0; k < n_contenders; k++)
    {
      Results *r = &results[k];

      g_string_append_printf (s, "    {\"name\": \"%s\", \"family\": \"%s\"",
                              contenders[k].name, contenders[k].family);
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
          json_num (s, (r->rss_kib_after - r->rss_kib_before) / memory_children);
          g_string_append (s, ", \"fds_before\": ");
          json_num (s, r->fds_before);
          g_string_append (s, ", \"fds_after\": ");
          json_num (s, r->fds_after);
          g_string_append (s, ", \"fds_per_child\": ");
          json_num (s, (r->fds_after - r->fds_before) / memory_children);
          g_string_append (s, ", \"threads_added\": ");
          json_num (s, r->threads_after - r->threads_before);
          g_string_append (s, "}");
        }
      if (watch_twin (k) >= 0)
        {
          Results *w = &results[watch_twin (k)];

          g_string_append (s, ",\n     \"over_watch_add\": {\"seq_small\": ");
          json_num (s, ratio (median (r->seq[0]), median (w->seq[0])));
          g_string_append (s, ", \"seq_large\": ");
          json_num (s, ratio (median (r->seq[1]), median (w->seq[1])));
          g_string_append (s, ", \"conc_large\": ");
          json_num (s, ratio (median (r->conc[1]), median (w->conc[1])));
          g_string_append (s, ", \"latency\": ");
          json_num (s, ratio (median (r->latency), median (w->latency)));
          g_string_append (s, "}");
        }
      g_string_append_printf (s, "}%s\n", k + 1 < n_contenders ? "," : "");
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

/* --- main ------------------------------------------------------------- */

static void
rm_tmpdir (void)
{
  if (tmpdir != NULL && memory_child == NULL)
    g_rmdir (tmpdir);
}

static void
select_contenders (void)
{
  g_auto (GStrv) only = NULL;
  gsize k, n = 0;

  if (only_opt == NULL)
    return;
  only = g_strsplit (only_opt, ",", -1);
  for (k = 0; k < n_contenders; k++)
    {
      if (g_strv_contains ((const char * const *) only, contenders[k].name))
        contenders[n++] = contenders[k];
    }
  n_contenders = n;
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    { "quick", 0, 0, G_OPTION_ARG_NONE, &quick, "Fewer rounds and samples (for guests under TCG)", NULL },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write every figure and ratio to FILE", "FILE" },
    { "label", 0, 0, G_OPTION_ARG_STRING, &label, "Name of this run (default: host, or guest-VARIANT)", "NAME" },
    { "scenarios", 0, 0, G_OPTION_ARG_STRING, &scenarios_opt, "Only these of seq,concurrent,latency,memory", "LIST" },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only_opt, "Only these contenders (ratios need posix_spawn+pidfd and g_spawn_async+child_watch)", "LIST" },
    { "seq-rounds", 0, 0, G_OPTION_ARG_INT, &seq_rounds, "Rounds of the sequential scenario", "N" },
    { "seq-batch", 0, 0, G_OPTION_ARG_INT, &seq_batch, "Children per contender per round", "N" },
    { "large-mib", 0, 0, G_OPTION_ARG_INT, &large_mib, "Touched memory of the large parent", "MIB" },
    { "conc-rounds", 0, 0, G_OPTION_ARG_INT, &conc_rounds, "Rounds of the concurrent scenario", "N" },
    { "sleep-ms", 0, 0, G_OPTION_ARG_INT, &sleep_ms, "How long concurrent children sleep", "MS" },
    { "latency-samples", 0, 0, G_OPTION_ARG_INT, &latency_samples, "Latency samples per contender", "N" },
    { "memory-children", 0, 0, G_OPTION_ARG_INT, &memory_children, "Live children in the memory scenario", "N" },
    { "clock", 0, 0, G_OPTION_ARG_STRING, &clock_opt, "auto (default), monotonic or tsc", "CLOCK" },
    { "memory-child", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &memory_child, NULL, NULL },
    { "tmpdir", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &tmpdir, NULL, NULL },
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
  if (quick)
    {
      /* Only what was not set explicitly; defaults are recognisable. */
      if (seq_rounds == 10) seq_rounds = 5;
      if (seq_batch == 20) seq_batch = 10;
      if (conc_rounds == 5) conc_rounds = 2;
      if (latency_samples == 200) latency_samples = 50;
    }
  if (seq_rounds < 1 || seq_batch < 1 || conc_rounds < 1 || latency_samples < 1 ||
      memory_children < 1 || large_mib < 1 || conc_small < 1 || conc_large < conc_small)
    bench_die ("counts must be positive");

  /* 1000 children, each with a descriptor or two, want more than 1024. */
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
    {
      rl.rlim_cur = rl.rlim_max;
      setrlimit (RLIMIT_NOFILE, &rl);
    }

  self = g_file_read_link ("/proc/self/exe", &error);
  if (self == NULL)
    bench_die ("%s", error->message);
  dir = g_path_get_dirname (self);
  child_path = g_build_filename (dir, "bench-child", NULL);
  if (!g_file_test (child_path, G_FILE_TEST_IS_EXECUTABLE))
    bench_die ("%s is missing", child_path);
  uname (&uts);
  if (memory_child == NULL)
    clock_init ();
  vm = g_getenv ("LIBSPAWN_VM_KERNEL");
  if (label == NULL)
    label = vm != NULL ? g_strconcat ("guest-", vm, NULL) : g_strdup ("host");

  n_contenders = bench_glib_contenders (contenders, MAX_CONTENDERS);
  n_contenders += bench_raw_contenders (contenders + n_contenders,
                                        MAX_CONTENDERS - n_contenders);
  select_contenders ();
  for (k = 0; k < n_contenders; k++)
    {
      results[k].seq[0] = g_array_new (FALSE, FALSE, sizeof (double));
      results[k].seq[1] = g_array_new (FALSE, FALSE, sizeof (double));
      results[k].conc[0] = g_array_new (FALSE, FALSE, sizeof (double));
      results[k].conc[1] = g_array_new (FALSE, FALSE, sizeof (double));
      results[k].latency = g_array_new (FALSE, FALSE, sizeof (double));
    }

  if (memory_child != NULL)
    {
      if (tmpdir == NULL)
        bench_die ("--memory-child needs --tmpdir");
      return memory_child_main ();
    }

  tmpdir = g_dir_make_tmp ("libspawn-bench-XXXXXX", &error);
  if (tmpdir == NULL)
    bench_die ("%s", error->message);
  atexit (rm_tmpdir);

  fprintf (stderr, "bench: %s, kernel %s; contenders:", label, uts.release);
  for (k = 0; k < n_contenders; k++)
    fprintf (stderr, " %s", contenders[k].name);
  fprintf (stderr, "\n");

  warm_up ();
  if (want_scenario ("seq"))
    scenario_seq ();
  if (want_scenario ("concurrent"))
    scenario_concurrent ();
  if (want_scenario ("latency"))
    scenario_latency ();
  if (want_scenario ("memory"))
    scenario_memory (self);

  compute_targets ();
  print_table (uts.release);
  if (json_path != NULL)
    write_json (json_path, uts.release);
  return 0;
}
