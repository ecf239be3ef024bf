/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn-churn.c - start, kill and lose children as fast as four threads
 * can, on every backend this kernel has, for a bounded time; then check
 * that every child's end was reported as it happened and that nothing was
 * left behind (fd, child, zombie).
 *
 * Usage: spawn-churn [SECONDS] (default 20, shared by the backends).
 * TAP on stdout. It proves nothing about speed (see tests/bench); it is
 * load for the debug guest, next to stress-ng (tests/stress-guest), where
 * the kernel log is checked for KASAN, lockdep and kmemleak reports.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <libspawn/libspawn.h>

#define THREADS 4
#define IN_FLIGHT 8

enum { EXPECT_EXIT, EXPECT_KILL, EXPECT_NOENT, N_MODES };

typedef struct
{
  const char *helper;
  gint64 deadline;
  guint started[N_MODES];
  guint wrong;
  int in_flight;
  GMainContext *ctx;
} Worker;

typedef struct
{
  Worker *w;
  int mode;
  int code;
} Expect;

static void
on_child_end (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
         const GError *error, gpointer data)
{
  Expect *e = data;
  gboolean right;

  if (e->mode == EXPECT_EXIT)
    right = info && info->kind == SPAWN_EXIT_EXITED && info->status == e->code;
  else
    right = info && info->kind == SPAWN_EXIT_KILLED && info->status == SIGKILL;
  if (!right)
    {
      e->w->wrong++;
      printf ("# child expected to %s %d ended with %s %d%s%s\n",
              e->mode == EXPECT_EXIT ? "exit" : "be killed by", e->code,
              info ? (info->kind == SPAWN_EXIT_EXITED ? "exit" : "signal") : "error",
              info ? info->status : 0, error ? ": " : "",
              error ? error->message : "");
    }
  e->w->in_flight--;
}

static void
start_one (Worker *w)
{
  guint n = w->started[0] + w->started[1] + w->started[2];
  int mode = n % N_MODES;
  g_autofree char *code = g_strdup_printf ("%u", n % 100);
  const char *exit_argv[] = { w->helper, "exit", code, NULL };
  const char *sleep_argv[] = { w->helper, "sleep", "60000", NULL };
  const char *noent_argv[] = { "/nonexistent/spawn-churn", NULL };
  const char * const *argv = mode == EXPECT_EXIT ? exit_argv :
                             mode == EXPECT_KILL ? sleep_argv : noent_argv;
  GError *error = NULL;
  SpawnChild *child;
  Expect *e;

  w->started[mode]++;
  child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL,
                          NULL, 0, NULL, NULL, NULL, &error);
  if (mode == EXPECT_NOENT)
    {
      if (child || !g_error_matches (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT))
        {
          w->wrong++;
          printf ("# a missing program gave %s\n", error ? error->message : "a child");
        }
      g_clear_error (&error);
      g_clear_pointer (&child, spawn_child_unref);
      return;
    }
  if (!child)
    {
      w->wrong++;
      printf ("# spawn failed: %s\n", error->message);
      g_error_free (error);
      return;
    }
  e = g_new (Expect, 1);
  e->w = w;
  e->mode = mode;
  e->code = mode == EXPECT_EXIT ? (int) (n % 100) : SIGKILL;
  w->in_flight++;
  spawn_child_watch_add_full (G_PRIORITY_DEFAULT, child, on_child_end, e, g_free);
  if (mode == EXPECT_KILL && !spawn_child_send_signal (child, SIGKILL, &error))
    {
      w->wrong++;
      printf ("# SIGKILL failed: %s\n", error->message);
      g_clear_error (&error);
    }
  spawn_child_unref (child);
}

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;
  gint64 give_up = w->deadline + 60 * G_USEC_PER_SEC;

  g_main_context_push_thread_default (w->ctx);
  while (g_get_monotonic_time () < w->deadline || w->in_flight > 0)
    {
      while (g_get_monotonic_time () < w->deadline && w->in_flight < IN_FLIGHT)
        start_one (w);
      if (g_get_monotonic_time () > give_up)
        {
          printf ("# %d children never reported, 60 s after the end\n", w->in_flight);
          w->wrong += w->in_flight;
          break;
        }
      g_main_context_iteration (w->ctx, w->in_flight > 0);
    }
  g_main_context_pop_thread_default (w->ctx);
  return NULL;
}

static int
count_fds (void)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  int n = 0;

  while (dir && g_dir_read_name (dir))
    n++;
  if (dir)
    g_dir_close (dir);
  return n;
}

/* Children end a moment after their report (the kernel releases them
 * after the fd turns readable): give them 2 s to be gone. */
