/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* parallel-run [-j N] COMMAND...: run shell commands, N at a time, on a
 * GMainLoop, and print how each one ended and the CPU time it used.
 *
 *   $ parallel-run -j 2 'sleep 1' 'exit 3' 'kill -9 $$'
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include <libspawn/libspawn.h>

typedef struct {
  GMainLoop *loop;
  char **commands;
  int next, running, failed, jobs;
} Runner;

typedef struct {
  Runner *runner;
  int index;
  gint64 started;
} Job;

static void start_more (Runner *r);

static void
on_child_exit (SpawnChild *child, const SpawnExitInfo *info, const GError *error,
         gpointer data)
{
  Job *job = data;
  Runner *r = job->runner;
  double wall = (g_get_monotonic_time () - job->started) / 1e6;

  if (error != NULL)
    printf ("[%d] %-24s pid %-6d %s\n", job->index, r->commands[job->index],
            (int) spawn_child_get_pid (child), error->message);
  else
    printf ("[%d] %-24s pid %-6d %s %-3d  wall %.2fs  user %.3fs  sys %.3fs\n",
            job->index, r->commands[job->index], (int) spawn_child_get_pid (child),
            info->kind == SPAWN_EXIT_EXITED ? "exit  " :
            info->kind == SPAWN_EXIT_KILLED ? "signal" : "core  ",
            info->status, wall, info->utime_usec / 1e6, info->stime_usec / 1e6);
  if (error != NULL || info->kind != SPAWN_EXIT_EXITED || info->status != 0)
    r->failed++;
  r->running--;
  g_free (job);
  start_more (r);
}

static void
start_more (Runner *r)
{
  while (r->running < r->jobs && r->commands[r->next] != NULL)
    {
      const char *argv[] = { "/bin/sh", "-c", r->commands[r->next], NULL };
      GError *error = NULL;
      Job *job = g_new0 (Job, 1);
      SpawnChild *child;

      job->runner = r;
      job->index = r->next++;
      job->started = g_get_monotonic_time ();
      child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                              NULL, NULL, 0, NULL, NULL, NULL, &error);
      if (child == NULL)
        {
          printf ("[%d] %s: %s\n", job->index, r->commands[job->index], error->message);
          g_clear_error (&error);
          r->failed++;
          g_free (job);
          continue;
        }
      r->running++;
      spawn_child_watch_add (child, on_child_exit, job);
      spawn_child_unref (child);
    }
  if (r->running == 0)
    g_main_loop_quit (r->loop);
}

int
main (int argc, char **argv)
{
  Runner r = { 0 };
  int jobs = 4;
  GOptionEntry entries[] = {
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Commands to run at once", "N" },
    { NULL },
  };
  GOptionContext *ctx = g_option_context_new ("COMMAND... - run shell commands in parallel");
  GError *error = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc < 2 || jobs < 1)
    {
      fprintf (stderr, "%s\n", error ? error->message : "usage: parallel-run [-j N] COMMAND...");
      return 2;
    }
  g_option_context_free (ctx);

  printf ("backend: %s, %d at a time\n", spawn_backend_to_string (spawn_get_backend ()), jobs);
  r.loop = g_main_loop_new (NULL, FALSE);
  r.commands = argv + 1;
  r.jobs = jobs;
  start_more (&r);
  if (r.running > 0)
    g_main_loop_run (r.loop);
  g_main_loop_unref (r.loop);
  printf ("%d of %d commands failed\n", r.failed, argc - 1);
  return r.failed ? 1 : 0;
}
