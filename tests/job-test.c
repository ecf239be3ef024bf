/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-test: process groups, sessions and jobs (issue 28).
 *
 * The trees come from tests/job-helper, which prints the PID of every
 * descendant it leaves and then "ready".  We open a pidfd on each while its
 * parent (the helper, which we hold) still runs, so a recycled PID can
 * neither pass nor fail a case, and "gone" means the pidfd turned readable
 * (the process has ended, whoever reaps it).  Every case kills what it
 * started, whatever it asserts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libspawn/libspawn.h>
#include "testutil.h"

/* A bound, not an expectation: a killed process is gone in milliseconds,
 * but this machine may be loaded (kill-test allows 60 s too). */
#define GONE_TIMEOUT_MS 60000

static char *job_helper;

/* What a helper left: its descendants, as pidfds. */
typedef struct {
  SpawnChild *child;
  GArray *pidfds;           /* int */
  GArray *pids;             /* int */
  char *first_line;
  int fork_errno;           /* the helper's fork failed (no "ready") */
} JobTree;

static int
job_test_pidfd_open (pid_t pid)
{
  int fd = syscall (SYS_pidfd_open, pid, 0);

  g_assert_cmpint (fd, >=, 0);
  return fd;
}

/* Reads the helper's lines up to "ready" from @fd. */
static void
job_tree_read (JobTree *tree, int fd)
{
  g_autoptr (GString) line = g_string_new (NULL);
  char c;

  for (;;)
    {
      ssize_t n = read (fd, &c, 1);

      if (n == 0)
        g_error ("job-helper ended before it said \"ready\" (its stderr is above)");
      g_assert_cmpint (n, ==, 1);
      if (c != '\n')
        {
          g_string_append_c (line, c);
          continue;
        }
      if (strcmp (line->str, "ready") == 0)
        break;
      if (g_str_has_prefix (line->str, "fork-failed "))
        {
          tree->fork_errno = atoi (line->str + strlen ("fork-failed "));
          break;
        }
      if (tree->first_line == NULL || g_str_has_prefix (line->str, "cgroup "))
        {
          g_free (tree->first_line);
          tree->first_line = g_strdup (line->str);
        }
      if (strchr (line->str, ' ') == NULL)
        {
          int pid = atoi (line->str);
          int pidfd = job_test_pidfd_open (pid);

          g_array_append_val (tree->pids, pid);
          g_array_append_val (tree->pidfds, pidfd);
        }
      g_string_truncate (line, 0);
    }
}

/* job-helper MODE [ARG] [ARG2] with @child_flags, in @job if not NULL, read
 * to "ready". */
static JobTree *
job_tree_spawn (SpawnJob *job, SpawnChildFlags child_flags, const char *mode,
                     const char *arg, const char *arg2)
{
  const char *argv[] = { job_helper, mode, arg, arg2, NULL };
  GError *error = NULL;
  JobTree *tree = g_new0 (JobTree, 1);
  int out = -1;

  tree->pidfds = g_array_new (FALSE, FALSE, sizeof (int));
  tree->pids = g_array_new (FALSE, FALSE, sizeof (int));
  if (job != NULL)
    tree->child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                                   NULL, NULL, 0, NULL, &out, NULL, child_flags, &error);
  else
    tree->child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                                       NULL, NULL, 0, NULL, &out, NULL, child_flags,
                                       &error);
  g_assert_no_error (error);
  job_tree_read (tree, out);
  close (out);
  return tree;
}

/* As job_tree_spawn(), where every fork of the helper must succeed. */
static JobTree *
job_tree_start_full (SpawnJob *job, SpawnChildFlags child_flags, const char *mode,
                     const char *arg, const char *arg2)
{
  JobTree *tree = job_tree_spawn (job, child_flags, mode, arg, arg2);

  if (tree->fork_errno != 0)
    g_error ("job-helper %s: fork failed after %u processes: %s", mode, tree->pids->len,
             g_strerror (tree->fork_errno));
  return tree;
}

static JobTree *
job_tree_start (SpawnChildFlags child_flags, const char *mode, const char *arg)
{
  return job_tree_start_full (NULL, child_flags, mode, arg, NULL);
}

/* Whether the process behind @pidfd ends within @timeout_ms (poll() again
 * after a signal: the sigchld backend's SIGCHLD handler interrupts it). */
static gboolean
job_test_pidfd_gone (int pidfd, int timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  struct pollfd pfd = { pidfd, POLLIN, 0 };
  int r;

  for (;;)
    {
      gint64 left = MAX (0, deadline - g_get_monotonic_time ()) / 1000;

      r = poll (&pfd, 1, (int) left);
      if (r >= 0 || errno != EINTR)
        return r == 1;
    }
}

/* The count of the tree's descendants still running after @timeout_ms. */
static guint
job_tree_count_alive (JobTree *tree, int timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + timeout_ms * 1000;
  guint i, alive = 0;

  for (i = 0; i < tree->pidfds->len; i++)
    {
      gint64 left = MAX (0, deadline - g_get_monotonic_time ()) / 1000;

      if (!job_test_pidfd_gone (g_array_index (tree->pidfds, int, i), left))
        alive++;
    }
  return alive;
}

/* Kills whatever is left (through the pidfds: never a recycled PID),
 * waits for the helper, frees. */
static void
job_tree_free (JobTree *tree)
{
  guint i;

  if (tree->child != NULL)
    {
      spawn_child_send_signal (tree->child, SIGKILL, NULL);
      g_assert_true (spawn_child_wait (tree->child, NULL, NULL, NULL));
      spawn_child_unref (tree->child);
    }
  for (i = 0; i < tree->pidfds->len; i++)
    {
      int fd = g_array_index (tree->pidfds, int, i);

      syscall (SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
      g_assert_true (job_test_pidfd_gone (fd, GONE_TIMEOUT_MS));
      close (fd);
    }
  g_array_unref (tree->pidfds);
  g_array_unref (tree->pids);
  g_free (tree->first_line);
  g_free (tree);
}

/* Process groups and sessions */

static void
test_group_ids (gconstpointer data)
{
  static const SpawnChildFlags flags[] = {
    SPAWN_CHILD_FLAGS_NONE, SPAWN_CHILD_NEW_PROCESS_GROUP, SPAWN_CHILD_NEW_SESSION,
  };
  gsize i;

  g_test_summary ("A child with NEW_PROCESS_GROUP leads a group, with NEW_SESSION a "
                  "session; without either it is in ours");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < G_N_ELEMENTS (flags); i++)
    {
      JobTree *tree = job_tree_start (flags[i], "ids", NULL);
      int pid = spawn_child_get_pid (tree->child);
      int pgid = -1, sid = -1, got_pid = -1;

      g_assert_cmpint (sscanf (tree->first_line, "%d %d %d", &got_pid, &pgid, &sid), ==, 3);
      g_assert_cmpint (got_pid, ==, pid);
      g_assert_cmpint (pgid, ==, flags[i] == SPAWN_CHILD_FLAGS_NONE ? getpgid (0) : pid);
      g_assert_cmpint (sid, ==, flags[i] == SPAWN_CHILD_NEW_SESSION ? pid : getsid (0));
      job_tree_free (tree);
    }
}

