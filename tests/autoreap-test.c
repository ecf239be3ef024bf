/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* The autoreap backend (clone3 with CLONE_PIDFD | CLONE_AUTOREAP, Linux
 * 7.1): what it promises beyond the cases every backend runs (spawn-test,
 * kill-test, ... register those for it through tests/testutil.c).
 *
 *   - no SIGCHLD, no zombie, and a waitpid(-1) elsewhere gets nothing;
 *   - no CPU times on stock 7.2 (its exit information has none):
 *     have_times FALSE; with kernel/patches-7.2, the times it reports;
 *   - kill-on-close by the kernel (CLONE_PIDFD_AUTOKILL) with
 *     CAP_SYS_ADMIN, and the child does not get no_new_privs from us;
 *     without CAP_SYS_ADMIN: CLONE_NNP only where the caller already has
 *     no_new_privs, the pdeathsig thread otherwise.
 *
 * Every case skips, saying so, on a kernel without CLONE_AUTOREAP.  Which
 * way kill-on-close went is read from the pidfd's fdinfo: 7.2 marks a
 * clone3 pidfd with CLONE_PIDFD_AUTOKILL by PIDFD_AUTOKILL, which is
 * O_TRUNC in its file flags (include/uapi/linux/pidfd.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include <libspawn/libspawn.h>
#include "testutil.h"

#define CAP_SYS_ADMIN_BIT 21

/* In the test process: skip, saying why, without CLONE_AUTOREAP (a skip
 * in the subprocess would fail the case); else run the case in a
 * subprocess (it changes signal dispositions, capabilities or
 * no_new_privs) with the autoreap backend forced.  TRUE in the
 * subprocess. */
static gboolean
isolated_autoreap (void)
{
  GError *error = NULL;

  if (!g_test_subprocess () && !spawn_backend_is_available (SPAWN_BACKEND_AUTOREAP))
    {
      g_test_skip ("no CLONE_AUTOREAP on this kernel (Linux 7.1 added it)");
      return FALSE;
    }
  if (!testutil_isolated ())
    return FALSE;
  g_assert_true (spawn_set_backend (SPAWN_BACKEND_AUTOREAP, &error));
  g_assert_no_error (error);
  return TRUE;
}

static SpawnChild *
start_helper (SpawnChildFlags child_flags, const char *a1, const char *a2)
{
  const char *argv[] = { testutil_helper, a1, a2, NULL };
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                               NULL, NULL, 0, NULL, NULL, NULL, child_flags, &error);
  g_assert_no_error (error);
  g_assert_nonnull (child);
  g_assert_cmpint (spawn_child_get_backend (child), ==, SPAWN_BACKEND_AUTOREAP);
  return child;
}

static void
wait_exited (SpawnChild *child, int status)
{
  SpawnExitInfo info;
  GError *error = NULL;

  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, status);
  /* Stock 7.2's PIDFD_INFO_EXIT has no CPU times, and nothing else gives
   * them for a child the kernel reaped: said, not made up. */
  g_assert_cmpint (info.have_times, ==, testutil_kernel_has_exit_cputime ());
  if (!info.have_times)
    {
      g_assert_cmpuint (info.utime_usec, ==, 0);
      g_assert_cmpuint (info.stime_usec, ==, 0);
    }
}

static void
test_cpu_times (void)
{
  const char *kernel = g_getenv ("LIBSPAWN_VM_KERNEL");
  /* The two guests built with kernel/patches-7.2. */
  gboolean want = g_strcmp0 (kernel, "modern-patched") == 0 || g_strcmp0 (kernel, "modern-debug") == 0;
  SpawnExitInfo info;
  GError *error = NULL;

  g_test_summary ("With kernel/patches-7.2 the exit information's CPU times "
                  "reach SpawnExitInfo: a child that burnt 300 ms of CPU "
                  "reports at least that, in microseconds, with user time");
  if (!g_test_subprocess ())
    {
      /* The guest built for the series must have it: no skip there. */
      if (want)
        g_assert_true (testutil_kernel_has_exit_cputime ());
      if (!testutil_kernel_has_exit_cputime ())
        {
          g_test_skip ("no PIDFD_INFO_EXIT_CPUTIME on this kernel "
                       "(kernel/patches-7.2 adds it; the modern-patched "
                       "guest runs this case)");
          return;
        }
    }
  if (!isolated_autoreap ())
    return;
  g_autoptr (SpawnChild) child = start_helper (0, "busy", "300");
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 0);
  g_test_message ("utime %" G_GUINT64_FORMAT " us, stime %" G_GUINT64_FORMAT " us",
                  info.utime_usec, info.stime_usec);
  g_assert_true (info.have_times);
  /* The helper burns 300 ms by its process CPU clock, the same
   * sum_exec_runtime that the kernel splits into user and system time
   * (thread_group_cputime_adjusted()): their sum is at least that. */
  g_assert_cmpuint (info.utime_usec + info.stime_usec, >=, 300000);
  g_assert_cmpuint (info.utime_usec + info.stime_usec, <=, 60000000);
  g_assert_cmpuint (info.utime_usec, >, 0);
}

