/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* contenders-glib.c - libspawn (per backend; watch and GIO-style wait),
 * SpawnProcess (per backend), g_spawn_async + g_child_watch_add and
 * GSubprocess
 *
 * Each is used the way its documentation suggests for "start a program,
 * tell me when it ends", with the defaults an application would use: the
 * child's stdin is /dev/null, its stdout and stderr are ours.
 */
#include "bench.h"

#include <gio/gio.h>

#include <string.h>

#include <libspawn/libspawn.h>

static void
libspawn_setup (BenchContender *c)
{
  GError *error = NULL;

  if (!spawn_set_backend (c->backend, &error))
    bench_die ("%s: %s", c->name, error->message);
}

static void
libspawn_exited (SpawnChild          *child G_GNUC_UNUSED,
                 const SpawnExitInfo *info G_GNUC_UNUSED,
                 const GError        *error,
                 gpointer             data)
{
  if (error != NULL)
    bench_die ("libspawn watch: %s", error->message);
  bench_exited (data);
}

/* spawn_async_fd() with the defaults the contenders share. */
static SpawnChild *
libspawn_spawn (const char * const *argv)
{
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                          NULL, NULL, 0, NULL, NULL, NULL, &error);
  if (child == NULL)
    bench_die ("spawn_async_fd: %s", error->message);
  bench_pending++;
  return child;
}

static void
libspawn_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
                BenchSlot *slot)
{
  SpawnChild *child = libspawn_spawn (argv);

  spawn_child_watch_add (child, libspawn_exited, slot);
  spawn_child_unref (child);
}

/* The same with a shared watch: no GSource per child. */
static void
libspawn_shared_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
                       BenchSlot *slot)
{
  SpawnChild *child = libspawn_spawn (argv);

  spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, child, libspawn_exited, slot, NULL);
  spawn_child_unref (child);
}

static void
libspawn_waited (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  BenchSlot *slot = data;
  GError *error = NULL;

  if (!spawn_child_wait_finish (slot->handle, result, NULL, &error))
    bench_die ("spawn_child_wait_finish: %s", error->message);
  bench_exited (slot);
}

/* The same child, learnt through spawn_child_wait_async(): what a GTask
 * and its idle cost on top of the watch. */
static void
libspawn_async_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
                      BenchSlot *slot)
{
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                          NULL, NULL, 0, NULL, NULL, NULL, &error);
  if (child == NULL)
    bench_die ("spawn_async_fd: %s", error->message);
  bench_pending++;
  slot->handle = child;
  spawn_child_wait_async (child, NULL, libspawn_waited, slot);
}

static void
libspawn_async_cleanup (BenchContender *c G_GNUC_UNUSED, BenchSlot *slot)
{
  g_clear_pointer ((SpawnChild **) &slot->handle, spawn_child_unref);
}

/* A job per child (issue 28): what a cgroup per spawn costs, all of it
 * counted: mkdir and the controllers at the spawn, and at the end, before
 * the exit counts as delivered, the job's close (cgroup.events read,
 * cpu.stat read, rmdir).  Where no cgroup can be made the row measures
 * the process-group fallback, and its name says so. */
static void
job_exited (SpawnChild          *child G_GNUC_UNUSED,
            const SpawnExitInfo *info G_GNUC_UNUSED,
            const GError        *error,
            gpointer             data)
{
  BenchSlot *slot = data;

  if (error != NULL)
    bench_die ("libspawn job watch: %s", error->message);
  if (!spawn_job_close (slot->handle, -1, NULL))
    bench_die ("spawn_job_close failed");
  g_clear_object (&slot->handle);
  bench_exited (slot);
}

static void
job_start (BenchContender *c, const char * const *argv, BenchSlot *slot)
{
  SpawnJob *job = spawn_job_new ();
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                           NULL, NULL, 0, NULL, NULL, NULL, 0, &error);
  if (child == NULL)
    bench_die ("spawn_job_spawn: %s", error->message);
  if (spawn_job_get_mode (job) != SPAWN_JOB_MODE_CGROUP && strstr (c->name, "fallback") == NULL)
    bench_die ("%s: no cgroup here (LIBSPAWN_JOB_MODE=process-group measures the fallback)",
               c->name);
  slot->handle = job;
  bench_pending++;
  spawn_child_watch_add (child, job_exited, slot);
  spawn_child_unref (child);
}

static void
process_finished (SpawnProcess *p G_GNUC_UNUSED, int exit_code G_GNUC_UNUSED,
                  int exit_status G_GNUC_UNUSED, gpointer info G_GNUC_UNUSED,
                  gpointer data)
{
  bench_exited (data);
}

