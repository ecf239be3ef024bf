/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-many.c - the "many" scenario (issue 37): N children alive at once,
 * collected as they end while the loop runs
 *
 * Each child of a batch waits on a shared lock of a file the parent holds
 * exclusively until the last child has started, then sleeps its share of
 * the spread (child i: i * spread / N ms) and exits: so all N are alive
 * when the last starts, and their exits come one by one over the spread
 * while the contender's loop runs, as under a build or test runner.  Per
 * contender and N: the parent's CPU time per child (getrusage, every
 * thread, from before the first start to the last exit delivered), the
 * wall time from the release to the last exit delivered, and the growth
 * of our resident memory per live child.  Run only when asked
 * (--scenarios many): 16000 children are heavy.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#define MANY_MAX_SIZES 8

typedef struct {
  GArray *cpu_us[MANY_MAX_SIZES];     /* per child */
  GArray *wall_ms[MANY_MAX_SIZES];
  GArray *rss_kib[MANY_MAX_SIZES];    /* per child */
  int early[MANY_MAX_SIZES];          /* exits delivered before the release */
} ManyResults;

static ManyResults many_results[BENCH_MAX_CONTENDERS];
static int many_sizes[MANY_MAX_SIZES];
static int n_many_sizes;
static char *many_skipped;            /* why the larger sizes were not run */

/* The contenders the issue asks for: the floor, libspawn (plain and
 * shared watches) and SpawnProcess on each backend, and GLib's two. */
static gboolean
many_wants (const BenchContender *c)
{
  return g_str_equal (c->family, "libspawn") || g_str_equal (c->family, "libspawn-shared") ||
         g_str_equal (c->family, "SpawnProcess") ||
         g_str_equal (c->family, "glib") || g_str_equal (c->name, "posix_spawn+pidfd");
}

static double
many_cpu_us (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
         ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static double
many_rss_kib (void)
{
  long size = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");

  if (f == NULL || fscanf (f, "%ld %ld", &size, &resident) != 2)
    bench_die ("/proc/self/statm: cannot read it");
  fclose (f);
  return resident * (sysconf (_SC_PAGESIZE) / 1024.0);
}

/* Processes on the machine now, for the pid_max headroom. */
static int
many_count_pids (void)
{
  GDir *dir = g_dir_open ("/proc", 0, NULL);
  const char *name;
  int n = 0;

  if (dir == NULL)
    return 0;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_ascii_isdigit (name[0]))
      n++;
  g_dir_close (dir);
  return n;
}

/* One batch of @n gated children with contender @c. */
static void
many_unit (BenchRun *run, BenchContender *c, int n, int spread_ms, ManyResults *r, int j)
{
  char *gate = g_build_filename (run->tmpdir, "gate", NULL);
  BenchSlot *slots = g_new0 (BenchSlot, n);
  double cpu0, rss0, rss1;
  gint64 released, last = 0;
  int fd, i, early = 0;

  fd = open (gate, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || flock (fd, LOCK_EX) < 0)
    bench_die ("%s: %s", gate, g_strerror (errno));
  if (c->setup != NULL)
    c->setup (c);
  rss0 = many_rss_kib ();
  cpu0 = many_cpu_us ();
  for (i = 0; i < n; i++)
    {
      char ms[16];
      const char *argv[] = { run->child_path, "gate", gate, ms, NULL };

      g_snprintf (ms, sizeof (ms), "%d", (int) ((gint64) i * spread_ms / n));
      slots[i].fd = -1;
      c->start (c, argv, &slots[i]);
    }
  rss1 = many_rss_kib ();
  released = bench_now_ns ();
  flock (fd, LOCK_UN);
  c->wait (c);
  if (c->cleanup != NULL)
    for (i = 0; i < n; i++)
      c->cleanup (c, &slots[i]);
  g_array_append_val (r->cpu_us[j], (double) { (many_cpu_us () - cpu0) / n });
  for (i = 0; i < n; i++)
    {
      last = MAX (last, slots[i].done_ns);
      early += slots[i].done_ns < released;
    }
  g_array_append_val (r->wall_ms[j], (double) { (last - released) / 1e6 });
  g_array_append_val (r->rss_kib[j], (double) { (rss1 - rss0) / n });
  r->early[j] += early;
  close (fd);
  unlink (gate);
  g_free (gate);
  g_free (slots);
}

