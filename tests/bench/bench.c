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
 * scenarios below ask it at the series contenders' turns in the same
 * rotated rounds as every other contender, so stock and series GLib are
 * interleaved and their ratio holds as the others do.  The helper times
 * with the clock this process calibrated, and holds its own touched 1 GiB
 * during the large-parent pass (what a fork copies is the forking
 * process's memory).
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONTENDERS 24
#define SERIES_SUFFIX " (GLib + series)"

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

/* GLib + series: the lib directory, or why there are no such rows. */
static char *series_libdir;
static char *series_absent;
static gboolean series_helper;  /* this process is the helper */
static char *clock_calibration; /* the helper's: "NS_PER_TSC TSC0" (%a) */
static GPid helper_pid;
static FILE *helper_to, *helper_from;
static char *series_glib;       /* the libglib the helper loaded */
static gboolean series_clonefd; /* its first g_spawn_async had a clone fd */

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

  if (clock_calibration != NULL)
    {
      /* The series helper: the parent's calibration, so both processes'
       * figures are on one scale. */
      if (sscanf (clock_calibration, "%la %" G_GUINT64_FORMAT, &ns_per_tsc, &tsc0) != 2)
        bench_die ("bad --clock-calibration");
      use_tsc = TRUE;
      return;
    }
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

/* --- Units: one measurement, taken here or in the series helper ------- */

/* One child of /bin/true: µs from the start until its exit is delivered. */
static double
unit_seq (BenchContender *c)
{
  const char *argv[] = { "/bin/true", NULL };
  BenchSlot slot;
  gint64 t0 = bench_now_ns ();

  run_batch (c, argv, &slot, 1);
  return (slot.done_ns - t0) / 1e3;
}

/* @n children that sleep @ms, all at once: ms until the last exit. */
static double
unit_conc (BenchContender *c, int n, int ms)
{
  char ms_s[16];
  const char *argv[] = { child_path, "sleep", ms_s, NULL };
  BenchSlot *slots = g_new0 (BenchSlot, n);
  gint64 t0, last = 0;
  int i;

  g_snprintf (ms_s, sizeof (ms_s), "%d", ms);
  t0 = bench_now_ns ();
  run_batch (c, argv, slots, n);
  for (i = 0; i < n; i++)
    last = MAX (last, slots[i].done_ns);
  g_free (slots);
  return (last - t0) / 1e6;
}

/* One child that stamps @file as its last act: µs from the stamp to the
 * callback.  @fd is @file, open. */
static double
unit_latency (BenchContender *c, const char *file, int fd)
{
  const char *argv[] = { child_path, "stamp", file, NULL };
  gint64 zero[2] = { 0, 0 }, stamp[2];
  BenchSlot slot;

  if (pwrite (fd, zero, sizeof (zero), 0) != sizeof (zero))
    bench_die ("%s: %s", file, g_strerror (errno));
  run_batch (c, argv, &slot, 1);
  if (pread (fd, stamp, sizeof (stamp), 0) != sizeof (stamp) || stamp[0] == 0)
    bench_die ("%s: the child left no timestamp", c->name);
  return (slot.done_ns - (use_tsc ? tsc_to_ns (stamp[1]) : stamp[0])) / 1e3;
}

static void
unit_warm (BenchContender *c)
{
  const char *argv[] = { "/bin/true", NULL };
  BenchSlot slots[3];

  run_batch (c, argv, slots, G_N_ELEMENTS (slots));
}

/* --- GLib + series: the helper process --------------------------------
 *
 * The series changes libglib, not its ABI, so the same binary measures it
 * when the dynamic loader picks the series' libglib (and libgio,
 * libgobject) from LD_LIBRARY_PATH.  One process maps one libglib: the
 * series rows need a second process.  Rather than a second run of the
 * whole benchmark (whose rounds would not interleave with this one's,
 * leaving the stock/series ratio at the mercy of whatever else the machine
 * did in between), this process starts one helper and asks it for each
 * measurement at the series contender's turn in the rotation.  The helper
 * measures and replies; the pipe round trip is outside every timed span.
 */

/* The request/reply protocol, one line each way: "REQUEST ARGS" and
 * "ok [VALUE...]".  Values are appended to @out when it is not NULL. */
G_GNUC_PRINTF (2, 3)
static void
series_ask (GArray *out, const char *format, ...)
{
  char line[8192], *p, *end;
  va_list ap;

  va_start (ap, format);
  vfprintf (helper_to, format, ap);
  va_end (ap);
  fputc ('\n', helper_to);
  if (fflush (helper_to) != 0)
    bench_die ("series helper: %s", g_strerror (errno));
  if (fgets (line, sizeof (line), helper_from) == NULL)
    bench_die ("series helper: no reply (it died: see its message above)");
  if (!g_str_has_prefix (line, "ok"))
    bench_die ("series helper: %s", line);
  for (p = line + 2; out != NULL; p = end)
    {
      double v = g_ascii_strtod (p, &end);

      if (end == p)
        break;
      g_array_append_val (out, v);
    }
}

/* Which libglib this process mapped: the path, or NULL. */
static char *
series_loaded_glib (void)
{
  g_autofree char *maps = NULL;
  g_auto (GStrv) lines = NULL;
  char **l;

  if (!g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL))
    return NULL;
  lines = g_strsplit (maps, "\n", -1);
  for (l = lines; *l != NULL; l++)
    if (strstr (*l, "/libglib-2.0.so") != NULL && strchr (*l, '/') != NULL)
      return g_strdup (strchr (*l, '/'));
  return NULL;
}

