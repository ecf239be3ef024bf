/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-memory.c - the memory scenario: a fresh process per contender
 *
 * bench_memory_scenario() starts this program once per contender with
 * --memory-child NAME (a series contender's copy under the series'
 * LD_LIBRARY_PATH), so that no contender inherits another's heap; in the
 * copy, bench_memory_child_main() reads /proc/self before and with N live
 * watched children and prints the figures on one line.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
int
bench_memory_child_main (BenchRun *run, const char *name)
{
  int k = bench_find_contender (run, name);
  BenchContender *c;
  char *fifo = g_build_filename (run->tmpdir, "fifo", NULL);
  const char *argv[] = { run->child_path, "block", fifo, NULL };
  const char *quick_argv[] = { "/bin/true", NULL };
  BenchSlot *slots = g_new0 (BenchSlot, run->memory_children);
  double rss0, thr0, fds0, rss1, thr1, fds1;
  char *bytes;
  int fd, i;

  if (k < 0)
    bench_die ("no contender %s here", name);
  c = &run->contenders[k];
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
  bench_run_batch (c, quick_argv, slots, 3);
  memset (slots, 0, sizeof (BenchSlot) * run->memory_children);
  self_status (&rss0, &thr0, &fds0);

  for (i = 0; i < run->memory_children; i++)
    {
      slots[i].fd = -1;
      c->start (c, argv, &slots[i]);
    }
  for (i = 0; i < 10; i++)
    g_main_context_iteration (NULL, FALSE);
  self_status (&rss1, &thr1, &fds1);

  bytes = g_malloc0 (run->memory_children);
  if (write (fd, bytes, run->memory_children) != run->memory_children)
    bench_die ("%s: %s", fifo, g_strerror (errno));
  g_free (bytes);
  c->wait (c);
  if (c->cleanup != NULL)
    for (i = 0; i < run->memory_children; i++)
      c->cleanup (c, &slots[i]);
  close (fd);
  g_unlink (fifo);
  printf ("MEM %.0f %.0f %.0f %.0f %.0f %.0f\n", rss0, rss1, fds0, fds1, thr0, thr1);
  return 0;
}

void
bench_memory_scenario (BenchRun *run, const char *self)
{
  char n[16];
  gsize k;

  g_snprintf (n, sizeof (n), "%d", run->memory_children);
  for (k = 0; k < run->n_contenders; k++)
    {
      const char *series_of = run->contenders[k].series_of;
      const char *argv[] = { self, "--memory-child",
                             series_of != NULL ? series_of : run->contenders[k].name,
                             "--memory-children", n, "--tmpdir", run->tmpdir, NULL };
      g_autofree char *out = NULL;
      g_auto (GStrv) envp = g_get_environ ();
      GError *error = NULL;
      BenchResults *r = &run->results[k];
      int status;

      /* A series contender's fresh copy gets the series' libglib, as the
       * helper does (bench_series_start()). */
      if (series_of != NULL)
        envp = g_environ_setenv (envp, "LD_LIBRARY_PATH", run->series_libdir, TRUE);
      fprintf (stderr, "\rmemory: %-41s", run->contenders[k].name);
      if (!g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_CHILD_INHERITS_STDIN,
                         NULL, NULL, &out, NULL, &status, &error))
        bench_die ("%s: %s", self, error->message);
      if (!g_spawn_check_wait_status (status, &error))
        bench_die ("memory %s: %s", run->contenders[k].name, error->message);
      if (out == NULL ||
          sscanf (out, "MEM %lf %lf %lf %lf %lf %lf", &r->rss_kib_before,
                  &r->rss_kib_after, &r->fds_before, &r->fds_after,
                  &r->threads_before, &r->threads_after) != 6)
        bench_die ("memory %s: no result", run->contenders[k].name);
      r->have_memory = TRUE;
    }
  fprintf (stderr, "\n");
}