/* Parses @sizes ("1000,4000,16000"); drops the sizes this machine cannot
 * hold (pid_max, RLIMIT_NOFILE), saying why. */
static void
many_plan (const char *sizes)
{
  g_auto (GStrv) list = g_strsplit (sizes, ",", -1);
  g_autofree char *pid_max_s = NULL;
  struct rlimit rl;
  int pid_max = 0, i;

  if (g_file_get_contents ("/proc/sys/kernel/pid_max", &pid_max_s, NULL, NULL))
    pid_max = atoi (pid_max_s);
  getrlimit (RLIMIT_NOFILE, &rl);
  for (i = 0; list[i] != NULL && n_many_sizes < MANY_MAX_SIZES; i++)
    {
      int n = atoi (list[i]);
      int headroom = pid_max - many_count_pids () - 1000;

      if (n < 1)
        bench_die ("--many-sizes: %s is not a count", list[i]);
      if (pid_max > 0 && n > headroom)
        {
          many_skipped = g_strdup_printf ("N = %d and above not run: pid_max is %d and %d "
                                          "processes run already (1000 kept free)",
                                          n, pid_max, pid_max - 1000 - headroom);
          break;
        }
      if ((rlim_t) n + 1000 > rl.rlim_cur)
        {
          many_skipped = g_strdup_printf ("N = %d and above not run: RLIMIT_NOFILE is %lu",
                                          n, (unsigned long) rl.rlim_cur);
          break;
        }
      many_sizes[n_many_sizes++] = n;
    }
}

void
bench_many_scenario (BenchRun *run, const char *sizes, int spread_ms, int rounds)
{
  gsize k;
  int j, round, turn = 0;

  many_plan (sizes);
  if (many_skipped != NULL)
    fprintf (stderr, "many: %s\n", many_skipped);
  for (k = 0; k < run->n_contenders; k++)
    for (j = 0; j < n_many_sizes; j++)
      {
        many_results[k].cpu_us[j] = g_array_new (FALSE, FALSE, sizeof (double));
        many_results[k].wall_ms[j] = g_array_new (FALSE, FALSE, sizeof (double));
        many_results[k].rss_kib[j] = g_array_new (FALSE, FALSE, sizeof (double));
      }
  for (round = 0; round < rounds; round++)
    for (j = 0; j < n_many_sizes; j++, turn++)
      for (k = 0; k < run->n_contenders; k++)
        {
          /* Rotated each turn, as the other scenarios do. */
          gsize kk = (k + turn) % run->n_contenders;
          BenchContender *c = &run->contenders[kk];

          if (!many_wants (c) || c->series_of != NULL)
            continue;
          fprintf (stderr, "\rmany: round %d/%d, N = %d, %-41s", round + 1, rounds,
                   many_sizes[j], c->name);
          many_unit (run, c, many_sizes[j], spread_ms, &many_results[kk], j);
        }
  fprintf (stderr, "\n");
}

static double
many_median (GArray *a)
{
  double *v;
  double m;

  if (a == NULL || a->len == 0)
    return -1;
  v = g_memdup2 (a->data, a->len * sizeof (double));
  for (guint i = 1; i < a->len; i++)
    for (guint p = i; p > 0 && v[p - 1] > v[p]; p--)
      {
        double t = v[p];
        v[p] = v[p - 1];
        v[p - 1] = t;
      }
  m = a->len % 2 ? v[a->len / 2] : (v[a->len / 2 - 1] + v[a->len / 2]) / 2;
  g_free (v);
  return m;
}

