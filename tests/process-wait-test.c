/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* SpawnProcess: the blocking waits and execute() (the library's
 * process/wait.c).
 *
 * wait_for_*() timing out, polling with a timeout of 0, each returning
 * after the one thing it waits for, a poll() that fails, a wait on a
 * context another thread owns; execute() to the end, with a timeout, and
 * from 4 threads at once.
 *
 * The cases follow what QProcess's autotest covers.  Every case runs once
 * per backend (/spawn/process/<backend>/...), forced with
 * spawn_set_backend(); a backend the kernel lacks is skipped with the
 * reason.  Cases that change process-wide state (RLIMIT_NOFILE, the global
 * default context) run in a subprocess.  Waits poll for readiness with a
 * bound; nothing sleeps to synchronise.  The rest of /spawn/process is in
 * process-run-test.c, process-launch-test.c, process-io-test.c and
 * process-edge-test.c.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include "process-testutil.h"

static void
test_wait_timeout (gconstpointer data)
{
  GError *error = NULL;
  gint64 t0, elapsed;
  SpawnProcess *proc;
  Events ev;
  GPid pid;

  g_test_summary ("wait_for_finished() and wait_for_ready_read() on a "
                  "sleeping, silent child time out with TIMED_OUT after "
                  "about the time asked, and the child runs on");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("sleep", "100000", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  pid = spawn_process_get_pid (proc);

  t0 = g_get_monotonic_time ();
  g_assert_false (spawn_process_wait_for_finished (proc, 300, NULL, &error));
  elapsed = g_get_monotonic_time () - t0;
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
  g_clear_error (&error);
  g_test_message ("wait_for_finished (300) took %" G_GINT64_FORMAT " us", elapsed);
  g_assert_cmpint (elapsed, >=, 290 * 1000);
  g_assert_cmpint (elapsed, <, 10 * G_USEC_PER_SEC);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  g_assert_cmpint (ev.finished, ==, 0);
  assert_alive (pid);

  t0 = g_get_monotonic_time ();
  g_assert_false (spawn_process_wait_for_ready_read (proc, 200, NULL, &error));
  elapsed = g_get_monotonic_time () - t0;
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
  g_clear_error (&error);
  g_assert_cmpint (elapsed, >=, 190 * 1000);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  assert_alive (pid);

  /* Still ours to end. */
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_no_error (error);
  wait_finished_ok (proc, WAIT_MS);
  assert_crashed (proc, &ev, SIGKILL);
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_execute (gconstpointer data)
{
  const char *both[] = { testutil_helper, "interleave", "3", NULL };
  const char *seven[] = { testutil_helper, "exit", "7", NULL };
  const char *cat[] = { testutil_helper, "cat", NULL };
  const char *missing[] = { "no-such-program-anywhere", NULL };
  const char *sleeper[] = { testutil_helper, "sleep", "100000", NULL };
  GBytes *out = NULL, *err = NULL;
  GError *error = NULL;
  SpawnExitInfo info;
  gint64 t0, elapsed;

  g_test_summary ("execute() runs a program to its end and returns its "
                  "output and exit; stdin is /dev/null; a timeout kills and "
                  "reaps it and fails with TIMED_OUT");
  if (!testutil_use_backend (data))
    return;
  g_assert_true (spawn_process_execute (both, WAIT_MS, &out, &err, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out),
                   "out 0\nout 1\nout 2\n", 18);
  g_assert_cmpmem (g_bytes_get_data (err, NULL), g_bytes_get_size (err),
                   "err 0\nerr 1\nerr 2\n", 18);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 0);
  /* autoreap: stock 7.2's exit information has no CPU times (docs/api.md). */
  g_assert_cmpint (info.have_times, ==, testutil_backend_has_times (testutil_backend (data)));
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);

  /* An exit status is a result, not an error. */
  g_assert_true (spawn_process_execute (seven, WAIT_MS, &out, &err, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 7);
  g_assert_nonnull (out);
  g_assert_cmpuint (g_bytes_get_size (out), ==, 0);
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);

  /* cat would wait for ever on a pipe; on /dev/null it ends. */
  g_assert_true (spawn_process_execute (cat, WAIT_MS, &out, &err, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 0);
  g_assert_cmpuint (g_bytes_get_size (out), ==, 0);
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);

  g_assert_false (spawn_process_execute (missing, WAIT_MS, &out, &err, &info, NULL, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);

  t0 = g_get_monotonic_time ();
  g_assert_false (spawn_process_execute (sleeper, 300, &out, &err, &info, NULL, &error));
  elapsed = g_get_monotonic_time () - t0;
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
  g_clear_error (&error);
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);
  g_test_message ("timed out after %" G_GINT64_FORMAT " us", elapsed);
  g_assert_cmpint (elapsed, >=, 290 * 1000);
  g_assert_cmpint (elapsed, <, 10 * G_USEC_PER_SEC);
  testutil_assert_no_children ();
}

