/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* kill-on-close: SPAWN_CHILD_KILL_ON_CLOSE and SpawnProcess:kill-on-close.
 *
 * The case that matters to users (issue 14): an application (tests/kill-app)
 * starts 20 children with kill-on-close and is SIGKILLed; within a bounded
 * time none of them exists.  We hold a pidfd for each child, opened while
 * the application runs and checked against the child's start time, so a
 * recycled PID can neither pass nor fail the test.  Per backend, what is
 * expected:
 *   clonefd with CLONE_FD_AUTOKILL: the kernel kills them (all gone);
 *   clonefd on a series without it, pidfd, sigchld: PR_SET_PDEATHSIG from
 *   the library's pdeathsig thread kills them (all gone).
 * The /pdeathsig variants force the PR_SET_PDEATHSIG path
 * (LIBSPAWN_KILL_ON_CLOSE=pdeathsig), so that a kernel with the flag also
 * tests the fallback.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libspawn/libspawn.h>
#include "clone4.h"
#include "testutil.h"

/* Generous: the debug guest runs about 6x slower than the host. */
#define DEADLINE_S 60

static const char *kill_app;

typedef struct {
  char kind[16];
  int pid;
  int pidfd;
} AppChild;

typedef struct {
  GPid pid;
  GPtrArray *children; /* AppChild */
} App;

static int
sys_pidfd_open (int pid)
{
  return syscall (SYS_pidfd_open, pid, 0);
}

static char *
read_start_time (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  g_auto (GStrv) fields = NULL;
  const char *p;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return NULL;
  p = strrchr (stat, ')');
  if (p == NULL)
    return NULL;
  fields = g_strsplit (p + 2, " ", 21);
  if (g_strv_length (fields) < 20)
    return NULL;
  return g_strdup (fields[19]);
}

/* Whether the process behind @pidfd has ended (zombie or gone), waiting
 * up to @timeout_ms for it. */
static gboolean
pidfd_ended (int pidfd, int timeout_ms)
{
  struct pollfd pfd = { pidfd, POLLIN, 0 };
  int r;

  do
    r = poll (&pfd, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  g_assert_cmpint (r, >=, 0);
  return r > 0;
}

/* Running, and no SIGKILL on its way: it is not about to die either. */
static void
assert_alive_and_unsignalled (const AppChild *c)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", c->pid);
  g_autofree char *status = NULL;
  g_auto (GStrv) lines = NULL;
  int i;

  g_assert_false (pidfd_ended (c->pidfd, 0));
  g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
  lines = g_strsplit (status, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "SigPnd:") || g_str_has_prefix (lines[i], "ShdPnd:"))
      {
        guint64 mask = g_ascii_strtoull (lines[i] + 7, NULL, 16);
        if (mask & (1ULL << (SIGKILL - 1)))
          g_error ("%s child %d has a SIGKILL pending", c->kind, c->pid);
      }
    else if (g_str_has_prefix (lines[i], "State:"))
      g_assert_null (strstr (lines[i], "zombie"));
}

static void
app_child_free (gpointer data)
{
  AppChild *c = data;

  if (c->pidfd >= 0)
    close (c->pidfd);
  g_free (c);
}

/* Starts kill-app and reads what it started, with a pidfd for each. */
static App *
app_start (SpawnBackend backend, gboolean force_pdeathsig, const char * const *specs)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_auto (GStrv) envp = g_get_environ ();
  GError *error = NULL;
  App *app = g_new0 (App, 1);
  GString *out = g_string_new (NULL);
  gint64 deadline = g_get_monotonic_time () + DEADLINE_S * G_USEC_PER_SEC;
  g_auto (GStrv) lines = NULL;
  int out_fd, i;

  g_ptr_array_add (argv, (char *) kill_app);
  g_ptr_array_add (argv, (char *) testutil_helper);
  g_ptr_array_add (argv, (char *) spawn_backend_to_string (backend));
  for (i = 0; specs[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) specs[i]);
  g_ptr_array_add (argv, NULL);
  envp = g_environ_unsetenv (envp, "LIBSPAWN_BACKEND");
  if (force_pdeathsig)
    envp = g_environ_setenv (envp, "LIBSPAWN_KILL_ON_CLOSE", "pdeathsig", TRUE);
  else
    envp = g_environ_unsetenv (envp, "LIBSPAWN_KILL_ON_CLOSE");

  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv->pdata, envp,
                                           G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                           &app->pid, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);

  /* Until "ready\n" (or EOF: it failed, and said why on stderr). */
  for (;;)
    {
      char buf[4096];
      ssize_t n;
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;

      if (g_str_has_suffix (out->str, "ready\n"))
        break;
      g_assert_cmpint (left, >, 0);
      {
        struct pollfd pfd = { out_fd, POLLIN, 0 };
        int r = poll (&pfd, 1, (int) left);
        g_assert_cmpint (r, >=, 0);
        if (r == 0)
          g_error ("kill-app did not get ready in %d s", DEADLINE_S);
      }
      n = read (out_fd, buf, sizeof (buf));
      if (n < 0 && errno == EINTR)
        continue;
      g_assert_cmpint (n, >=, 0);
      if (n == 0)
        g_error ("kill-app ended before it was ready; it said: %s", out->str);
      g_string_append_len (out, buf, n);
    }
  close (out_fd);

  app->children = g_ptr_array_new_with_free_func (app_child_free);
  lines = g_strsplit (out->str, "\n", -1);
  g_string_free (out, TRUE);
  for (i = 0; lines[i] != NULL && !g_str_equal (lines[i], "ready"); i++)
    {
      AppChild *c = g_new0 (AppChild, 1);
      char start[64];
      g_autofree char *now = NULL;

      g_assert_cmpint (sscanf (lines[i], "%15s %d %63s", c->kind, &c->pid, start), ==, 3);
      c->pidfd = sys_pidfd_open (c->pid);
      g_assert_cmpint (c->pidfd, >=, 0);
      /* Opened, then still the process kill-app started: the pidfd is
       * that child's (a PID cannot be recycled while kill-app, its
       * parent, has not reaped it or, clonefd, while it runs). */
      now = read_start_time (c->pid);
      g_assert_cmpstr (now, ==, start);
      g_ptr_array_add (app->children, c);
    }
  return app;
}