static void
test_group_signal (gconstpointer data)
{
  GError *error = NULL;
  JobTree *tree;

  g_test_summary ("send_signal_to_group reaches the children and a double-forked "
                  "daemon, not a daemon that called setsid()");
  if (!testutil_use_backend (data))
    return;
  tree = job_tree_start (SPAWN_CHILD_NEW_PROCESS_GROUP, "all", NULL);
  g_assert_cmpuint (tree->pidfds->len, ==, 3);
  g_assert_true (spawn_child_send_signal_to_group (tree->child, SIGKILL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (tree->child, NULL, NULL, &error));
  g_assert_no_error (error);
  /* The sleeper and the plain daemon are gone; the setsid() one, in a
   * session (and group) of its own, escapes: what a job is for. */
  g_assert_true (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 0), GONE_TIMEOUT_MS));
  g_assert_true (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 1), GONE_TIMEOUT_MS));
  g_assert_false (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 2), 0));
  /* The leader has ended: no more group signals (its PID may be reused). */
  g_assert_false (spawn_child_send_signal_to_group (tree->child, SIGKILL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_SRCH);
  g_assert_nonnull (strstr (error->message, "job-helper"));
  g_clear_error (&error);
  job_tree_free (tree);
}

static void
test_group_not_leader (gconstpointer data)
{
  GError *error = NULL;
  JobTree *tree;

  g_test_summary ("send_signal_to_group on a child without a group of its own is "
                  "an error, and signals nothing (our own group is the child's)");
  if (!testutil_use_backend (data))
    return;
  tree = job_tree_start (SPAWN_CHILD_FLAGS_NONE, "tree", "1");
  g_assert_false (spawn_child_send_signal_to_group (tree->child, SIGTERM, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_assert_nonnull (strstr (error->message, "no process group"));
  g_assert_nonnull (strstr (error->message, "job-helper"));
  g_clear_error (&error);
  /* Had it signalled our group, we would not be here (SIGTERM). */
  g_assert_false (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 0), 0));
  job_tree_free (tree);
}

/* SpawnProcess with NEW_PROCESS_GROUP / NEW_SESSION: terminate() ends the
 * group; without the flag it ends the program alone. */
static void
test_group_process_terminate (gconstpointer data)
{
  static const SpawnProcessFlags flags[] = {
    SPAWN_PROCESS_FLAGS_NONE, SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP,
    SPAWN_PROCESS_FLAGS_NEW_SESSION,
  };
  gsize i;

  g_test_summary ("SpawnProcess terminate() signals the whole group with "
                  "NEW_PROCESS_GROUP or NEW_SESSION, the program alone without");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < G_N_ELEMENTS (flags); i++)
    {
      const char *argv[] = { job_helper, "tree", "2", NULL };
      g_autoptr (SpawnProcess) proc = spawn_process_new (argv);
      JobTree tree = { 0 };
      GError *error = NULL;
      guint j;

      tree.pidfds = g_array_new (FALSE, FALSE, sizeof (int));
      tree.pids = g_array_new (FALSE, FALSE, sizeof (int));
      spawn_process_set_flags (proc, flags[i]);
      {
        int p[2];

        g_assert_cmpint (pipe2 (p, O_CLOEXEC), ==, 0);
        spawn_process_set_channel_fd (proc, SPAWN_PROCESS_STDOUT, p[1]);
        testutil_start_ok (proc);
        close (p[1]);
        job_tree_read (&tree, p[0]);
        close (p[0]);
      }
      g_assert_true (spawn_process_terminate (proc, &error));
      g_assert_no_error (error);
      g_assert_true (spawn_process_wait_for_finished (proc, 5000, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (spawn_process_get_if_signaled (proc));
      g_assert_cmpuint (job_tree_count_alive (&tree, flags[i] == 0 ? 0 : GONE_TIMEOUT_MS),
                        ==, flags[i] == 0 ? 2 : 0);
      for (j = 0; j < tree.pidfds->len; j++)
        {
          int fd = g_array_index (tree.pidfds, int, j);

          syscall (SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
          g_assert_true (job_test_pidfd_gone (fd, GONE_TIMEOUT_MS));
          close (fd);
        }
      g_array_unref (tree.pidfds);
      g_array_unref (tree.pids);
      g_free (tree.first_line);
    }
}

static void test_group_subprocess_flags (gconstpointer data);

static const TestutilCase group_cases[] = {
  { "ids", test_group_ids },
  { "signal", test_group_signal },
  { "not-leader", test_group_not_leader },
  { "process-terminate", test_group_process_terminate },
  { "gsubprocess-flags", test_group_subprocess_flags },
};

/* Jobs */

/* A new job; NULL, with the case skipped and the reason given, where a
 * cgroup v2 of our own cannot be made here. */
/* LIBSPAWN_TEST_JOB_EXPECT says what the runner knows of this machine:
 * "cgroup" (a job must get a cgroup), "systemd-scope" (the same, from our
 * user's systemd instance: tests/systemd-guest), "refused" (no cgroup is
 * ours to write: the same guest, as a system service's user). */
static const char *
job_test_expect (void)
{
  const char *expect = g_getenv ("LIBSPAWN_TEST_JOB_EXPECT");

  return expect != NULL ? expect : "";
}

/* No cgroup for a job: a skip, or a failure where the runner expects one. */
static void
job_test_no_cgroup (const char *why)
{
  if (strcmp (job_test_expect (), "cgroup") == 0 ||
      strcmp (job_test_expect (), "systemd-scope") == 0)
    g_test_fail_printf ("expected a cgroup job here (LIBSPAWN_TEST_JOB_EXPECT=%s): %s",
                        job_test_expect (), why);
  else
    g_test_skip (why);
}

/* "exit 0" started in @job and waited for. */
static void
job_test_run_one (SpawnJob *job)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
  spawn_child_unref (child);
}

static SpawnJob *
job_test_cgroup_job (gconstpointer data)
{
  SpawnJob *job;

  if (!testutil_use_backend (data))
    return NULL;
  job = spawn_job_new ();
  job_test_run_one (job);
  if (spawn_job_get_mode (job) != SPAWN_JOB_MODE_CGROUP)
    {
      job_test_no_cgroup ("no writable cgroup v2 here (the job fell back on process groups; "
                          "run with LIBSPAWN_LOG debug output to see why)");
      g_object_unref (job);
      return NULL;
    }
  return job;
}

/* A job forced into the process-group mode (LIBSPAWN_JOB_MODE), in the
 * isolated subprocess of the case (the variable is process-wide); NULL in
 * the test process, or when the case's backend is absent (skipped). */
static SpawnJob *
job_test_process_group_job (gconstpointer data)
{
  if (!testutil_use_backend (data))
    return NULL;
  if (!testutil_isolated ())
    return NULL;
  g_setenv ("LIBSPAWN_JOB_MODE", "process-group", TRUE);
  return spawn_job_new ();
}

/* What we can see of our cgroup directory: entries of ours. */
static guint
job_test_count_cgroup_dirs (const char *job_path)
{
  g_autofree char *parent = g_path_get_dirname (job_path);
  g_autofree char *prefix = g_strdup_printf ("libspawn-job-%d-", (int) getpid ());
  GDir *dir = g_dir_open (parent, 0, NULL);
  const char *name;
  guint n = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, prefix))
      n++;
  g_dir_close (dir);
  return n;
}

