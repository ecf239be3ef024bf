/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* process-status-test.c - GSubprocess's status accessors on SpawnProcess:
 * get_if_exited(), get_if_signaled(), get_term_sig(), get_successful(),
 * get_status() and send_signal(), on every backend, before a start, after
 * an exit and after a signal.
 */
#include <signal.h>

#include "testutil.h"

static void
wait_finished (SpawnProcess *proc)
{
  GError *error = NULL;

  g_assert_true (spawn_process_wait_for_finished (proc, 30000, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
}

static void
test_not_started (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;

  g_test_summary ("before a start the accessors answer FALSE, 0 and -1 (where "
                  "GSubprocess has a precondition) and send_signal() fails with "
                  "NOT_RUNNING");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_sh_process ("exit 0");
  g_assert_false (spawn_process_get_if_exited (proc));
  g_assert_false (spawn_process_get_if_signaled (proc));
  g_assert_false (spawn_process_get_successful (proc));
  g_assert_cmpint (spawn_process_get_term_sig (proc), ==, 0);
  g_assert_cmpint (spawn_process_get_status (proc), ==, -1);
  g_assert_false (spawn_process_send_signal (proc, SIGTERM, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_clear_error (&error);
  g_object_unref (proc);
  testutil_assert_no_children ();
}

static void
test_exited (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;
  int status;

  g_test_summary ("exit 0 is successful with wait status 0; exit 3 is exited, "
                  "not successful, and its status is what "
                  "g_spawn_check_wait_status() reads as G_SPAWN_EXIT_ERROR 3");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_sh_process ("exit 0");
  testutil_start_ok (proc);
  wait_finished (proc);
  g_assert_true (spawn_process_get_if_exited (proc));
  g_assert_false (spawn_process_get_if_signaled (proc));
  g_assert_true (spawn_process_get_successful (proc));
  g_assert_cmpint (spawn_process_get_term_sig (proc), ==, 0);
  g_assert_cmpint (spawn_process_get_status (proc), ==, 0);
  g_object_unref (proc);

  proc = testutil_sh_process ("exit 3");
  testutil_start_ok (proc);
  wait_finished (proc);
  g_assert_true (spawn_process_get_if_exited (proc));
  g_assert_false (spawn_process_get_if_signaled (proc));
  g_assert_false (spawn_process_get_successful (proc));
  g_assert_cmpint (spawn_process_get_term_sig (proc), ==, 0);
  status = spawn_process_get_status (proc);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 3);
  g_assert_false (g_spawn_check_wait_status (status, &error));
  g_assert_error (error, G_SPAWN_EXIT_ERROR, 3);
  g_clear_error (&error);
  g_object_unref (proc);
  testutil_assert_no_children ();
}

static void
test_signaled (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;
  int status;

  g_test_summary ("send_signal (SIGUSR1) ends a process that waits on its stdin: "
                  "it is signaled, not exited, not successful, term_sig is "
                  "SIGUSR1 and the wait status says so; a second send_signal "
                  "after the end fails with NOT_RUNNING");
  if (!testutil_use_backend (data))
    return;
  /* sh blocks in read on its stdin pipe, which we never close. */
  proc = testutil_sh_process ("read x; exit 0");
  testutil_start_ok (proc);
  g_assert_true (spawn_process_send_signal (proc, SIGUSR1, &error));
  g_assert_no_error (error);
  wait_finished (proc);
  g_assert_false (spawn_process_get_if_exited (proc));
  g_assert_true (spawn_process_get_if_signaled (proc));
  g_assert_false (spawn_process_get_successful (proc));
  g_assert_cmpint (spawn_process_get_term_sig (proc), ==, SIGUSR1);
  status = spawn_process_get_status (proc);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (WTERMSIG (status), ==, SIGUSR1);
  g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_CRASH);
  g_assert_false (spawn_process_send_signal (proc, SIGUSR1, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_clear_error (&error);
  g_object_unref (proc);
  testutil_assert_no_children ();
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "not-started", test_not_started },
    { "exited", test_exited },
    { "signaled", test_signaled },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/status", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