static void
app_crash (App *app)
{
  int status;

  g_assert_cmpint (kill (app->pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (app->pid, &status, 0), ==, app->pid);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (WTERMSIG (status), ==, SIGKILL);
  g_spawn_close_pid (app->pid);
}

/* Whether /proc still shows @pid running (not a zombie, not gone). */
static gboolean
proc_shows_running (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  const char *p;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return FALSE;
  p = strrchr (stat, ')');
  return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Every child of @kind gone within the deadline, or fail naming one.
 * Gone means its pidfd polls readable: a timed poll looks at the process
 * again when it times out, so /proc showing it gone is not enough (that
 * is how a regression in the exit notification would look). */
static void
assert_all_gone (App *app, const char *kind)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_S * G_USEC_PER_SEC;
  guint i, n = 0;

  for (i = 0; i < app->children->len; i++)
    {
      AppChild *c = app->children->pdata[i];

      if (!g_str_equal (c->kind, kind))
        continue;
      while (!pidfd_ended (c->pidfd, 250))
        {
          if (g_get_monotonic_time () > deadline)
            {
              g_autofree char *path = g_strdup_printf ("/proc/%d/stat", c->pid);
              g_autofree char *stat = NULL;

              g_file_get_contents (path, &stat, NULL, NULL);
              g_error ("%s child %d: pidfd not readable %d s after the application "
                       "died (%s; /proc/PID/stat: %s)", kind, c->pid, DEADLINE_S,
                       proc_shows_running (c->pid) ? "still running" : "gone in /proc",
                       stat != NULL ? stat : "none");
            }
        }
      n++;
    }
  g_assert_cmpuint (n, >, 0);
}

/* What the test, not the kill-on-close, has to clean up. */
static void
app_free (App *app)
{
  guint i;

  for (i = 0; i < app->children->len; i++)
    {
      AppChild *c = app->children->pdata[i];

      if (!pidfd_ended (c->pidfd, 0))
        {
          g_assert_cmpint (syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0), ==, 0);
          g_assert_true (pidfd_ended (c->pidfd, DEADLINE_S * 1000));
        }
    }
  g_ptr_array_unref (app->children);
  g_free (app);
}

/* For the message only: which way the library is expected to go. */
static const char *
kernel_kills (SpawnBackend backend)
{
  if (backend == SPAWN_BACKEND_CLONEFD && _spawn_clone4_check_autokill () == 0)
    return "the kernel (CLONE_FD_AUTOKILL)";
  if (backend == SPAWN_BACKEND_AUTOREAP)
    return "the kernel (CLONE_PIDFD_AUTOKILL) with CAP_SYS_ADMIN or no_new_privs, "
           "else PR_SET_PDEATHSIG (autoreap-test checks which)";
  return NULL;
}

/* 20 children with kill-on-close, 2 without; SIGKILL the application. */
static void
crash_case (gconstpointer data, gboolean force_pdeathsig)
{
  const char *specs[] = { "kill:20", "keep:2", NULL };
  SpawnBackend backend = testutil_backend (data);
  App *app;
  guint i;

  if (!spawn_backend_is_available (backend))
    {
      g_test_skip_printf ("backend %s is not available on this kernel",
                          spawn_backend_to_string (backend));
      return;
    }
  g_test_message ("kill-on-close by %s",
                  kernel_kills (backend) != NULL && !force_pdeathsig
                    ? kernel_kills (backend) : "PR_SET_PDEATHSIG");
  app = app_start (backend, force_pdeathsig, specs);
  g_assert_cmpuint (app->children->len, ==, 22);
  for (i = 0; i < app->children->len; i++)
    assert_alive_and_unsignalled (app->children->pdata[i]);
  app_crash (app);
  /* Expected on every backend: all 20 gone. */
  assert_all_gone (app, "kill");
  /* Signalled at the same moment as those, which are gone by now: the
   * ones without kill-on-close were not. */
  for (i = 0; i < app->children->len; i++)
    {
      AppChild *c = app->children->pdata[i];
      if (g_str_equal (c->kind, "keep"))
        assert_alive_and_unsignalled (c);
    }
  app_free (app);
}

