/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-series.c - GLib + series: the helper process
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
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* GLib + series: the helper, once started. */
static GPid helper_pid;
static FILE *helper_to, *helper_from;
static char *series_glib;       /* the libglib the helper loaded */
static gboolean series_clonefd; /* its first g_spawn_async had a clone fd */

/* The request/reply protocol, one line each way: "REQUEST ARGS" and
 * "ok [VALUE...]".  Values are appended to @out when it is not NULL. */
void
bench_series_ask (GArray *out, const char *format, ...)
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
series_helper_contender (BenchRun *run, const char *name)
{
  int k = bench_find_contender (run, name);

  if (k < 0 || !g_str_equal (run->contenders[k].family, "glib"))
    bench_die ("series helper: no GLib contender %s", name);
  return &run->contenders[k];
}

/* The helper's main: requests on stdin, replies on stdout.  The pipes
 * move to descriptors of their own (close-on-exec) and fds 0 and 1 become
 * /dev/null and stderr, so that the children it starts inherit what the
 * parent's children do, not the protocol. */
int
bench_series_helper_main (BenchRun *run)
{
  g_autofree char *stamp = g_build_filename (run->tmpdir, "stamp-series", NULL);
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
          g_string_append_printf (reply, " %.9g",
                                  bench_unit_seq (series_helper_contender (run, name)));
      else if (sscanf (line, "conc %63s %d %d", name, &a, &b) == 3)
        g_string_append_printf (reply, " %.9g",
                                bench_unit_conc (series_helper_contender (run, name),
                                                 run->child_path, a, b));
      else if (sscanf (line, "lat %63s", name) == 1)
        {
          if (stamp_fd < 0)
            stamp_fd = open (stamp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
          if (stamp_fd < 0)
            bench_die ("%s: %s", stamp, g_strerror (errno));
          g_string_append_printf (reply, " %.9g",
                                  bench_unit_latency (series_helper_contender (run, name),
                                                      run->child_path, stamp, stamp_fd));
        }
      else if (sscanf (line, "warm %63s", name) == 1)
        bench_unit_warm (series_helper_contender (run, name));
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
void
bench_series_start (const BenchRun *run, const char *self)
{
  g_autofree char *calibration = NULL, *line = NULL;
  const char *argv[8] = { self, "--series-helper", "--tmpdir", run->tmpdir, NULL };
  const char *old = g_getenv ("LD_LIBRARY_PATH");
  g_autofree char *path = NULL;
  GError *error = NULL;
  char **envp = g_get_environ ();
  char hello[8192], state[32];
  int to, from, n;

  if (bench_clock_uses_tsc ())
    {
      calibration = bench_clock_calibration ();
      argv[4] = "--clock-calibration";
      argv[5] = calibration;
    }
  else
    {
      argv[4] = "--clock";
      argv[5] = "monotonic";
    }
  path = old != NULL && *old != '\0' ? g_strconcat (run->series_libdir, ":", old, NULL)
                                     : g_strdup (run->series_libdir);
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
  if (!g_str_has_prefix (series_glib, run->series_libdir))
    bench_die ("series helper: mapped %s, not a libglib from %s "
               "(LD_LIBRARY_PATH did not take?)", series_glib, run->series_libdir);
  fprintf (stderr, "bench: GLib + series: %s, clone fd %s\n", series_glib,
           series_clonefd ? "used" : "not used (no clone4 here: stock fallback)");
}

void
bench_series_stop (void)
{
  int status;

  if (helper_to == NULL)
    return;
  bench_series_ask (NULL, "quit");
  fclose (helper_to);
  fclose (helper_from);
  helper_to = helper_from = NULL;
  while (waitpid (helper_pid, &status, 0) < 0 && errno == EINTR)
    ;
}

gboolean
bench_series_running (void)
{
  return helper_to != NULL;
}

gboolean
bench_series_clonefd (void)
{
  return series_clonefd;
}

char *
bench_series_summary (const BenchRun *run)
{
  if (run->series_libdir == NULL)
    return g_strdup_printf ("not measured: %s",
                            run->series_absent != NULL ? run->series_absent
                                                       : "no --glib-series LIBDIR given");
  if (helper_to == NULL && series_glib == NULL)
    return g_strdup ("not measured: not among --only");
  return g_strdup_printf ("%s, clone fd %s", series_glib,
                          series_clonefd ? "used (clone4 path)"
                                         : "not used: no clone4 here, so the series runs "
                                           "stock GLib's code (a fallback-cost check)");
}
