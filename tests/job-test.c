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
#include <sys/syscall.h>
#include <unistd.h>

#include <libspawn/libspawn.h>
#include "testutil.h"

#define GONE_TIMEOUT_MS 5000

static char *job_helper;

/* What a helper left: its descendants, as pidfds. */
typedef struct {
  SpawnChild *child;
  GArray *pidfds;           /* int */
  GArray *pids;             /* int */
  char *first_line;
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

      g_assert_cmpint (n, ==, 1);
      if (c != '\n')
        {
          g_string_append_c (line, c);
          continue;
        }
      if (strcmp (line->str, "ready") == 0)
        break;
      if (tree->first_line == NULL)
        tree->first_line = g_strdup (line->str);
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

/* job-helper MODE [ARG] with @child_flags, read to "ready". */
static JobTree *
job_tree_start (SpawnChildFlags child_flags, const char *mode, const char *arg)
{
  const char *argv[] = { job_helper, mode, arg, NULL };
  GError *error = NULL;
  JobTree *tree = g_new0 (JobTree, 1);
  int out = -1;

  tree->pidfds = g_array_new (FALSE, FALSE, sizeof (int));
  tree->pids = g_array_new (FALSE, FALSE, sizeof (int));
  tree->child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1,
                                     NULL, NULL, 0, NULL, &out, NULL, child_flags,
                                     &error);
  g_assert_no_error (error);
  job_tree_read (tree, out);
  close (out);
  return tree;
}

/* Whether the process behind @pidfd ends within @timeout_ms. */
static gboolean
job_test_pidfd_gone (int pidfd, int timeout_ms)
{
  struct pollfd pfd = { pidfd, POLLIN, 0 };

  return poll (&pfd, 1, timeout_ms) == 1;
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

static const TestutilCase group_cases[] = {
  { "ids", test_group_ids },
  { "signal", test_group_signal },
  { "not-leader", test_group_not_leader },
  { "process-terminate", test_group_process_terminate },
};

int
main (int argc, char **argv)
{
  g_autofree char *dir = NULL;

  testutil_init (&argc, &argv);
  dir = g_path_get_dirname (testutil_helper);
  job_helper = g_build_filename (dir, "job-helper", NULL);
  testutil_add_backend_cases ("/spawn/group", group_cases, G_N_ELEMENTS (group_cases));
  return g_test_run ();
}