static void
test_crash (gconstpointer data)
{
  g_test_summary ("An application that started 20 children with "
                  "SPAWN_CHILD_KILL_ON_CLOSE is SIGKILLed: all 20 end, "
                  "and 2 started without it live on");
  crash_case (data, FALSE);
}

static void
test_crash_pdeathsig (gconstpointer data)
{
  g_test_summary ("As crash, with the PR_SET_PDEATHSIG path forced: the "
                  "fallback of a clonefd series without CLONE_FD_AUTOKILL");
  crash_case (data, TRUE);
}

static void
test_thread (gconstpointer data)
{
  const char *specs[] = { "thread:3", NULL };
  SpawnBackend backend = testutil_backend (data);
  App *app;
  guint i;

  g_test_summary ("A kill-on-close child started from a worker thread that "
                  "then exited lives on (PR_SET_PDEATHSIG fires when the "
                  "parent thread exits: the library starts such children "
                  "from a thread that never does), and dies with the "
                  "application");
  if (!spawn_backend_is_available (backend))
    {
      g_test_skip_printf ("backend %s is not available on this kernel",
                          spawn_backend_to_string (backend));
      return;
    }
  app = app_start (backend, TRUE, specs);
  g_assert_cmpuint (app->children->len, ==, 3);
  for (i = 0; i < app->children->len; i++)
    assert_alive_and_unsignalled (app->children->pdata[i]);
  app_crash (app);
  assert_all_gone (app, "thread");
  app_free (app);
}

/* /proc/PID/status "Uid:" line: real, effective, saved, fs. */
static void
assert_uid (int pid, const char *uids)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", pid);
  g_autofree char *status = NULL;
  const char *p;

  g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
  p = strstr (status, "\nUid:\t");
  g_assert_nonnull (p);
  g_assert_true (g_str_has_prefix (p + 6, uids));
}

/* Whether uid/gid 65534 may execute the test helper: not when the build
 * lies under a 0700 home (/root in tests/fresh-machine's root). */
static gboolean
helper_reachable_by_nobody (void)
{
  int status;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (setgroups (0, NULL) == 0 && setresgid (65534, 65534, 65534) == 0 &&
           setresuid (65534, 65534, 65534) == 0 &&
           access (testutil_helper, X_OK) == 0 ? 0 : 1);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

static void
test_drop_privileges (gconstpointer data)
{
  const char *specs[] = { "dropuid:3", NULL };
  SpawnBackend backend = testutil_backend (data);
  App *app;
  guint i;

  g_test_summary ("A kill-on-close child whose child_setup drops to another "
                  "uid and gid (commit_creds() clears PR_SET_PDEATHSIG on "
                  "an euid or egid change) still dies with the application");
  if (getuid () != 0)
    {
      g_test_skip ("needs root, to change the child's uid");
      return;
    }
  if (!helper_reachable_by_nobody ())
    {
      g_test_skip_printf ("uid 65534 cannot execute %s (a 0700 directory "
                          "above it?)", testutil_helper);
      return;
    }
  if (!spawn_backend_is_available (backend))
    {
      g_test_skip_printf ("backend %s is not available on this kernel",
                          spawn_backend_to_string (backend));
      return;
    }
  app = app_start (backend, TRUE, specs);
  g_assert_cmpuint (app->children->len, ==, 3);
  for (i = 0; i < app->children->len; i++)
    {
      AppChild *c = app->children->pdata[i];
      assert_alive_and_unsignalled (c);
      assert_uid (c->pid, "65534\t65534\t65534\t65534");
    }
  app_crash (app);
  assert_all_gone (app, "dropuid");
  app_free (app);
}

static void
test_process_crash (gconstpointer data)
{
  const char *specs[] = { "process:3", NULL };
  SpawnBackend backend = testutil_backend (data);
  App *app;

  g_test_summary ("SpawnProcess:kill-on-close: the processes die with a "
                  "SIGKILLed application");
  if (!spawn_backend_is_available (backend))
    {
      g_test_skip_printf ("backend %s is not available on this kernel",
                          spawn_backend_to_string (backend));
      return;
    }
  app = app_start (backend, FALSE, specs);
  app_crash (app);
  assert_all_gone (app, "process");
  app_free (app);
}

static SpawnChild *
start_sleeper (SpawnChildFlags child_flags)
{
  const char *argv[] = { testutil_helper, "sleep", "600000", NULL };
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                               NULL, NULL, 0, NULL, NULL, NULL, child_flags,
                               &error);
  g_assert_no_error (error);
  g_assert_nonnull (child);
  return child;
}