/* ---- defects found by review and by Qt's tst_qprocess ---- */

static void
test_wait_zero (gconstpointer data)
{
  g_autofree guint8 *input = pattern (1024 * 1024);
  GError *error = NULL;
  SpawnProcess *proc;
  gint64 guard;
  Events ev;
  guint64 polls;

  g_test_summary ("wait_for_*() with a timeout of 0 polls once: "
                  "while (!wait_for_finished (p, 0)) work(); ends, and so "
                  "do the same loops over wait_for_ready_read() and "
                  "wait_for_bytes_written()");
  if (!testutil_use_backend (data))
    return;
  /* A hang guard only: each loop ends in milliseconds when all is well. */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, input, 1024 * 1024, &error));
  g_assert_no_error (error);
  guard = g_get_monotonic_time () + (gint64) WAIT_MS * 1000;
  for (polls = 0; spawn_process_get_bytes_to_write (proc) > 0; polls++)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, guard);
      if (!spawn_process_wait_for_bytes_written (proc, 0, NULL, &error))
        {
          g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
          g_clear_error (&error);
        }
      collect_channel (proc, SPAWN_PROCESS_STDOUT, ev.out);
    }
  g_assert_cmpuint (ev.written, ==, 1024 * 1024);
  spawn_process_close_write_channel (proc);
  while (ev.out->len < 1024 * 1024)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, guard);
      if (!spawn_process_wait_for_ready_read (proc, 0, NULL, &error))
        {
          g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
          g_clear_error (&error);
        }
      collect_channel (proc, SPAWN_PROCESS_STDOUT, ev.out);
    }
  assert_same_bytes (ev.out->data, ev.out->len, input, 1024 * 1024);
  while (!spawn_process_wait_for_finished (proc, 0, NULL, &error))
    {
      /* The last wait_for_ready_read() may have met the exit along with
       * the last bytes and ended the run, as QProcess's waitForReadyRead()
       * does: then there is nothing left to wait for. */
      if (ev.finished == 1 &&
          g_error_matches (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING))
        {
          g_clear_error (&error);
          break;
        }
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
      g_clear_error (&error);
      g_assert_cmpint (g_get_monotonic_time (), <, guard);
    }
  g_assert_no_error (error);
  assert_exited (proc, &ev, 0);
  g_test_message ("%" G_GUINT64_FORMAT " polls for bytes written", polls);
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_wait_one_thing (gconstpointer data)
{
  g_autofree guint8 *input = pattern (1024 * 1024);
  GError *error = NULL;
  SpawnProcess *proc;
  GString *got;
  Events ev;
  int round, i;

  g_test_summary ("wait_for_bytes_written() returns after the write and "
                  "wait_for_ready_read() after the read, leaving the end for "
                  "wait_for_finished(): write; close_write_channel; while "
                  "(bytes_to_write) wait_for_bytes_written(); wait_for_finished() "
                  "works, and so does reading until all is in, then waiting");
  if (!testutil_use_backend (data))
    return;
  for (round = 0; round < 10; round++)
    {
      proc = testutil_helper_process ("cat", NULL);
      events_watch (&ev, proc);
      spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_DISCARD);
      testutil_start_ok (proc);
      g_assert_true (spawn_process_write (proc, input, 1024 * 1024, &error));
      g_assert_no_error (error);
      spawn_process_close_write_channel (proc);
      for (i = 0; spawn_process_get_bytes_to_write (proc) > 0; i++)
        {
          g_assert_cmpint (i, <, 100000);
          g_assert_true (spawn_process_wait_for_bytes_written (proc, WAIT_MS, NULL, &error));
          g_assert_no_error (error);
        }
      wait_finished_ok (proc, WAIT_MS);
      assert_exited (proc, &ev, 0);
      g_assert_cmpuint (ev.written, ==, 1024 * 1024);
      g_object_unref (proc);
      events_clear (&ev);

      /* It prints its last line and ends at once. */
      got = g_string_new (NULL);
      proc = testutil_helper_process ("lines", "3", NULL);
      events_watch (&ev, proc);
      testutil_start_ok (proc);
      while (!g_str_has_suffix (got->str, "end"))
        {
          g_autofree char *more = NULL;

          g_assert_true (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error));
          g_assert_no_error (error);
          more = read_all_str (proc, SPAWN_PROCESS_STDOUT);
          g_string_append (got, more);
        }
      g_assert_cmpstr (got->str, ==, "line 0\nline 1\nline 2\nend");
      g_string_free (got, TRUE);
      wait_finished_ok (proc, WAIT_MS);
      assert_exited (proc, &ev, 0);
      g_object_unref (proc);
      events_clear (&ev);
    }
}

static void
test_poll_fails (gconstpointer data)
{
  struct rlimit saved, low;
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("a poll() that fails (here EINVAL: more descriptors than "
                  "RLIMIT_NOFILE) makes the wait return FALSE with "
                  "READ_ERROR instead of aborting; the process is unharmed");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_no_errno (getrlimit (RLIMIT_NOFILE, &saved));
  low = saved;
  low.rlim_cur = 1;
  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &low));
  g_assert_false (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &saved));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_READ_ERROR);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  spawn_process_close_write_channel (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 0);
  g_object_unref (proc);
  events_clear (&ev);
}

