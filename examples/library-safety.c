/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* library-safety: an application with its own SIGCHLD reaper, and a
 * "library" starting children through libspawn, side by side.
 *
 * The application does what many do: a SIGCHLD handler that reaps with
 * waitpid(-1, WNOHANG) in a loop.  That steals the status of every child,
 * the library's included, unless the kernel keeps the library's children
 * out of it.  For each backend this kernel has, the program runs itself
 * with LIBSPAWN_BACKEND set and prints what each side saw.
 *
 * Then the same with GLib's own g_spawn_async() + g_child_watch_add() as
 * the "library": the GLib the program is linked with, and, when
 * LIBSPAWN_GLIB_SERIES_LIBDIR names the lib directory of a GLib built with
 * glib/patches (vm/build-glib), that one, through LD_LIBRARY_PATH (the
 * series adds no symbol).
 */
#include <errno.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libspawn/libspawn.h>

#define N_CHILDREN 5

static volatile sig_atomic_t app_signals, app_reaped_own, app_reaped_other;
static pid_t app_child;

static void
app_reaper (int sig)
{
  int saved = errno;
  pid_t pid;

  (void) sig;
  app_signals++;
  while ((pid = waitpid (-1, NULL, WNOHANG)) > 0)
    {
      if (pid == app_child)
        app_reaped_own++;
      else
        app_reaped_other++;
    }
  errno = saved;
}

typedef struct {
  GMainLoop *loop;
  int remaining, delivered, lost;
} Library;

static void
on_child_exit (SpawnChild *child, const SpawnExitInfo *info, const GError *error,
         gpointer data)
{
  Library *lib = data;

  (void) child;
  if (info != NULL && info->kind == SPAWN_EXIT_EXITED && info->status == 7)
    lib->delivered++;
  else if (error != NULL)
    lib->lost++;
  if (--lib->remaining == 0)
    g_main_loop_quit (lib->loop);
}

static void
on_glib_child_exit (GPid pid, gint wait_status, gpointer data)
{
  Library *lib = data;

  /* A stolen status arrives as 0 (pidfd path) or 0 with GLib's ECHILD
   * warning (SIGCHLD path): wrong either way. */
  if (WIFEXITED (wait_status) && WEXITSTATUS (wait_status) == 7)
    lib->delivered++;
  else
    lib->lost++;
  g_spawn_close_pid (pid);
  if (--lib->remaining == 0)
    g_main_loop_quit (lib->loop);
}

static int
run_one (gboolean use_glib)
{
  const char *argv[] = { "/bin/sh", "-c", "sleep 0.1; exit 7", NULL };
  struct sigaction sa = { 0 };
  Library lib = { 0 };
  GError *error = NULL;
  int i;

  sa.sa_handler = app_reaper;
  sa.sa_flags = SA_RESTART;
  sigaction (SIGCHLD, &sa, NULL);

  /* The application's own child. */
  app_child = fork ();
  if (app_child == 0)
    {
      usleep (100 * 1000);
      _exit (0);
    }

  /* The library's children. */
  lib.loop = g_main_loop_new (NULL, FALSE);
  lib.remaining = N_CHILDREN;
  for (i = 0; i < N_CHILDREN && use_glib; i++)
    {
      GPid pid;

      if (!g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                          NULL, NULL, &pid, &error))
        {
          fprintf (stderr, "g_spawn_async: %s\n", error->message);
          return 1;
        }
      g_child_watch_add (pid, on_glib_child_exit, &lib);
    }
  for (i = 0; i < N_CHILDREN && !use_glib; i++)
    {
      SpawnChild *child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                                          NULL, NULL, 0, NULL, NULL, NULL, &error);
      if (child == NULL)
        {
          fprintf (stderr, "spawn: %s\n", error->message);
          return 1;
        }
      spawn_child_watch_add (child, on_child_exit, &lib);
      spawn_child_unref (child);
    }
  g_main_loop_run (lib.loop);

  printf ("%-8s  library: %d/%d statuses, %d lost   application: %d SIGCHLD, "
          "reaped its own child: %s, reaped %d of the library's\n",
          use_glib ? g_getenv ("LIBSPAWN_SAFETY_ROW") :
          spawn_backend_to_string (spawn_get_backend ()), lib.delivered,
          N_CHILDREN, lib.lost, (int) app_signals,
          app_reaped_own ? "yes" : "no", (int) app_reaped_other);
  return lib.delivered + lib.lost == N_CHILDREN && app_reaped_own ? 0 : 1;
}

int
main (int argc, char **argv)
{
  const SpawnBackend backends[] = {
    SPAWN_BACKEND_CLONEFD, SPAWN_BACKEND_PIDFD, SPAWN_BACKEND_SIGCHLD,
  };
  int failed = 0;
  guint i;

  if (argc == 2 && g_str_equal (argv[1], "--one"))
    return run_one (FALSE);
  if (argc == 2 && g_str_equal (argv[1], "--glib"))
    return run_one (TRUE);

  printf ("An application reaping with waitpid(-1) in its SIGCHLD handler, and a\n"
          "library starting %d children through libspawn, per backend:\n", N_CHILDREN);
  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      const char *name = spawn_backend_to_string (backends[i]);
      char *args[] = { argv[0], (char *) "--one", NULL };
      char **envp;
      int status;

      if (!spawn_backend_is_available (backends[i]))
        {
          printf ("%-8s  not available on this kernel\n", name);
          continue;
        }
      envp = g_environ_setenv (g_get_environ (), "LIBSPAWN_BACKEND", name, TRUE);
      fflush (stdout);
      if (!g_spawn_sync (NULL, args, envp, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL,
                         NULL, NULL, &status, NULL) ||
          !g_spawn_check_wait_status (status, NULL))
        failed++;
      g_strfreev (envp);
    }

  printf ("The same application, with GLib's g_spawn_async() + g_child_watch_add() "
          "as the library:\n");
  for (i = 0; i < 2; i++)
    {
      const char *series = g_getenv ("LIBSPAWN_GLIB_SERIES_LIBDIR");
      char *args[] = { argv[0], (char *) "--glib", NULL };
      char **envp = g_get_environ ();
      int status;

      if (i == 0)
        envp = g_environ_setenv (envp, "LIBSPAWN_SAFETY_ROW", "GLib", TRUE);
      else if (series != NULL)
        {
          envp = g_environ_setenv (envp, "LIBSPAWN_SAFETY_ROW", "GLib+series", TRUE);
          envp = g_environ_setenv (envp, "LD_LIBRARY_PATH", series, TRUE);
        }
      else
        {
          printf ("%-8s  not run: LIBSPAWN_GLIB_SERIES_LIBDIR unset (vm/build-glib)\n",
                  "GLib+series");
          g_strfreev (envp);
          continue;
        }
      fflush (stdout);
      if (!g_spawn_sync (NULL, args, envp, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL,
                         NULL, NULL, &status, NULL) ||
          !g_spawn_check_wait_status (status, NULL))
        failed++;
      g_strfreev (envp);
    }
  return failed ? 1 : 0;
}