static void
test_unref (gconstpointer data)
{
  SpawnChild *child;
  AppChild c = { "unref", 0, -1 };

  g_test_summary ("Dropping the last SpawnChild of a running kill-on-close "
                  "child kills it; without the flag it runs on");
  if (!testutil_use_backend (data))
    return;

  child = start_sleeper (SPAWN_CHILD_FLAGS_NONE);
  c.pid = spawn_child_get_pid (child);
  c.pidfd = sys_pidfd_open (c.pid);
  g_assert_cmpint (c.pidfd, >=, 0);
  spawn_child_unref (child);
  assert_alive_and_unsignalled (&c);
  g_assert_cmpint (syscall (SYS_pidfd_send_signal, c.pidfd, SIGKILL, NULL, 0), ==, 0);
  g_assert_true (pidfd_ended (c.pidfd, DEADLINE_S * 1000));
  close (c.pidfd);

  child = start_sleeper (SPAWN_CHILD_KILL_ON_CLOSE);
  c.pid = spawn_child_get_pid (child);
  c.pidfd = sys_pidfd_open (c.pid);
  g_assert_cmpint (c.pidfd, >=, 0);
  assert_alive_and_unsignalled (&c);
  spawn_child_unref (child);
  g_assert_true (pidfd_ended (c.pidfd, DEADLINE_S * 1000));
  close (c.pidfd);
  testutil_assert_no_children ();
}

static void
test_watched (gconstpointer data)
{
  SpawnChild *child;
  SpawnExitInfo info;
  GError *error = NULL;

  g_test_summary ("A kill-on-close child is an ordinary child otherwise: "
                  "its exit status arrives as usual, and dropping it after "
                  "it ended kills nothing");
  if (!testutil_use_backend (data))
    return;
  {
    const char *argv[] = { testutil_helper, "exit", "7", NULL };
    child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                                 NULL, NULL, 0, NULL, NULL, NULL,
                                 SPAWN_CHILD_KILL_ON_CLOSE, &error);
  }
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 7);
  spawn_child_unref (child);
  testutil_assert_no_children ();
}

static void
failure_case (gconstpointer data, gboolean force_pdeathsig)
{
  const char *argv[] = { "/nonexistent/kill-test-program", NULL };
  GError *error = NULL;
  SpawnChild *child;
  int fds;

  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  if (force_pdeathsig)
    g_setenv ("LIBSPAWN_KILL_ON_CLOSE", "pdeathsig", TRUE);
  /* Once, so that the probes and the pdeathsig thread are in place; waited
   * for, not dropped running: the reaper would close its fd later, while
   * we count. */
  {
    const char *ok_argv[] = { testutil_helper, "exit", "0", NULL };
    child = spawn_async_fd_full (NULL, ok_argv, NULL, 0, NULL, NULL, -1, -1,
                                 -1, NULL, NULL, 0, NULL, NULL, NULL,
                                 SPAWN_CHILD_KILL_ON_CLOSE, &error);
    g_assert_no_error (error);
    g_assert_true (spawn_child_wait (child, NULL, NULL, &error));
    g_assert_no_error (error);
    g_clear_pointer (&child, spawn_child_unref);
  }
  testutil_assert_no_children ();

  fds = testutil_count_fds ();
  child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                               NULL, NULL, 0, NULL, NULL, NULL,
                               SPAWN_CHILD_KILL_ON_CLOSE, &error);
  g_assert_null (child);
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_assert_cmpint (testutil_count_fds (), ==, fds);
  testutil_assert_no_children ();

  {
    const char *dir_argv[] = { testutil_helper, "exit", "0", NULL };
    child = spawn_async_fd_full ("/nonexistent/dir", dir_argv, NULL, 0, NULL,
                                 NULL, -1, -1, -1, NULL, NULL, 0, NULL, NULL,
                                 NULL, SPAWN_CHILD_KILL_ON_CLOSE, &error);
  }
  g_assert_null (child);
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_CHDIR);
  g_clear_error (&error);
  g_assert_cmpint (testutil_count_fds (), ==, fds);
  testutil_assert_no_children ();
}

static void
test_exec_failure (gconstpointer data)
{
  g_test_summary ("A kill-on-close spawn that cannot exec reports it and "
                  "leaves no fd, child or zombie");
  failure_case (data, FALSE);
}

static void
test_exec_failure_pdeathsig (gconstpointer data)
{
  g_test_summary ("As exec-failure, through the PR_SET_PDEATHSIG "
                  "thread");
  failure_case (data, TRUE);
}

/* Spawns "helper exit 7" with kill-on-close and waits: 0 if it ran and
 * said 7, else a line on stderr and 1.  For forked processes: no
 * assertions, which would abort them with the test's name. */