static void
process_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
               BenchSlot *slot)
{
  GError *error = NULL;
  SpawnProcess *p = spawn_process_new (argv);

  /* As g_spawn_async and GSubprocess by default: no pipes. */
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_FORWARD);
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
  g_signal_connect (p, "finished", G_CALLBACK (process_finished), slot);
  if (!spawn_process_start (p, &error))
    bench_die ("spawn_process_start: %s", error->message);
  slot->handle = p;
  bench_pending++;
}

static void
process_cleanup (BenchContender *c G_GNUC_UNUSED, BenchSlot *slot)
{
  g_clear_object (&slot->handle);
}

static void
gspawn_exited (GPid pid, gint status G_GNUC_UNUSED, gpointer data)
{
  g_spawn_close_pid (pid);
  bench_exited (data);
}

static void
gspawn_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
              BenchSlot *slot)
{
  GError *error = NULL;
  GPid pid;

  if (!g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                      NULL, NULL, &pid, &error))
    bench_die ("g_spawn_async: %s", error->message);
  bench_pending++;
  g_child_watch_add (pid, gspawn_exited, slot);
}

static void
subprocess_exited (GObject *source, GAsyncResult *result, gpointer data)
{
  GError *error = NULL;

  if (!g_subprocess_wait_finish (G_SUBPROCESS (source), result, &error))
    bench_die ("g_subprocess_wait: %s", error->message);
  g_object_unref (source);
  bench_exited (data);
}

static void
subprocess_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
                  BenchSlot *slot)
{
  GError *error = NULL;
  GSubprocess *p;

  p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_NONE, &error);
  if (p == NULL)
    bench_die ("g_subprocess_newv: %s", error->message);
  bench_pending++;
  g_subprocess_wait_async (p, NULL, subprocess_exited, slot);
}

gsize
bench_glib_contenders (BenchContender *out, gsize max)
{
  static const SpawnBackend backends[] = {
    SPAWN_BACKEND_CLONEFD, SPAWN_BACKEND_PIDFD, SPAWN_BACKEND_SIGCHLD,
  };
  gsize i, n = 0;

  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      if (!spawn_backend_is_available (backends[i]))
        continue;
      g_assert (n + 5 <= max);
      out[n++] = (BenchContender) {
        .name = g_strconcat ("libspawn-", spawn_backend_to_string (backends[i]), NULL),
        .family = "libspawn", .backend = backends[i], .setup = libspawn_setup,
        .start = libspawn_start, .wait = bench_main_loop_wait,
      };
      out[n++] = (BenchContender) {
        .name = g_strconcat ("libspawn-", spawn_backend_to_string (backends[i]),
                             "-shared", NULL),
        .family = "libspawn-shared", .backend = backends[i], .setup = libspawn_setup,
        .start = libspawn_shared_start, .wait = bench_main_loop_wait,
      };
      out[n++] = (BenchContender) {
        .name = g_strconcat ("libspawn-", spawn_backend_to_string (backends[i]),
                             "-wait_async", NULL),
        .family = "libspawn-async", .backend = backends[i], .setup = libspawn_setup,
        .start = libspawn_async_start, .wait = bench_main_loop_wait,
        .cleanup = libspawn_async_cleanup,
      };
      out[n++] = (BenchContender) {
        .name = g_strconcat ("libspawn-", spawn_backend_to_string (backends[i]),
                             g_strcmp0 (g_getenv ("LIBSPAWN_JOB_MODE"), "process-group") == 0
                               ? "-job-fallback" : "-job", NULL),
        .family = "libspawn-job", .backend = backends[i], .setup = libspawn_setup,
        .start = job_start, .wait = bench_main_loop_wait,
      };
      out[n++] = (BenchContender) {
        .name = g_strconcat ("SpawnProcess-", spawn_backend_to_string (backends[i]), NULL),
        .family = "SpawnProcess", .backend = backends[i], .setup = libspawn_setup,
        .start = process_start, .wait = bench_main_loop_wait,
        .cleanup = process_cleanup,
      };
    }
  g_assert (n + 2 <= max);
  out[n++] = (BenchContender) { .name = "g_spawn_async+child_watch", .family = "glib",
                                .backend = -1, .start = gspawn_start,
                                .wait = bench_main_loop_wait };
  out[n++] = (BenchContender) { .name = "GSubprocess", .family = "glib",
                                .backend = -1, .start = subprocess_start,
                                .wait = bench_main_loop_wait };
  return n;
}
