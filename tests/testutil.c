/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* testutil.c - what the test programs share (see testutil.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

const char *testutil_helper;

static const SpawnBackend all_backends[] = {
  SPAWN_BACKEND_CLONEFD, SPAWN_BACKEND_AUTOREAP, SPAWN_BACKEND_PIDFD,
  SPAWN_BACKEND_SIGCHLD,
};

/* g_test_init(), and find spawn-helper next to the running program. */
void
testutil_init (int *argc, char ***argv)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = NULL;

  g_test_init (argc, argv, NULL);
  g_assert_nonnull (self);
  dir = g_path_get_dirname (self);
  testutil_helper = g_build_filename (dir, "spawn-helper", NULL);
}

/* Whether cases for @backend are registered: all backends, unless
 * LIBSPAWN_TEST_BACKENDS names some (comma-separated, as
 * spawn_backend_to_string() spells them).  The debug guest sets it to
 * clonefd: its kernel checkers make every case six times slower, and only
 * clonefd reaches the series' code. */
static gboolean
backend_selected (SpawnBackend backend)
{
  const char *list = g_getenv ("LIBSPAWN_TEST_BACKENDS");
  g_auto (GStrv) names = NULL;
  gsize i, b;

  if (list == NULL || *list == '\0')
    return TRUE;
  names = g_strsplit (list, ",", -1);
  for (i = 0; names[i] != NULL; i++)
    {
      for (b = 0; b < G_N_ELEMENTS (all_backends); b++)
        if (g_str_equal (names[i], spawn_backend_to_string (all_backends[b])))
          break;
      if (b == G_N_ELEMENTS (all_backends))
        g_error ("LIBSPAWN_TEST_BACKENDS: unknown backend “%s” (clonefd, autoreap, pidfd, sigchld)",
                 names[i]);
    }
  return g_strv_contains ((const char * const *) names,
                          spawn_backend_to_string (backend));
}

/* Register every one of @cases once per backend, as PREFIX/BACKEND/NAME,
 * backend by backend (only those LIBSPAWN_TEST_BACKENDS names, if set:
 * the others are said to be left out). */
void
testutil_add_backend_cases (const char *prefix, const TestutilCase *cases,
                            gsize n_cases)
{
  gsize b, c;

  for (b = 0; b < G_N_ELEMENTS (all_backends); b++)
    {
      if (!backend_selected (all_backends[b]))
        {
          g_print ("# %s/%s: %" G_GSIZE_FORMAT " cases not registered "
                   "(LIBSPAWN_TEST_BACKENDS=%s)\n", prefix,
                   spawn_backend_to_string (all_backends[b]), n_cases,
                   g_getenv ("LIBSPAWN_TEST_BACKENDS"));
          continue;
        }
      for (c = 0; c < n_cases; c++)
        {
          g_autofree char *path =
            g_strdup_printf ("%s/%s/%s", prefix,
                             spawn_backend_to_string (all_backends[b]),
                             cases[c].name);

          g_test_add_data_func (path, GINT_TO_POINTER (all_backends[b]),
                                cases[c].func);
        }
    }
}

/* The backend a case registered by testutil_add_backend_cases() is for. */
SpawnBackend
testutil_backend (gconstpointer data)
{
  return GPOINTER_TO_INT (data);
}

/* Force the case's backend; FALSE, with the case skipped and the reason
 * given, when the kernel lacks it. */
gboolean
testutil_use_backend (gconstpointer data)
{
  SpawnBackend b = testutil_backend (data);
  GError *error = NULL;

  if (!spawn_backend_is_available (b))
    {
      g_test_skip_printf ("backend %s is not available on this kernel",
                          spawn_backend_to_string (b));
      return FALSE;
    }
  g_assert_true (spawn_set_backend (b, &error));
  g_assert_no_error (error);
  return TRUE;
}

/* Where the subprocess of an isolated case that skips writes why
 * (testutil_skip_isolated()); the test process names the file. */
#define TESTUTIL_SKIP_FILE_ENV "LIBSPAWN_TEST_SKIP_FILE"

/* For cases that change process-wide state: TRUE in the subprocess that
 * runs the body; in the test process, run it there and check it passed. */
gboolean
testutil_isolated (void)
{
  return testutil_isolated_output (NULL, NULL);
}

/* testutil_isolated(), and in the test process also check that what the
 * subprocess wrote to its stdout and stderr matches @out and @err
 * (g_pattern_match_simple() patterns; NULL: anything). */