static int
spawn_exit7 (void)
{
  const char *argv[] = { testutil_helper, "exit", "7", NULL };
  GError *error = NULL;
  SpawnExitInfo info;
  SpawnChild *child;
  gboolean ok;

  child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                               NULL, NULL, 0, NULL, NULL, NULL,
                               SPAWN_CHILD_KILL_ON_CLOSE, &error);
  if (child == NULL)
    {
      fprintf (stderr, "pid %d: spawn: %s\n", (int) getpid (), error->message);
      g_error_free (error);
      return 1;
    }
  ok = spawn_child_wait (child, &info, NULL, &error);
  spawn_child_unref (child);
  if (!ok)
    {
      fprintf (stderr, "pid %d: wait: %s\n", (int) getpid (), error->message);
      g_error_free (error);
      return 1;
    }
  if (info.kind != SPAWN_EXIT_EXITED || info.status != 7)
    {
      fprintf (stderr, "pid %d: child ended with kind %d status %d, not "
               "exit 7\n", (int) getpid (), (int) info.kind, info.status);
      return 1;
    }
  return 0;
}

/* fork() into a new PID namespace (where the child is 1), run @body
 * there; its result, or 1 if it did not end within DEADLINE_S (it is
 * killed). */
static int
run_in_new_pidns (int (*body) (void))
{
  int status, pidfd;
  pid_t pid;

  if (unshare (CLONE_NEWPID) < 0)
    {
      fprintf (stderr, "unshare(CLONE_NEWPID): %s\n", g_strerror (errno));
      return 1;
    }
  pid = fork ();
  if (pid < 0)
    return 1;
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      _exit (body ());
    }
  pidfd = sys_pidfd_open (pid);
  if (pidfd < 0 || !pidfd_ended (pidfd, DEADLINE_S * 1000))
    {
      fprintf (stderr, "pid %d: forked child %d still runs after %d s\n",
               (int) getpid (), (int) pid, DEADLINE_S);
      kill (pid, SIGKILL);
    }
  if (pidfd >= 0)
    close (pidfd);
  if (waitpid (pid, &status, 0) != pid)
    return 1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 1;
}

/* PID 1 of a namespace: start the pdeathsig thread (it records PID 1), then
 * fork() into another new namespace, where the child is PID 1 too. */
static int
fork_body (void)
{
  if (spawn_exit7 () != 0)
    return 1;
  return run_in_new_pidns (spawn_exit7);
}

static void
test_fork (gconstpointer data)
{
  g_test_summary ("A fork() of an application that has the pdeathsig thread "
                  "starts one of its own, even where its PID is the PID "
                  "the pdeathsig thread was started in (pthread_atfork path); "
                  "the kill-on-close child runs");
  if (getuid () != 0)
    {
      g_test_skip ("needs root, for unshare(CLONE_NEWPID)");
      return;
    }
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_setenv ("LIBSPAWN_KILL_ON_CLOSE", "pdeathsig", TRUE);
  /* In a forked helper: this process keeps its pid_for_children (where
   * LeakSanitizer clones its tracer at exit). */
  {
    int status;
    pid_t pid = fork ();

    g_assert_cmpint (pid, >=, 0);
    if (pid == 0)
      _exit (run_in_new_pidns (fork_body));
    g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
    g_assert_true (WIFEXITED (status));
    g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  }
}

/* A kill-on-close spawn from a worker thread that ran @confine first:
 * refused with SPAWN_ERROR_PERM, nothing left behind. */
typedef struct {
  gboolean (*confine) (void);
  GError *error;
  SpawnChild *child;
} ConfinedJob;

static gpointer
spawn_confined (gpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  ConfinedJob *job = data;

  if (!job->confine ())
    return NULL;
  job->child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1,
                                    -1, NULL, NULL, 0, NULL, NULL, NULL,
                                    SPAWN_CHILD_KILL_ON_CLOSE, &job->error);
  return GINT_TO_POINTER (TRUE);
}

static void
confined_case_full (gconstpointer data, gboolean (*confine) (void),
                    gboolean pdeathsig_first)
{
  ConfinedJob job = { confine, NULL, NULL };
  int fds;

  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_setenv ("LIBSPAWN_KILL_ON_CLOSE", "pdeathsig", TRUE);
  if (pdeathsig_first)
    /* The pdeathsig thread exists, unconfined, and the probes are done. */
    g_assert_cmpint (spawn_exit7 (), ==, 0);
  else
    {
      /* The probes and the reaper, but no pdeathsig thread yet. */
      const char *argv[] = { testutil_helper, "exit", "0", NULL };
      GError *error = NULL;
      SpawnChild *child;

      child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1,
                                   -1, NULL, NULL, 0, NULL, NULL, NULL,
                                   SPAWN_CHILD_FLAGS_NONE, &error);
      g_assert_no_error (error);
      g_assert_true (spawn_child_wait (child, NULL, NULL, &error));
      g_assert_no_error (error);
      spawn_child_unref (child);
    }
  testutil_assert_no_children ();
  fds = testutil_count_fds ();
  g_assert_true (g_thread_join (g_thread_new ("confined", spawn_confined, &job)));
  g_assert_null (job.child);
  g_assert_error (job.error, SPAWN_ERROR, SPAWN_ERROR_PERM);
  g_test_message ("%s", job.error->message);
  g_assert_nonnull (strstr (job.error->message, "pdeathsig thread"));
  g_clear_error (&job.error);
  g_assert_cmpint (testutil_count_fds (), ==, fds);
  testutil_assert_no_children ();
  /* And the pdeathsig thread (started now, if it was not) serves a thread that
   * shares its state. */
  g_assert_cmpint (spawn_exit7 (), ==, 0);
}