static volatile sig_atomic_t sigchld_count;

static void
on_sigchld (int sig G_GNUC_UNUSED)
{
  sigchld_count++;
}

static void
test_no_sigchld_no_zombie (void)
{
  struct sigaction sa = { 0 };
  siginfo_t si;
  GPid pid;
  char path[64];

  g_test_summary ("A child ends: its status comes through the pidfd, the "
                  "application's SIGCHLD handler never runs, no zombie is "
                  "left and waitid(P_ALL) finds no child");
  if (!isolated_autoreap ())
    return;
  sa.sa_handler = on_sigchld;
  g_assert_no_errno (sigaction (SIGCHLD, &sa, NULL));
  g_autoptr (SpawnChild) child = start_helper (0, "exit", "7");
  pid = spawn_child_get_pid (child);
  wait_exited (child, 7);
  g_assert_cmpint (sigchld_count, ==, 0);
  /* Reaped by the kernel: no zombie, nothing for anyone to wait for. */
  g_snprintf (path, sizeof path, "/proc/%d", (int) pid);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  memset (&si, 0, sizeof si);
  g_assert_cmpint (waitid (P_ALL, 0, &si, WEXITED | WNOHANG), ==, -1);
  g_assert_cmpint (errno, ==, ECHILD);
}

typedef struct {
  int ret;
  int err;
} Thief;

static void *
thief_main (void *data)
{
  Thief *t = data;

  do
    t->ret = waitpid (-1, NULL, 0);
  while (t->ret < 0 && errno == EINTR);
  t->err = t->ret < 0 ? errno : 0;
  return NULL;
}

static void
test_thief (void)
{
  SpawnChild *children[20];
  pthread_t thread;
  Thief t = { 0, 0 };
  char status[8];
  guint i;

  g_test_summary ("SIGCHLD set to SIG_IGN and a thread blocked in "
                  "waitpid(-1) while 20 children run and end: each status "
                  "arrives, and the thief gets ECHILD, never one of ours");
  if (!isolated_autoreap ())
    return;
  signal (SIGCHLD, SIG_IGN);
  for (i = 0; i < G_N_ELEMENTS (children); i++)
    {
      g_snprintf (status, sizeof status, "%u", i + 1);
      children[i] = start_helper (0, "exit", status);
    }
  g_assert_cmpint (pthread_create (&thread, NULL, thief_main, &t), ==, 0);
  for (i = 0; i < G_N_ELEMENTS (children); i++)
    {
      wait_exited (children[i], i + 1);
      spawn_child_unref (children[i]);
    }
  /* Our children were its only ones: once they are gone, the kernel
   * wakes the thief (__wake_up_parent) and it finds nothing. */
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  g_assert_cmpint (t.ret, ==, -1);
  g_assert_cmpint (t.err, ==, ECHILD);
}

/* The file flags of our @fd, from /proc/self/fdinfo. */
static unsigned
fdinfo_flags (int fd)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/fdinfo/%d", fd);
  g_autofree char *text = NULL;
  const char *line;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  line = strstr (text, "flags:");
  g_assert_nonnull (line);
  return strtoul (line + strlen ("flags:"), NULL, 8);
}

/* The NoNewPrivs line of /proc/PID/status: 0 or 1. */
static int
child_no_new_privs (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *text = NULL;
  const char *line;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  line = strstr (text, "NoNewPrivs:");
  g_assert_nonnull (line);
  return atoi (line + strlen ("NoNewPrivs:"));
}

static gboolean
have_cap_sys_admin (void)
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];

  g_assert_no_errno (syscall (SYS_capget, &hdr, data));
  return (data[0].effective & (1u << CAP_SYS_ADMIN_BIT)) != 0;
}

static void
drop_cap_sys_admin (void)
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];

  g_assert_no_errno (syscall (SYS_capget, &hdr, data));
  data[0].effective &= ~(1u << CAP_SYS_ADMIN_BIT);
  data[0].permitted &= ~(1u << CAP_SYS_ADMIN_BIT);
  data[0].inheritable &= ~(1u << CAP_SYS_ADMIN_BIT);
  g_assert_no_errno (syscall (SYS_capset, &hdr, data));
  g_assert_false (have_cap_sys_admin ());
}

/* A kill-on-close child, checked and killed: whether the kernel holds
 * AUTOKILL on its pidfd (@by_kernel) and whether it has no_new_privs. */
static void
check_kill_on_close (gboolean by_kernel, int nnp)
{
  g_autoptr (SpawnChild) child = start_helper (SPAWN_CHILD_KILL_ON_CLOSE, "sleep", "60");
  unsigned flags = fdinfo_flags (spawn_child_get_fd (child));
  SpawnExitInfo info;
  GError *error = NULL;

  g_test_message ("pidfd file flags 0%o, child NoNewPrivs %d", flags,
                  child_no_new_privs (spawn_child_get_pid (child)));
  g_assert_cmpint ((flags & O_TRUNC) != 0, ==, by_kernel);
  g_assert_cmpint (child_no_new_privs (spawn_child_get_pid (child)), ==, nnp);
  g_assert_true (spawn_child_send_signal (child, SIGTERM, &error));
  g_assert_no_error (error);
  spawn_child_wait (child, &info, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_KILLED);
  g_assert_cmpint (info.status, ==, SIGTERM);
}

