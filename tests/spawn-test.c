/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* libspawn core: spawn_async_fd(), the child watch and each backend.
 *
 * Every case runs once per backend (/spawn/<backend>/...), forced with
 * spawn_set_backend(); a backend the kernel lacks is skipped with the
 * reason.  Cases that change process-wide state run in a subprocess.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libspawn/libspawn.h>
#include "base.h"  /* the child's steps, from the internal library */
#include "testutil.h"

#if defined (__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif

typedef struct {
  gboolean done;
  SpawnExitInfo info;
  GError *error;
} Result;

static SpawnChild *
start_full (const char * const *argv, GSpawnFlags flags, int *in, int *out,
            GError **error)
{
  return spawn_async_fd (NULL, argv, NULL, flags, NULL, NULL, -1, -1, -1,
                         NULL, NULL, 0, in, out, NULL, error);
}

static SpawnChild *
start_helper (const char *a1, const char *a2)
{
  const char *argv[] = { testutil_helper, a1, a2, NULL };
  GError *error = NULL;
  SpawnChild *child = start_full (argv, 0, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (child);
  return child;
}

static void
on_exit_cb (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
            const GError *error, gpointer data)
{
  Result *r = data;

  g_assert_false (r->done);
  g_assert_true ((info == NULL) != (error == NULL));
  r->done = TRUE;
  if (info != NULL)
    r->info = *info;
  if (error != NULL)
    r->error = g_error_copy (error);
}

static gboolean
on_timeout (gpointer data G_GNUC_UNUSED)
{
  g_error ("child watch did not fire within 120 s");
  return G_SOURCE_REMOVE;
}

/* Watch @child on the thread-default context until it has ended. */
static void
watch (SpawnChild *child, Result *r)
{
  GMainContext *ctx = g_main_context_get_thread_default ();
  GSource *timeout = g_timeout_source_new_seconds (120);

  memset (r, 0, sizeof (*r));
  g_source_set_callback (timeout, on_timeout, NULL, NULL);
  g_source_attach (timeout, ctx);
  spawn_child_watch_add (child, on_exit_cb, r);
  while (!r->done)
    g_main_context_iteration (ctx, TRUE);
  g_source_destroy (timeout);
  g_source_unref (timeout);
}

static void
assert_exited (Result *r, int status)
{
  g_assert_no_error (r->error);
  g_assert_cmpint (r->info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (r->info.status, ==, status);
}

/* Read @fd to its end and close it, expect @want, then see @child exit 0. */
static void
assert_output (SpawnChild *child, int fd, const char *want)
{
  GString *s = g_string_new (NULL);
  char buf[4096];
  ssize_t n;
  Result r;

  while ((n = read (fd, buf, sizeof (buf))) > 0)
    g_string_append_len (s, buf, n);
  g_assert_cmpint (n, ==, 0);
  close (fd);
  g_assert_cmpstr (s->str, ==, want);
  g_string_free (s, TRUE);
  watch (child, &r);
  assert_exited (&r, 0);
}

static void
test_exit_status (gconstpointer data)
{
  Result r;

  g_test_summary ("the exit status arrives through the watch");
  if (!testutil_use_backend (data))
    return;
  g_autoptr (SpawnChild) child = start_helper ("exit", "42");
  g_assert_cmpint (spawn_child_get_backend (child), ==, testutil_backend (data));
  g_assert_cmpint (spawn_child_get_pid (child), >, 0);
  watch (child, &r);
  assert_exited (&r, 42);
  /* autoreap: stock 7.2's exit information has no CPU times, 7.2 with
   * kernel/patches-7.2 has (docs/api.md). */
  g_assert_cmpint (r.info.have_times, ==, testutil_backend_has_times (testutil_backend (data)));
  testutil_assert_no_children ();
}

static void
test_signal (gconstpointer data)
{
  Result r;
  GError *error = NULL;

  g_test_summary ("death by signal is reported as such, and the waitpid-style "
                  "status works with g_spawn_check_wait_status()");
  if (!testutil_use_backend (data))
    return;
  g_autoptr (SpawnChild) child = start_helper ("sleep", "100000");
  g_assert_true (spawn_child_send_signal (child, SIGKILL, &error));
  g_assert_no_error (error);
  watch (child, &r);
  g_assert_no_error (r.error);
  g_assert_cmpint (r.info.kind, ==, SPAWN_EXIT_KILLED);
  g_assert_cmpint (r.info.status, ==, SIGKILL);
  g_assert_true (WIFSIGNALED (spawn_exit_info_to_wait_status (&r.info)));
  g_assert_cmpint (WTERMSIG (spawn_exit_info_to_wait_status (&r.info)), ==, SIGKILL);

  /* Once it has ended, no signal goes anywhere, and the error names the
   * program and its PID. */
  g_assert_false (spawn_child_send_signal (child, SIGKILL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_SRCH);
  g_assert_nonnull (strstr (error->message, "spawn-helper"));
  g_clear_error (&error);

  g_autoptr (SpawnChild) three = start_helper ("exit", "3");
  watch (three, &r);
  g_assert_false (g_spawn_check_wait_status (spawn_exit_info_to_wait_status (&r.info), &error));
  g_assert_error (error, G_SPAWN_EXIT_ERROR, 3);
  g_clear_error (&error);
}

static void
test_core_dump (gconstpointer data)
{
  g_autofree char *pattern = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *rm = NULL;
  const char *argv[] = { testutil_helper, "kill", "11", NULL };
  GError *error = NULL;
  Result r;

  g_test_summary ("a core dump is reported as CLD_DUMPED");
  if (!testutil_use_backend (data))
    return;
  if (!g_file_get_contents ("/proc/sys/kernel/core_pattern", &pattern, NULL, NULL))
    {
      g_test_skip ("no /proc/sys/kernel/core_pattern");
      return;
    }
  if (pattern[0] == '|')
    {
      g_test_skip_printf ("core_pattern pipes to a helper (%s): whether it dumps "
                          "is not ours to know", g_strstrip (pattern));
      return;
    }
  /* core_pattern is a file name: dump into a directory of our own. */
  dir = g_dir_make_tmp ("spawn-core-XXXXXX", &error);
  g_assert_no_error (error);
  g_autoptr (SpawnChild) child =
    spawn_async_fd (dir, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                    NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  watch (child, &r);
  g_assert_no_error (r.error);
  g_assert_cmpint (r.info.kind, ==, SPAWN_EXIT_DUMPED);
  g_assert_cmpint (r.info.status, ==, SIGSEGV);
  g_assert_true (WCOREDUMP (spawn_exit_info_to_wait_status (&r.info)));
  rm = g_strdup_printf ("rm -rf %s", dir);
  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

static void
test_cpu_times (gconstpointer data)
{
  Result r;

  g_test_summary ("the child's user CPU time is reported; autoreap says "
                  "it has none rather than report zeros as times, but on "
                  "a kernel with kernel/patches-7.2");
  if (!testutil_use_backend (data))
    return;
  g_autoptr (SpawnChild) child = start_helper ("busy", "300");
  watch (child, &r);
  assert_exited (&r, 0);
  if (!testutil_backend_has_times (testutil_backend (data)))
    {
      /* The kernel reaped it and 7.2's PIDFD_INFO_EXIT carries no times. */
      g_assert_false (r.info.have_times);
      g_assert_cmpuint (r.info.utime_usec + r.info.stime_usec, ==, 0);
      return;
    }
  g_assert_true (r.info.have_times);
  g_test_message ("utime %" G_GUINT64_FORMAT " us, stime %" G_GUINT64_FORMAT " us",
                  r.info.utime_usec, r.info.stime_usec);
  /* The helper burns 300 ms by its own precise clock; the kernel samples
   * user and system time by ticks (si_utime, clonefd), and a TCG guest
   * starved by a busy host misses ticks: 150 ms was measured there.  So
   * check that the times are reported, in microseconds, and of the right
   * order, not their precision. */
  g_assert_cmpuint (r.info.utime_usec + r.info.stime_usec, >=, 100000);
  g_assert_cmpuint (r.info.utime_usec + r.info.stime_usec, <=, 10000000);
  g_assert_cmpuint (r.info.utime_usec, >=, 50000);
}

static void
test_pipes (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "cat", NULL };
  GError *error = NULL;
  int in = -1, out = -1;

  g_test_summary ("stdin and stdout pipes carry data both ways");
  if (!testutil_use_backend (data))
    return;
  g_autoptr (SpawnChild) child = start_full (argv, 0, &in, &out, &error);
  g_assert_no_error (error);
  g_assert_cmpint (in, >=, 0);
  g_assert_cmpint (out, >=, 0);
  g_assert_cmpint (fcntl (in, F_GETFD) & FD_CLOEXEC, ==, FD_CLOEXEC);
  g_assert_cmpint (write (in, "hello\n", 6), ==, 6);
  close (in);
  assert_output (child, out, "hello\n");
}

static void
test_fd_mapping (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "write-fd", "7", "mapped", NULL };
  GError *error = NULL;
  int p[2], source, target = 7;

  g_test_summary ("an fd of ours appears in the child under the number asked");
  if (!testutil_use_backend (data))
    return;
  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  source = p[1];
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, &source,
                    &target, 1, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  close (p[1]);
  assert_output (child, p[0], "mapped");
}

static void
test_fd_hygiene (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "list-fds", NULL };
  GError *error = NULL;
  int leaked, out = -1, source, target = 5, p[2];

  g_test_summary ("the child sees stdio and mapped fds only, never ours, "
                  "even those without CLOEXEC");
  if (!testutil_use_backend (data))
    return;
  leaked = open ("/dev/null", O_RDONLY); /* deliberately not CLOEXEC */
  g_assert_cmpint (leaked, >=, 0);
  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  source = p[0];
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, &source,
                    &target, 1, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  assert_output (child, out, "0\n1\n2\n5\n");
  close (leaked);
  close (p[0]);
  close (p[1]);
}

static void
setup_nothing (gpointer data)
{
  (void) data;
}

/* The slots of the table a child of ours got (exec keeps it), spawned
 * with @flags and @setup. */
static int
child_fd_table_size (GSpawnFlags flags, GSpawnChildSetupFunc setup)
{
  const char *argv[] = { testutil_helper, "fd-table-size", NULL };
  GError *error = NULL;
  char buf[64];
  ssize_t n;
  int out = -1;
  Result r;

  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, flags, setup, NULL, -1, -1, -1, NULL, NULL, 0,
                    NULL, &out, NULL, &error);
  g_assert_no_error (error);
  n = read (out, buf, sizeof (buf) - 1);
  g_assert_cmpint (n, >, 0);
  buf[n] = '\0';
  close (out);
  watch (child, &r);
  assert_exited (&r, 0);
  g_test_message ("flags %#x, %s child_setup: FDSize %d", flags,
                  setup != NULL ? "a" : "no", atoi (buf));
  return atoi (buf);
}

/* @fd, moved to @at or above. */
static int
move_fd_to (int fd, int at)
{
  int moved = fcntl (fd, F_DUPFD_CLOEXEC, at);

  g_assert_cmpint (moved, ==, at);
  close (fd);
  return moved;
}

static gboolean
can_reach_fd_900 (void)
{
  struct rlimit rl;

  g_assert_no_errno (getrlimit (RLIMIT_NOFILE, &rl));
  if (rl.rlim_cur > 900)
    return TRUE;
  g_test_skip_printf ("RLIMIT_NOFILE is %ju: no descriptor 900", (uintmax_t) rl.rlim_cur);
  return FALSE;
}

/* @try in a forked child of ours: 0 if it returned 0, else its errno. */
static int
errno_in_child (int (*try) (void))
{
  int status;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (try () == 0 ? 0 : errno != 0 ? errno : EIO);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static int
unshare_fd_table_to_3 (void)
{
  return syscall (__NR_close_range, 3U, ~0U, 2U /* CLOSE_RANGE_UNSHARE */);
}

/* Whether close_range(CLOSE_RANGE_UNSHARE) works here (Linux 5.9, and no
 * seccomp filter against it), asked in a child of our own. */
static gboolean
can_unshare_fd_table (void)
{
  int err = errno_in_child (unshare_fd_table_to_3);

  if (err == 0)
    return TRUE;
  g_test_skip_printf ("close_range(CLOSE_RANGE_UNSHARE) fails here (%s): every child gets "
                      "a copy of our table", g_strerror (err));
  return FALSE;
}

static void
test_fd_table (gconstpointer data)
{
  const char *write_argv[] = { testutil_helper, "write-fd", "3", "from 700", NULL };
  const char *list_argv[] = { testutil_helper, "list-fds", NULL };
  GError *error = NULL;
  int high, p[2], q[2], target = 3;

  g_test_summary ("a child's descriptor table is its own, as large as the descriptors it "
                  "uses need, not a copy of ours: with one of ours at 900 it has fewer "
                  "than 900 slots, and what it is given from 700 (an fd passed on) and "
                  "800 (its stdout) arrives; with G_SPAWN_LEAVE_DESCRIPTORS_OPEN or a "
                  "child_setup, which may use any of ours, it is a copy (over 900)");
  if (!testutil_use_backend (data) || !can_reach_fd_900 () || !can_unshare_fd_table ())
    return;
  high = move_fd_to (open ("/dev/null", O_RDONLY | O_CLOEXEC), 900);
  g_assert_cmpint (child_fd_table_size (0, NULL), <, 900);
  g_assert_cmpint (child_fd_table_size (G_SPAWN_LEAVE_DESCRIPTORS_OPEN, NULL), >, 900);
  g_assert_cmpint (child_fd_table_size (0, setup_nothing), >, 900);

  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  p[1] = move_fd_to (p[1], 700);
  {
    g_autoptr (SpawnChild) child =
      spawn_async_fd (NULL, write_argv, NULL, 0, NULL, NULL, -1, -1, -1, &p[1], &target, 1,
                      NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    close (p[1]);
    assert_output (child, p[0], "from 700");
  }
  g_assert_no_errno (pipe2 (q, O_CLOEXEC));
  q[1] = move_fd_to (q[1], 800);
  {
    g_autoptr (SpawnChild) child =
      spawn_async_fd (NULL, list_argv, NULL, 0, NULL, NULL, -1, q[1], -1, NULL, NULL, 0,
                      NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    close (q[1]);
    assert_output (child, q[0], "0\n1\n2\n");
  }
  close (high);
}

static void
assert_spawn_fails (const char *dir, const char * const *argv, int code,
                    const char *name)
{
  int before = testutil_count_fds ();
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd (dir, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                          -1, -1, -1, NULL, NULL, 0, NULL, NULL, NULL, &error);
  g_assert_null (child);
  g_assert_error (error, G_SPAWN_ERROR, code);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, name));
  g_clear_error (&error);
  g_assert_cmpint (testutil_count_fds (), ==, before);
  testutil_assert_no_children ();
}

static void
test_exec_errors (gconstpointer data)
{
  g_autofree char *dir = NULL, *plain = NULL, *script = NULL, *big = NULL;
  const char *noent[] = { "/nonexistent/program", NULL };
  const char *notfound[] = { "no-such-program-anywhere", NULL };
  const char *plain_argv[2] = { NULL, NULL }, *script_argv[2] = { NULL, NULL };
  const char *big_argv[3] = { NULL, NULL, NULL };
  const char *ok[] = { "/bin/sh", "-c", "exit 0", NULL };
  GError *error = NULL;

  g_test_summary ("exec failures come back as errno-shaped GErrors naming "
                  "the program, leaving no child and no fd");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-exec-XXXXXX", &error);
  g_assert_no_error (error);

  assert_spawn_fails (NULL, noent, G_SPAWN_ERROR_NOENT, "/nonexistent/program");
  assert_spawn_fails (NULL, notfound, G_SPAWN_ERROR_NOENT, "no-such-program-anywhere");

  plain = g_build_filename (dir, "not-executable", NULL);
  g_assert_true (g_file_set_contents (plain, "#!/bin/sh\n", -1, NULL));
  g_assert_no_errno (chmod (plain, 0644));
  plain_argv[0] = plain;
  /* Root may execute anything with an x bit, but not without one. */
  assert_spawn_fails (NULL, plain_argv, G_SPAWN_ERROR_ACCES, "not-executable");

  script = g_build_filename (dir, "bad-interpreter", NULL);
  g_assert_true (g_file_set_contents (script, "#!/nonexistent/interpreter\n", -1, NULL));
  g_assert_no_errno (chmod (script, 0755));
  script_argv[0] = script;
  assert_spawn_fails (NULL, script_argv, G_SPAWN_ERROR_NOENT, "bad-interpreter");

  big = g_malloc (4 * 1024 * 1024);
  memset (big, 'x', 4 * 1024 * 1024 - 1);
  big[4 * 1024 * 1024 - 1] = '\0';
  big_argv[0] = "/bin/true";
  big_argv[1] = big;
  assert_spawn_fails (NULL, big_argv, G_SPAWN_ERROR_TOO_BIG, "/bin/true");

  assert_spawn_fails ("/nonexistent/dir", ok, G_SPAWN_ERROR_CHDIR, "/nonexistent/dir");

  g_unlink (plain);
  g_unlink (script);
  g_rmdir (dir);
}

static void
test_script_argv_zero_empty (gconstpointer data)
{
  g_autofree char *dir = NULL, *script = NULL;
  const char *argv[2] = { NULL, NULL };
  GError *error = NULL;
  int out = -1;

  g_test_summary ("G_SPAWN_FILE_AND_ARGV_ZERO with no argument at all and a "
                  "script without #!: the /bin/sh fallback gets a "
                  "NULL-terminated argv (it overran its array by one; the "
                  "overread shows under valgrind, see docs/api.md)");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-script-XXXXXX", &error);
  g_assert_no_error (error);
  script = g_build_filename (dir, "no-shebang", NULL);
  g_assert_true (g_file_set_contents (script, "printf 'ran by sh'\n", -1, NULL));
  g_assert_no_errno (chmod (script, 0755));
  argv[0] = script;
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, G_SPAWN_FILE_AND_ARGV_ZERO, NULL, NULL,
                    -1, -1, -1, NULL, NULL, 0, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  assert_output (child, out, "ran by sh");
  g_unlink (script);
  g_rmdir (dir);
}

/* ---- GLib's arguments, GLib's answers ---- */

static void
test_empty_program_name (gconstpointer data)
{
  const char *empty[] = { "", NULL };

  g_test_summary ("an empty program name is ENOENT, as in GLib, with or "
                  "without a PATH search (the search found the directory "
                  "/bin/ and said EACCES)");
  if (!testutil_use_backend (data))
    return;
  assert_spawn_fails (NULL, empty, G_SPAWN_ERROR_NOENT, "“”");
}

/* A directory of our own with an executable script @name printing @says. */
static char *
dir_with_script (const char *name, const char *says)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("spawn-path-XXXXXX", &error);
  g_autofree char *file = NULL, *text = NULL;

  g_assert_no_error (error);
  file = g_build_filename (dir, name, NULL);
  text = g_strdup_printf ("#!/bin/sh\nprintf '%s'\n", says);
  g_assert_true (g_file_set_contents (file, text, -1, NULL));
  g_assert_no_errno (chmod (file, 0755));
  return dir;
}

static void
remove_dir (const char *dir)
{
  g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", dir);

  g_assert_true (g_spawn_command_line_sync (rm, NULL, NULL, NULL, NULL));
}

static void
test_path_unset (gconstpointer data)
{
  const char *argv[] = { "spawn-test-in-dot", NULL };
  const char *envp[] = { "SPAWN_TEST=1", NULL };
  g_autofree char *dir = NULL;
  GError *error = NULL;
  int out = -1;

  g_test_summary ("with no PATH in the environment searched, the search "
                  "path is GLib's /bin:/usr/bin:. (\".\" being the child's "
                  "working directory)");
  if (!testutil_use_backend (data))
    return;
  dir = dir_with_script ("spawn-test-in-dot", "found in .");
  g_autoptr (SpawnChild) child =
    spawn_async_fd (dir, argv, envp, G_SPAWN_SEARCH_PATH_FROM_ENVP, NULL, NULL,
                    -1, -1, -1, NULL, NULL, 0, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  assert_output (child, out, "found in .");
  remove_dir (dir);
}

static void
test_path_search_eloop (gconstpointer data)
{
  const char *argv[] = { "spawn-test-prog", NULL };
  g_autofree char *first = NULL, *second = NULL, *loop = NULL, *path = NULL;
  const char *envp[] = { NULL, NULL };
  GError *error = NULL;

  g_test_summary ("a PATH search stops at an entry that fails with ELOOP, as "
                  "GLib's and execvp's do; only ENOENT, ENOTDIR, EACCES "
                  "(and ESTALE, ENODEV, ETIMEDOUT) move on");
  if (!testutil_use_backend (data))
    return;
  first = g_dir_make_tmp ("spawn-path-XXXXXX", &error);
  g_assert_no_error (error);
  loop = g_build_filename (first, "spawn-test-prog", NULL);
  g_assert_no_errno (symlink (loop, loop));
  second = dir_with_script ("spawn-test-prog", "second");
  path = g_strdup_printf ("PATH=%s:%s", first, second);
  envp[0] = path;
  g_assert_null (spawn_async_fd (NULL, argv, envp, G_SPAWN_SEARCH_PATH_FROM_ENVP,
                                 NULL, NULL, -1, -1, -1, NULL, NULL, 0, NULL,
                                 NULL, NULL, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_LOOP);
  g_clear_error (&error);
  testutil_assert_no_children ();
  remove_dir (first);
  remove_dir (second);
}

static void
assert_bad_fds (const int *sources, const int *targets, gsize n)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  int before = testutil_count_fds ();
  GError *error = NULL;

  g_assert_null (spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                                 sources, targets, n, NULL, NULL, NULL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_cmpint (testutil_count_fds (), ==, before);
}

static void
test_invalid_fds (gconstpointer data)
{
  int sources[1000], targets[1000];
  int p[2], fd;
  gsize i;

  g_test_summary ("bad fd mappings are SPAWN_ERROR_INVAL GErrors, not "
                  "criticals: a source fd that is not open (GLib's "
                  "test_spawn_async_with_invalid_fds: the identity map of "
                  "3..999), a negative one, a target in 0-2, a target given "
                  "twice; nothing is started or left open");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < G_N_ELEMENTS (sources); i++)
    sources[i] = targets[i] = i + 3;
  assert_bad_fds (sources, targets, G_N_ELEMENTS (sources) - 3);

  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  fd = -1;
  targets[0] = 5;
  assert_bad_fds (&fd, targets, 1);
  targets[0] = 1;
  assert_bad_fds (&p[1], targets, 1);
  sources[0] = p[0];
  sources[1] = p[1];
  targets[0] = targets[1] = 7;
  assert_bad_fds (sources, targets, 2);
  close (p[0]);
  close (p[1]);
  testutil_assert_no_children ();
}

static void
test_flag_beats_pipe (gconstpointer data)
{
  /* list-fds on stderr: 0-2 are all there, stdout being /dev/null. */
  const char *argv[] = { testutil_helper, "list-fds", "stderr", NULL };
  GError *error = NULL;
  int out = 12345, err = -1;

  g_test_summary ("G_SPAWN_STDOUT_TO_DEV_NULL with a stdout pipe asked for: "
                  "as in GLib the flag wins, no pipe is made (*pipe_out is "
                  "set to -1)");
  if (!testutil_use_backend (data))
    return;
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                    -1, -1, -1, NULL, NULL, 0, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_assert_cmpint (out, ==, -1);
  assert_output (child, err, "0\n1\n2\n");
}

static void
test_with_pipes (gconstpointer data)
{
  const char *list_fds[] = { testutil_helper, "list-fds", "stdout", NULL };
  const char *exit0[] = { testutil_helper, "exit", "0", NULL };
  const char *missing[] = { "/nonexistent/program", NULL };
  GError *error = NULL;
  int in = 12345, out = 12345, err = 12345;
  SpawnChild *child;
  Result r;
  int fds;

  g_test_summary ("spawn_async_fd_with_pipes() makes the pipes asked for and no "
                  "others (-1 for each of those, and for all on failure), so a "
                  "binding that asks for none gets no fd");
  if (!testutil_use_backend (data))
    return;

  /* stdout only: stdin is /dev/null, stderr ours, as in GLib. */
  child = spawn_async_fd_with_pipes (NULL, list_fds, NULL, 0, SPAWN_CHILD_FLAGS_NONE,
                                     SPAWN_PIPE_STDOUT, -1, -1, -1, NULL, NULL, 0,
                                     &in, &out, &err, &error);
  g_assert_no_error (error);
  g_assert_cmpint (in, ==, -1);
  g_assert_cmpint (err, ==, -1);
  g_assert_cmpint (out, >=, 3);
  assert_output (child, out, "0\n1\n2\n");
  spawn_child_unref (child);

  /* None asked for: nothing of ours changes. */
  fds = testutil_count_fds ();
  in = out = err = 12345;
  child = spawn_async_fd_with_pipes (NULL, exit0, NULL, 0, SPAWN_CHILD_FLAGS_NONE,
                                     SPAWN_PIPE_FLAGS_NONE, -1, -1, -1, NULL, NULL, 0,
                                     &in, &out, &err, &error);
  g_assert_no_error (error);
  g_assert_cmpint (in, ==, -1);
  g_assert_cmpint (out, ==, -1);
  g_assert_cmpint (err, ==, -1);
  watch (child, &r);
  assert_exited (&r, 0);
  spawn_child_unref (child);   /* and with it the child's own fd */
  g_assert_cmpint (testutil_count_fds (), ==, fds);

  /* All asked for, the start fails: -1 everywhere, no fd left. */
  in = out = err = 12345;
  child = spawn_async_fd_with_pipes (NULL, missing, NULL, 0, SPAWN_CHILD_FLAGS_NONE,
                                     SPAWN_PIPE_STDIN | SPAWN_PIPE_STDOUT |
                                     SPAWN_PIPE_STDERR, -1, -1, -1, NULL, NULL, 0,
                                     &in, &out, &err, &error);
  g_assert_null (child);
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_assert_cmpint (in, ==, -1);
  g_assert_cmpint (out, ==, -1);
  g_assert_cmpint (err, ==, -1);
  g_assert_cmpint (testutil_count_fds (), ==, fds);
}

static void
test_conflicting_flags (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };

  g_test_summary ("G_SPAWN_STDIN_FROM_DEV_NULL with G_SPAWN_CHILD_INHERITS_STDIN "
                  "(and the same pairs for stdout, stderr) is a caller bug: a "
                  "critical, as g_return_val_if_fail() in GLib");
  if (!testutil_use_backend (data))
    return;
  g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL, "*INHERITS_OR_NULL_STDIN*");
  g_assert_null (start_full (argv, G_SPAWN_STDIN_FROM_DEV_NULL |
                                   G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL, NULL));
  g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL, "*INHERITS_OR_NULL_STDOUT*");
  g_assert_null (start_full (argv, G_SPAWN_STDOUT_TO_DEV_NULL |
                                   G_SPAWN_CHILD_INHERITS_STDOUT, NULL, NULL, NULL));
  g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL, "*INHERITS_OR_NULL_STDERR*");
  g_assert_null (start_full (argv, G_SPAWN_STDERR_TO_DEV_NULL |
                                   G_SPAWN_CHILD_INHERITS_STDERR, NULL, NULL, NULL));
  g_test_assert_expected_messages ();
  testutil_assert_no_children ();
}