static void
series_probe_exited (GPid pid, gint status G_GNUC_UNUSED, gpointer data)
{
  g_spawn_close_pid (pid);
  *(gboolean *) data = TRUE;
}

/* Whether g_spawn_async() gave its child a clone fd: the series' path was
 * taken (on a kernel without clone4 it falls back to stock GLib). */
static gboolean
series_probe_clonefd (void)
{
  const char *argv[] = { "/bin/true", NULL };
  GError *error = NULL;
  gboolean found = FALSE, done = FALSE;
  struct dirent *d;
  DIR *dir;
  GPid pid;

  if (!g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                      NULL, NULL, &pid, &error))
    bench_die ("g_spawn_async: %s", error->message);
  dir = opendir ("/proc/self/fd");
  if (dir == NULL)
    bench_die ("cannot read /proc/self/fd");
  while ((d = readdir (dir)) != NULL)
    {
      char target[64];
      ssize_t n = readlinkat (dirfd (dir), d->d_name, target, sizeof (target) - 1);

      if (n > 0)
        {
          target[n] = '\0';
          found |= g_str_equal (target, "anon_inode:[clonefd]");
        }
    }
  closedir (dir);
  g_child_watch_add (pid, series_probe_exited, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  return found;
}

static BenchContender *
series_helper_contender (const char *name)
{
  int k = find_contender (name);

  if (k < 0 || !g_str_equal (contenders[k].family, "glib"))
    bench_die ("series helper: no GLib contender %s", name);
  return &contenders[k];
}

/* The helper's main: requests on stdin, replies on stdout.  The pipes
 * move to descriptors of their own (close-on-exec) and fds 0 and 1 become
 * /dev/null and stderr, so that the children it starts inherit what the
 * parent's children do, not the protocol. */