gboolean
testutil_isolated_output (const char *out, const char *err)
{
  g_autofree char *skip_file = NULL;
  g_autofree char *reason = NULL;

  if (g_test_subprocess ())
    return TRUE;
  skip_file = g_strdup_printf ("%s/libspawn-test-skip-%d", g_get_tmp_dir (), (int) getpid ());
  g_setenv (TESTUTIL_SKIP_FILE_ENV, skip_file, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_unsetenv (TESTUTIL_SKIP_FILE_ENV);
  /* A skip decided in the subprocess (testutil_skip_isolated()): the
   * case is skipped here, with the subprocess's reason. */
  if (g_file_get_contents (skip_file, &reason, NULL, NULL))
    {
      g_assert_no_errno (unlink (skip_file));
      if (!g_test_trap_has_passed ())
        {
          g_test_skip (reason);
          return FALSE;
        }
    }
  g_test_trap_assert_passed ();
  if (out != NULL)
    g_test_trap_assert_stdout (out);
  if (err != NULL)
    g_test_trap_assert_stderr (err);
  return FALSE;
}

/* In the subprocess of testutil_isolated(): skip the case, and have the
 * test process skip it too, giving @reason (a failure there otherwise:
 * GLib's subprocess exits 77 when its only case skipped). */
void
testutil_skip_isolated (const char *reason)
{
  const char *file = g_getenv (TESTUTIL_SKIP_FILE_ENV);

  g_assert_true (g_test_subprocess ());
  g_assert_nonnull (file);
  g_assert_true (g_file_set_contents (file, reason, -1, NULL));
  g_test_skip (reason);
}

typedef struct {
  int (*body) (guint index);
  guint index;
} ThreadJob;

static gpointer
thread_main (gpointer data)
{
  ThreadJob *job = data;
  GMainContext *ctx = g_main_context_new ();
  int bad;

  g_main_context_push_thread_default (ctx);
  bad = job->body (job->index);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  return GINT_TO_POINTER (bad + 1);
}

/* Run @body (0) to @body (@n_threads - 1) at once, each in a thread of its
 * own with its own thread-default GMainContext, and check that each found
 * nothing wrong (returned 0). */
void
testutil_run_in_threads (guint n_threads, int (*body) (guint index))
{
  ThreadJob *jobs = g_new (ThreadJob, n_threads);
  GThread **threads = g_new (GThread *, n_threads);
  guint i;

  for (i = 0; i < n_threads; i++)
    {
      jobs[i].body = body;
      jobs[i].index = i;
      threads[i] = g_thread_new ("testutil", thread_main, &jobs[i]);
    }
  for (i = 0; i < n_threads; i++)
    g_assert_cmpint (GPOINTER_TO_INT (g_thread_join (threads[i])), ==, 1);
  g_free (threads);
  g_free (jobs);
}

/* How many descriptors we hold, the directory's own included. */
int
testutil_count_fds (void)
{
  GDir *d = g_dir_open ("/proc/self/fd", 0, NULL);
  int n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  g_dir_close (d);
  return n;
}

/* spawn-helper CMD ARG, started with spawn_async_fd()'s defaults. */
SpawnChild *
testutil_start_helper (const char *cmd, const char *arg)
{
  const char *argv[] = { testutil_helper, cmd, arg, NULL };
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                          NULL, NULL, 0, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (child);
  return child;
}

/* Our epoll descriptors: a hub's, while its context watches children. */
int
testutil_count_epoll_fds (void)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;
  int n = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char *path = g_build_filename ("/proc/self/fd", name, NULL);
      char *target = g_file_read_link (path, NULL);

      if (g_strcmp0 (target, "anon_inode:[eventpoll]") == 0)
        n++;
      g_free (target);
      g_free (path);
    }
  g_dir_close (dir);
  return n;
}

/* Waits (poll, no main loop) until @child's fd is readable: it has ended. */
void
testutil_wait_readable (SpawnChild *child)
{
  struct pollfd pfd = { .fd = spawn_child_get_fd (child), .events = POLLIN };
  int n;

  /* EINTR: the sigchld backend's handler ran. */
  while ((n = poll (&pfd, 1, 120 * 1000)) < 0 && errno == EINTR)
    ;
  g_assert_cmpint (n, ==, 1);
}

static gboolean
testutil_mark_dispatched (gpointer data G_GNUC_UNUSED)
{
  return G_SOURCE_REMOVE;
}

/* An ID GLib has just given out in @ctx: attach and destroy an idle
 * (which does nothing should a thread that runs @ctx dispatch it first). */