/* The table: per N, CPU µs per child (and /floor), wall ms, KiB per
 * child; then each contender's largest N over its smallest. */
void
bench_many_print (const BenchRun *run)
{
  int fl = bench_find_contender (run, "posix_spawn+pidfd");
  gsize k;
  int j;

  if (n_many_sizes == 0)
    return;
  printf ("\n8. many: N children alive at once, exits spread while the loop runs;\n"
          "   parent CPU µs per child (/floor), wall ms from the last start to the\n"
          "   last exit delivered, RSS KiB per live child; median of the rounds\n");
  if (many_skipped != NULL)
    printf ("   %s\n", many_skipped);
  printf ("%-28s", "contender");
  for (j = 0; j < n_many_sizes; j++)
    {
      char head[48];

      g_snprintf (head, sizeof (head), "N=%d cpu(/fl) wall rss", many_sizes[j]);
      printf ("  %27s", head);
    }
  printf ("  %8s\n", "last/1st");
  for (k = 0; k < run->n_contenders; k++)
    {
      const ManyResults *r = &many_results[k];
      double first = many_median (r->cpu_us[0]);

      if (r->cpu_us[0] == NULL || r->cpu_us[0]->len == 0)
        continue;
      printf ("%-28s", run->contenders[k].name);
      for (j = 0; j < n_many_sizes; j++)
        {
          double cpu = many_median (r->cpu_us[j]);
          double floor_cpu = fl >= 0 ? many_median (many_results[fl].cpu_us[j]) : -1;

          printf ("  %7.0f (%4.2f) %6.0f %5.1f%s", cpu,
                  floor_cpu > 0 ? cpu / floor_cpu : 0, many_median (r->wall_ms[j]),
                  many_median (r->rss_kib[j]), r->early[j] ? "!" : " ");
        }
      printf ("  %8.2f\n", first > 0 ? many_median (r->cpu_us[n_many_sizes - 1]) / first : 0);
    }
  printf ("   ! = some exits were delivered before the last start (the gate failed)\n");
}

/* The scenario's figures as one JSON object, for --many-json. */
void
bench_many_write_json (const BenchRun *run, const char *path)
{
  GString *s = g_string_new ("{\"unit\": {\"cpu\": \"us per child\", \"wall\": \"ms\", "
                             "\"rss\": \"KiB per child\"},\n \"sizes\": [");
  GError *error = NULL;
  gsize k;
  int j;

  for (j = 0; j < n_many_sizes; j++)
    g_string_append_printf (s, "%s%d", j ? ", " : "", many_sizes[j]);
  g_string_append_printf (s, "],\n \"skipped\": \"%s\",\n \"contenders\": [",
                          many_skipped != NULL ? many_skipped : "");
  for (k = 0; k < run->n_contenders; k++)
    {
      const ManyResults *r = &many_results[k];

      if (r->cpu_us[0] == NULL || r->cpu_us[0]->len == 0)
        continue;
      g_string_append_printf (s, "%s\n  {\"name\": \"%s\", \"rows\": [", s->str[s->len - 1] == '[' ? "" : ",",
                              run->contenders[k].name);
      for (j = 0; j < n_many_sizes; j++)
        g_string_append_printf (s, "%s{\"n\": %d, \"cpu_us\": %.1f, \"wall_ms\": %.1f, "
                                "\"rss_kib\": %.2f, \"early\": %d}", j ? ", " : "",
                                many_sizes[j], many_median (r->cpu_us[j]),
                                many_median (r->wall_ms[j]), many_median (r->rss_kib[j]),
                                r->early[j]);
      g_string_append (s, "]}");
    }
  g_string_append (s, "\n ]}\n");
  if (!g_file_set_contents (path, s->str, -1, &error))
    bench_die ("%s", error->message);
  g_string_free (s, TRUE);
}