typedef struct {
  gint done;               /* workers that have ended */
  gint bad;                /* executions that went wrong */
} ExecuteRun;

static gpointer
execute_worker (gpointer data)
{
  const char *argv[] = { testutil_helper, "lines", "50", NULL };
  g_autofree char *want = NULL;
  ExecuteRun *run = data;
  GString *str = g_string_new (NULL);
  int i, l;

  for (l = 0; l < 50; l++)
    g_string_append_printf (str, "line %d\n", l);
  g_string_append (str, "end");
  want = g_string_free (str, FALSE);
  /* No thread-default context pushed: the global default one is ours too,
   * and the main thread runs it meanwhile. */
  for (i = 0; i < 50; i++)
    {
      GBytes *out = NULL, *err = NULL;
      GError *error = NULL;
      SpawnExitInfo info;

      if (!spawn_process_execute (argv, WAIT_MS, &out, &err, &info, NULL, &error) ||
          info.kind != SPAWN_EXIT_EXITED || info.status != 0 ||
          g_bytes_get_size (out) != strlen (want) ||
          memcmp (g_bytes_get_data (out, NULL), want, strlen (want)) != 0 ||
          g_bytes_get_size (err) != 0)
        {
          g_test_message ("execute %d: %s", i, error ? error->message : "wrong result");
          g_atomic_int_inc (&run->bad);
        }
      g_clear_error (&error);
      g_clear_pointer (&out, g_bytes_unref);
      g_clear_pointer (&err, g_bytes_unref);
    }
  g_atomic_int_inc (&run->done);
  g_main_context_wakeup (NULL);
  return NULL;
}

static gboolean
workers_done (gpointer data)
{
  ExecuteRun *run = data;

  return g_atomic_int_get (&run->done) == 4;
}

static void
test_execute_threads (gconstpointer data)
{
  ExecuteRun run = { 0, 0 };
  GThread *threads[4];
  int i;

  g_test_summary ("execute() from 4 threads that pushed no context, while "
                  "the main thread runs the global default context: no other "
                  "thread's loop dispatches the process execute() waits for "
                  "(no crash), and every output is right");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  for (i = 0; i < 4; i++)
    threads[i] = g_thread_new ("execute", execute_worker, &run);
  g_assert_true (iterate_until (workers_done, &run, 600000));
  for (i = 0; i < 4; i++)
    g_thread_join (threads[i]);
  g_assert_cmpint (run.bad, ==, 0);
  testutil_assert_no_children ();
}

typedef struct {
  SpawnProcess *proc;
  Events *ev;
  gboolean waited;
  GError *error;
} ForeignWait;

static gpointer
foreign_wait_worker (gpointer data)
{
  ForeignWait *fw = data;

  /* No context pushed: the process is watched from the global default
   * context, which the main thread owns. */
  fw->proc = testutil_helper_process ("exit", "6", NULL);
  events_watch (fw->ev, fw->proc);
  testutil_start_ok (fw->proc);
  fw->waited = spawn_process_wait_for_finished (fw->proc, WAIT_MS, NULL, &fw->error);
  return NULL;
}

static void
test_wait_foreign_context (gconstpointer data)
{
  ForeignWait fw = { NULL, NULL, FALSE, NULL };
  GMainContext *ctx = g_main_context_default ();
  Events ev;

  g_test_summary ("a blocking wait on a process whose context another thread "
                  "owns (runs) fails with WRONG_THREAD instead of racing that "
                  "thread's dispatch; the owner then sees it finish");
  if (!testutil_use_backend (data))
    return;
  fw.ev = &ev;
  /* Owned by us, as a thread running the loop owns it. */
  g_assert_true (g_main_context_acquire (ctx));
  g_thread_join (g_thread_new ("foreign-wait", foreign_wait_worker, &fw));
  g_main_context_release (ctx);
  g_assert_false (fw.waited);
  g_assert_error (fw.error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRONG_THREAD);
  g_clear_error (&fw.error);
  g_assert_cmpint (ev.finished, ==, 0);
  run_until_finished (&ev);
  assert_exited (fw.proc, &ev, 6);
  g_assert_true (ev.finished_thread == g_thread_self ());
  g_object_unref (fw.proc);
  events_clear (&ev);
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "wait-timeout", test_wait_timeout },
    { "execute", test_execute },
    { "wait-zero", test_wait_zero },
    { "wait-one-thing", test_wait_one_thing },
    { "poll-fails", test_poll_fails },
    { "execute-threads", test_execute_threads },
    { "wait-foreign-context", test_wait_foreign_context },
  };

  testutil_init (&argc, &argv);

  testutil_add_backend_cases ("/spawn/process", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