static int
series_helper_main (void)
{
  g_autofree char *stamp = g_build_filename (tmpdir, "stamp-series", NULL);
  g_autofree char *glib = series_loaded_glib ();
  int in_fd = fcntl (0, F_DUPFD_CLOEXEC, 3), out_fd = fcntl (1, F_DUPFD_CLOEXEC, 3);
  int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int stamp_fd = -1;
  char line[256], name[64], *big = NULL;
  FILE *in, *out;

  if (in_fd < 0 || out_fd < 0 || null < 0 || dup2 (null, 0) < 0 || dup2 (2, 1) < 0)
    bench_die ("series helper: %s", g_strerror (errno));
  close (null);
  in = fdopen (in_fd, "r");
  out = fdopen (out_fd, "w");
  fprintf (out, "hello %s %s\n", series_probe_clonefd () ? "clonefd" : "no-clonefd",
           glib != NULL ? glib : "(none)");
  fflush (out);
  while (fgets (line, sizeof (line), in) != NULL)
    {
      GString *reply = g_string_new ("ok");
      int a, b, i;

      g_strchomp (line);
      if (sscanf (line, "seq %63s %d", name, &a) == 2)
        for (i = 0; i < a; i++)
          g_string_append_printf (reply, " %.9g", unit_seq (series_helper_contender (name)));
      else if (sscanf (line, "conc %63s %d %d", name, &a, &b) == 3)
        g_string_append_printf (reply, " %.9g", unit_conc (series_helper_contender (name), a, b));
      else if (sscanf (line, "lat %63s", name) == 1)
        {
          if (stamp_fd < 0)
            stamp_fd = open (stamp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
          if (stamp_fd < 0)
            bench_die ("%s: %s", stamp, g_strerror (errno));
          g_string_append_printf (reply, " %.9g",
                                  unit_latency (series_helper_contender (name), stamp, stamp_fd));
        }
      else if (sscanf (line, "warm %63s", name) == 1)
        unit_warm (series_helper_contender (name));
      else if (sscanf (line, "big %d %d", &a, &b) == 2)
        {
          g_free (big);
          big = g_malloc ((gsize) a << 20);
          memset (big, b, (gsize) a << 20);
        }
      else if (g_str_equal (line, "free"))
        g_clear_pointer (&big, g_free);
      else if (g_str_equal (line, "quit"))
        {
          fprintf (out, "ok\n");
          fflush (out);
          g_string_free (reply, TRUE);
          break;
        }
      else
        bench_die ("series helper: unknown request '%s'", line);
      fprintf (out, "%s\n", reply->str);
      fflush (out);
      g_string_free (reply, TRUE);
    }
  if (stamp_fd >= 0)
    {
      close (stamp_fd);
      g_unlink (stamp);
    }
  return 0;
}

/* Starts the helper under LD_LIBRARY_PATH=series_libdir and checks that it
 * mapped the series' libglib, not the system's. */
static void
series_start (const char *self)
{
  g_autofree char *calibration = NULL, *line = NULL;
  const char *argv[8] = { self, "--series-helper", "--tmpdir", tmpdir, NULL };
  const char *old = g_getenv ("LD_LIBRARY_PATH");
  g_autofree char *path = NULL;
  GError *error = NULL;
  char **envp = g_get_environ ();
  char hello[8192], state[32];
  int to, from, n;

  if (use_tsc)
    {
      calibration = g_strdup_printf ("%a %" G_GUINT64_FORMAT, ns_per_tsc, tsc0);
      argv[4] = "--clock-calibration";
      argv[5] = calibration;
    }
  else
    {
      argv[4] = "--clock";
      argv[5] = "monotonic";
    }
  path = old != NULL && *old != '\0' ? g_strconcat (series_libdir, ":", old, NULL)
                                     : g_strdup (series_libdir);
  envp = g_environ_setenv (envp, "LD_LIBRARY_PATH", path, TRUE);
  if (!g_spawn_async_with_pipes (NULL, (char **) argv, envp, G_SPAWN_DO_NOT_REAP_CHILD,
                                 NULL, NULL, &helper_pid, &to, &from, NULL, &error))
    bench_die ("series helper: %s", error->message);
  g_strfreev (envp);
  helper_to = fdopen (to, "w");
  helper_from = fdopen (from, "r");
  if (fgets (hello, sizeof (hello), helper_from) == NULL ||
      sscanf (hello, "hello %31s %n", state, &n) != 1)
    bench_die ("series helper: did not start (see its message above)");
  g_strchomp (hello);
  series_glib = g_strdup (hello + n);
  series_clonefd = g_str_equal (state, "clonefd");
  if (!g_str_has_prefix (series_glib, series_libdir))
    bench_die ("series helper: mapped %s, not a libglib from %s "
               "(LD_LIBRARY_PATH did not take?)", series_glib, series_libdir);
  fprintf (stderr, "bench: GLib + series: %s, clone fd %s\n", series_glib,
           series_clonefd ? "used" : "not used (no clone4 here: stock fallback)");
}

static void
series_stop (void)
{
  int status;

  if (helper_to == NULL)
    return;
  series_ask (NULL, "quit");
  fclose (helper_to);
  fclose (helper_from);
  helper_to = helper_from = NULL;
  while (waitpid (helper_pid, &status, 0) < 0 && errno == EINTR)
    ;
}

/* --- Scenarios -------------------------------------------------------- */

static void
warm_up (void)
{
  gsize k;

  for (k = 0; k < n_contenders; k++)
    {
      BenchContender *c = &contenders[k];

      if (c->series_of != NULL)
        series_ask (NULL, "warm %s", c->series_of);
      else
        {
          if (c->setup != NULL)
            c->setup (c);
          unit_warm (c);
        }
    }
}

static void
scenario_seq (void)
{
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
            if (helper_to != NULL)
              series_ask (NULL, "big %d %d", large_mib, round + 1);
          }
        for (j = 0; j < n_contenders; j++)
          {
            gsize k = (j + round) % n_contenders;
            BenchContender *c = &contenders[k];

            if (c->series_of != NULL)
              {
                series_ask (results[k].seq[phase], "seq %s %d", c->series_of, seq_batch);
                continue;
              }
            if (c->setup != NULL)
              c->setup (c);
            for (i = 0; i < seq_batch; i++)
              {
                double us = unit_seq (c);

                g_array_append_val (results[k].seq[phase], us);
              }
          }
        g_free (big);
        if (phase == 1 && helper_to != NULL)
          series_ask (NULL, "free");
        fprintf (stderr, "\rseq: round %d/%d", round + 1, seq_rounds);
      }
  fprintf (stderr, "\n");
}