static void
test_kill_on_close_privileged (void)
{
  if (!have_cap_sys_admin ())
    {
      g_test_skip ("not run with CAP_SYS_ADMIN (the guests run as root)");
      return;
    }
  g_test_summary ("With CAP_SYS_ADMIN kill-on-close is the kernel's "
                  "CLONE_PIDFD_AUTOKILL, and the child is not given "
                  "no_new_privs (setuid programs keep working)");
  if (!isolated_autoreap ())
    return;
  check_kill_on_close (TRUE, 0);
}

static void
test_kill_on_close_unprivileged (void)
{
  g_test_summary ("Without CAP_SYS_ADMIN nor no_new_privs, kill-on-close "
                  "is the pdeathsig thread's: the library never imposes "
                  "CLONE_NNP on a child");
  if (!isolated_autoreap ())
    return;
  if (have_cap_sys_admin ())
    drop_cap_sys_admin ();
  check_kill_on_close (FALSE, 0);
}

static void
test_kill_on_close_nnp (void)
{
  g_test_summary ("A caller that already has no_new_privs, without "
                  "CAP_SYS_ADMIN: CLONE_PIDFD_AUTOKILL with CLONE_NNP, "
                  "which changes nothing for its child");
  if (!isolated_autoreap ())
    return;
  if (have_cap_sys_admin ())
    drop_cap_sys_admin ();
  g_assert_no_errno (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
  check_kill_on_close (TRUE, 1);
}

static void
test_probe_order (void)
{
  g_test_summary ("Where CLONE_AUTOREAP works and clone4 does not, auto "
                  "picks autoreap, before pidfd");
  if (!spawn_backend_is_available (SPAWN_BACKEND_AUTOREAP))
    {
      g_test_skip ("no CLONE_AUTOREAP on this kernel (Linux 7.1 added it)");
      return;
    }
  if (spawn_backend_is_available (SPAWN_BACKEND_CLONEFD))
    {
      g_test_skip ("clone4 is here: clonefd comes first");
      return;
    }
  if (!testutil_isolated ())
    return;
  g_unsetenv ("LIBSPAWN_BACKEND");
  g_assert_cmpint (spawn_get_backend (), ==, SPAWN_BACKEND_AUTOREAP);
  g_assert_cmpstr (spawn_backend_to_string (SPAWN_BACKEND_AUTOREAP), ==, "autoreap");
}

/* The pidfd turns readable in exit_notify(); release_task() records the
 * status and unhashes the task a moment later, on the child's CPU.  An
 * ioctl(PIDFD_GET_INFO) in between can find no exit info yet and then,
 * the task gone meanwhile, say ESRCH: transient, never "lost" (seen once
 * in the modern guest as a failed wait in kill-on-close/privileged). */
static void
test_status_race (void)
{
  guint i, n = 300;

  g_test_summary ("300 children killed or exiting while we wait on each: "
                  "every status arrives, none is reported as an error "
                  "(the ioctl racing release_task() must be asked again)");
  if (!isolated_autoreap ())
    return;
  for (i = 0; i < n; i++)
    {
      g_autoptr (SpawnChild) child = NULL;
      SpawnExitInfo info;
      GError *error = NULL;

      if (i % 2 == 0)
        {
          child = start_helper (0, "exit", "3");
          spawn_child_wait (child, &info, NULL, &error);
          g_assert_no_error (error);
          g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
          g_assert_cmpint (info.status, ==, 3);
          continue;
        }
      child = start_helper (0, "sleep", "60");
      g_assert_true (spawn_child_send_signal (child, SIGKILL, &error));
      spawn_child_wait (child, &info, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (info.kind, ==, SPAWN_EXIT_KILLED);
      g_assert_cmpint (info.status, ==, SIGKILL);
    }
}

int
main (int argc, char **argv)
{
  testutil_init (&argc, &argv);
  g_test_add_func ("/spawn/autoreap-backend/no-sigchld-no-zombie", test_no_sigchld_no_zombie);
  g_test_add_func ("/spawn/autoreap-backend/waitpid-thief", test_thief);
  g_test_add_func ("/spawn/autoreap-backend/kill-on-close/privileged",
                   test_kill_on_close_privileged);
  g_test_add_func ("/spawn/autoreap-backend/kill-on-close/unprivileged",
                   test_kill_on_close_unprivileged);
  g_test_add_func ("/spawn/autoreap-backend/kill-on-close/no-new-privs", test_kill_on_close_nnp);
  g_test_add_func ("/spawn/autoreap-backend/probe-order", test_probe_order);
  g_test_add_func ("/spawn/autoreap-backend/status-race", test_status_race);
  g_test_add_func ("/spawn/autoreap-backend/cpu-times", test_cpu_times);
  return g_test_run ();
}