static void
confined_case (gconstpointer data, gboolean (*confine) (void))
{
  confined_case_full (data, confine, TRUE);
}

static gboolean
set_no_new_privs (void)
{
  g_assert_cmpint (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), ==, 0);
  return TRUE;
}

static void
test_no_new_privs (gconstpointer data)
{
  g_test_summary ("A thread that set no_new_privs (per thread) cannot have "
                  "its kill-on-close child started, without the flag, by "
                  "the pdeathsig thread: a clear error, no fd, no child");
  confined_case (data, set_no_new_privs);
}

/* An allow-all filter: a filter all the same, which the pdeathsig thread lacks. */
static gboolean
install_seccomp (void)
{
  struct sock_filter insn[] = {
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { G_N_ELEMENTS (insn), insn };

  /* Without CAP_SYS_ADMIN a filter needs no_new_privs. */
  if (getuid () != 0)
    set_no_new_privs ();
  g_assert_cmpint (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog), ==, 0);
  return TRUE;
}

static void
test_seccomp (gconstpointer data)
{
  g_test_summary ("A thread that installed a seccomp filter (without TSYNC) "
                  "does not get an unfiltered kill-on-close child from the "
                  "pdeathsig thread: a clear error, no fd, no child");
  confined_case (data, install_seccomp);
}

static gboolean
unshare_pidns (void)
{
  if (getuid () != 0)
    return FALSE;
  g_assert_cmpint (unshare (CLONE_NEWPID), ==, 0);
  return TRUE;
}

static void
test_pidns (gconstpointer data)
{
  g_test_summary ("A thread that did unshare(CLONE_NEWPID) would have its "
                  "kill-on-close child in the pdeathsig thread's PID namespace: "
                  "a clear error, no fd, no child");
  if (getuid () != 0)
    {
      g_test_skip ("needs root, for unshare(CLONE_NEWPID)");
      return;
    }
  confined_case (data, unshare_pidns);
}

static void
test_pidns_first (gconstpointer data)
{
  g_test_summary ("A thread that did unshare(CLONE_NEWPID) before the "
                  "pdeathsig thread exists cannot start it (the kernel "
                  "refuses a thread there): a clear error, no fd, no "
                  "child");
  if (getuid () != 0)
    {
      g_test_skip ("needs root, for unshare(CLONE_NEWPID)");
      return;
    }
  confined_case_full (data, unshare_pidns, FALSE);
}

/* Field @n (1-based, as proc(5) counts) of /proc/@pid/stat. */
static char *
stat_field (int pid, int n)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  g_auto (GStrv) fields = NULL;
  const char *p;

  g_assert_true (g_file_get_contents (path, &stat, NULL, NULL));
  p = strrchr (stat, ')');
  g_assert_nonnull (p);
  fields = g_strsplit (p + 2, " ", -1);
  g_assert_cmpuint (g_strv_length (fields), >=, (guint) n - 2);
  return g_strdup (fields[n - 3]);
}

typedef struct {
  int cpu;
  int nice;
  SpawnChild *child;
  GError *error;
  GAsyncQueue *go;
} PinnedJob;

static gpointer
spawn_pinned (gpointer data)
{
  const char *argv[] = { testutil_helper, "sleep", "600000", NULL };
  PinnedJob *job = data;
  cpu_set_t set;

  if (job->cpu >= 0)
    {
      CPU_ZERO (&set);
      CPU_SET (job->cpu, &set);
      g_assert_cmpint (sched_setaffinity (0, sizeof (set), &set), ==, 0);
    }
  else
    g_assert_cmpint (setpriority (PRIO_PROCESS, 0, job->nice), ==, 0);
  job->child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1,
                                    -1, NULL, NULL, 0, NULL, NULL, NULL,
                                    SPAWN_CHILD_KILL_ON_CLOSE, &job->error);
  return NULL;
}

/* Ends a copied_case()-style child and checks nothing is left. */
static void
kill_and_reap (SpawnChild *child)
{
  GError *error = NULL;

  g_assert_true (spawn_child_send_signal (child, SIGKILL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, &error));
  g_assert_no_error (error);
  spawn_child_unref (child);
  testutil_assert_no_children ();
}