/* ---- child_setup's stack ---- */

#define CANARY_BLOCKS 64
#define CANARY_SIZE (8 * 1024)

/* Heap blocks with a known pattern, allocated before the spawn: a child
 * that writes below its stack into our heap tramples them. */
static guchar **
canaries_new (void)
{
  guchar **blocks = g_new (guchar *, CANARY_BLOCKS);
  int i;

  for (i = 0; i < CANARY_BLOCKS; i++)
    {
      blocks[i] = g_malloc (CANARY_SIZE);
      memset (blocks[i], 0x5a, CANARY_SIZE);
    }
  return blocks;
}

static void
canaries_check_free (guchar **blocks)
{
  int i, j;

  for (i = 0; i < CANARY_BLOCKS; i++)
    {
      for (j = 0; j < CANARY_SIZE; j++)
        if (blocks[i][j] != 0x5a)
          g_error ("heap block %d trampled at byte %d", i, j);
      g_free (blocks[i]);
    }
  g_free (blocks);
  /* With M_PERTURB set malloc checks its chunks as it reuses them. */
  for (i = 0; i < CANARY_BLOCKS; i++)
    g_free (g_malloc (CANARY_SIZE * (i % 4 + 1)));
}

/* Async-signal-safe: touches its own stack only. */
static void
use_256k_of_stack (gpointer data G_GNUC_UNUSED)
{
  volatile char buf[256 * 1024];
  gsize i;

  for (i = 0; i < sizeof (buf); i += 512)
    buf[i] = (char) i;
  buf[sizeof (buf) - 1] = buf[0];
}