static gboolean
no_child_left (void)
{
  int i;

  for (i = 0; i < 200; i++)
    {
      if (waitpid (-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD)
        return TRUE;
      g_usleep (10 * 1000);
    }
  return FALSE;
}

int
main (int argc, char **argv)
{
  const SpawnBackend backends[] = { SPAWN_BACKEND_CLONEFD, SPAWN_BACKEND_PIDFD,
                                    SPAWN_BACKEND_SIGCHLD };
  double seconds = argc > 1 ? g_ascii_strtod (argv[1], NULL) : 20;
  g_autofree char *dir = g_path_get_dirname (argv[0]);
  g_autofree char *helper = g_build_filename (dir, "spawn-helper", NULL);
  int n_avail = 0, t = 0, fds_before;
  gsize b, i;

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (seconds <= 0)
    {
      fprintf (stderr, "usage: spawn-churn [SECONDS > 0]\n");
      return 2;
    }
  for (b = 0; b < G_N_ELEMENTS (backends); b++)
    n_avail += spawn_backend_is_available (backends[b]);
  /* THREADS * IN_FLIGHT children at once per backend first: what a backend
   * keeps for good (a probe's fd; sigchld recycles an entry and its eventfd
   * per child watched at once, see libspawn/backends/sigchld.c) is not a leak. */
  for (b = 0; b < G_N_ELEMENTS (backends); b++)
    {
      const char *sleep_argv[] = { helper, "sleep", "60000", NULL };
      SpawnChild *warm[THREADS * IN_FLIGHT];

      if (!spawn_backend_is_available (backends[b]) ||
          !spawn_set_backend (backends[b], NULL))
        continue;
      for (i = 0; i < G_N_ELEMENTS (warm); i++)
        warm[i] = spawn_async_fd (NULL, sleep_argv, NULL, 0, NULL, NULL, -1, -1,
                                  -1, NULL, NULL, 0, NULL, NULL, NULL, NULL);
      for (i = 0; i < G_N_ELEMENTS (warm); i++)
        if (warm[i])
          {
            spawn_child_send_signal (warm[i], SIGKILL, NULL);
            spawn_child_wait (warm[i], NULL, NULL, NULL);
            spawn_child_unref (warm[i]);
          }
    }
  fds_before = count_fds ();
  for (b = 0; b < G_N_ELEMENTS (backends); b++)
    {
      const char *name = spawn_backend_to_string (backends[b]);
      Worker w[THREADS] = { 0 };
      GThread *threads[THREADS];
      guint total[N_MODES] = { 0 }, wrong = 0;
      GError *error = NULL;

      if (!spawn_backend_is_available (backends[b]))
        {
          printf ("ok %d churn %s # SKIP backend not available on this kernel\n", ++t, name);
          continue;
        }
      if (!spawn_set_backend (backends[b], &error))
        {
          printf ("not ok %d churn %s: %s\n", ++t, name, error->message);
          g_clear_error (&error);
          continue;
        }
      for (i = 0; i < THREADS; i++)
        {
          w[i].helper = helper;
          w[i].deadline = g_get_monotonic_time () + seconds / n_avail * G_USEC_PER_SEC;
          w[i].ctx = g_main_context_new ();
          threads[i] = g_thread_new ("churn", worker_main, &w[i]);
        }
      for (i = 0; i < THREADS; i++)
        {
          g_thread_join (threads[i]);
          g_main_context_unref (w[i].ctx);
          total[EXPECT_EXIT] += w[i].started[EXPECT_EXIT];
          total[EXPECT_KILL] += w[i].started[EXPECT_KILL];
          total[EXPECT_NOENT] += w[i].started[EXPECT_NOENT];
          wrong += w[i].wrong;
        }
      printf ("%sok %d churn %s: %u exited, %u killed, %u missing programs, %u wrong\n",
              wrong || !total[EXPECT_EXIT] ? "not " : "", ++t, name,
              total[EXPECT_EXIT], total[EXPECT_KILL], total[EXPECT_NOENT], wrong);
    }
  printf ("%sok %d no child or zombie left\n", no_child_left () ? "" : "not ", ++t);
  /* sigchld's entries are a high-water mark of children watched at once,
   * which the warm-up reaches within a few (each thread can have one more
   * being started); a per-child leak would be thousands. */
  i = count_fds ();
  printf ("%sok %d no fd leaked (%d before, %d after, up to %d allowed)\n",
          (int) i <= fds_before + THREADS ? "" : "not ", ++t, fds_before,
          (int) i, fds_before + THREADS);
  if ((int) i > fds_before + THREADS)
    system ("ls -l /proc/$PPID/fd | sed 's/^/# /'");

  printf ("1..%d\n", t);
  return 0;
}