/* A nice value this process may always take (raising needs no privilege)
 * and that differs from the one it runs at: 7 above it, at most 19.  -1
 * with a skip when it runs at 19 already (e.g. under `nice -n 19`), where
 * no value tells the threads apart.  Absolute values would fail there:
 * going back down from 19 to 7 needs CAP_SYS_NICE. */
static int
nice_above_ours (void)
{
  int ours;

  errno = 0;
  ours = getpriority (PRIO_PROCESS, 0);
  g_assert_cmpint (errno, ==, 0);
  if (ours >= 19)
    {
      g_test_skip ("this process runs at nice 19: no higher value to tell "
                   "the threads apart");
      return -1;
    }
  return MIN (ours + 7, 19);
}

/* A child started by the pdeathsig thread from a worker thread that first set
 * its affinity to @pin_cpu only (>= 0), or else its nice value to
 * nice_above_ours(): check the child has it. */
static void
copied_case (int pin_cpu)
{
  PinnedJob job = { pin_cpu, -1, NULL, NULL, NULL };
  g_autofree char *nice = NULL;
  g_autofree char *path = NULL;
  g_autofree char *status = NULL;
  g_autofree char *expect = NULL;

  if (pin_cpu < 0)
    job.nice = nice_above_ours ();
  g_setenv ("LIBSPAWN_KILL_ON_CLOSE", "pdeathsig", TRUE);
  /* The pdeathsig thread exists, with this thread's (all) CPUs and nice. */
  g_assert_cmpint (spawn_exit7 (), ==, 0);
  g_thread_join (g_thread_new ("pinned", spawn_pinned, &job));
  g_assert_no_error (job.error);
  g_assert_nonnull (job.child);

  if (pin_cpu >= 0)
    {
      path = g_strdup_printf ("/proc/%d/status", (int) spawn_child_get_pid (job.child));
      g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
      expect = g_strdup_printf ("\nCpus_allowed_list:\t%d\n", pin_cpu);
      if (strstr (status, expect) == NULL)
        g_error ("child's status lacks “%s”: %s", expect + 1, status);
    }
  else
    {
      nice = stat_field (spawn_child_get_pid (job.child), 19);
      g_assert_cmpint (atoi (nice), ==, job.nice);
    }

  kill_and_reap (job.child);
}

static void
test_affinity (gconstpointer data)
{
  cpu_set_t set;
  int cpu, last = -1;

  g_test_summary ("A kill-on-close child started by the pdeathsig thread "
                  "has its spawning thread's CPU affinity, not the "
                  "pdeathsig thread's");
  /* Here, not in the subprocess: a skip there is its failure. */
  g_assert_cmpint (sched_getaffinity (0, sizeof (set), &set), ==, 0);
  if (CPU_COUNT (&set) < 2)
    {
      g_test_skip ("needs 2 CPUs, for an affinity that differs");
      return;
    }
  for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &set))
      last = cpu;
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  copied_case (last);
}

static void
test_nice (gconstpointer data)
{
  g_test_summary ("A kill-on-close child started by the pdeathsig thread "
                  "has its spawning thread's nice value, not the "
                  "pdeathsig thread's");
  /* Here, not in the subprocess: a skip there is its failure. */
  if (nice_above_ours () < 0)
    return;
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  copied_case (-1);
}

static gpointer
spawn_when_told (gpointer data)
{
  const char *argv[] = { testutil_helper, "sleep", "600000", NULL };
  PinnedJob *job = data;

  g_async_queue_pop (job->go);
  job->child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1,
                                    -1, NULL, NULL, 0, NULL, NULL, NULL,
                                    SPAWN_CHILD_KILL_ON_CLOSE, &job->error);
  return NULL;
}

static void
test_nice_unprivileged (gconstpointer data)
{
  PinnedJob job = { -1, -1, NULL, NULL, NULL };
  g_autofree char *nice = NULL;
  GThread *thread;

  g_test_summary ("Without the right to raise a priority, a thread at its "
                  "nice still gets its kill-on-close child when the pdeathsig "
                  "thread runs 7 above it: the child keeps the pdeathsig "
                  "thread's value instead of failing to start");
  if (getuid () == 0 && !helper_reachable_by_nobody ())
    {
      g_test_skip_printf ("uid 65534 cannot execute %s (a 0700 directory "
                          "above it?)", testutil_helper);
      return;
    }
  /* Here, not in the subprocess: a skip there is its failure. */
  if (nice_above_ours () < 0)
    return;
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  job.nice = nice_above_ours ();
  /* glibc applies these to every thread; no thread but this one yet. */
  if (getuid () == 0)
    g_assert_true (setgroups (0, NULL) == 0 &&
                   setresgid (65534, 65534, 65534) == 0 &&
                   setresuid (65534, 65534, 65534) == 0);
  g_setenv ("LIBSPAWN_KILL_ON_CLOSE", "pdeathsig", TRUE);
  job.go = g_async_queue_new ();
  thread = g_thread_new ("nice-ours", spawn_when_told, &job);
  /* The pdeathsig thread is born from this thread, at the higher nice. */
  g_assert_cmpint (setpriority (PRIO_PROCESS, 0, job.nice), ==, 0);
  g_assert_cmpint (spawn_exit7 (), ==, 0);
  g_async_queue_push (job.go, GINT_TO_POINTER (1));
  g_thread_join (thread);
  g_async_queue_unref (job.go);
  g_assert_no_error (job.error);
  g_assert_nonnull (job.child);
  nice = stat_field (spawn_child_get_pid (job.child), 19);
  g_assert_cmpint (atoi (nice), ==, job.nice);
  kill_and_reap (job.child);
}