static volatile int recurse_forever = 1;

G_GNUC_NO_INLINE static int
recurse (int depth)
{
  volatile char frame[1024];

  frame[0] = (char) depth;
  if (!recurse_forever)
    return frame[0];
  return recurse (depth + 1) + frame[0];
}

static void
overflow_stack (gpointer data G_GNUC_UNUSED)
{
  recurse (0);
}

/* In a subprocess: the heap may not survive before the fix. */
static void
child_setup_prepare (void)
{
  struct rlimit no_core = { 0, 0 };

  mallopt (M_PERTURB, 0xa5);
  g_assert_no_errno (setrlimit (RLIMIT_CORE, &no_core));
}

static void
test_child_setup_big_stack (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  GError *error = NULL;
  guchar **canaries;
  Result r;

  g_test_summary ("a child_setup that puts 256 KiB on its stack works and "
                  "leaves our heap intact (the stack was a 64 KiB heap "
                  "block)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  child_setup_prepare ();
  canaries = canaries_new ();
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, 0, use_256k_of_stack, NULL, -1, -1, -1,
                    NULL, NULL, 0, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  watch (child, &r);
  assert_exited (&r, 0);
  canaries_check_free (canaries);
}

static void
test_child_setup_overflow (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  GError *error = NULL;
  guchar **canaries;
  Result r;

  g_test_summary ("a child_setup that recurses without end overflows its "
                  "stack into the guard page: the child dies of SIGSEGV, "
                  "which the watch reports (the spawn itself succeeds, as "
                  "in GLib), and our heap is intact");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  child_setup_prepare ();
  canaries = canaries_new ();
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, 0, overflow_stack, NULL, -1, -1, -1,
                    NULL, NULL, 0, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  watch (child, &r);
  g_assert_no_error (r.error);
  g_assert_cmpint (r.info.kind, ==, SPAWN_EXIT_KILLED);
  g_assert_cmpint (r.info.status, ==, SIGSEGV);
  canaries_check_free (canaries);
  /* The stack it ran off is kept for the next spawn: that child runs
   * on it, its child_setup deep in it, and exits as it should. */
  g_clear_pointer (&child, spawn_child_unref);
  child = spawn_async_fd (NULL, argv, NULL, 0, use_256k_of_stack, NULL, -1, -1, -1,
                          NULL, NULL, 0, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  watch (child, &r);
  assert_exited (&r, 0);
  testutil_assert_no_children ();
}

static void
test_working_directory_and_env (gconstpointer data)
{
  const char *pwd[] = { testutil_helper, "pwd", NULL };
  const char *env[] = { testutil_helper, "env", "SPAWN_TEST_VAR", NULL };
  const char *envp[] = { "SPAWN_TEST_VAR=from-envp", NULL };
  GError *error = NULL;
  int out = -1;

  g_test_summary ("working directory and environment reach the child");
  if (!testutil_use_backend (data))
    return;
  g_autoptr (SpawnChild) a =
    spawn_async_fd ("/", pwd, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                    NULL, &out, NULL, &error);
  g_assert_no_error (error);
  assert_output (a, out, "/\n");

  g_autoptr (SpawnChild) b =
    spawn_async_fd (NULL, env, envp, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                    NULL, &out, NULL, &error);
  g_assert_no_error (error);
  assert_output (b, out, "from-envp\n");
}

typedef struct {
  int remaining;
  int bad;
} Many;

typedef struct {
  Many *many;
  int want;
} One;

static void
on_one_exit (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
             const GError *error, gpointer data)
{
  One *one = data;

  if (error != NULL || info->kind != SPAWN_EXIT_EXITED || info->status != one->want)
    g_atomic_int_inc (&one->many->bad);
  g_atomic_int_add (&one->many->remaining, -1);
}

/* Start children @from to @to - 1 of @ones, exiting with i % 200, each
 * watched on the thread-default context. */
static void
start_many (One *ones, Many *many, int from, int to)
{
  int i;

  for (i = from; i < to; i++)
    {
      char status[16];
      g_snprintf (status, sizeof (status), "%d", i % 200);
      SpawnChild *child = start_helper ("exit", status);
      ones[i].many = many;
      ones[i].want = i % 200;
      spawn_child_watch_add_full (G_PRIORITY_DEFAULT, child, on_one_exit,
                                  &ones[i], NULL);
      spawn_child_unref (child);
    }
}

static void
wait_many (Many *many)
{
  GMainContext *ctx = g_main_context_get_thread_default ();

  while (g_atomic_int_get (&many->remaining) > 0)
    g_main_context_iteration (ctx, TRUE);
}

/* Start @n children exiting with i % 200 and watch them all on the
 * thread-default context; returns how many reported a wrong status. */
static int
run_many (int n)
{
  One *ones = g_new0 (One, n);
  Many many = { n, 0 };

  start_many (ones, &many, 0, n);
  wait_many (&many);
  g_free (ones);
  return many.bad;
}

static void
test_concurrency (gconstpointer data)
{
  g_test_summary ("hundreds of children at once, each status to its watch");
  if (!testutil_use_backend (data))
    return;
  g_assert_cmpint (run_many (300), ==, 0);
  testutil_assert_no_children ();
}

static int
run_25 (guint index G_GNUC_UNUSED)
{
  return run_many (25);
}

static void
test_threads (gconstpointer data)
{
  g_test_summary ("spawning from several threads, each watching on its own "
                  "GMainContext");
  if (!testutil_use_backend (data))
    return;
  testutil_run_in_threads (4, run_25);
  testutil_assert_no_children ();
}

static void
test_unwatched (gconstpointer data)
{
  SpawnChild *child;

  g_test_summary ("a child whose handle is dropped while it runs is still "
                  "reaped: no zombie");
  if (!testutil_use_backend (data))
    return;
  child = start_helper ("sleep", "100");
  spawn_child_unref (child);
  testutil_assert_no_children ();
}

/* Our threads' TIDs, sorted. */
static GArray *
list_tasks (void)
{
  GArray *tids = g_array_new (FALSE, FALSE, sizeof (int));
  GDir *d = g_dir_open ("/proc/self/task", 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      int tid = atoi (name);
      g_array_append_val (tids, tid);
    }
  g_dir_close (d);
  return tids;
}

/* The blocked mask of thread @tid, from /proc (SigBlk, hex). */
static guint64
task_sigblk (int tid)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/task/%d/status", tid);
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
  line = strstr (status, "\nSigBlk:");
  g_assert_nonnull (line);
  return g_ascii_strtoull (line + strlen ("\nSigBlk:"), NULL, 16);
}

/* Skips (and says so) where the kernel reaps every child: no reaper
 * thread to test. */
static gboolean
skip_without_reaper (gconstpointer data)
{
  if (testutil_backend (data) != SPAWN_BACKEND_CLONEFD &&
      testutil_backend (data) != SPAWN_BACKEND_AUTOREAP)
    return FALSE;
  g_test_skip ("clonefd and autoreap children are reaped by the kernel: "
               "no reaper thread");
  return TRUE;
}

static void
test_reaper_holds_reachable (gconstpointer data)
{
#ifdef HAVE_LSAN
  SpawnChild *child;
  GPid pid;
  int leaks;
#endif

  g_test_summary ("a dropped child the reaper waits for is reachable from "
                  "our memory, not only from the kernel's epoll set: a leak "
                  "checker run while it is still running finds nothing");
  if (skip_without_reaper (data))
    return;
#ifndef HAVE_LSAN
  g_test_skip ("needs LeakSanitizer: the sanitize build (tests/run-sanitized) "
               "runs this case");
#else
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  child = start_helper ("sleep", "100000");
  pid = spawn_child_get_pid (child);
  spawn_child_unref (child); /* adopted: running, so not collected */
  /* Before the hub listed its links, the reaper's entry, its link and
   * the child were named by the epoll set alone: a leak, to LSan. */
  leaks = __lsan_do_recoverable_leak_check ();
  /* Still ours to kill: not reaped, so the PID is not reused. */
  g_assert_no_errno (kill (pid, SIGKILL));
  testutil_assert_no_children ();
  g_assert_cmpint (leaks, ==, 0);
#endif
}

static void
test_reaper_sigmask (gconstpointer data)
{
  static const int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1,
                              SIGALRM, SIGPIPE };
  GArray *before, *after;
  SpawnChild *child;
  guint i, j;
  int reaper = 0;

  g_test_summary ("the reaper thread is born with every signal blocked, "
                  "not with the mask of the thread that dropped the first "
                  "child (here: nothing blocked)");
  if (skip_without_reaper (data))
    return;
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  child = start_helper ("sleep", "100000");
  /* The reaper is started by the first adoption: the new thread is it. */
  g_assert_true (spawn_child_send_signal (child, SIGKILL, NULL));
  before = list_tasks ();
  spawn_child_unref (child); /* not collected yet: adopted */
  after = list_tasks ();
  for (i = 0; i < after->len; i++)
    {
      int tid = g_array_index (after, int, i);
      for (j = 0; j < before->len && g_array_index (before, int, j) != tid; j++)
        ;
      if (j == before->len)
        {
          g_assert_cmpint (reaper, ==, 0);
          reaper = tid;
        }
    }
  g_assert_cmpint (reaper, >, 0);
  /* Once it has reaped, the thread is past GLib's setup (which runs with
   * all signals blocked, then sets the mask it inherited). */
  testutil_assert_no_children ();
  g_test_message ("reaper %d SigBlk %016" G_GINT64_MODIFIER "x", reaper,
                  task_sigblk (reaper));
  for (i = 0; i < G_N_ELEMENTS (sigs); i++)
    g_assert_true (task_sigblk (reaper) & (G_GUINT64_CONSTANT (1) << (sigs[i] - 1)));
  g_array_free (before, TRUE);
  g_array_free (after, TRUE);
}