static void
test_job_stop_tree (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  g_autofree char *path = NULL;
  g_autofree char *cg_line = NULL, *proc_cgroup = NULL;
  GError *error = NULL;
  JobTree *tree;

  g_test_summary ("In the cgroup mode a child is born in the job's cgroup, and "
                  "spawn_job_kill() ends the child, its children, a double-forked "
                  "daemon and a setsid() daemon; close removes the cgroup");
  if (job == NULL)
    return;
  path = g_strdup (spawn_job_get_cgroup_path (job));
  g_assert_nonnull (path);
  tree = job_tree_start_full (job, 0, "all", NULL, NULL);
  g_assert_cmpuint (tree->pidfds->len, ==, 3);
  /* The daemon that left the session is still in the cgroup. */
  proc_cgroup = g_strdup_printf ("/proc/%d/cgroup", g_array_index (tree->pids, int, 2));
  g_assert_true (g_file_get_contents (proc_cgroup, &cg_line, NULL, NULL));
  g_assert_nonnull (strstr (cg_line, strrchr (path, '/')));
  g_assert_false (spawn_job_is_empty (job));

  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (job_tree_count_alive (tree, GONE_TIMEOUT_MS), ==, 0);
  g_assert_true (spawn_child_wait (tree->child, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_null (spawn_job_get_cgroup_path (job));
  job_tree_free (tree);
}

static void
test_job_outlives_child (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  GError *error = NULL;
  SpawnExitInfo info;
  JobTree *tree;

  g_test_summary ("What the child leaves when it exits stays in the job until the "
                  "job is killed");
  if (job == NULL)
    return;
  tree = job_tree_start_full (job, 0, "exit-after-tree", "3", NULL);
  g_assert_true (spawn_child_wait (tree->child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpuint (job_tree_count_alive (tree, 0), ==, 3);
  g_assert_false (spawn_job_is_empty (job));
  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (job_tree_count_alive (tree, GONE_TIMEOUT_MS), ==, 0);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_job_is_empty (job));
  job_tree_free (tree);
}

static void
test_job_cpu_time (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  GError *error = NULL;
  SpawnExitInfo info;
  guint64 before, cpu, user, closed;
  JobTree *tree;

  g_test_summary ("A job's CPU time includes its grandchildren's, which no rusage "
                  "of the child's has (orphans that nobody waits for)");
  if (job == NULL)
    return;
  before = spawn_job_get_cpu_usec (job, NULL, NULL);
  tree = job_tree_start_full (job, 0, "busy-orphans", "2", "200");
  g_assert_true (spawn_child_wait (tree->child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (job_tree_count_alive (tree, GONE_TIMEOUT_MS), ==, 0);
  cpu = spawn_job_get_cpu_usec (job, &user, NULL);
  /* 2 x 200 ms burnt; the child itself burnt next to nothing. */
  g_assert_cmpuint (cpu - before, >=, 380000);
  /* The helper burns by reading CLOCK_PROCESS_CPUTIME_ID, a system call:
   * how the time splits between user and system varies. */
  g_assert_cmpuint (user, <=, cpu);
  g_assert_cmpuint (info.utime_usec, <, 100000);
  /* Kept across close: close reads the cgroup's last figure before it
   * removes it.  That figure may be a little larger than the one above
   * (the kernel folds per-CPU usage into cpu.stat lazily, and a debug
   * kernel later still), never smaller, and it no longer changes. */
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  closed = spawn_job_get_cpu_usec (job, NULL, NULL);
  g_assert_cmpuint (closed, >=, cpu);
  g_assert_cmpuint (closed - cpu, <, 100000);
  g_usleep (50000);
  g_assert_cmpuint (spawn_job_get_cpu_usec (job, NULL, NULL), ==, closed);
  job_tree_free (tree);
}

static void
test_job_many (gconstpointer data)
{
  g_autoptr (SpawnJob) probe = job_test_cgroup_job (data);
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  g_autofree char *path = NULL;
  guint i;

  g_test_summary ("1000 jobs, each finalized after its child ended, leave no cgroup "
                  "directory behind");
  if (probe == NULL)
    return;
  path = g_strdup (spawn_job_get_cgroup_path (probe));
  g_clear_object (&probe);
  g_assert_cmpuint (job_test_count_cgroup_dirs (path), ==, 0);
  for (i = 0; i < 1000; i++)
    {
      SpawnJob *job = spawn_job_new ();
      GError *error = NULL;
      SpawnChild *child;

      child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL,
                               NULL, 0, NULL, NULL, NULL, 0, &error);
      g_assert_no_error (error);
      g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_CGROUP);
      g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
      spawn_child_unref (child);
      g_object_unref (job);
    }
  g_assert_cmpuint (job_test_count_cgroup_dirs (path), ==, 0);
}

static void
test_job_memory_limit (gconstpointer data)
{
  g_autoptr (SpawnJob) job = NULL;
  const char *argv[] = { job_helper, "hog", "256", NULL };
  g_autofree char *controllers = NULL, *self_path = NULL, *contents = NULL;
  GError *error = NULL;
  SpawnExitInfo info;
  SpawnChild *child;
  const char *line;

  g_test_summary ("A job with a 64 MiB memory limit: a 256 MiB hog is OOM-killed, "
                  "and the job counts the OOM kill");
  if (!testutil_use_backend (data))
    return;
  /* The memory controller must be ours to hand down. */
  g_assert_true (g_file_get_contents ("/proc/self/cgroup", &contents, NULL, NULL));
  line = strstr (contents, "0::");
  if (line == NULL)
    {
      job_test_no_cgroup ("no cgroup v2 hierarchy here (guests: mount cgroup2 at /sys/fs/cgroup)");
      return;
    }
  job = spawn_job_new ();
  spawn_job_set_memory_max (job, 64 << 20);
  child = spawn_job_spawn (job, NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                           -1, -1, -1, NULL, NULL, 0, NULL, NULL, NULL, 0, &error);
  if (child == NULL)
    {
      /* Say why, and that it was the right error: a clear one. */
      g_assert_nonnull (strstr (error->message, "with limits"));
      {
        g_autofree char *why = g_strdup_printf ("no memory controller for a job here: %s",
                                                error->message);
        job_test_no_cgroup (why);
      }
      g_clear_error (&error);
      return;
    }
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_KILLED);
  g_assert_cmpint (info.status, ==, SIGKILL);
  g_assert_cmpuint (spawn_job_get_oom_kills (job), >=, 1);
  spawn_child_unref (child);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
}

static void
test_job_born_in_cgroup (gconstpointer data)
{
  const char *sleeper[] = { testutil_helper, "sleep", "60000", NULL };
  const char *second[] = { testutil_helper, "exit", "0", NULL };
  g_autoptr (SpawnJob) job = NULL;
  SpawnChild *first, *extra;
  gboolean born_in;
  GError *error = NULL;

  g_test_summary ("A job's child is born in its cgroup (clone3's CLONE_INTO_CGROUP on "
                  "pidfd, clone4's cgroup field on clonefd): pids.max refuses a second "
                  "child at clone time.  On sigchld the child moves itself in, which "
                  "pids.max does not police (the documented window)");
  if (!testutil_use_backend (data))
    return;
  job = spawn_job_new ();
  spawn_job_set_pids_max (job, 1);
  first = spawn_job_spawn (job, NULL, sleeper, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                           0, NULL, NULL, NULL, 0, &error);
  if (first == NULL)
    {
      g_assert_nonnull (strstr (error->message, "with limits"));
      {
        g_autofree char *why = g_strdup_printf ("no pids controller for a job here: %s",
                                                error->message);
        job_test_no_cgroup (why);
      }
      g_clear_error (&error);
      return;
    }
  if (spawn_job_get_mode (job) != SPAWN_JOB_MODE_CGROUP)
    {
      spawn_child_unref (first);
      job_test_no_cgroup ("no writable cgroup v2 here (the job fell back on process groups)");
      return;
    }
  /* The pids controller counts at fork (cgroup_can_fork) and lets any
   * migration in: a second process born in the full cgroup is refused,
   * one that writes itself into cgroup.procs is not. */
  born_in = spawn_get_backend () != SPAWN_BACKEND_SIGCHLD;
  extra = spawn_job_spawn (job, NULL, second, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  if (born_in)
    {
      g_assert_null (extra);
      g_assert_nonnull (error);
      g_test_message ("second child refused: %s", error->message);
      g_assert_nonnull (strstr (error->message, "spawn-helper"));
      g_clear_error (&error);
    }
  else
    {
      g_assert_no_error (error);
      g_assert_nonnull (extra);
      g_assert_true (spawn_child_wait (extra, NULL, NULL, NULL));
      spawn_child_unref (extra);
    }
  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (first, NULL, NULL, &error));
  g_assert_no_error (error);
  spawn_child_unref (first);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
}

static void
test_job_process (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  const char *argv[] = { job_helper, "all", NULL };
  g_autoptr (SpawnProcess) proc = NULL;
  JobTree tree = { 0 };
  GError *error = NULL;
  int p[2];
  guint j;

  g_test_summary ("SpawnProcess with a job: terminate() ends the whole tree, setsid() "
                  "daemon included");
  if (job == NULL)
    return;
  proc = spawn_process_new (argv);
  spawn_process_set_job (proc, job);
  g_assert_true (spawn_process_get_job (proc) == job);
  tree.pidfds = g_array_new (FALSE, FALSE, sizeof (int));
  tree.pids = g_array_new (FALSE, FALSE, sizeof (int));
  g_assert_cmpint (pipe2 (p, O_CLOEXEC), ==, 0);
  spawn_process_set_channel_fd (proc, SPAWN_PROCESS_STDOUT, p[1]);
  testutil_start_ok (proc);
  close (p[1]);
  job_tree_read (&tree, p[0]);
  close (p[0]);
  g_assert_true (spawn_process_terminate (proc, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_wait_for_finished (proc, 5000, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_term_sig (proc), ==, SIGTERM);
  g_assert_cmpuint (job_tree_count_alive (&tree, GONE_TIMEOUT_MS), ==, 0);
  for (j = 0; j < tree.pidfds->len; j++)
    close (g_array_index (tree.pidfds, int, j));
  g_array_unref (tree.pidfds);
  g_array_unref (tree.pids);
  g_free (tree.first_line);
}

static void
test_job_fallback_forced (gconstpointer data)
{
  g_autoptr (SpawnJob) job = NULL;
  GError *error = NULL;
  JobTree *tree;

  g_test_summary ("LIBSPAWN_JOB_MODE=process-group: the job says so, and kill ends "
                  "the group (not the setsid() daemon: the documented limit)");
  job = job_test_process_group_job (data);
  if (job == NULL)
    return;
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_NONE);
  tree = job_tree_start_full (job, 0, "all", NULL, NULL);
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_PROCESS_GROUP);
  g_assert_null (spawn_job_get_cgroup_path (job));
  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_true (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 0), GONE_TIMEOUT_MS));
  g_assert_true (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 1), GONE_TIMEOUT_MS));
  g_assert_false (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 2), 0));
  job_tree_free (tree);
}