static void
scenario_concurrent (void)
{
  int sizes[2] = { conc_small, conc_large };
  int round, s;
  gsize j;

  for (round = 0; round < conc_rounds; round++)
    for (s = 0; s < 2; s++)
      for (j = 0; j < n_contenders; j++)
        {
          gsize k = (j + round) % n_contenders;
          BenchContender *c = &contenders[k];

          if (c->series_of != NULL)
            series_ask (results[k].conc[s], "conc %s %d %d", c->series_of, sizes[s], sleep_ms);
          else
            {
              double v;

              if (c->setup != NULL)
                c->setup (c);
              v = unit_conc (c, sizes[s], sleep_ms);
              g_array_append_val (results[k].conc[s], v);
            }
          fprintf (stderr, "\rconcurrent: round %d/%d, %d children, %-41s",
                   round + 1, conc_rounds, sizes[s], c->name);
        }
  fprintf (stderr, "\n");
}

static void
scenario_latency (void)
{
  char *file = g_build_filename (tmpdir, "stamp", NULL);
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

          if (c->series_of != NULL)
            {
              series_ask (results[k].latency, "lat %s", c->series_of);
              continue;
            }
          if (c->setup != NULL)
            c->setup (c);
          us = unit_latency (c, file, fd);
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
      const char *series_of = contenders[k].series_of;
      const char *argv[] = { self, "--memory-child",
                             series_of != NULL ? series_of : contenders[k].name,
                             "--memory-children", n, "--tmpdir", tmpdir, NULL };
      g_autofree char *out = NULL;
      g_auto (GStrv) envp = g_get_environ ();
      GError *error = NULL;
      Results *r = &results[k];
      int status;

      /* A series contender's fresh copy gets the series' libglib, as the
       * helper does (series_start()). */
      if (series_of != NULL)
        envp = g_environ_setenv (envp, "LD_LIBRARY_PATH", series_libdir, TRUE);
      fprintf (stderr, "\rmemory: %-41s", contenders[k].name);
      if (!g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_CHILD_INHERITS_STDIN,
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

  /* Issue 27: where the series can start children vfork()-style, the
   * parent's size should not matter.  Only a target where it can: on a
   * kernel without clone4 the series is stock GLib, which forks. */
  for (k = 0; k < n_contenders && series_clonefd; k++)
    if (contenders[k].series_of != NULL && results[k].seq[0]->len > 0)
      add_target ("large/small parent (GLib + series)", contenders[k].name,
                  ratio (median (results[k].seq[1]), median (results[k].seq[0])), 1.1);
}

/* For a "X (GLib + series)" contender, the index of stock "X"; else -1. */
static int
series_twin (gsize k)
{
  return contenders[k].series_of != NULL ? find_contender (contenders[k].series_of) : -1;
}

/* What the table and the JSON say about the series rows. */
static char *
series_summary (void)
{
  if (series_libdir == NULL)
    return g_strdup_printf ("not measured: %s",
                            series_absent != NULL ? series_absent
                                                  : "no --glib-series LIBDIR given");
  if (helper_to == NULL && series_glib == NULL)
    return g_strdup ("not measured: not among --only");
  return g_strdup_printf ("%s, clone fd %s", series_glib,
                          series_clonefd ? "used (clone4 path)"
                                         : "not used: no clone4 here, so the series runs "
                                           "stock GLib's code (a fallback-cost check)");
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

/* Sections 6 and 7: each contender that has a twin (watch_twin(),
 * series_twin()) against it, as ratios of medians from the same rounds;
 * nothing, not even the heading, when no contender has one. */
static void
print_twin_ratios (const char *heading, int (*twin) (gsize k))
{
  gboolean header = FALSE;
  gsize k;

  for (k = 0; k < n_contenders; k++)
    {
      Results *r = &results[k], *t;
      int w = twin (k);

      if (w < 0)
        continue;
      t = &results[w];
      if (!header)
        {
          printf ("\n%s\n", heading);
          printf ("%-41s %10s %10s %10s %10s\n", "contender", "seq small", "seq large",
                  "1000 conc", "latency");
          header = TRUE;
        }
      printf ("%-41s %10.3f %10.3f %10.3f %10.3f\n", contenders[k].name,
              ratio (median (r->seq[0]), median (t->seq[0])),
              ratio (median (r->seq[1]), median (t->seq[1])),
              ratio (median (r->conc[1]), median (t->conc[1])),
              ratio (median (r->latency), median (t->latency)));
    }
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
  {
    g_autofree char *summary = series_summary ();

    printf ("GLib + series rows: %s\n", summary);
  }

  if (results[0].seq[0]->len > 0)
    {
      printf ("\n1-2. sequential spawn + exit notification of /bin/true, µs per child,\n"
              "     median [p25-p75] of %d (%d rounds of %d, interleaved)\n",
              seq_rounds * seq_batch, seq_rounds, seq_batch);
      printf ("%-41s %22s %22s %8s %8s %8s\n", "contender", "small parent",
              g_strdup_printf ("%d MiB parent", large_mib), "lg/sm", "/floor", "/g_spawn");
      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];
          char a[32], b[32];

          g_snprintf (a, sizeof (a), "%.0f [%.0f-%.0f]", median (r->seq[0]),
                      percentile (r->seq[0], 25), percentile (r->seq[0], 75));
          g_snprintf (b, sizeof (b), "%.0f [%.0f-%.0f]", median (r->seq[1]),
                      percentile (r->seq[1], 25), percentile (r->seq[1], 75));
          printf ("%-41s %22s %22s %8.2f %8.2f %8.2f\n", contenders[k].name, a, b,
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
      printf ("%-41s %22s %22s %8s %8s\n", "contender",
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
          printf ("%-41s %22s %22s %8.2f %8.2f\n", contenders[k].name, a, b,
                  ratio (median (r->conc[1]), median (r->conc[0])),
                  ratio (median (r->conc[1]), other_median (fl, conc, 1)));
        }
    }

  if (results[0].latency->len > 0)
    {
      printf ("\n4. exit-notification latency, child's last instruction to callback, µs\n"
              "   (%d samples each, interleaved)\n", latency_samples);
      printf ("%-41s %10s %10s %10s\n", "contender", "median", "p90", "p99");
      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];

          printf ("%-41s %10.1f %10.1f %10.1f\n", contenders[k].name,
                  median (r->latency), percentile (r->latency, 90),
                  percentile (r->latency, 99));
        }
    }

  if (results[0].have_memory)
    {
      printf ("\n5. cost per watched child with %d live children (fresh process each)\n",
              memory_children);
      printf ("%-41s %14s %10s %14s\n", "contender", "RSS KiB/child", "fds/child",
              "threads added");
      for (k = 0; k < n_contenders; k++)
        {
          Results *r = &results[k];

          printf ("%-41s %14.2f %10.2f %14.0f\n", contenders[k].name,
                  (r->rss_kib_after - r->rss_kib_before) / memory_children,
                  (r->fds_after - r->fds_before) / memory_children,
                  r->threads_after - r->threads_before);
        }
    }

  if (results[0].seq[0]->len > 0 || results[0].latency->len > 0)
    print_twin_ratios ("6. spawn_child_wait_async() against spawn_child_watch_add(), same\n"
                       "   backend, same run: ratio of medians (1.00 = no overhead)", watch_twin);
  print_twin_ratios ("7. GLib + series against stock GLib, same interleaved rounds:\n"
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
json_twin_ratios (GString *s, Results *r, Results *t)
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
  {
    g_autofree char *summary = series_summary ();

    /* Paths and our own sentences: no quotes or backslashes in them. */
    g_string_append_printf (s, "    \"glib_series\": {\"libdir\": \"%s\", \"clonefd\": %s, "
                            "\"summary\": \"%s\"},\n",
                            series_libdir != NULL ? series_libdir : "",
                            series_clonefd ? "true" : "false", summary);
  }
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
          g_string_append (s, ",\n     \"over_watch_add\": ");
          json_twin_ratios (s, r, &results[watch_twin (k)]);
        }
      if (series_twin (k) >= 0)
        {
          g_string_append_printf (s, ",\n     \"series_of\": \"%s\", \"over_stock\": ",
                                  contenders[k].series_of);
          json_twin_ratios (s, r, &results[series_twin (k)]);
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
    { "glib-series", 0, 0, G_OPTION_ARG_FILENAME, &series_libdir, "Also measure GLib's contenders against the GLib in LIBDIR (vm/build-glib's PREFIX/lib), in a helper", "LIBDIR" },
    { "glib-series-absent", 0, 0, G_OPTION_ARG_STRING, &series_absent, "Why there is no --glib-series (printed in the table)", "REASON" },
    { "series-helper", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &series_helper, NULL, NULL },
    { "clock-calibration", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &clock_calibration, NULL, NULL },
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
  if (series_libdir != NULL)
    {
      char *real = realpath (series_libdir, NULL);

      /* The helper's /proc/self/maps names the file it mapped, resolved. */
      if (real == NULL)
        bench_die ("--glib-series %s: %s", series_libdir, g_strerror (errno));
      series_libdir = real;
    }
  vm = g_getenv ("LIBSPAWN_VM_KERNEL");
  if (label == NULL)
    label = vm != NULL ? g_strconcat ("guest-", vm, NULL) : g_strdup ("host");

  n_contenders = bench_glib_contenders (contenders, MAX_CONTENDERS);
  if (series_libdir != NULL && memory_child == NULL && !series_helper)
    {
      gsize n = n_contenders;

      /* Next to the stock GLib rows, measured in the helper. */
      for (k = 0; k < n; k++)
        if (g_str_equal (contenders[k].family, "glib"))
          {
            g_assert (n_contenders < MAX_CONTENDERS);
            contenders[n_contenders++] = (BenchContender) {
              .name = g_strconcat (contenders[k].name, SERIES_SUFFIX, NULL),
              .family = "glib-series", .backend = -1,
              .series_of = contenders[k].name,
            };
          }
    }
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

  if (memory_child != NULL || series_helper)
    {
      if (tmpdir == NULL)
        bench_die ("--memory-child and --series-helper need --tmpdir");
      return series_helper ? series_helper_main () : memory_child_main ();
    }

  tmpdir = g_dir_make_tmp ("libspawn-bench-XXXXXX", &error);
  if (tmpdir == NULL)
    bench_die ("%s", error->message);
  atexit (rm_tmpdir);

  for (k = 0; k < n_contenders; k++)
    if (contenders[k].series_of != NULL && helper_to == NULL)
      series_start (self);
  if (series_libdir == NULL)
    {
      g_autofree char *summary = series_summary ();

      fprintf (stderr, "bench: GLib + series rows: %s\n", summary);
    }
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

  series_stop ();
  compute_targets ();
  print_table (uts.release);
  if (json_path != NULL)
    write_json (json_path, uts.release);
  return 0;
}
