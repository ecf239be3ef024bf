/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* library-safety: an application with its own SIGCHLD reaper, and a
 * "library" starting children through libspawn, side by side.
 *
 * The application does what many do, in one of three ways (a row each):
 *   handler  a SIGCHLD handler that reaps with waitpid(-1, WNOHANG) in a
 *            loop (a foreign handler and a thief at once);
 *   thief    no handler, a thread blocked in waitpid(-1) instead;
 *   ignored  SIGCHLD set to SIG_IGN, so that the kernel reaps every child
 *            the moment it ends.
 * Each steals the status of every child, the library's included, unless
 * the kernel keeps the library's children out of it; the application also
 * has a child of its own, which it must still get back (handler, thief).
 * For each backend this kernel has, the program runs itself with
 * LIBSPAWN_BACKEND set and prints what each side saw.
 *
 * With --tap it says the same as TAP for tests/suite: a row is "not ok"
 * when it did not run to its end, or, for a backend named with --require
 * NAME (the guests require what their kernel promises), when the library
 * did not get all its statuses or the application took one of them.
 *
 * Then the same with GLib's own g_spawn_async() + g_child_watch_add() as
 * the "library": the GLib the program is linked with, and, when
 * LIBSPAWN_GLIB_SERIES_LIBDIR names the lib directory of a GLib built with
 * glib/patches (vm/build-glib), that one, through LD_LIBRARY_PATH (the
 * series adds no symbol).
 */
#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libspawn/libspawn.h>

#define N_CHILDREN 5

static volatile sig_atomic_t app_signals, app_reaped_own, app_reaped_other;
static pid_t app_child;

/* One child ended: the application's own, or one of the library's. */
static void
app_count (pid_t pid)
{
  if (pid == app_child)
    app_reaped_own++;
  else
    app_reaped_other++;
}

static void
app_reaper (int sig)
{
  int saved = errno;
  pid_t pid;

  (void) sig;
  app_signals++;
  while ((pid = waitpid (-1, NULL, WNOHANG)) > 0)
    app_count (pid);
  errno = saved;
}

/* The thief: waits for any child until there is none (ECHILD). */
static void *
app_thief (void *data)
{
  pid_t pid;

  (void) data;
  while ((pid = waitpid (-1, NULL, 0)) > 0 || errno == EINTR)
    if (pid > 0)
      app_count (pid);
  return NULL;
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

/* The application's side of @mode: its SIGCHLD disposition and its own
 * child; the thief thread is started in @thief. */
static void
app_start (const char *mode, pthread_t *thief)
{
  struct sigaction sa = { 0 };

  sa.sa_handler = g_str_equal (mode, "handler") ? app_reaper : SIG_IGN;
  sa.sa_flags = SA_RESTART;
  if (!g_str_equal (mode, "thief"))
    sigaction (SIGCHLD, &sa, NULL);
  app_child = fork ();
  if (app_child == 0)
    {
      usleep (100 * 1000);
      _exit (0);
    }
  if (g_str_equal (mode, "thief"))
    pthread_create (thief, NULL, app_thief, NULL);
}

/* Exit status: 0 all statuses delivered, the application got its own
 * child back (where it can: not with SIG_IGN) and none of the library's;
 * 3 it ran to its end but one of those did not hold; 1 it failed. */
static int
run_one (gboolean use_glib, const char *mode)
{
  const char *argv[] = { "/bin/sh", "-c", "sleep 0.1; exit 7", NULL };
  gboolean ignored = g_str_equal (mode, "ignored");
  pthread_t thief;
  Library lib = { 0 };
  GError *error = NULL;
  int i;

  app_start (mode, &thief);

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
  g_main_loop_unref (lib.loop);
  /* Every child has ended: the thief gets ECHILD once it has taken what
   * was left for it. */
  if (g_str_equal (mode, "thief"))
    pthread_join (thief, NULL);

  printf ("%-11s %-7s  library: %d/%d statuses, %d lost   application: %d SIGCHLD, "
          "reaped its own child: %s, reaped %d of the library's\n",
          use_glib ? g_getenv ("LIBSPAWN_SAFETY_ROW") :
          spawn_backend_to_string (spawn_get_backend ()), mode, lib.delivered,
          N_CHILDREN, lib.lost, (int) app_signals,
          ignored ? "n/a (SIG_IGN)" : app_reaped_own ? "yes" : "no",
          (int) app_reaped_other);
  if (lib.delivered + lib.lost != N_CHILDREN)
    return 1;
  return lib.delivered == N_CHILDREN && (ignored || app_reaped_own) &&
         app_reaped_other == 0 ? 0 : 3;
}

static const char * const modes[] = { "handler", "thief", "ignored" };

typedef struct {
  gboolean tap;
  char **required;     /* backends that must be safe (--require) */
  int n_rows, failed;
} Report;

/* Run this program again as a row (@args), and account for it. */
static void
report_row (Report *r, char **args, char **envp, const char *name, const char *mode,
            gboolean must_be_safe)
{
  int status = -1, code;
  gboolean ok;

  fflush (stdout);
  if (!g_spawn_sync (NULL, args, envp, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL,
                     NULL, NULL, &status, NULL))
    status = -1;
  code = status >= 0 && WIFEXITED (status) ? WEXITSTATUS (status) : 1;
  ok = code == 0 || (code == 3 && !must_be_safe);
  if (!ok)
    r->failed++;
  if (r->tap)
    printf ("%s %d %s %s%s\n", ok ? "ok" : "not ok", ++r->n_rows, name, mode,
            code == 3 ? (must_be_safe ? ": a status was lost or taken" :
                         " (statuses lost or taken: not required of it)") :
            code != 0 ? ": did not run to its end" : "");
}

static void
run_backends (Report *r, const char *self)
{
  const SpawnBackend backends[] = {
    SPAWN_BACKEND_CLONEFD, SPAWN_BACKEND_AUTOREAP, SPAWN_BACKEND_PIDFD,
    SPAWN_BACKEND_SIGCHLD,
  };
  guint i, m;

  printf ("%sAn application reaping children behind the library's back (three ways),\n"
          "%sand a library starting %d children through libspawn, per backend:\n",
          r->tap ? "# " : "", r->tap ? "# " : "", N_CHILDREN);
  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      const char *name = spawn_backend_to_string (backends[i]);
      gboolean must = r->required != NULL &&
                      g_strv_contains ((const char * const *) r->required, name);

      if (!spawn_backend_is_available (backends[i]))
        {
          if (r->tap)
            printf ("%s %d %s: not available on this kernel%s\n", must ? "not ok" : "ok",
                    ++r->n_rows, name, must ? " (--require)" : " # SKIP not on this kernel");
          else
            printf ("%-11s not available on this kernel\n", name);
          r->failed += must;
          continue;
        }
      for (m = 0; m < G_N_ELEMENTS (modes); m++)
        {
          char *args[] = { (char *) self, (char *) "--one", (char *) modes[m], NULL };
          char **envp = g_environ_setenv (g_get_environ (), "LIBSPAWN_BACKEND", name, TRUE);

          report_row (r, args, envp, name, modes[m], must);
          g_strfreev (envp);
        }
    }
}