static void
test_job_fallback_no_cgroup (gconstpointer data)
{
  g_autoptr (SpawnJob) job = NULL;
  g_autoptr (SpawnJob) limited = NULL;
  g_autofree char *contents = NULL;
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  GError *error = NULL;
  g_auto (GStrv) lines = NULL;
  guint i;

  g_test_summary ("Where no cgroup2 is mounted the job falls back on process groups "
                  "and says so; a job with limits fails with a clear error instead");
  if (!g_test_subprocess () && geteuid () != 0)
    {
      g_test_skip ("needs root: the case unmounts cgroup2 in a mount namespace of its own");
      return;
    }
  if (!testutil_use_backend (data))
    return;
  if (!testutil_isolated ())
    return;
  if (testutil_unshare_private_mounts () < 0)
    g_error ("cannot have a mount namespace of our own with private mounts: %s",
             g_strerror (errno));
  g_assert_true (g_file_get_contents ("/proc/self/mountinfo", &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], " - cgroup2 ") != NULL)
      {
        g_auto (GStrv) f = g_strsplit (lines[i], " ", 6);

        g_assert_cmpint (umount2 (f[4], MNT_DETACH), ==, 0);
      }
  job = spawn_job_new ();
  job_test_run_one (job);
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_PROCESS_GROUP);

  limited = spawn_job_new ();
  spawn_job_set_pids_max (limited, 10);
  g_assert_null (spawn_job_spawn (limited, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                                  NULL, NULL, 0, NULL, NULL, NULL, 0, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "spawn-helper"));
  g_assert_nonnull (strstr (error->message, "with limits"));
  g_clear_error (&error);
}

static void
test_job_app_killed (gconstpointer data)
{
  g_autofree char *app = NULL;
  g_autofree char *path = NULL;
  const char *app_argv[5];
  GError *error = NULL;
  SpawnExitInfo info;
  JobTree *tree;
  gint64 start;

  g_test_summary ("An application SIGKILLed with a kill-on-close job running: the "
                  "whole tree (setsid() daemon included) is gone within a bound, and "
                  "so is the job's cgroup directory");
  {
    g_autoptr (SpawnJob) probe = job_test_cgroup_job (data);

    if (probe == NULL)
      return;
  }
  {
    g_autofree char *dir = g_path_get_dirname (job_helper);

    app = g_build_filename (dir, "job-app", NULL);
  }
  app_argv[0] = app;
  app_argv[1] = job_helper;
  app_argv[2] = "all";
  app_argv[3] = NULL;
  tree = g_new0 (JobTree, 1);
  tree->pidfds = g_array_new (FALSE, FALSE, sizeof (int));
  tree->pids = g_array_new (FALSE, FALSE, sizeof (int));
  {
    g_autofree char *backend = g_strdup (spawn_backend_to_string (testutil_backend (data)));
    g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "LIBSPAWN_BACKEND", backend, TRUE);
    int out = -1;

    tree->child = spawn_async_fd_full (NULL, app_argv, (const char * const *) env, 0, NULL,
                                       NULL, -1, -1, -1, NULL, NULL, 0, NULL, &out, NULL, 0,
                                       &error);
    g_assert_no_error (error);
    job_tree_read (tree, out);
    close (out);
  }
  g_assert_cmpuint (tree->pidfds->len, ==, 3);
  g_assert_nonnull (tree->first_line);
  g_assert_true (g_str_has_prefix (tree->first_line, "cgroup /"));
  path = g_strdup (tree->first_line + strlen ("cgroup "));
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_DIR));

  start = g_get_monotonic_time ();
  g_assert_true (spawn_child_send_signal (tree->child, SIGKILL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (tree->child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (job_tree_count_alive (tree, GONE_TIMEOUT_MS), ==, 0);
  g_test_message ("tree gone %.1f ms after the SIGKILL",
                  (g_get_monotonic_time () - start) / 1000.0);
  /* The guardian removes the directory once the cgroup is empty (it looks
   * once a second). */
  while (g_file_test (path, G_FILE_TEST_EXISTS) &&
         g_get_monotonic_time () - start < GONE_TIMEOUT_MS * (gint64) 1000)
    g_usleep (50000);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_test_message ("cgroup removed %.1f ms after the SIGKILL",
                  (g_get_monotonic_time () - start) / 1000.0);
  job_tree_free (tree);
}

/* Issue 35: the review's defects.  Each case failed on accc046. */

/* Whether @child has ended within @timeout_ms: its fd turns readable. */
static gboolean
job_test_child_gone (SpawnChild *child, int timeout_ms)
{
  return job_test_pidfd_gone (spawn_child_get_fd (child), timeout_ms);
}

/* The job's cgroup as /proc/PID/cgroup names it: "/NAME" at the end of
 * the "0::" line of @pid, or FALSE if @pid is not in @job's cgroup (or
 * one below it). */
static gboolean
job_test_pid_in (int pid, const char *job_path)
{
  g_autofree char *file = g_strdup_printf ("/proc/%d/cgroup", pid);
  g_autofree char *contents = NULL;
  const char *name = strrchr (job_path, '/');
  const char *line, *hit;

  if (!g_file_get_contents (file, &contents, NULL, NULL))
    return FALSE;
  line = strstr (contents, "0::");
  if (line == NULL)
    return FALSE;
  hit = strstr (line, name);
  return hit != NULL && (hit[strlen (name)] == '\n' || hit[strlen (name)] == '/');
}

static SpawnChild *
job_test_spawn_sleeper (SpawnJob *job, SpawnChildFlags child_flags, GError **error)
{
  const char *argv[] = { testutil_helper, "sleep", "60000", NULL };

  return spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                          NULL, NULL, NULL, child_flags, error);
}

static SpawnJob *parallel_job;
static SpawnChild *parallel_children[2];

static int
job_test_parallel_body (guint index)
{
  GError *error = NULL;

  parallel_children[index] = job_test_spawn_sleeper (parallel_job, SPAWN_CHILD_KILL_ON_CLOSE,
                                                     &error);
  g_assert_no_error (error);
  return 0;
}

/* Our descriptors but eventfds: the sigchld backend keeps one per child
 * watched at once, for good (recycled, never closed), so their number is
 * a high-water mark, not a leak. */
static int
job_test_count_fds_but_eventfds (void)
{
  GDir *d = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;
  int n = 0;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (path, NULL);

      if (target == NULL || strcmp (target, "anon_inode:[eventfd]") != 0)
        n++;
    }
  g_dir_close (d);
  return n;
}