static void
test_emfile (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  struct rlimit rl = { 64, 64 };
  GError *error = NULL;
  int fds = 0, before, filler;

  g_test_summary ("a full fd table gives EMFILE and leaves nothing behind");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  /* Probe the backend while fds are there to probe with. */
  g_assert_cmpint (spawn_get_backend (), ==, testutil_backend (data));
  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &rl));
  while (open ("/dev/null", O_RDONLY | O_CLOEXEC) >= 0)
    fds++;
  g_assert_cmpint (errno, ==, EMFILE);
  /* Count with one fd free (count_fds opens the directory), then take
   * it: no room for the child's fd (clone fd, pidfd or eventfd). */
  close (63);
  before = testutil_count_fds () - 1;
  filler = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (filler, >=, 0);
  g_assert_null (start_full (argv, 0, NULL, NULL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_MFILE);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  close (filler);
  g_assert_cmpint (testutil_count_fds () - 1, ==, before);
  testutil_assert_no_children ();
}

static void
test_closed_stdio (gconstpointer data)
{
  const char *noent[] = { "/nonexistent/program", NULL };
  const char *list[] = { testutil_helper, "list-fds", "stderr", NULL };
  GError *error = NULL;
  int err_pipe = -1;

  g_test_summary ("with our stdin and stdout closed, no pipe of ours may "
                  "land on fd 0 or 1: exec failures are still reported, and "
                  "the child inherits no fd of ours");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  /* Probe first: probes need fds of their own. */
  g_assert_cmpint (spawn_get_backend (), ==, testutil_backend (data));
  close (0);
  close (1);
  g_assert_null (start_full (noent, 0, NULL, NULL, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  /* Our fd 1 is closed, so the child's is too: nothing of ours there. */
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, list, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                    0, NULL, NULL, &err_pipe, &error);
  g_assert_no_error (error);
  assert_output (child, err_pipe, "0\n2\n");
}

/* ---- library safety: the application does things to SIGCHLD ---- */

static volatile sig_atomic_t app_sigchld_count;

static void
app_handler (int sig G_GNUC_UNUSED)
{
  app_sigchld_count++;
}

static void
test_app_handler (gconstpointer data)
{
  struct sigaction sa = { 0 };
  SpawnBackend b = testutil_backend (data);
  Result r;

  g_test_summary ("the application's own SIGCHLD handler keeps being called "
                  "(sigchld chains to it; pidfd children still send SIGCHLD "
                  "after exec); on clonefd it sees no SIGCHLD for our children");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  sa.sa_handler = app_handler;
  sigaction (SIGCHLD, &sa, NULL);
  g_autoptr (SpawnChild) child = start_helper ("exit", "5");
  watch (child, &r);
  assert_exited (&r, 5);
  g_test_message ("application saw %d SIGCHLD", (int) app_sigchld_count);
  if (b == SPAWN_BACKEND_CLONEFD || b == SPAWN_BACKEND_AUTOREAP)
    g_assert_cmpint (app_sigchld_count, ==, 0);
  else
    g_assert_cmpint (app_sigchld_count, >=, 1);
}

static gpointer
thief_main (gpointer data)
{
  int *stolen = data;

  while (!g_atomic_int_get (&stolen[1]))
    {
      if (waitpid (-1, NULL, 0) > 0)
        g_atomic_int_inc (&stolen[0]);
      else
        g_usleep (1000);
    }
  return NULL;
}

static void
test_waitpid_thief (gconstpointer data)
{
  SpawnBackend b = testutil_backend (data);
  int stolen[2] = { 0, 0 };
  GThread *thief;
  Result r;
  int i;

  g_test_summary ("another thread loops on waitpid(-1): clonefd never loses "
                  "the status; pidfd recovers it through PIDFD_GET_INFO "
                  "(>= 6.15) or reports it lost; sigchld races the thief "
                  "(its handler reaps at the SIGCHLD) and delivers the status "
                  "or reports it lost, never both; no watch hangs");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  thief = g_thread_new ("thief", thief_main, stolen);
  g_autoptr (SpawnChild) child = start_helper ("sleep", "100");
  /* Let the thief have its go before we look: the PID disappears once the
   * child is reaped, by the thief or (clonefd) by the kernel. */
  for (i = 0; kill (spawn_child_get_pid (child), 0) == 0; i++)
    {
      g_assert_cmpint (i, <, 30000);
      g_usleep (1000);
    }
  watch (child, &r);
  g_atomic_int_set (&stolen[1], 1);
  g_thread_join (thief);
  g_test_message ("thief reaped %d; watch: %s", stolen[0],
                  r.error ? r.error->message : "status delivered");
  switch (b)
    {
    case SPAWN_BACKEND_CLONEFD:
      g_assert_cmpint (stolen[0], ==, 0);
      assert_exited (&r, 0);
      g_assert_true (r.info.have_times);
      break;
    case SPAWN_BACKEND_AUTOREAP:
      /* Reaped by the kernel: nothing for the thief, status from the
       * pidfd, no times on stock 7.2. */
      g_assert_cmpint (stolen[0], ==, 0);
      assert_exited (&r, 0);
      g_assert_cmpint (r.info.have_times, ==, testutil_kernel_has_exit_cputime ());
      break;
    case SPAWN_BACKEND_PIDFD:
      g_assert_cmpint (stolen[0], ==, 1);
      if (r.error != NULL)
        g_assert_error (r.error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
      else
        {
          /* Recovered through PIDFD_GET_INFO: status, but no times. */
          assert_exited (&r, 0);
          g_assert_false (r.info.have_times);
        }
      break;
    default:
      /* Whoever reaps first has it: the thief, or our handler's sweep
       * (often run by the thief's own thread, interrupted in waitpid). */
      if (stolen[0] == 1)
        g_assert_error (r.error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
      else
        {
          g_assert_cmpint (stolen[0], ==, 0);
          assert_exited (&r, 0);
          g_assert_true (r.info.have_times);
        }
      break;
    }
  g_clear_error (&r.error);
}

/* Whether PIDFD_GET_INFO keeps the exit status of a reaped child (6.15). */
static gboolean
kernel_has_pidfd_exit_info (void)
{
  struct {
    guint64 mask, cgroupid;
    guint32 ids[11];
    gint32 exit_code;
  } pi = { 0 };
  pid_t pid;
  int fd;
  gboolean ok;

  pid = fork ();
  if (pid == 0)
    _exit (7);
  fd = syscall (SYS_pidfd_open, pid, 0);
  g_assert_cmpint (waitpid (pid, NULL, 0), ==, pid);
  if (fd < 0)
    return FALSE;
  pi.mask = 1 << 3; /* PIDFD_INFO_EXIT */
  ok = ioctl (fd, _IOWR (0xFF, 11, pi), &pi) == 0 && (pi.mask & (1 << 3)) &&
       WIFEXITED (pi.exit_code) && WEXITSTATUS (pi.exit_code) == 7;
  close (fd);
  return ok;
}

/* CLONEFD_GET_INFO of the series: the report without consuming it. */
struct clonefd_report
{
  guint32 code, status;
  guint64 utime, stime;
};
#define CLONEFD_GET_INFO _IOR (0xC4, 1, struct clonefd_report)

static gboolean
kernel_has_clonefd_get_info (void)
{
  struct clonefd_report r;
  SpawnChild *child = start_helper ("exit", "0");
  gboolean ok;

  ok = ioctl (spawn_child_get_fd (child), CLONEFD_GET_INFO, &r) == 0 ||
       errno != ENOTTY;
  g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
  spawn_child_unref (child);
  return ok;
}

static void
test_forked_reader (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "5", NULL };
  GError *error = NULL;
  SpawnExitInfo info;
  SpawnChild *child;
  int fd, status;
  pid_t reader;

  g_test_summary ("the application forks while our clonefd child runs and "
                  "its fork reads the clone fd first (fork shares the open "
                  "file description, O_CLOEXEC only acts at exec): we must "
                  "still get the status, which read() alone would have lost");
  if (testutil_backend (data) != SPAWN_BACKEND_CLONEFD)
    {
      g_test_skip ("clonefd only: pidfds and PIDs carry no report to take");
      return;
    }
  if (!testutil_use_backend (data))
    return;
  if (!kernel_has_clonefd_get_info ())
    {
      g_test_skip ("clone4 series without CLONEFD_GET_INFO: read() is the "
                   "only report and whoever reads first takes it");
      return;
    }
  child = start_full (argv, 0, NULL, NULL, &error);
  g_assert_no_error (error);
  fd = spawn_child_get_fd (child);
  reader = fork ();
  g_assert_cmpint (reader, >=, 0);
  if (reader == 0)
    {
      struct pollfd pfd = { fd, POLLIN, 0 };
      struct clonefd_report r;

      /* Async-signal-safe only: we are a fork of a threaded process. */
      while (poll (&pfd, 1, -1) < 0 && errno == EINTR)
        ;
      _exit (read (fd, &r, sizeof (r)) == sizeof (r) && r.status == 5 ? 0 : 1);
    }
  g_assert_cmpint (waitpid (reader, &status, 0), ==, reader);
  /* The fork took the one report read() gives. */
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 5);
  spawn_child_unref (child);
}

static void
test_thief_mid_reap (gconstpointer data)
{
  int stolen[2] = { 0, 0 };
  int i, n = 5000, recovered = 0, lost = 0;
  GThread *thief;

  g_test_summary ("pidfd on >= 6.15, a thief looping on waitpid(-1) and each "
                  "child collected the moment it ends, so that we meet the "
                  "thief inside its reap: PIDFD_GET_INFO must never miss the "
                  "status.  Statistical: before the fix about 1 in 1000 "
                  "was lost, so 5000 children show it most of the time, not "
                  "always");
  if (testutil_backend (data) != SPAWN_BACKEND_PIDFD)
    {
      g_test_skip ("pidfd only: clonefd children cannot be stolen, sigchld "
                   "has no way to recover a stolen status");
      return;
    }
  /* Asked here, not in the subprocess, so that the skip shows. */
  if (!g_test_subprocess () && !kernel_has_pidfd_exit_info ())
    {
      g_test_skip ("PIDFD_GET_INFO without PIDFD_INFO_EXIT (before 6.15)");
      return;
    }
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  thief = g_thread_new ("thief", thief_main, stolen);
  for (i = 0; i < n; i++)
    {
      const char *argv[] = { testutil_helper, "exit", "3", NULL };
      GError *error = NULL;
      SpawnExitInfo info;
      SpawnChild *child = start_full (argv, 0, NULL, NULL, &error);

      g_assert_no_error (error);
      if (spawn_child_wait (child, &info, NULL, &error))
        {
          g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
          g_assert_cmpint (info.status, ==, 3);
          recovered += !info.have_times;
        }
      else
        {
          g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
          g_clear_error (&error);
          lost++;
        }
      spawn_child_unref (child);
    }
  g_atomic_int_set (&stolen[1], 1);
  g_thread_join (thief);
  g_test_message ("%d children: thief reaped %d, recovered %d, lost %d", n,
                  stolen[0], recovered, lost);
  g_assert_cmpint (lost, ==, 0);
}

/* In a pid namespace of our own, with SIGCHLD blocked: the application
 * kills and reaps our child A, then forks B, which ns_last_pid makes reuse
 * A's PID.  A must be gone for us: no signal to B, no status of B's
 * reported as A's, B still the application's.  @handler_sees_it: SIGCHLD
 * is unblocked before B exists, so our handler finds A already reaped
 * (ECHILD), and B comes at once, in A's clock tick, where start times are
 * equal: only the handler's memory tells them apart.  Otherwise our handler
 * never runs, and B starts a tick later: only the start time tells. */
static void
pid_reuse_scenario (gboolean handler_sees_it)
{
  g_autofree char *last = NULL;
  GError *error = NULL;
  SpawnExitInfo info;
  sigset_t chld;
  int status, p[2], fd;
  pid_t a, b;

  g_assert_true (spawn_set_backend (SPAWN_BACKEND_SIGCHLD, &error));
  g_assert_no_error (error);
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  g_assert_no_errno (sigprocmask (SIG_BLOCK, &chld, NULL));
  if (handler_sees_it)
    {
      /* Start A just after a clock tick (start times count 10 ms ticks of
       * CLOCK_BOOTTIME) so that B, a few ms later, shares its start time.
       * A wait for time to pass, not for an event. */
      struct timespec now, wait = { 0, 0 };
      clock_gettime (CLOCK_BOOTTIME, &now);
      wait.tv_nsec = 10 * 1000 * 1000 - now.tv_nsec % (10 * 1000 * 1000) + 100 * 1000;
      nanosleep (&wait, NULL);
    }
  SpawnChild *child = start_helper ("sleep", "100000");
  gint64 started = g_get_monotonic_time ();
  a = spawn_child_get_pid (child);
  g_assert_no_errno (kill (a, SIGKILL));
  g_assert_cmpint (waitpid (a, &status, 0), ==, a);

  last = g_strdup_printf ("%d", (int) a - 1);
  fd = open ("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, last, strlen (last)), ==, (gssize) strlen (last));
  close (fd);
  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  if (handler_sees_it)
    {
      /* The pending SIGCHLD is delivered before this returns. */
      g_assert_no_errno (sigprocmask (SIG_UNBLOCK, &chld, NULL));
      g_assert_no_errno (sigprocmask (SIG_BLOCK, &chld, NULL));
    }
  else
    {
      /* Start times count clock ticks (10 ms at USER_HZ 100): B must start
       * in a later tick than A to be told apart by it (the granularity is
       * a documented limit).  Not a wait for an event: for time to pass. */
      while (g_get_monotonic_time () < started + 25 * 1000)
        g_usleep (1000);
    }
  b = fork ();
  if (b == 0)
    {
      char c;
      /* Until the pipe closes; SIGTERM (from a stray kill) ends it. */
      close (p[1]);
      if (read (p[0], &c, 1) < 0)
        _exit (1);
      _exit (33);
    }
  g_assert_cmpint (b, ==, a);

  g_assert_false (spawn_child_send_signal (child, SIGTERM, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_SRCH);
  g_clear_error (&error);
  g_assert_false (spawn_child_wait (child, &info, NULL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
  g_clear_error (&error);

  /* B untouched: alive, then the application's to reap, with its status. */
  g_assert_cmpint (waitpid (b, &status, WNOHANG), ==, 0);
  close (p[1]);
  g_assert_cmpint (waitpid (b, &status, 0), ==, b);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 33);
  spawn_child_unref (child);
}

/* The hole of issue 37, as an application with SIGCHLD blocked (a
 * signalfd-style loop) opens it: its waitpid(-1) takes our child A's
 * status, its own next child B gets A's PID, in A's clock tick (start
 * times equal), and B has ended too when we next look.  We must then say
 * STATUS_LOST for A and leave B's zombie to the application; reaping it
 * is the one thing a library must never do.  Repeated @rounds times, the
 * last few with the handle dropped, so that the reaper's recheck is the
 * one that looks.  Runs as PID 2+ of a pid namespace of its own. */
static void
pid_reuse_zombie_scenario (int rounds)
{
  GError *error = NULL;
  SpawnExitInfo info;
  sigset_t chld;
  int round, status, fd;

  g_assert_true (spawn_set_backend (SPAWN_BACKEND_SIGCHLD, &error));
  g_assert_no_error (error);
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  g_assert_no_errno (sigprocmask (SIG_BLOCK, &chld, NULL));
  for (round = 0; round < rounds; round++)
    {
      gboolean dropped = round >= rounds - 3;
      SpawnChild *child = start_helper ("exit", "0");
      pid_t a = spawn_child_get_pid (child), b;
      siginfo_t si;
      char last[16];

      /* The application's waitpid(-1): A is the only child it has. */
      g_assert_cmpint (waitpid (-1, &status, 0), ==, a);
      g_snprintf (last, sizeof (last), "%d", (int) a - 1);
      fd = open ("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpint (write (fd, last, strlen (last)), ==, (gssize) strlen (last));
      close (fd);
      b = fork ();
      if (b == 0)
        _exit (33);
      g_assert_cmpint (b, ==, a);
      /* B a zombie: what a reap by PID would take. */
      memset (&si, 0, sizeof (si));
      g_assert_no_errno (waitid (P_PID, b, &si, WEXITED | WNOWAIT));
      if (dropped)
        {
          /* The reaper owns A now: its recheck (every 500 ms) looks at
           * the PID.  Waiting for something not to happen: time only. */
          spawn_child_unref (child);
          g_usleep (1200 * 1000);
        }
      else
        {
          g_assert_false (spawn_child_wait (child, &info, NULL, &error));
          g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
          g_clear_error (&error);
          spawn_child_unref (child);
        }
      /* B is still the application's, with its own status. */
      if (waitpid (b, &status, WNOHANG) != b)
        {
          g_test_message ("round %d (%s): PID %d, the application's B, was reaped by "
                          "libspawn", round, dropped ? "reaper" : "wait", (int) b);
          g_assert_not_reached ();
        }
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 33);
    }
}

/* In a new mount namespace, a /proc of the current pid namespace that
 * propagates nowhere.  0 or -1 (errno set). */
static int
mount_private_proc (void)
{
  if (testutil_unshare_private_mounts () < 0)
    return -1;
  return mount ("proc", "/proc", "proc", 0, NULL);
}

/* Whether mount_private_proc() works here, tried in a child. */
static gboolean
can_mount_private_proc (void)
{
  return errno_in_child (mount_private_proc) == 0;
}

static void
check_pid_reuse (gconstpointer data, int scenario)
{
  pid_t launcher, init;
  int status;

  if (testutil_backend (data) != SPAWN_BACKEND_SIGCHLD)
    {
      g_test_skip ("clonefd and pidfd act on the process through its fd: "
                   "a reused PID cannot be confused with it");
      return;
    }
  if (!g_test_subprocess () &&
      (geteuid () != 0 || access ("/proc/self/ns/pid", F_OK) < 0 ||
       access ("/proc/sys/kernel/ns_last_pid", W_OK) < 0))
    {
      g_test_skip ("forcing PID reuse needs root, pid namespaces and "
                   "ns_last_pid (CONFIG_CHECKPOINT_RESTORE)");
      return;
    }
  if (!g_test_subprocess () && !can_mount_private_proc ())
    {
      g_test_skip ("forcing PID reuse needs a /proc of its own, and neither "
                   "/ nor /proc can be made a private mount here");
      return;
    }
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  /* unshare() in a child of ours: a process whose children go to another
   * pid namespace cannot make threads any more (sanitizers need one at
   * exit).  Everything below leaves by _exit(). */
  launcher = fork ();
  g_assert_cmpint (launcher, >=, 0);
  if (launcher == 0)
    {
      if (unshare (CLONE_NEWPID) < 0)
        _exit (5);
      init = fork ();
      if (init < 0)
        _exit (6);
      if (init == 0)
        {
          /* PID 1 of the namespace: a /proc that shows it, in a mount
           * namespace of its own, then the scenario in an ordinary process
           * (init ignores the signal abort() raises). */
          pid_t worker;

          if (mount_private_proc () < 0)
            _exit (3);
          worker = fork ();
          if (worker == 0)
            {
              if (scenario == 2)
                pid_reuse_zombie_scenario (40);
              else
                pid_reuse_scenario (scenario == 1);
              _exit (0);
            }
          if (worker < 0 || waitpid (worker, &status, 0) != worker)
            _exit (4);
          _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
        }
      if (waitpid (init, &status, 0) != init)
        _exit (7);
      _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
    }
  init = launcher;
  g_assert_cmpint (waitpid (init, &status, 0), ==, init);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

static void
test_pid_reuse (gconstpointer data)
{
  g_test_summary ("sigchld: a waitpid() elsewhere reaps our child A and the "
                  "application's next child B gets A's PID (forced with "
                  "ns_last_pid in a new pid namespace); A is then gone for "
                  "us: signalling it gives SPAWN_ERROR_SRCH and B lives, the "
                  "watch gives STATUS_LOST and B stays the application's.  "
                  "Our handler never sees A die (SIGCHLD blocked) and B starts "
                  "a clock tick later: this proves the start-time check");
  check_pid_reuse (data, 0);
}

static void
test_pid_reuse_handler (gconstpointer data)
{
  g_test_summary ("sigchld: as pid-reuse, but our handler runs after the "
                  "steal (and sees ECHILD) and B reuses A's PID within A's "
                  "clock tick (A is started just after a tick), where start "
                  "times are equal: this proves the handler's memory that A "
                  "is gone (should B miss the tick, the start time catches "
                  "it instead)");
  check_pid_reuse (data, 1);
}

static void
test_pid_reuse_zombie (gconstpointer data)
{
  g_test_summary ("sigchld, SIGCHLD blocked (a signalfd-style application): its "
                  "waitpid(-1) takes our child A, its own child B gets A's PID in "
                  "A's clock tick and ends; 40 rounds (the last 3 with the handle "
                  "dropped, the reaper looking): B's zombie is never reaped by us, "
                  "A's wait says STATUS_LOST (issue 37)");
  if (g_strcmp0 (g_getenv ("LIBSPAWN_SIGCHLD_NO_PIDFD"), "1") == 0)
    {
      g_test_skip ("LIBSPAWN_SIGCHLD_NO_PIDFD=1: without pidfds a reuse within "
                   "the clock tick is a documented limit (docs/design.md)");
      return;
    }
  check_pid_reuse (data, 2);
}

static void
test_sigchld_ignored (gconstpointer data)
{
  SpawnBackend b = testutil_backend (data);
  Result r;

  g_test_summary ("SIGCHLD set to SIG_IGN by the application: clonefd and "
                  "sigchld deliver the status; pidfd recovers it (>= 6.15) or "
                  "reports it lost");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  signal (SIGCHLD, SIG_IGN);
  g_autoptr (SpawnChild) child = start_helper ("exit", "6");
  watch (child, &r);
  if (b == SPAWN_BACKEND_PIDFD && r.error != NULL)
    g_assert_error (r.error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
  else
    assert_exited (&r, 6);
  g_test_message ("watch: %s", r.error ? r.error->message : "status delivered");
  g_clear_error (&r.error);
}

static int stop_pipe[2] = { -1, -1 };

static void
app_siginfo_handler (int sig G_GNUC_UNUSED, siginfo_t *si, void *uctx G_GNUC_UNUSED)
{
  char c = 's';
  ssize_t n G_GNUC_UNUSED;

  if (si->si_code == CLD_STOPPED)
    n = write (stop_pipe[1], &c, 1);
}

static void
test_app_stop_notify (gconstpointer data)
{
  struct sigaction sa = { 0 };
  struct pollfd pfd;
  int status;
  pid_t pid;
  Result r;

  g_test_summary ("an application SIGCHLD handler with SA_SIGINFO and "
                  "without SA_NOCLDSTOP still gets CLD_STOPPED for its own "
                  "child once libspawn has started one (sigchld used to force "
                  "SA_NOCLDSTOP)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_assert_no_errno (pipe2 (stop_pipe, O_CLOEXEC | O_NONBLOCK));
  sa.sa_sigaction = app_siginfo_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  g_assert_no_errno (sigaction (SIGCHLD, &sa, NULL));
  g_autoptr (SpawnChild) child = start_helper ("exit", "0");
  watch (child, &r);
  assert_exited (&r, 0);

  pid = fork ();
  if (pid == 0)
    {
      raise (SIGSTOP);
      _exit (0);
    }
  pfd.fd = stop_pipe[0];
  pfd.events = POLLIN;
  pfd.revents = 0;
  while (poll (&pfd, 1, 10000) < 0)
    g_assert_cmpint (errno, ==, EINTR);
  /* Kill it before any assertion: a stopped child holding our stdout
   * would keep the test harness waiting for EOF. */
  g_assert_no_errno (kill (pid, SIGKILL));
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status));
  g_assert_true (pfd.revents & POLLIN);
}

static char
proc_state (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  const char *p;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return 0;
  p = strrchr (stat, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}

static gboolean
on_quiet_window_end (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_our_stop_not_an_end (gconstpointer data)
{
  GMainContext *ctx = g_main_context_get_thread_default ();
  struct sigaction sa = { 0 };
  GError *error = NULL;
  struct pollfd pfd;
  gboolean window_over = FALSE, told, fd_readable = FALSE, ended_early, still_stopped;
  GSource *timeout;
  Result r;
  int fd, i;

  g_test_summary ("one of our children is stopped: the application is told "
                  "(CLD_STOPPED) on every backend, as for any of its children "
                  "(CLONE_AUTOREAP hides the exit, not job control), and the "
                  "library does not take the stop for an end: the child's fd "
                  "stays unreadable and the watch waits for the real end, "
                  "reported once");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_assert_no_errno (pipe2 (stop_pipe, O_CLOEXEC | O_NONBLOCK));
  sa.sa_sigaction = app_siginfo_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  g_assert_no_errno (sigaction (SIGCHLD, &sa, NULL));
  g_autoptr (SpawnChild) child = start_helper ("sleep", "60000");
  memset (&r, 0, sizeof (r));
  spawn_child_watch_add (child, on_exit_cb, &r);
  g_assert_true (spawn_child_send_signal (child, SIGSTOP, &error));
  g_assert_no_error (error);
  for (i = 0; i < 1000 && proc_state (spawn_child_get_pid (child)) != 'T'; i++)
    g_usleep (10 * 1000);
  g_assert_cmpint (proc_state (spawn_child_get_pid (child)), ==, 'T');
  pfd.fd = stop_pipe[0];
  pfd.events = POLLIN;
  pfd.revents = 0;
  while (poll (&pfd, 1, 10000) < 0)
    g_assert_cmpint (errno, ==, EINTR);
  told = (pfd.revents & POLLIN) != 0;

  /* Stopped and reported: for half a second nothing may look like an end,
   * neither the child's own fd (clone fd, pidfd) nor the watch, which has
   * seen the SIGCHLD on the sigchld backend. */
  fd = spawn_child_get_fd (child);
  if (fd >= 0)
    {
      pfd.fd = fd;
      pfd.events = POLLIN;
      pfd.revents = 0;
      while (poll (&pfd, 1, 500) < 0)
        g_assert_cmpint (errno, ==, EINTR);
      fd_readable = (pfd.revents & POLLIN) != 0;
    }
  timeout = g_timeout_source_new (500);
  g_source_set_callback (timeout, on_quiet_window_end, &window_over, NULL);
  g_source_attach (timeout, ctx);
  while (!window_over)
    g_main_context_iteration (ctx, TRUE);
  g_source_unref (timeout);
  ended_early = r.done;
  still_stopped = proc_state (spawn_child_get_pid (child)) == 'T';

  /* End the child before asserting: a stopped child holding our stdout
   * would keep the test harness waiting for EOF. */
  g_assert_true (spawn_child_send_signal (child, SIGCONT, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_send_signal (child, SIGKILL, &error));
  g_assert_no_error (error);
  timeout = g_timeout_source_new_seconds (120);
  g_source_set_callback (timeout, on_timeout, NULL, NULL);
  g_source_attach (timeout, ctx);
  while (!r.done)
    g_main_context_iteration (ctx, TRUE);
  g_source_destroy (timeout);
  g_source_unref (timeout);
  g_assert_true (told);
  g_assert_false (fd_readable);
  g_assert_false (ended_early);
  g_assert_true (still_stopped);
  g_assert_no_error (r.error);
  g_assert_cmpint (r.info.kind, ==, SPAWN_EXIT_KILLED);
}

/* @pid, a child of the application's that has exited, is reaped by
 * someone (the kernel, or us on its behalf) within 5 s. */
static void
assert_reaped_for_us (pid_t pid)
{
  siginfo_t si;
  int i;

  for (i = 0; i < 500; i++)
    {
      if (waitid (P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
        return;
      g_usleep (10 * 1000);
    }
  g_error ("the application's child %d is still a zombie after 5 s", (int) pid);
}

static void
test_app_sigign_no_zombie (gconstpointer data)
{
  pid_t pid;
  Result r;

  g_test_summary ("SIGCHLD = SIG_IGN: after libspawn has started a child, the "
                  "application's own fork()ed children are still reaped for "
                  "it (sigchld's handler replaced SIG_IGN and left zombies); "
                  "ours still report their status");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  signal (SIGCHLD, SIG_IGN);
  g_autoptr (SpawnChild) child = start_helper ("exit", "6");
  watch (child, &r);
  if (testutil_backend (data) == SPAWN_BACKEND_PIDFD && r.error != NULL)
    g_assert_error (r.error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
  else
    assert_exited (&r, 6);
  g_clear_error (&r.error);
  pid = fork ();
  if (pid == 0)
    _exit (0);
  assert_reaped_for_us (pid);
}

static void
test_app_nocldwait_no_zombie (gconstpointer data)
{
  struct sigaction sa = { 0 };
  pid_t pid;
  Result r;

  g_test_summary ("SIGCHLD handler with SA_NOCLDWAIT: the application's own "
                  "children are still reaped for it and its handler still "
                  "runs, after libspawn has started a child");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  sa.sa_handler = app_handler;
  sa.sa_flags = SA_NOCLDWAIT | SA_RESTART;
  g_assert_no_errno (sigaction (SIGCHLD, &sa, NULL));
  g_autoptr (SpawnChild) child = start_helper ("exit", "9");
  watch (child, &r);
  if (testutil_backend (data) == SPAWN_BACKEND_PIDFD && r.error != NULL)
    g_assert_error (r.error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
  else
    assert_exited (&r, 9);
  g_clear_error (&r.error);
  app_sigchld_count = 0;
  pid = fork ();
  if (pid == 0)
    _exit (0);
  assert_reaped_for_us (pid);
  g_assert_cmpint (app_sigchld_count, >=, 1);
}

static void
test_sigchld_blocked (gconstpointer data)
{
  sigset_t set;
  Result r;

  g_test_summary ("SIGCHLD blocked in every thread: every backend still "
                  "delivers the status (sigchld through its recheck timer)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  /* Before any thread (GLib's worker included) exists. */
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  g_autoptr (SpawnChild) child = start_helper ("exit", "4");
  watch (child, &r);
  assert_exited (&r, 4);
}

static void
test_app_children (gconstpointer data)
{
  int status;
  pid_t pid;
  Result r;

  g_test_summary ("the application's own children are still the "
                  "application's to reap");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  pid = fork ();
  if (pid == 0)
    _exit (17);
  g_autoptr (SpawnChild) child = start_helper ("exit", "8");
  watch (child, &r);
  assert_exited (&r, 8);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 17);
}

/* A child of the application's that has exited and that nobody reaps
 * yet; waits for its end without reaping it. */
static pid_t
fork_app_zombie (int status)
{
  siginfo_t si;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (status);
  g_assert_no_errno (waitid (P_PID, pid, &si, WEXITED | WNOWAIT));
  return pid;
}

static void
test_app_zombies_linger (gconstpointer data)
{
  int n = 300, status;
  Many many = { n, 0 };
  pid_t early, late;
  One *ones;

  g_test_summary ("the application leaves zombies of its own unreaped, one "
                  "older than all of our children (the kernel names it first "
                  "to any waitid(P_ALL)) and one in the middle, while hundreds "
                  "of ours end at once: every status of ours reaches its watch, "
                  "and both zombies stay the application's to reap, with their "
                  "statuses (sigchld must fall back to asking each child, never "
                  "reap them)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  ones = g_new0 (One, n);
  early = fork_app_zombie (41);
  start_many (ones, &many, 0, n / 2);
  late = fork_app_zombie (42);
  start_many (ones, &many, n / 2, n);
  wait_many (&many);
  g_assert_cmpint (many.bad, ==, 0);
  g_free (ones);

  g_assert_cmpint (waitpid (early, &status, WNOHANG), ==, early);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 41);
  g_assert_cmpint (waitpid (late, &status, WNOHANG), ==, late);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 42);
  testutil_assert_no_children ();
}

typedef struct {
  gint stop;
  gint forked;
  gint wrong;   /* a child of its own reaped by someone else, or a wrong status */
} AppReaper;

/* The application's own fork()/waitpid(pid) loop in another thread. */
static gpointer
app_reaper_main (gpointer data)
{
  AppReaper *a = data;
  int i, status;

  for (i = 0; !g_atomic_int_get (&a->stop); i++)
    {
      pid_t pid = fork ();

      if (pid == 0)
        _exit (i % 100);
      g_assert_cmpint (pid, >, 0);
      if (waitpid (pid, &status, 0) != pid || !WIFEXITED (status) ||
          WEXITSTATUS (status) != i % 100)
        g_atomic_int_inc (&a->wrong);
      g_atomic_int_inc (&a->forked);
    }
  return NULL;
}

static void
test_app_reaps_own (gconstpointer data)
{
  AppReaper a = { 0, 0, 0 };
  GThread *thread;
  int bad;

  g_test_summary ("a thread of the application forks and reaps its own "
                  "children by PID in a loop while hundreds of ours end at "
                  "once: each side gets exactly its own statuses (sigchld "
                  "meets the application's zombies first half the time and "
                  "must never reap one)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  thread = g_thread_new ("app-reaper", app_reaper_main, &a);
  bad = run_many (300);
  g_atomic_int_set (&a.stop, 1);
  g_thread_join (thread);
  g_test_message ("the application forked and reaped %d of its own", a.forked);
  g_assert_cmpint (bad, ==, 0);
  g_assert_cmpint (a.wrong, ==, 0);
  testutil_assert_no_children ();
}

static gpointer
app_forker_main (gpointer data)
{
  GArray *pids = data;
  guint i;

  for (i = 0; i < 50; i++)
    {
      pid_t pid = fork ();

      if (pid == 0)
        _exit (0);
      g_assert_cmpint (pid, >, 0);
      g_array_append_val (pids, pid);
    }
  return NULL;
}

static void
test_sigign_many (gconstpointer data)
{
  GThread *thread;
  GArray *pids;
  guint i;
  int bad;

  g_test_summary ("SIGCHLD = SIG_IGN, hundreds of our children ending at "
                  "once while a thread of the application forks 50 of its own "
                  "and never waits: every status of ours is delivered "
                  "(clonefd, sigchld; pidfd recovers or loses them), and every "
                  "child of the application's is reaped for it (sigchld's sweep "
                  "reaps them, never ours)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  signal (SIGCHLD, SIG_IGN);
  pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  thread = g_thread_new ("app-forker", app_forker_main, pids);
  bad = run_many (300);
  g_thread_join (thread);
  if (testutil_backend (data) != SPAWN_BACKEND_PIDFD)
    g_assert_cmpint (bad, ==, 0);
  for (i = 0; i < pids->len; i++)
    assert_reaped_for_us (g_array_index (pids, pid_t, i));
  g_array_free (pids, TRUE);
}

typedef struct {
  int remaining;
  int bad;
} Terms;

static void
on_term_exit (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
              const GError *error, gpointer data)
{
  Terms *t = data;

  if (error != NULL ||
      !((info->kind == SPAWN_EXIT_EXITED && info->status == 0) ||
        (info->kind == SPAWN_EXIT_KILLED && info->status == SIGTERM)))
    t->bad++;
  t->remaining--;
}

static void
test_exit_with_fd_table_full (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "sleep", "300", NULL };
  GMainContext *ctx = g_main_context_get_thread_default ();
  struct rlimit rl;
  GError *error = NULL;
  GSource *timeout;
  int fds[256], n = 0, i, status;
  pid_t pid;
  Result r = { 0 };

  g_test_summary ("a child that ends while the application's fd table is "
                  "full still reports its status and leaves no zombie "
                  "(sigchld took a failed read of /proc/PID/stat for a "
                  "reused PID: status lost, zombie left)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_autoptr (SpawnChild) child = start_full (argv, 0, NULL, NULL, &error);
  g_assert_no_error (error);
  pid = spawn_child_get_pid (child);
  /* Everything the wait needs is made before the table fills. */
  timeout = g_timeout_source_new_seconds (120);
  g_source_set_callback (timeout, on_timeout, NULL, NULL);
  g_source_attach (timeout, ctx);
  spawn_child_watch_add (child, on_exit_cb, &r);
  g_main_context_iteration (ctx, FALSE);
  g_assert_no_errno (getrlimit (RLIMIT_NOFILE, &rl));
  rl.rlim_cur = MIN (rl.rlim_cur, 200);
  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &rl));
  while (n < (int) G_N_ELEMENTS (fds) && (fds[n] = dup (0)) >= 0)
    n++;
  g_assert_cmpint (errno, ==, EMFILE);
  /* The child ends meanwhile; a SIGCHLD handler runs with no fd to spare. */
  g_usleep (800 * 1000);
  for (i = 0; i < n; i++)
    close (fds[i]);
  while (!r.done)
    g_main_context_iteration (ctx, TRUE);
  g_source_destroy (timeout);
  g_source_unref (timeout);
  assert_exited (&r, 0);
  /* Reaped once, by us: no zombie of ours left behind. */
  errno = 0;
  g_assert_cmpint (waitpid (pid, &status, WNOHANG), ==, -1);
  g_assert_cmpint (errno, ==, ECHILD);
}

static void
test_signal_while_exiting (gconstpointer data)
{
  GMainContext *ctx = g_main_context_get_thread_default ();
  Terms t = { 0, 0 };
  int i, k, n = 300, sent = 0, ended = 0;

  g_test_summary ("SIGTERM sent to each of hundreds of children just as they "
                  "end: each send succeeds or says SPAWN_ERROR_SRCH, each watch "
                  "reports exit 0 or SIGTERM, never a lost status (sigchld: "
                  "the handler's sweep must not reap a child between "
                  "send_signal()'s check and its kill())");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  for (i = 0; i < n; i++)
    {
      SpawnChild *child = start_helper (i % 2 ? "exit" : "sleep", i % 2 ? "0" : "1");

      t.remaining++;
      spawn_child_watch_add (child, on_term_exit, &t);
      for (k = 0; k < 3; k++)
        {
          GError *error = NULL;

          if (spawn_child_send_signal (child, SIGTERM, &error))
            sent++;
          else
            {
              g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_SRCH);
              g_clear_error (&error);
              ended++;
              break;
            }
        }
      spawn_child_unref (child);
    }
  while (t.remaining > 0)
    g_main_context_iteration (ctx, TRUE);
  g_test_message ("%d signals sent, %d children already ended", sent, ended);
  g_assert_cmpint (t.bad, ==, 0);
  testutil_assert_no_children ();
}

/* ---- backend selection ---- */

/* What auto must pick where we run, known without asking libspawn. */
static SpawnBackend
expected_auto_backend (void)
{
  const char *kernel = g_getenv ("LIBSPAWN_VM_KERNEL");
  gboolean series = g_strcmp0 (g_getenv ("LIBSPAWN_SERIES"), "yes") == 0;

  if (series && (g_strcmp0 (kernel, "patched") == 0 || g_strcmp0 (kernel, "debug") == 0))
    return SPAWN_BACKEND_CLONEFD;
  /* 7.2, stock or with kernel/patches-7.2 (modern-debug: under the
   * debug config): CLONE_AUTOREAP (7.1). */
  if (g_strcmp0 (kernel, "modern") == 0 || g_strcmp0 (kernel, "modern-patched") == 0 ||
      g_strcmp0 (kernel, "modern-debug") == 0)
    return SPAWN_BACKEND_AUTOREAP;
  return SPAWN_BACKEND_PIDFD;
}

static void
test_auto_backend (void)
{
  const char *kernel = g_getenv ("LIBSPAWN_VM_KERNEL");
  SpawnBackend want = expected_auto_backend ();

  g_test_summary ("clonefd is chosen by itself on the patched kernels, "
                  "autoreap on the modern (7.2) one, pidfd on every other "
                  "kernel we run on");
  if (!testutil_isolated ())
    return;
  g_unsetenv ("LIBSPAWN_BACKEND");
  g_test_message ("kernel %s: %s", kernel ? kernel : "host",
                  spawn_backend_to_string (spawn_get_backend ()));
  g_assert_cmpint (spawn_get_backend (), ==, want);
}

/* Fill the fd table (the probes and the child's fd need one each): spawn
 * fails with EMFILE, and so does forcing @want; with the fds back, the next
 * spawn probes again and gets @want.  Before any backend was probed. */
static void
check_probe_after_emfile (SpawnBackend want, gboolean forced)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  struct rlimit rl = { 32, 32 };
  GArray *fillers = g_array_new (FALSE, FALSE, sizeof (int));
  struct sigaction sa;
  GError *error = NULL;
  guint i;
  int fd;
  Result r;

  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &rl));
  while ((fd = dup (2)) >= 0)
    g_array_append_val (fillers, fd);
  g_assert_cmpint (errno, ==, EMFILE);

  /* A failure leaves the caller's errno as it was, also this one, where
   * no backend could be had (the probe's EMFILE once leaked out). */
  errno = EDOM;
  g_assert_null (start_full (argv, 0, NULL, NULL, &error));
  g_assert_cmpint (errno, ==, EDOM);
  g_test_message ("fd table full: %s", error->message);
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_MFILE);
  g_clear_error (&error);
  if (forced && want != SPAWN_BACKEND_SIGCHLD)
    {
      /* Not "not available on this kernel": it is, we could not tell. */
      g_assert_false (spawn_set_backend (want, &error));
      g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_MFILE);
      g_clear_error (&error);
    }

  for (i = 0; i < fillers->len; i++)
    close (g_array_index (fillers, int, i));
  g_array_free (fillers, TRUE);

  g_autoptr (SpawnChild) child = start_full (argv, 0, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (spawn_child_get_backend (child), ==, want);
  watch (child, &r);
  assert_exited (&r, 0);
  if (want != SPAWN_BACKEND_SIGCHLD)
    {
      /* No silent drop to sigchld on the way: its handler is not there. */
      g_assert_no_errno (sigaction (SIGCHLD, NULL, &sa));
      g_assert_true (sa.sa_handler == SIG_DFL);
    }
}

static void
test_probe_emfile (gconstpointer data)
{
  SpawnBackend b = testutil_backend (data);

  g_test_summary ("LIBSPAWN_BACKEND forces a backend whose first probe meets "
                  "a full fd table: that spawn (and spawn_set_backend()) "
                  "fail with EMFILE, not 'not available', and once fds are "
                  "free the probe runs again and the backend works");
  /* Ask in this process: the subprocess must probe with a full table. */
  if (!g_test_subprocess () && !spawn_backend_is_available (b))
    {
      g_test_skip_printf ("backend %s is not available on this kernel",
                          spawn_backend_to_string (b));
      return;
    }
  if (!testutil_isolated ())
    return;
  g_setenv ("LIBSPAWN_BACKEND", spawn_backend_to_string (b), TRUE);
  check_probe_after_emfile (b, TRUE);
}

static void
test_auto_probe_emfile (void)
{
  g_test_summary ("auto mode, first spawn with a full fd table: EMFILE, no "
                  "silent fall back to sigchld (no SIGCHLD handler installed); "
                  "with fds free again the best backend is chosen");
  if (!testutil_isolated ())
    return;
  g_unsetenv ("LIBSPAWN_BACKEND");
  check_probe_after_emfile (expected_auto_backend (), FALSE);
}

static void
test_forced_backend (void)
{
  g_test_summary ("LIBSPAWN_BACKEND forces a backend; an unknown or "
                  "unavailable one is an error, not a silent switch");
  {
      g_test_trap_subprocess ("/spawn/backend/forced/subprocess/bogus", 0,
                              G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      g_test_trap_subprocess ("/spawn/backend/forced/subprocess/sigchld", 0,
                              G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      return;
    }
}

static void
test_forced_bogus (void)
{
  const char *argv[] = { "/bin/true", NULL };
  GError *error = NULL;

  g_setenv ("LIBSPAWN_BACKEND", "bogus", TRUE);
  g_assert_null (start_full (argv, 0, NULL, NULL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_clear_error (&error);
  /* The API still can. */
  g_assert_true (spawn_set_backend (SPAWN_BACKEND_SIGCHLD, &error));
  g_assert_no_error (error);
  if (!spawn_backend_is_available (SPAWN_BACKEND_CLONEFD))
    {
      g_assert_false (spawn_set_backend (SPAWN_BACKEND_CLONEFD, &error));
      g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_NOSYS);
      g_clear_error (&error);
      /* ... and did not switch. */
      g_assert_cmpint (spawn_get_backend (), ==, SPAWN_BACKEND_SIGCHLD);
    }
}

/* A seccomp filter that answers EPERM to one system call. */
static void
deny_syscall (int nr)
{
  struct sock_filter code[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { G_N_ELEMENTS (code), code };

  g_assert_no_errno (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
  g_assert_no_errno (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
}

static void
test_seccomp_fallback (void)
{
  Result r;

  g_test_summary ("clone4, clone3 and pidfd_open denied by seccomp (EPERM): "
                  "the backend falls back, down to sigchld, and still works");
  if (!testutil_isolated ())
    return;
  g_unsetenv ("LIBSPAWN_BACKEND");
  deny_syscall (1000); /* clone4 */
  deny_syscall (__NR_pidfd_open);
  deny_syscall (__NR_clone3);
  g_assert_false (spawn_backend_is_available (SPAWN_BACKEND_CLONEFD));
  g_assert_false (spawn_backend_is_available (SPAWN_BACKEND_AUTOREAP));
  g_assert_false (spawn_backend_is_available (SPAWN_BACKEND_PIDFD));
  g_assert_cmpint (spawn_get_backend (), ==, SPAWN_BACKEND_SIGCHLD);
  g_autoptr (SpawnChild) child = start_helper ("exit", "12");
  watch (child, &r);
  assert_exited (&r, 12);
}

/* A child of ours sees its stdio only, and the table it got has more than
 * 900 slots (a copy of ours) if @copy, fewer if not. */
static void
assert_child_table (gboolean copy)
{
  const char *argv[] = { testutil_helper, "list-fds", NULL };
  GError *error = NULL;
  int out = -1;

  if (copy)
    g_assert_cmpint (child_fd_table_size (0, NULL), >, 900);
  else
    g_assert_cmpint (child_fd_table_size (0, NULL), <, 900);
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0, NULL, &out,
                    NULL, &error);
  g_assert_no_error (error);
  assert_output (child, out, "0\n1\n2\n");
}

static void
test_fd_table_denied (void)
{
  int high;

  g_test_summary ("close_range() denied by seccomp (EPERM), as before Linux 5.9 or in "
                  "a sandbox: a child's table is a copy of ours again, and it still "
                  "sees its stdio only");
  if (!can_reach_fd_900 () || !testutil_isolated ())
    return;
  deny_syscall (__NR_close_range);
  high = fcntl (2, F_DUPFD_CLOEXEC, 900);
  g_assert_cmpint (high, ==, 900);
  assert_child_table (TRUE);
  close (high);
}

static void
test_fd_table_denied_later (void)
{
  int high;

  g_test_summary ("a seccomp filter against close_range() that comes after our first "
                  "spawn (filters are per thread, the probe's answer is for the "
                  "process): later children still start, each with a copy of our table");
  if (!can_reach_fd_900 () || !can_unshare_fd_table () || !testutil_isolated ())
    return;
  high = fcntl (2, F_DUPFD_CLOEXEC, 900);
  g_assert_cmpint (high, ==, 900);
  assert_child_table (FALSE);
  deny_syscall (__NR_close_range);
  assert_child_table (TRUE);
  close (high);
}

static void
test_fd_table_stdin_closed (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "cat", NULL };
  GError *error = NULL;
  int out = -1;

  g_test_summary ("with our fd 0 closed and the child's stdin /dev/null, the clone's "
                  "own pidfd or clone fd may take slot 0 of the table the child "
                  "shares at first: the child's stdin is still /dev/null (cat reads "
                  "EOF, where a pidfd would fail its read)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_assert_cmpint (spawn_get_backend (), ==, testutil_backend (data));
  close (0);
  g_autoptr (SpawnChild) child =
    spawn_async_fd (NULL, argv, NULL, G_SPAWN_STDIN_FROM_DEV_NULL, NULL, NULL, -1, -1, -1,
                    NULL, NULL, 0, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  assert_output (child, out, "");
}

static void
test_closed_stdio_fd (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "cat", NULL };
  GError *error = NULL;
  int fds, fd, out = -1;

  g_test_summary ("A stdin_fd that is not open is SPAWN_ERROR_INVAL before any "
                  "pipe is opened (it could be one of ours by then), with no "
                  "fd or child left");
  if (!testutil_use_backend (data))
    return;
  fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_no_errno (close (fd));
  fds = testutil_count_fds ();
  g_assert_null (spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, fd, -1, -1, NULL, NULL, 0,
                                 NULL, &out, NULL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_cmpint (testutil_count_fds (), ==, fds);
  testutil_assert_no_children ();
}

static void
test_forced_sigchld (void)
{
  g_setenv ("LIBSPAWN_BACKEND", "sigchld", TRUE);
  g_assert_cmpint (spawn_get_backend (), ==, SPAWN_BACKEND_SIGCHLD);
}

/* Every step the child can fail at has words of its own: the CPU
 * affinity and the nice value it copies from a kill-on-close caller were
 * once reported as "Failed to set up kill-on-close". */
static void
test_exec_step_messages (void)
{
  const SpawnExecStep steps[] = {
    SPAWN_EXEC_STEP_EXEC, SPAWN_EXEC_STEP_CHDIR, SPAWN_EXEC_STEP_FDS,
    SPAWN_EXEC_STEP_AFFINITY, SPAWN_EXEC_STEP_NICE, SPAWN_EXEC_STEP_KILL_ON_CLOSE,
  };
  gsize i, j;

  g_test_summary ("Each step of the child's plan has its own message; affinity "
                  "and nice are not called kill-on-close");
  for (i = 0; i < G_N_ELEMENTS (steps); i++)
    for (j = 0; j < i; j++)
      g_assert_cmpstr (_spawn_exec_step_describe (steps[i]), !=,
                       _spawn_exec_step_describe (steps[j]));
  g_assert_nonnull (strstr (_spawn_exec_step_describe (SPAWN_EXEC_STEP_AFFINITY),
                            "CPU affinity"));
  g_assert_nonnull (strstr (_spawn_exec_step_describe (SPAWN_EXEC_STEP_NICE),
                            "nice value"));
}

static void
test_check_version (void)
{
  static const struct {
    guint major, minor, micro;
    const char *want;   /* NULL, or the start of the message */
  } cases[] = {
    /* This library's own version, and every one since its ABI began. */
    { SPAWN_MAJOR_VERSION, SPAWN_MINOR_VERSION, SPAWN_MICRO_VERSION, NULL },
    { 0, 2, 0, NULL },
    { 0, 2, 99, NULL },
    /* Newer than this one. */
    { SPAWN_MAJOR_VERSION, SPAWN_MINOR_VERSION, SPAWN_MICRO_VERSION + 1, "libspawn version too old" },
    { SPAWN_MAJOR_VERSION, SPAWN_MINOR_VERSION + 1, 0, "libspawn version too old" },
    { SPAWN_MAJOR_VERSION + 1, 0, 0, "libspawn version too old" },
    /* Before libspawn-1.so.1: another ABI (and header). */
    { 0, 1, 0, "libspawn version too new" },
    { 0, 1, 99, "libspawn version too new" },
    { 0, 0, 0, "libspawn version too new" },
  };
  g_autofree char *running = g_strdup_printf ("%d.%d.%d", SPAWN_MAJOR_VERSION,
                                              SPAWN_MINOR_VERSION, SPAWN_MICRO_VERSION);
  guint i;

  g_test_summary ("spawn_check_version() answers NULL for this version and every "
                  "earlier one of the same ABI (0.2.0 on), and names the running "
                  "version in what it says of a later one or of one before the ABI began, "
                  "as glib_check_version()");
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *got = spawn_check_version (cases[i].major, cases[i].minor, cases[i].micro);

      g_test_message ("%u.%u.%u: %s", cases[i].major, cases[i].minor, cases[i].micro,
                      got != NULL ? got : "(null)");
      if (cases[i].want == NULL)
        {
          g_assert_null (got);
          continue;
        }
      g_assert_nonnull (got);
      g_assert_true (g_str_has_prefix (got, cases[i].want));
      g_assert_nonnull (strstr (got, running));
    }
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "exit-status", test_exit_status },
    { "signal", test_signal },
    { "core-dump", test_core_dump },
    { "cpu-times", test_cpu_times },
    { "pipes", test_pipes },
    { "fd-mapping", test_fd_mapping },
    { "closed-stdio-fd", test_closed_stdio_fd },
    { "fd-hygiene", test_fd_hygiene },
    { "fd-table", test_fd_table },
    { "fd-table/stdin-closed", test_fd_table_stdin_closed },
    { "exec-errors", test_exec_errors },
    { "cwd-env", test_working_directory_and_env },
    { "exec/script-argv-zero-empty", test_script_argv_zero_empty },
    { "exec/empty-name", test_empty_program_name },
    { "exec/path-unset", test_path_unset },
    { "exec/path-search-eloop", test_path_search_eloop },
    { "args/invalid-fds", test_invalid_fds },
    { "args/flag-beats-pipe", test_flag_beats_pipe },
    { "args/with-pipes", test_with_pipes },
    { "args/conflicting-flags", test_conflicting_flags },
    { "child-setup/big-stack", test_child_setup_big_stack },
    { "child-setup/overflow", test_child_setup_overflow },
    { "concurrency", test_concurrency },
    { "threads", test_threads },
    { "unwatched", test_unwatched },
    { "emfile", test_emfile },
    { "probe-emfile", test_probe_emfile },
    { "reaper-sigmask", test_reaper_sigmask },
    { "reaper-holds-reachable", test_reaper_holds_reachable },
    { "closed-stdio", test_closed_stdio },
    { "safety/app-handler", test_app_handler },
    { "safety/waitpid-thief", test_waitpid_thief },
    { "safety/thief-mid-reap", test_thief_mid_reap },
    { "safety/forked-reader", test_forked_reader },
    { "safety/sigchld-ignored", test_sigchld_ignored },
    { "safety/pid-reuse", test_pid_reuse },
    { "safety/pid-reuse-handler", test_pid_reuse_handler },
    { "safety/pid-reuse-zombie", test_pid_reuse_zombie },
    { "safety/app-stop-notify", test_app_stop_notify },
    { "safety/our-stop-not-an-end", test_our_stop_not_an_end },
    { "safety/app-sigign-no-zombie", test_app_sigign_no_zombie },
    { "safety/app-nocldwait-no-zombie", test_app_nocldwait_no_zombie },
    { "safety/sigchld-blocked", test_sigchld_blocked },
    { "safety/app-children", test_app_children },
    { "safety/app-zombies-linger", test_app_zombies_linger },
    { "safety/app-reaps-own", test_app_reaps_own },
    { "safety/sigign-many", test_sigign_many },
    { "safety/signal-while-exiting", test_signal_while_exiting },
    { "safety/exit-with-fd-table-full", test_exit_with_fd_table_full },
  };

  testutil_init (&argc, &argv);

  g_test_add_func ("/spawn/backend/auto", test_auto_backend);
  g_test_add_func ("/spawn/backend/forced", test_forced_backend);
  g_test_add_func ("/spawn/backend/seccomp-fallback", test_seccomp_fallback);
  g_test_add_func ("/spawn/fd-table/close-range-denied", test_fd_table_denied);
  g_test_add_func ("/spawn/fd-table/close-range-denied-later", test_fd_table_denied_later);
  g_test_add_func ("/spawn/backend/probe-emfile", test_auto_probe_emfile);
  g_test_add_func ("/spawn/backend/forced/subprocess/bogus", test_forced_bogus);
  g_test_add_func ("/spawn/backend/forced/subprocess/sigchld", test_forced_sigchld);
  g_test_add_func ("/spawn/errors/exec-step-messages", test_exec_step_messages);
  g_test_add_func ("/spawn/version/check", test_check_version);
  testutil_add_backend_cases ("/spawn", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