static void
run_glib (Report *r, const char *self)
{
  const char *series = g_getenv ("LIBSPAWN_GLIB_SERIES_LIBDIR");
  guint i, m;

  printf ("%sThe same application, with GLib's g_spawn_async() + g_child_watch_add() "
          "as the library:\n", r->tap ? "# " : "");
  for (i = 0; i < 2; i++)
    {
      const char *row = i == 0 ? "GLib" : "GLib+series";

      if (i == 1 && series == NULL)
        {
          if (r->tap)
            printf ("ok %d %s # SKIP LIBSPAWN_GLIB_SERIES_LIBDIR unset (vm/build-glib)\n",
                    ++r->n_rows, row);
          else
            printf ("%-11s not run: LIBSPAWN_GLIB_SERIES_LIBDIR unset (vm/build-glib)\n", row);
          continue;
        }
      for (m = 0; m < G_N_ELEMENTS (modes); m++)
        {
          char *args[] = { (char *) self, (char *) "--glib", (char *) modes[m], NULL };
          char **envp = g_environ_setenv (g_get_environ (), "LIBSPAWN_SAFETY_ROW", row, TRUE);

          if (i == 1)
            envp = g_environ_setenv (envp, "LD_LIBRARY_PATH", series, TRUE);
          report_row (r, args, envp, row, modes[m], FALSE);
          g_strfreev (envp);
        }
    }
}

int
main (int argc, char **argv)
{
  Report r = { 0 };
  int i;

  if (argc == 3 && g_str_equal (argv[1], "--one"))
    return run_one (FALSE, argv[2]);
  if (argc == 3 && g_str_equal (argv[1], "--glib"))
    return run_one (TRUE, argv[2]);
  for (i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--tap"))
        r.tap = TRUE;
      else if (g_str_equal (argv[i], "--require") && i + 1 < argc)
        r.required = g_strsplit (argv[++i], ",", -1);
      else
        {
          fprintf (stderr, "usage: %s [--tap] [--require BACKEND[,BACKEND...]]\n", argv[0]);
          return 2;
        }
    }
  run_backends (&r, argv[0]);
  run_glib (&r, argv[0]);
  if (r.tap)
    printf ("1..%d\n", r.n_rows);
  g_strfreev (r.required);
  return r.failed ? 1 : 0;
}