/* Waits (with a bound) for that count to come back to @n or below: a
 * guardian let go is reaped by the reaper thread, which then closes its
 * fd.  Below is no leak: a count taken as the baseline can catch a
 * descriptor of the reaper's between a reap and its close. */
static int
job_test_fds_settle (int n)
{
  gint64 deadline = g_get_monotonic_time () + GONE_TIMEOUT_MS * (gint64) 1000;
  int now;

  while ((now = job_test_count_fds_but_eventfds ()) > n &&
         g_get_monotonic_time () < deadline)
    g_usleep (10000);
  if (now > n)
    testutil_print_fds ();
  return now;
}

static void
test_job_parallel_guardian (gconstpointer data)
{
  g_autoptr (SpawnJob) probe = job_test_cgroup_job (data);
  int fds_before;
  guint round, i;

  g_test_summary ("Two threads whose first KILL_ON_CLOSE spawns into one job overlap "
                  "start one guardian between them: no abort, and no guardian or pipe "
                  "leaks");
  if (probe == NULL)
    return;
  fds_before = -1;
  for (round = 0; round < 20; round++)
    {
      /* After the first round: the reaper thread and the pdeathsig thread
       * (started on first use) hold descriptors for good. */
      if (round == 1)
        fds_before = job_test_count_fds_but_eventfds ();
      GError *error = NULL;

      parallel_job = spawn_job_new ();
      testutil_run_in_threads (2, job_test_parallel_body);
      g_assert_true (spawn_job_close (parallel_job, GONE_TIMEOUT_MS, &error));
      g_assert_no_error (error);
      for (i = 0; i < 2; i++)
        {
          g_assert_true (spawn_child_wait (parallel_children[i], NULL, NULL, NULL));
          g_clear_pointer (&parallel_children[i], spawn_child_unref);
        }
      g_clear_object (&parallel_job);
    }
  /* Each job's guardian and its pipe went with the job. */
  g_assert_cmpint (job_test_fds_settle (fds_before), <=, fds_before);
}

/* Makes a directory below @job's cgroup, as a nested job or a container
 * runtime in the job would, and bind-mounts /tmp on it so that nobody
 * can remove it until job_test_unpin() (needs a mount namespace of ours). */
static char *
job_test_pin (SpawnJob *job)
{
  char *sub = g_build_filename (spawn_job_get_cgroup_path (job), "pinned", NULL);

  g_assert_no_errno (mkdir (sub, 0755));
  g_assert_no_errno (mount ("/tmp", sub, NULL, MS_BIND, NULL));
  return sub;
}

static void
test_job_close_failed (gconstpointer data)
{
  g_autoptr (SpawnJob) job = NULL;
  g_autofree char *path = NULL, *sub = NULL;
  GError *error = NULL;
  SpawnChild *child;

  g_test_summary ("A close whose rmdir fails keeps the job's cgroup: the next child is "
                  "born in it, and spawn_job_kill() reaches it");
  if (!g_test_subprocess () && geteuid () != 0)
    {
      g_test_skip ("needs root: the case pins the cgroup with a bind mount");
      return;
    }
  if (!g_test_subprocess ())
    {
      /* A skip in the subprocess would pass here unseen: probe first. */
      g_autoptr (SpawnJob) probe = job_test_cgroup_job (data);

      if (probe == NULL)
        return;
    }
  if (!testutil_isolated ())
    return;
  job = job_test_cgroup_job (data);
  g_assert_nonnull (job);
  g_assert_no_errno (testutil_unshare_private_mounts ());
  path = g_strdup (spawn_job_get_cgroup_path (job));
  sub = job_test_pin (job);
  g_assert_false (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_nonnull (error);
  g_test_message ("close: %s", error->message);
  g_assert_nonnull (strstr (error->message, path));
  g_clear_error (&error);
  g_assert_cmpstr (spawn_job_get_cgroup_path (job), ==, path);

  child = job_test_spawn_sleeper (job, 0, &error);
  g_assert_no_error (error);
  g_assert_true (job_test_pid_in (spawn_child_get_pid (child), path));
  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_true (job_test_child_gone (child, GONE_TIMEOUT_MS));
  spawn_child_unref (child);

  g_assert_no_errno (umount2 (sub, MNT_DETACH));
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

typedef struct {
  SpawnJob *job;
  gint done;
  guint spawned;
  guint outside;
} CloseRace;

static gpointer
job_test_close_race_closer (gpointer data)
{
  CloseRace *race = data;

  while (!g_atomic_int_get (&race->done))
    {
      GError *error = NULL;

      if (!spawn_job_close (race->job, GONE_TIMEOUT_MS, &error))
        {
          g_test_message ("close: %s", error->message);
          g_error_free (error);
        }
    }
  return NULL;
}

static void
test_job_close_race (gconstpointer data)
{
  g_autoptr (SpawnJob) probe = job_test_cgroup_job (data);
  g_autoptr (GPtrArray) children = g_ptr_array_new_with_free_func ((GDestroyNotify) spawn_child_unref);
  CloseRace race = { 0 };
  GThread *closer;
  GError *error = NULL;
  guint i;

  g_test_summary ("spawn_job_close() in one thread while another spawns into the job: "
                  "no child is born outside it, every one ends with the job, and no "
                  "cgroup directory is left");
  if (probe == NULL)
    return;
  race.job = spawn_job_new ();
  closer = g_thread_new ("closer", job_test_close_race_closer, &race);
  for (i = 0; i < 150; i++)
    {
      SpawnChild *child = job_test_spawn_sleeper (race.job, 0, &error);

      g_assert_no_error (error);
      g_ptr_array_add (children, child);
    }
  g_atomic_int_set (&race.done, TRUE);
  g_thread_join (closer);
  g_assert_true (spawn_job_close (race.job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  for (i = 0; i < children->len; i++)
    if (!job_test_child_gone (g_ptr_array_index (children, i), 5000))
      {
        race.outside++;
        spawn_child_send_signal (g_ptr_array_index (children, i), SIGKILL, NULL);
      }
  g_test_message ("%u of %u children outlived the job", race.outside, children->len);
  g_assert_cmpuint (race.outside, ==, 0);
  g_clear_object (&race.job);
  g_assert_cmpuint (job_test_count_cgroup_dirs (spawn_job_get_cgroup_path (probe)), ==, 1);
}

static void
test_job_process_set_job_running (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  g_autoptr (SpawnJob) other = spawn_job_new ();
  g_autoptr (SpawnProcess) proc = NULL;
  const char *argv[] = { testutil_helper, "sleep", "60000", NULL };
  SpawnChild *bystander;
  GError *error = NULL;

  g_test_summary ("kill() of a running SpawnProcess reaches the job it was started in, "
                  "not one set_job() named since, and leaves another job's tree alone");
  if (job == NULL)
    return;
  bystander = job_test_spawn_sleeper (other, 0, &error);
  g_assert_no_error (error);
  proc = spawn_process_new (argv);
  spawn_process_set_job (proc, job);
  testutil_start_ok (proc);
  spawn_process_set_job (proc, other);
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_wait_for_finished (proc, GONE_TIMEOUT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_term_sig (proc), ==, SIGKILL);
  g_assert_false (job_test_child_gone (bystander, 0));
  spawn_child_send_signal (bystander, SIGKILL, NULL);
  g_assert_true (spawn_child_wait (bystander, NULL, NULL, NULL));
  spawn_child_unref (bystander);
}

static void
test_job_children_let_go (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  GError *error = NULL;
  SpawnChild *child;
  int fds_before, pidfd;
  guint i;

  g_test_summary ("A job keeps no ended child: 300 spawns leave no descriptor behind, "
                  "and a KILL_ON_CLOSE child is killed when its last reference goes");
  if (job == NULL)
    return;
  fds_before = testutil_count_fds ();
  for (i = 0; i < 300; i++)
    {
      child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                               0, NULL, NULL, NULL, 0, &error);
      g_assert_no_error (error);
      g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
      spawn_child_unref (child);
    }
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);

  child = job_test_spawn_sleeper (job, SPAWN_CHILD_KILL_ON_CLOSE, &error);
  g_assert_no_error (error);
  pidfd = job_test_pidfd_open (spawn_child_get_pid (child));
  spawn_child_unref (child);
  g_assert_true (job_test_pidfd_gone (pidfd, GONE_TIMEOUT_MS));
  close (pidfd);
}

/* The process-group mode keeps a reference on each running child so that
 * it can signal the child's group after the caller let go; a close kills
 * those groups and must let the children go too, not keep their fds until
 * the next spawn or the job's finalization. */
static void
test_job_process_group_close_lets_go (gconstpointer data)
{
  g_autoptr (SpawnJob) job = NULL;
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  GError *error = NULL;
  SpawnChild *child;
  int fds_before, pidfd;

  g_test_summary ("A close of a process-group job kills the running children and keeps "
                  "no descriptor of them, nor of the ended ones, and says it cannot see "
                  "a process that left the groups");
  job = job_test_process_group_job (data);
  if (job == NULL)
    return;
  /* A first child outside the job, waited for, so that what the backend
   * sets up once (the sigchld backend's eventfd) is there already. */
  child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0, NULL,
                          NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
  spawn_child_unref (child);
  fds_before = testutil_count_fds ();
  job_test_run_one (job);
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_PROCESS_GROUP);
  child = job_test_spawn_sleeper (job, 0, &error);
  g_assert_no_error (error);
  pidfd = job_test_pidfd_open (spawn_child_get_pid (child));
  spawn_child_unref (child);

  g_assert_false (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "cannot be seen"));
  g_clear_error (&error);
  g_assert_true (job_test_pidfd_gone (pidfd, 0));
  close (pidfd);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
}