static void
notified (GObject *obj G_GNUC_UNUSED, GParamSpec *pspec G_GNUC_UNUSED,
          gpointer data)
{
  (*(int *) data)++;
}

static void
test_process_property (void)
{
  SpawnProcess *proc = spawn_process_new (NULL);
  gboolean value = TRUE;
  int n = 0;

  g_test_summary ("SpawnProcess:kill-on-close: off by default, notifies "
                  "once per change");
  g_signal_connect (proc, "notify::kill-on-close", G_CALLBACK (notified), &n);
  g_assert_false (spawn_process_get_kill_on_close (proc));
  spawn_process_set_kill_on_close (proc, TRUE);
  spawn_process_set_kill_on_close (proc, TRUE);
  g_assert_cmpint (n, ==, 1);
  g_object_get (proc, "kill-on-close", &value, NULL);
  g_assert_true (value);
  g_object_set (proc, "kill-on-close", FALSE, NULL);
  g_assert_cmpint (n, ==, 2);
  g_assert_false (spawn_process_get_kill_on_close (proc));
  g_object_unref (proc);
}

/* SpawnProcess with kill-on-close and @policy; the child after unref. */
static void
process_dispose_case (gconstpointer data, SpawnDisposePolicy policy)
{
  SpawnProcess *proc;
  AppChild c = { "process", 0, -1 };

  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("sleep", "600000", NULL);
  spawn_process_set_kill_on_close (proc, TRUE);
  spawn_process_set_dispose_policy (proc, policy);
  testutil_start_ok (proc);
  c.pid = spawn_process_get_pid (proc);
  c.pidfd = sys_pidfd_open (c.pid);
  g_assert_cmpint (c.pidfd, >=, 0);
  g_object_unref (proc);
  if (policy == SPAWN_DISPOSE_KILL)
    g_assert_true (pidfd_ended (c.pidfd, DEADLINE_S * 1000));
  else
    {
      assert_alive_and_unsignalled (&c);
      g_assert_cmpint (syscall (SYS_pidfd_send_signal, c.pidfd, SIGKILL, NULL, 0), ==, 0);
      g_assert_true (pidfd_ended (c.pidfd, DEADLINE_S * 1000));
    }
  close (c.pidfd);
  testutil_assert_no_children ();
}

static void
test_process_dispose_kill (gconstpointer data)
{
  g_test_summary ("kill-on-close with SPAWN_DISPOSE_KILL: the last "
                  "reference kills the process");
  process_dispose_case (data, SPAWN_DISPOSE_KILL);
}

static void
test_process_leave_running (gconstpointer data)
{
  g_test_summary ("kill-on-close with SPAWN_DISPOSE_LEAVE_RUNNING: the "
                  "process outlives its object (but not the application)");
  process_dispose_case (data, SPAWN_DISPOSE_LEAVE_RUNNING);
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "crash", test_crash },
    { "crash-pdeathsig", test_crash_pdeathsig },
    { "thread", test_thread },
    { "process-crash", test_process_crash },
    { "drop-privileges", test_drop_privileges },
    { "fork", test_fork },
    { "no-new-privs", test_no_new_privs },
    { "seccomp", test_seccomp },
    { "pidns", test_pidns },
    { "pidns-first", test_pidns_first },
    { "affinity", test_affinity },
    { "nice", test_nice },
    { "nice-unprivileged", test_nice_unprivileged },
    { "unref", test_unref },
    { "watched", test_watched },
    { "exec-failure", test_exec_failure },
    { "exec-failure-pdeathsig", test_exec_failure_pdeathsig },
    { "process-dispose-kill", test_process_dispose_kill },
    { "process-leave-running", test_process_leave_running },
  };
  g_autofree char *dir = NULL;

  testutil_init (&argc, &argv);
  dir = g_path_get_dirname (testutil_helper);
  kill_app = g_build_filename (dir, "kill-app", NULL);
  g_unsetenv ("LIBSPAWN_KILL_ON_CLOSE");
  testutil_add_backend_cases ("/spawn/kill-on-close", cases, G_N_ELEMENTS (cases));
  g_test_add_func ("/spawn/kill-on-close/process-property", test_process_property);
  return g_test_run ();
}
