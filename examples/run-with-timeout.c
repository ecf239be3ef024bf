/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* run-with-timeout [-t MS] PROGRAM [ARG...]: run a program with a
 * SpawnProcess, stream its stdout and stderr line by line as they come,
 * kill it if it runs longer than MS milliseconds, and exit as it did
 * (124 after a timeout, like timeout(1); 128 + N after signal N).
 *
 *   $ run-with-timeout -t 500 sh -c 'echo one; echo two >&2; sleep 5'
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include <libspawn/libspawn.h>

typedef struct {
  GMainLoop *loop;
  gboolean timed_out;
  int status;
} Run;

static void
print_lines (SpawnProcess *process, SpawnProcessChannel channel)
{
  const char *prefix = channel == SPAWN_PROCESS_STDOUT ? "out" : "err";
  char *line;

  while ((line = spawn_process_read_line (process, channel)) != NULL)
    {
      printf ("%s| %s\n", prefix, line);
      g_free (line);
    }
  fflush (stdout);
}

static void
on_stdout (SpawnProcess *process, gpointer data G_GNUC_UNUSED)
{
  print_lines (process, SPAWN_PROCESS_STDOUT);
}

static void
on_stderr (SpawnProcess *process, gpointer data G_GNUC_UNUSED)
{
  print_lines (process, SPAWN_PROCESS_STDERR);
}

static void
on_error (SpawnProcess *process G_GNUC_UNUSED, const GError *error, gpointer data)
{
  Run *run = data;

  if (error->code == SPAWN_PROCESS_ERROR_TIMED_OUT)
    run->timed_out = TRUE;
  /* A crash is told by "finished", a failed start by main(). */
  if (error->code != SPAWN_PROCESS_ERROR_CRASHED &&
      error->code != SPAWN_PROCESS_ERROR_FAILED_TO_START)
    printf ("error: %s\n", error->message);
}

static void
on_finished (SpawnProcess *process, int code, int status, gpointer info_ptr, gpointer data)
{
  const SpawnExitInfo *info = info_ptr;
  Run *run = data;

  /* A last line without a newline is readable once the pipes are shut. */
  print_lines (process, SPAWN_PROCESS_STDOUT);
  print_lines (process, SPAWN_PROCESS_STDERR);
  if (info == NULL)
    {
      printf ("ended, status lost\n");
      run->status = 125;
    }
  else
    {
      printf ("%s %d, user %.3fs, sys %.3fs (%s backend)\n",
              status == SPAWN_PROCESS_EXIT_NORMAL ? "exit" : "signal", code,
              info->utime_usec / 1e6, info->stime_usec / 1e6,
              spawn_backend_to_string (spawn_get_backend ()));
      run->status = status == SPAWN_PROCESS_EXIT_NORMAL ? code : 128 + code;
    }
  if (run->timed_out)
    run->status = 124;
  g_main_loop_quit (run->loop);
}

int
main (int argc, char **argv)
{
  g_autoptr (SpawnProcess) process = NULL;
  g_autoptr (GError) error = NULL;
  Run run = { NULL, FALSE, 0 };
  int timeout_ms = 0;
  int first = 1;

  if (argc > 2 && g_str_equal (argv[1], "-t"))
    {
      timeout_ms = atoi (argv[2]);
      first = 3;
    }
  if (first >= argc)
    {
      fprintf (stderr, "usage: run-with-timeout [-t MS] PROGRAM [ARG...]\n");
      return 2;
    }

  process = spawn_process_new ((const char * const *) argv + first);
  spawn_process_set_channel_mode (process, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  spawn_process_set_kill_timeout (process, timeout_ms);
  run.loop = g_main_loop_new (NULL, FALSE);
  g_signal_connect (process, "ready-read-stdout", G_CALLBACK (on_stdout), NULL);
  g_signal_connect (process, "ready-read-stderr", G_CALLBACK (on_stderr), NULL);
  g_signal_connect (process, "error-occurred", G_CALLBACK (on_error), &run);
  g_signal_connect (process, "finished", G_CALLBACK (on_finished), &run);
  if (!spawn_process_start (process, &error))
    {
      fprintf (stderr, "run-with-timeout: %s\n", error->message);
      g_main_loop_unref (run.loop);
      return 127;
    }
  g_main_loop_run (run.loop);
  g_main_loop_unref (run.loop);
  return run.status;
}