static void
test_job_sigterm_many (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  g_autofree char *reason = NULL;
  struct rlimit lim;
  GError *error = NULL;
  JobTree *tree;

  g_test_summary ("SIGTERM reaches every process of a job of 900 (cgroup.procs longer "
                  "than a page)");
  if (job == NULL)
    return;
  /* A pidfd on each of the 900: more than a guest's default 1024 fds
   * with what the sigchld backend keeps.  The rlimit is the process's:
   * raised in a subprocess, after a skip the parent shows. */
  g_assert_no_errno (getrlimit (RLIMIT_NOFILE, &lim));
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < 2048)
    {
      g_test_skip_printf ("RLIMIT_NOFILE's hard limit is %ju: a pidfd on each of 900 "
                          "processes needs more", (uintmax_t) lim.rlim_max);
      return;
    }
  if (!testutil_isolated ())
    return;
  lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? 4096 : MIN (lim.rlim_max, 4096);
  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &lim));
  tree = job_tree_spawn (job, 0, "tree", "900", NULL);
  if (tree->fork_errno == EAGAIN)
    {
      /* A pids.max above the job (a systemd unit's TasksMax) allows fewer:
       * not the job's doing, and its own limit is none. */
      guint reached = tree->pids->len;

      g_assert_true (spawn_job_kill (job, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (job_tree_count_alive (tree, GONE_TIMEOUT_MS), ==, 0);
      job_tree_free (tree);
      reason = g_strdup_printf ("fork failed with EAGAIN after %u processes: a pids limit "
                                "above the job (%s) allows fewer than 900", reached,
                                spawn_job_get_cgroup_path (job));
      testutil_skip_isolated (reason);
      return;
    }
  g_assert_cmpint (tree->fork_errno, ==, 0);
  g_assert_cmpuint (tree->pidfds->len, ==, 900);
  g_assert_true (spawn_job_send_signal (job, SIGTERM, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (job_tree_count_alive (tree, GONE_TIMEOUT_MS), ==, 0);
  g_assert_true (job_test_child_gone (tree->child, GONE_TIMEOUT_MS));
  job_tree_free (tree);
}

static void
test_job_nested (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  g_autofree char *path = NULL, *script = NULL;
  const char *argv[] = { "/bin/sh", "-c", NULL, NULL };
  GError *error = NULL;
  JobTree *tree;

  g_test_summary ("A program that makes a cgroup inside the job's (a nested job, a "
                  "container runtime): SIGTERM reaches its processes, close removes "
                  "both directories");
  if (job == NULL)
    return;
  path = g_strdup (spawn_job_get_cgroup_path (job));
  /* The shell moves itself into a cgroup of its own below the job's, then
   * becomes a job-helper there. */
  script = g_strdup_printf ("mkdir \"%s/inner\" && echo $$ >\"%s/inner/cgroup.procs\" && "
                            "exec \"%s\" tree 2", path, path, job_helper);
  argv[2] = script;
  tree = g_new0 (JobTree, 1);
  tree->pidfds = g_array_new (FALSE, FALSE, sizeof (int));
  tree->pids = g_array_new (FALSE, FALSE, sizeof (int));
  {
    int out = -1;

    tree->child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL,
                                   NULL, 0, NULL, &out, NULL, 0, &error);
    g_assert_no_error (error);
    job_tree_read (tree, out);
    close (out);
  }
  g_assert_cmpuint (tree->pidfds->len, ==, 2);
  g_assert_true (job_test_pid_in (g_array_index (tree->pids, int, 0), path));
  g_assert_true (spawn_job_send_signal (job, SIGTERM, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (job_tree_count_alive (tree, GONE_TIMEOUT_MS), ==, 0);
  g_assert_true (spawn_child_wait (tree->child, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  job_tree_free (tree);
}

static void
test_job_process_dispose_unstarted (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  SpawnProcess *proc;
  SpawnChild *child;
  GError *error = NULL;

  g_test_summary ("Dropping a SpawnProcess that shares a job and never started kills "
                  "nothing of the job");
  if (job == NULL)
    return;
  child = job_test_spawn_sleeper (job, 0, &error);
  g_assert_no_error (error);
  proc = spawn_process_new (argv);
  spawn_process_set_job (proc, job);
  g_object_unref (proc);
  g_assert_false (job_test_child_gone (child, 1000));
  g_assert_false (spawn_job_is_empty (job));
  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
  spawn_child_unref (child);
}

static void
test_job_cpu_time_reuse (gconstpointer data)
{
  g_autoptr (SpawnJob) job = job_test_cgroup_job (data);
  const char *argv[] = { job_helper, "busy-tree", "1", "200", NULL };
  GError *error = NULL;
  guint64 closed, again;
  SpawnChild *child;

  g_test_summary ("A job's CPU time never goes backwards: after close and a new spawn "
                  "it is the sum of its cgroups'");
  if (job == NULL)
    return;
  child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
  spawn_child_unref (child);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  closed = spawn_job_get_cpu_usec (job, NULL, NULL);
  g_assert_cmpuint (closed, >=, 190000);
  child = job_test_spawn_sleeper (job, 0, &error);
  g_assert_no_error (error);
  again = spawn_job_get_cpu_usec (job, NULL, NULL);
  g_assert_cmpuint (again, >=, closed);
  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
  spawn_child_unref (child);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (spawn_job_get_cpu_usec (job, NULL, NULL), >=, again);
}

static void
test_group_subprocess_flags (gconstpointer data G_GNUC_UNUSED)
{
  static const SpawnProcessFlags own[] = {
    SPAWN_PROCESS_FLAGS_NEW_SESSION, SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP,
  };
  gsize i;

  g_test_summary ("set_subprocess_flags() keeps NEW_SESSION and NEW_PROCESS_GROUP, "
                  "which GSubprocessFlags cannot say");
  for (i = 0; i < G_N_ELEMENTS (own); i++)
    {
      g_autoptr (SpawnProcess) proc = spawn_process_new (NULL);

      spawn_process_set_flags (proc, own[i] | SPAWN_PROCESS_FLAGS_INHERIT_FDS);
      spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDOUT_PIPE);
      g_assert_cmpint (spawn_process_get_flags (proc), ==, own[i]);
    }
}

/* Issue 35, item 2: no silent fallback. */

static void
test_job_fallback_honest (gconstpointer data)
{
  g_autoptr (SpawnJob) job = NULL;
  gboolean empty, closed, empty_after;
  GError *error = NULL;
  JobTree *tree;

  g_test_summary ("In the process-group mode a job never says TRUE about a tree it cannot "
                  "see: with a setsid() daemon left, is_empty() and close() say FALSE, and "
                  "close() says why");
  job = job_test_process_group_job (data);
  if (job == NULL)
    return;
  g_assert_true (spawn_job_is_empty (job));
  tree = job_tree_start_full (job, 0, "all", NULL, NULL);
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_PROCESS_GROUP);
  g_assert_true (spawn_job_kill (job, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (tree->child, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 0), GONE_TIMEOUT_MS));
  g_assert_true (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 1), GONE_TIMEOUT_MS));
  /* The setsid() daemon runs on, unseen. */
  g_assert_false (job_test_pidfd_gone (g_array_index (tree->pidfds, int, 2), 0));
  empty = spawn_job_is_empty (job);
  closed = spawn_job_close (job, GONE_TIMEOUT_MS, &error);
  empty_after = spawn_job_is_empty (job);
  /* The daemon holds our stderr: gone before anything can fail, or the
   * test's parent would wait for it. */
  job_tree_free (tree);
  g_assert_false (empty);
  g_assert_false (closed);
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_FAILED);
  g_test_message ("close: %s", error->message);
  g_assert_nonnull (strstr (error->message, "LIBSPAWN_JOB_MODE"));
  g_clear_error (&error);
  g_assert_false (empty_after);
}

static void
test_job_require_cgroup (gconstpointer data)
{
  g_autoptr (SpawnJob) required = NULL, lenient = NULL;
  g_autoptr (GError) reason = NULL;
  const char *argv[] = { "/bin/true", NULL };
  GError *error = NULL;
  SpawnChild *child;

  g_test_summary ("Where our cgroup is not ours to write (an unprivileged user, no "
                  "delegation) a job that requires a cgroup refuses the spawn with the "
                  "reason; one that does not falls back and keeps the reason");
  if (!g_test_subprocess () && geteuid () != 0)
    {
      g_test_skip ("needs root: the case becomes user nobody in a subprocess");
      return;
    }
  if (!testutil_use_backend (data))
    return;
  if (!g_test_subprocess ())
    {
      g_autoptr (SpawnJob) probe = job_test_cgroup_job (data);

      if (probe == NULL)
        return;
    }
  if (!testutil_isolated ())
    return;
  g_assert_no_errno (setresgid (65534, 65534, 65534));
  g_assert_no_errno (setresuid (65534, 65534, 65534));

  required = spawn_job_new ();
  spawn_job_set_require_cgroup (required, TRUE);
  g_assert_true (spawn_job_get_require_cgroup (required));
  g_assert_null (spawn_job_dup_fallback_error (required));
  child = spawn_job_spawn (required, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                           0, NULL, NULL, NULL, 0, &error);
  g_assert_null (child);
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_ACCES);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, "/bin/true"));
  g_assert_nonnull (strstr (error->message, "not delegated"));
  g_clear_error (&error);
  g_assert_cmpint (spawn_job_get_mode (required), ==, SPAWN_JOB_MODE_NONE);
  reason = spawn_job_dup_fallback_error (required);
  g_assert_error (reason, SPAWN_ERROR, SPAWN_ERROR_ACCES);
  g_clear_error (&reason);

  lenient = spawn_job_new ();
  child = spawn_job_spawn (lenient, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                           0, NULL, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, NULL));
  spawn_child_unref (child);
  g_assert_cmpint (spawn_job_get_mode (lenient), ==, SPAWN_JOB_MODE_PROCESS_GROUP);
  reason = spawn_job_dup_fallback_error (lenient);
  g_assert_error (reason, SPAWN_ERROR, SPAWN_ERROR_ACCES);
  g_assert_nonnull (strstr (reason->message, "not ours to write"));
}