guint
testutil_mark_source_id (GMainContext *ctx)
{
  GSource *mark = g_idle_source_new ();
  guint id;

  g_source_set_callback (mark, testutil_mark_dispatched, NULL, NULL);
  id = g_source_attach (mark, ctx);

  g_source_destroy (mark);
  g_source_unref (mark);
  return id;
}

/* Lists our descriptors and what each is, as test messages: what a
 * failing descriptor count shows. */
void
testutil_print_fds (void)
{
  GDir *d = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (path, NULL);

      g_test_message ("fd %s: %s", name, target != NULL ? target : "?");
    }
  g_dir_close (d);
}

void
testutil_kill_pidfile (const char *path)
{
  g_autofree char *text = NULL;
  gint64 pid;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  pid = g_ascii_strtoll (text, NULL, 10);
  g_assert_cmpint (pid, >, 1);
  g_assert_no_errno (kill ((pid_t) pid, 0));
  g_assert_no_errno (kill ((pid_t) pid, SIGKILL));
  g_assert_no_errno (unlink (path));
}

/* Whether the running kernel reports CPU times in PIDFD_GET_INFO's exit
 * information (kernel/patches-7.2). */
gboolean
testutil_kernel_has_exit_cputime (void)
{
  /* struct pidfd_info of kernel/patches-7.2 (PIDFD_INFO_SIZE_VER4): mask
   * first, supported_mask at byte 80; PIDFD_INFO_SUPPORTED_MASK is bit 5,
   * PIDFD_INFO_EXIT_CPUTIME bit 8.  ENOTTY before 6.13, no supported
   * mask before 6.18: no times either. */
  guint64 info[15] = { 1 << 5 };
  int fd = syscall (SYS_pidfd_open, getpid (), 0), r;

  if (fd < 0)
    return FALSE;
  r = ioctl (fd, _IOC (_IOC_READ | _IOC_WRITE, 0xFF, 11, sizeof info), info);
  close (fd);
  return r == 0 && (info[0] & (1 << 5)) && (info[10] & (1 << 8));
}

gboolean
testutil_backend_has_times (SpawnBackend backend)
{
  return backend != SPAWN_BACKEND_AUTOREAP || testutil_kernel_has_exit_cputime ();
}

/* No child of ours left, running or zombie.  One that is already dead
 * may take a moment to be released (under CLONE_AUTOREAP the kernel does it
 * right after the exit report), so allow 5 s; a leaked zombie stays. */
void
testutil_assert_no_children (void)
{
  siginfo_t si;
  int i;

  for (i = 0; i < 500; i++)
    {
      if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 &&
          errno == ECHILD)
        return;
      g_usleep (10 * 1000);
    }
  g_error ("a child of ours is still there after 5 s");
}

SpawnProcess *
testutil_helper_process (const char *cmd, ...)
{
  GPtrArray *argv = g_ptr_array_new ();
  SpawnProcess *proc;
  const char *a;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) testutil_helper);
  va_start (ap, cmd);
  for (a = cmd; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  proc = spawn_process_new ((const char * const *) argv->pdata);
  g_ptr_array_free (argv, TRUE);
  return proc;
}

SpawnProcess *
testutil_sh_process (const char *script)
{
  return spawn_process_new ((const char *[]) { "sh", "-c", script, NULL });
}

void
testutil_start_ok (SpawnProcess *proc)
{
  GError *error = NULL;

  g_assert_true (spawn_process_start (proc, &error));
  g_assert_no_error (error);
}

/* Enter a mount namespace of our own and make its mounts private, so that
 * what the caller mounts or unmounts there reaches no other namespace.
 * "/" made private recursively is enough where it is a mount point; in a
 * chroot it usually is not (EINVAL), and then every mount the chroot can
 * see is made private one by one (/proc/self/mountinfo lists only those,
 * its paths with octal escapes).  0, or -1 with errno set. */
int
testutil_unshare_private_mounts (void)
{
  g_autofree char *contents = NULL;
  g_auto (GStrv) lines = NULL;
  guint i;

  if (unshare (CLONE_NEWNS) < 0)
    return -1;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
    return 0;
  if (errno != EINVAL)
    return -1;
  if (!g_file_get_contents ("/proc/self/mountinfo", &contents, NULL, NULL))
    {
      errno = ENOENT;
      return -1;
    }
  lines = g_strsplit (contents, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) field = g_strsplit (lines[i], " ", 6);
      g_autofree char *where = NULL;

      if (g_strv_length (field) < 5)
        continue;
      where = g_strcompress (field[4]);
      if (mount (NULL, where, NULL, MS_PRIVATE, NULL) < 0)
        return -1;
    }
  return 0;
}