/* Our cgroup as /proc/self/cgroup names it ("/a/b"), or NULL. */
static char *
job_test_own_cgroup (void)
{
  g_autofree char *contents = NULL;
  const char *line, *end;

  if (!g_file_get_contents ("/proc/self/cgroup", &contents, NULL, NULL))
    return NULL;
  line = g_str_has_prefix (contents, "0::") ? contents : strstr (contents, "\n0::");
  if (line == NULL)
    return NULL;
  line += line[0] == '\n' ? 4 : 3;
  end = strchr (line, '\n');
  return g_strndup (line, end != NULL ? (gsize) (end - line) : strlen (line));
}

/* Whether we run in a unit of our user's systemd instance; if not, the
 * case skips (or fails where the runner expects it). */
static gboolean
job_test_in_user_manager (void)
{
  g_autofree char *own = job_test_own_cgroup ();
  g_autofree char *needle = g_strdup_printf ("/user@%u.service/", (unsigned) getuid ());

  if (own != NULL && strstr (own, needle) != NULL)
    return TRUE;
  if (strcmp (job_test_expect (), "systemd-scope") == 0)
    g_test_fail_printf ("expected to run in a unit of user@%u.service, but our cgroup is %s",
                        (unsigned) getuid (), own ? own : "unknown");
  else
    g_test_skip ("not in a unit of our user's systemd instance (tests/systemd-guest runs "
                 "this case there)");
  return FALSE;
}

static void
test_job_systemd_scope (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  g_autoptr (SpawnJob) job = NULL;
  g_autofree char *before = NULL, *after = NULL, *scope = NULL;
  g_autofree char *scope_name = NULL, *keeper_procs = NULL, *control = NULL;
  g_autofree char *path = NULL;
  GError *error = NULL;
  SpawnChild *child;

  g_test_summary ("In a unit of our user's systemd instance, which is not ours to write "
                  "below, a job's cgroup (with a memory limit) is made in a transient "
                  "scope with Delegate=yes that the user manager made for us; the "
                  "application itself stays where it was");
  if (!testutil_use_backend (data))
    return;
  if (!job_test_in_user_manager ())
    return;
  before = job_test_own_cgroup ();
  job = spawn_job_new ();
  spawn_job_set_memory_max (job, 64 << 20);
  child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, &error));
  g_assert_no_error (error);
  spawn_child_unref (child);
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_CGROUP);
  path = g_strdup (spawn_job_get_cgroup_path (job));
  scope = g_path_get_dirname (path);
  scope_name = g_path_get_basename (scope);
  g_test_message ("job cgroup %s", path);
  g_assert_true (g_str_has_prefix (scope_name, "libspawn-"));
  g_assert_true (g_str_has_suffix (scope_name, ".scope"));
  g_assert_false (g_str_has_suffix (scope, before));
  /* The scope holds no process of its own (its keeper is in a leaf), so
   * it could enable the memory controller for the job. */
  keeper_procs = g_build_filename (scope, "keeper", "cgroup.procs", NULL);
  {
    g_autofree char *procs = NULL, *own = g_build_filename (scope, "cgroup.procs", NULL);

    g_assert_true (g_file_get_contents (keeper_procs, &procs, NULL, NULL));
    g_assert_cmpstr (procs, !=, "");
    g_clear_pointer (&procs, g_free);
    g_assert_true (g_file_get_contents (own, &procs, NULL, NULL));
    g_assert_cmpstr (procs, ==, "");
  }
  control = g_build_filename (scope, "cgroup.subtree_control", NULL);
  {
    g_autofree char *controllers = NULL;

    g_assert_true (g_file_get_contents (control, &controllers, NULL, NULL));
    g_assert_nonnull (strstr (controllers, "memory"));
  }
  after = job_test_own_cgroup ();
  g_assert_cmpstr (after, ==, before);
  g_assert_true (spawn_job_close (job, GONE_TIMEOUT_MS, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_job_systemd_no_bus (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  g_autoptr (SpawnJob) job = NULL;
  g_autoptr (SpawnJob) limited = NULL;
  g_autofree char *children = NULL, *children_path = NULL;
  GError *error = NULL;
  SpawnChild *child;

  g_test_summary ("In a unit of our user's systemd instance but without a session bus "
                  "(none at the address given): a job falls back on process groups, a "
                  "job with a limit fails with an error that names the session bus, and "
                  "no keeper process is left behind");
  if (!testutil_use_backend (data))
    return;
  if (!job_test_in_user_manager ())
    return;
  /* The answer is kept for the life of the process: a process of its own. */
  if (!testutil_isolated ())
    return;
  g_setenv ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/libspawn-test-bus", TRUE);
  limited = spawn_job_new ();
  spawn_job_set_memory_max (limited, 64 << 20);
  child = spawn_job_spawn (limited, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                           0, NULL, NULL, NULL, 0, &error);
  g_assert_null (child);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "with limits"));
  g_assert_nonnull (strstr (error->message, "session bus"));
  g_clear_error (&error);

  job = spawn_job_new ();
  child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, &error));
  g_assert_no_error (error);
  spawn_child_unref (child);
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_PROCESS_GROUP);
  /* No child of ours runs any more: no keeper was started (or it was
   * reaped). */
  children_path = g_strdup_printf ("/proc/%d/task/%d/children", (int) getpid (), (int) getpid ());
  g_assert_true (g_file_get_contents (children_path, &children, NULL, NULL));
  g_assert_cmpstr (g_strstrip (children), ==, "");
}

static void
test_job_refused (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  g_autoptr (SpawnJob) job = NULL;
  g_autoptr (SpawnJob) limited = NULL;
  g_autoptr (SpawnJob) required = NULL;
  g_autoptr (GError) reason = NULL;
  GError *error = NULL;
  SpawnChild *child;

  g_test_summary ("Where no cgroup is ours to write (a system service's user, a "
                  "container without delegation): a job falls back on process groups, "
                  "and a job with a limit or that requires the cgroup mode refuses to "
                  "start its program with an error that says which cgroup it could not have");
  if (!testutil_use_backend (data))
    return;
  if (strcmp (job_test_expect (), "refused") != 0)
    {
      g_test_skip ("only where no cgroup is delegated to us (tests/systemd-guest runs it "
                   "as a system service's user, LIBSPAWN_TEST_JOB_EXPECT=refused)");
      return;
    }
  job = spawn_job_new ();
  child = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_child_wait (child, NULL, NULL, &error));
  g_assert_no_error (error);
  spawn_child_unref (child);
  g_assert_cmpint (spawn_job_get_mode (job), ==, SPAWN_JOB_MODE_PROCESS_GROUP);
  g_assert_null (spawn_job_get_cgroup_path (job));
  /* The fallback says why. */
  reason = spawn_job_dup_fallback_error (job);
  g_assert_error (reason, SPAWN_ERROR, SPAWN_ERROR_ACCES);
  g_test_message ("fallback: %s", reason->message);

  /* A job that requires the cgroup mode refuses as one with limits does. */
  required = spawn_job_new ();
  spawn_job_set_require_cgroup (required, TRUE);
  child = spawn_job_spawn (required, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                           0, NULL, NULL, NULL, 0, &error);
  g_assert_null (child);
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_ACCES);
  g_clear_error (&error);
  g_assert_null (spawn_job_get_cgroup_path (required));

  limited = spawn_job_new ();
  spawn_job_set_memory_max (limited, 64 << 20);
  child = spawn_job_spawn (limited, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL,
                           0, NULL, NULL, NULL, 0, &error);
  g_assert_null (child);
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_ACCES);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "with limits"));
  g_assert_nonnull (strstr (error->message, "/sys/fs/cgroup"));
  g_clear_error (&error);
  g_assert_null (spawn_job_get_cgroup_path (limited));
}

static const TestutilCase job_cases[] = {
  { "stop-tree", test_job_stop_tree },
  { "outlives-child", test_job_outlives_child },
  { "cpu-time", test_job_cpu_time },
  { "many", test_job_many },
  { "memory-limit", test_job_memory_limit },
  { "born-in-cgroup", test_job_born_in_cgroup },
  { "process", test_job_process },
  { "fallback-forced", test_job_fallback_forced },
  { "fallback-no-cgroup", test_job_fallback_no_cgroup },
  { "app-killed", test_job_app_killed },
  { "parallel-guardian", test_job_parallel_guardian },
  { "close-failed", test_job_close_failed },
  { "close-race", test_job_close_race },
  { "process-set-job-running", test_job_process_set_job_running },
  { "children-let-go", test_job_children_let_go },
  { "process-group-close-lets-go", test_job_process_group_close_lets_go },
  { "sigterm-many", test_job_sigterm_many },
  { "nested", test_job_nested },
  { "process-dispose-unstarted", test_job_process_dispose_unstarted },
  { "cpu-time-reuse", test_job_cpu_time_reuse },
  { "fallback-honest", test_job_fallback_honest },
  { "require-cgroup", test_job_require_cgroup },
  { "systemd-scope", test_job_systemd_scope },
  { "systemd-no-bus", test_job_systemd_no_bus },
  { "refused", test_job_refused },
};

int
main (int argc, char **argv)
{
  g_autofree char *dir = NULL;

  testutil_init (&argc, &argv);
  dir = g_path_get_dirname (testutil_helper);
  job_helper = g_build_filename (dir, "job-helper", NULL);
  testutil_add_backend_cases ("/spawn/group", group_cases, G_N_ELEMENTS (group_cases));
  testutil_add_backend_cases ("/spawn/job", job_cases, G_N_ELEMENTS (job_cases));
  return g_test_run ();
}
