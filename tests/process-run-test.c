/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* SpawnProcess: one run, from start() to its end (the library's
 * process/run.c and status.c, and process.c's dispose).
 *
 * The exit codes, states and signals of a run, in order; a crash;
 * terminate() and kill(); the kill timeout, also when the exit is seen
 * only after it; the CPU times "finished" carries; 200 processes at once
 * and from 4 threads with contexts of their own; dropping the last
 * reference to a running process, under both dispose policies and from
 * any signal's handler; a handler that starts the process again.
 *
 * The cases follow what QProcess's autotest covers.  Every case runs once
 * per backend (/spawn/process/<backend>/...), forced with
 * spawn_set_backend(); a backend the kernel lacks is skipped with the
 * reason.  Cases that change process-wide state (malloc's perturbation) run
 * in a subprocess.  Waits poll for readiness with a bound; nothing sleeps
 * to synchronise.  The rest of /spawn/process is in process-launch-test.c,
 * process-io-test.c, process-wait-test.c and process-edge-test.c.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <signal.h>

#include "process-testutil.h"

/* Poll until we hold no more than the @want descriptors counted before
 * the last round: a background reaper may close a process's last one just
 * after the process has gone from /proc.  Fewer is not a leak: the count
 * before may itself have caught the previous round's descriptor in that
 * window (seen once in the noclonefd guest: 6 after, 7 before). */
static void
assert_fds_back_to (int want)
{
  int i, n = 0;

  for (i = 0; i < 1000; i++)
    {
      n = testutil_count_fds ();
      if (n <= want)
        {
          if (n < want)
            g_test_message ("%d descriptors, %d before: the count before held "
                            "one the reaper had not closed yet", n, want);
          return;
        }
      g_usleep (10 * 1000);
    }
  g_error ("we hold %d descriptors after 10 s, %d before", n, want);
}

static void
test_exit_codes (gconstpointer data)
{
  const int codes[] = { 0, 1, 42, 127, 255 };
  const char *sh[] = { "sh", "-c", "exit 7", NULL };
  GError *error = NULL;
  guint i;

  g_test_summary ("a normal exit reports NORMAL and the status, through the "
                  "main loop and through wait_for_finished(); \"started\" "
                  "comes from inside start(); the states go STARTING, "
                  "RUNNING, NOT_RUNNING; argv[0] is looked up in PATH");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < G_N_ELEMENTS (codes); i++)
    {
      char code[16];
      SpawnExitInfo info;
      SpawnProcess *proc;
      Events ev;

      g_snprintf (code, sizeof (code), "%d", codes[i]);
      proc = testutil_helper_process ("exit", code, NULL);
      events_watch (&ev, proc);
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
      g_assert_false (spawn_process_get_exit_info (proc, &info));

      testutil_start_ok (proc);
      g_assert_cmpint (ev.started, ==, 1);
      g_assert_cmpint (ev.state_in_started, ==, SPAWN_PROCESS_RUNNING);
      /* Its end is only noticed from the context or a wait. */
      g_assert_false (spawn_process_get_exit_info (proc, &info));
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
      g_assert_cmpint (spawn_process_get_pid (proc), >, 0);
      g_assert_nonnull (spawn_process_get_child (proc));
      g_assert_cmpint (spawn_child_get_pid (spawn_process_get_child (proc)), ==,
                       spawn_process_get_pid (proc));
      g_assert_cmpint (spawn_child_get_backend (spawn_process_get_child (proc)), ==,
                       testutil_backend (data));
      g_assert_true (spawn_process_wait_for_started (proc, 1000, &error));
      g_assert_no_error (error);

      await_finished (proc, &ev, i % 2 == 1);
      assert_exited (proc, &ev, codes[i]);
      g_assert_cmpint (ev.exit_code_in_finished, ==, codes[i]);
      g_assert_cmpstr (ev.log->str, ==, "started finished");
      g_assert_cmpuint (ev.states->len, ==, 3);
      g_assert_cmpint (g_array_index (ev.states, int, 0), ==, SPAWN_PROCESS_STARTING);
      g_assert_cmpint (g_array_index (ev.states, int, 1), ==, SPAWN_PROCESS_RUNNING);
      g_assert_cmpint (g_array_index (ev.states, int, 2), ==, SPAWN_PROCESS_NOT_RUNNING);

      /* As in Qt: waiting for a process that has finished is an error. */
      g_assert_false (spawn_process_wait_for_finished (proc, 1000, NULL, &error));
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
      g_clear_error (&error);
      g_object_unref (proc);
      events_clear (&ev);
    }

  {
    SpawnProcess *proc = spawn_process_new (NULL);
    SpawnExitInfo info;
    Events ev;

    spawn_process_set_argv (proc, sh);
    g_assert_cmpstrv (spawn_process_get_argv (proc), sh);
    events_watch (&ev, proc);
    testutil_start_ok (proc);
    run_until_finished (&ev);
    assert_exited (proc, &ev, 7);
    /* ... and it starts again, with a fresh status. */
    spawn_process_set_argv (proc, (const char *[]) { "sh", "-c", "exit 8", NULL });
    ev.finished = 0;
    testutil_start_ok (proc);
    g_assert_cmpint (ev.started, ==, 2);
    /* Not the last run's. */
    g_assert_false (spawn_process_get_exit_info (proc, &info));
    wait_finished_ok (proc, WAIT_MS);
    assert_exited (proc, &ev, 8);
    g_object_unref (proc);
    events_clear (&ev);
  }
}

static void
test_crash (gconstpointer data)
{
  const int sigs[] = { SIGTERM, SIGKILL, SIGUSR1 };
  guint i;

  g_test_summary ("a process ended by a signal is a CRASH whose exit code is "
                  "the signal; CRASHED is emitted before \"finished\"");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      char sig[16];
      SpawnExitInfo info;
      SpawnProcess *proc;
      Events ev;

      g_snprintf (sig, sizeof (sig), "%d", sigs[i]);
      proc = testutil_helper_process ("kill", sig, NULL);
      events_watch (&ev, proc);
      testutil_start_ok (proc);
      await_finished (proc, &ev, i % 2 == 1);
      assert_crashed (proc, &ev, sigs[i]);
      g_assert_cmpstr (ev.log->str, ==, "started error:crashed finished");
      g_assert_true (spawn_process_get_exit_info (proc, &info));
      g_assert_cmpint (info.kind, ==, SPAWN_EXIT_KILLED);
      g_assert_cmpint (info.status, ==, sigs[i]);
      /* Started again, it forgets the crash until it ends again. */
      testutil_start_ok (proc);
      g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_NORMAL);
      g_assert_cmpint (spawn_process_get_exit_code (proc), ==, -1);
      g_assert_false (spawn_process_get_exit_info (proc, &info));
      wait_finished_ok (proc, WAIT_MS);
      g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_CRASH);
      g_object_unref (proc);
      events_clear (&ev);
    }
}

/* @proc does not run: terminate() and kill() do nothing and succeed
 * (QProcess's terminate() and kill(), g_subprocess_force_exit()), without
 * a signal emitted; send_signal() says NOT_RUNNING. */
static void
assert_nothing_to_end (SpawnProcess *proc, Events *ev)
{
  g_autofree char *log = g_strdup (ev->log->str);
  GError *error = NULL;

  g_assert_true (spawn_process_terminate (proc, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (ev->log->str, ==, log);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_false (spawn_process_send_signal (proc, SIGUSR1, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_clear_error (&error);
}

static void
test_terminate_kill (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("terminate() ends a process with SIGTERM, kill() with "
                  "SIGKILL, each reported as a crash; on a process that is not "
                  "running (never started, or ended) both do nothing and succeed, "
                  "as QProcess's and g_subprocess_force_exit() do");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("sleep", "100000", NULL);
  events_watch (&ev, proc);
  assert_nothing_to_end (proc, &ev);

  testutil_start_ok (proc);
  g_assert_true (spawn_process_terminate (proc, &error));
  g_assert_no_error (error);
  run_until_finished (&ev);
  assert_crashed (proc, &ev, SIGTERM);
  g_assert_cmpstr (ev.log->str, ==, "started error:crashed finished");

  assert_nothing_to_end (proc, &ev);
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("sleep", "100000", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_no_error (error);
  wait_finished_ok (proc, WAIT_MS);
  assert_crashed (proc, &ev, SIGKILL);
  g_assert_cmpstr (ev.log->str, ==, "started error:crashed finished");
  g_object_unref (proc);
  events_clear (&ev);
}

typedef struct {
  int want;
  int finished;
  int exit_code;
  int exit_status;
  GThread *thread;
  char *out;
} Slot;

static void
on_slot_finished (SpawnProcess *proc, int exit_code, int exit_status,
                  gpointer info G_GNUC_UNUSED, gpointer data)
{
  Slot *slot = data;

  slot->finished++;
  slot->exit_code = exit_code;
  slot->exit_status = exit_status;
  slot->thread = g_thread_self ();
  slot->out = read_all_str (proc, SPAWN_PROCESS_STDOUT);
}

typedef struct {
  Slot *slots;
  int n;
} Slots;

static gboolean
all_finished (gpointer data)
{
  Slots *s = data;
  int i;

  for (i = 0; i < s->n; i++)
    if (s->slots[i].finished == 0)
      return FALSE;
  return TRUE;
}

/* Start @n processes on the thread-default context, odd ones printing
 * lines and even ones exiting with their own status, and run the context
 * until all have finished.  Returns how many went wrong, with a message. */
static int
run_many (int n, int base)
{
  SpawnProcess **procs = g_new0 (SpawnProcess *, n);
  Slots s = { g_new0 (Slot, n), n };
  gboolean done;
  int i, bad = 0;

  for (i = 0; i < n; i++)
    {
      char arg[16];

      s.slots[i].want = (base + i) % 200;
      g_snprintf (arg, sizeof (arg), "%d", s.slots[i].want);
      procs[i] = i % 2 ? testutil_helper_process ("lines", arg, NULL)
                       : testutil_helper_process ("exit", arg, NULL);
      g_signal_connect (procs[i], "finished", G_CALLBACK (on_slot_finished), &s.slots[i]);
      if (!spawn_process_start (procs[i], NULL))
        {
          g_test_message ("process %d did not start", i);
          bad++;
          s.slots[i].finished = 1;
        }
    }
  done = iterate_until (all_finished, &s, 120000);
  for (i = 0; i < n; i++)
    {
      Slot *slot = &s.slots[i];
      int code = i % 2 ? 0 : slot->want;
      g_autofree char *out = NULL;

      if (i % 2)
        {
          GString *str = g_string_new (NULL);
          int l;

          for (l = 0; l < slot->want; l++)
            g_string_append_printf (str, "line %d\n", l);
          g_string_append (str, "end");
          out = g_string_free (str, FALSE);
        }
      else
        out = g_strdup ("");
      if (slot->finished != 1 || slot->exit_code != code ||
          slot->exit_status != SPAWN_PROCESS_EXIT_NORMAL ||
          slot->thread != g_thread_self () || g_strcmp0 (slot->out, out) != 0)
        {
          g_test_message ("process %d: finished %d times, exit code %d status %d "
                          "(want %d), in %s thread, output %s", i, slot->finished,
                          slot->exit_code, slot->exit_status, code,
                          slot->thread == g_thread_self () ? "its" : "another",
                          g_strcmp0 (slot->out, out) == 0 ? "right" : "wrong");
          bad++;
        }
      g_free (slot->out);
      g_object_unref (procs[i]);
    }
  if (!done)
    g_test_message ("not all finished within 120 s");
  g_free (s.slots);
  g_free (procs);
  return bad;
}

static void
test_many (gconstpointer data)
{
  g_test_summary ("200 processes at once, each finishing with its own exit "
                  "code and output");
  if (!testutil_use_backend (data))
    return;
  g_assert_cmpint (run_many (200, 0), ==, 0);
  testutil_assert_no_children ();
}

/* Thread @index's share: 25 processes, exit codes apart from the others'. */
static int
run_25 (guint index)
{
  return run_many (25, index * 25);
}

static void
test_threads (gconstpointer data)
{
  g_test_summary ("4 threads start 25 processes each, each thread running "
                  "its own thread-default GMainContext: every signal comes "
                  "in the thread that started the process");
  if (!testutil_use_backend (data))
    return;
  /* The main thread runs no context meanwhile: nothing may rely on it. */
  testutil_run_in_threads (4, run_25);
  testutil_assert_no_children ();
}

/* What dropping a running process's last reference should do. */
typedef struct {
  const char *summary;
  gboolean leave_running;  /* SPAWN_DISPOSE_LEAVE_RUNNING, or the default */
  const char *sleep_ms;    /* how long the child runs if left alone */
} DisposeCase;

static void
run_dispose_case (gconstpointer data, const DisposeCase *dc)
{
  g_autofree char *dir = NULL, *out = NULL;
  GError *error = NULL;
  SpawnProcess *proc;
  int before, round;
  GPid pid;

  g_test_summary (dc->summary);
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-process-dispose-XXXXXX", &error);
  g_assert_no_error (error);
  out = g_build_filename (dir, "out", NULL);
  warm_up ();
  before = -1;
  /* The first round sets up what the library keeps for good (a reaper). */
  for (round = 0; round < 2; round++)
    {
      if (round == 1)
        before = testutil_count_fds ();
      if (dc->leave_running)
        g_assert_true (g_file_set_contents (out, "", 0, NULL));
      proc = testutil_helper_process ("sleep-print", dc->sleep_ms, "survived", NULL);
      /* stdout to a file: an EPIPE or SIGPIPE cannot be what ends it. */
      spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
      if (dc->leave_running)
        spawn_process_set_dispose_policy (proc, SPAWN_DISPOSE_LEAVE_RUNNING);
      testutil_start_ok (proc);
      pid = spawn_process_get_pid (proc);
      /* Running when dropped; left running, it outlives its object. */
      if (!dc->leave_running)
        assert_alive (pid);
      g_object_unref (proc);
      if (dc->leave_running)
        assert_alive (pid);
      assert_ended (pid, TRUE);
      /* "survived" is its last act: there only if it was not killed. */
      assert_file (out, dc->leave_running ? "survived" : "");
    }
  assert_fds_back_to (before);
  testutil_assert_no_children ();
  remove_tree (dir);
}

static void
test_dispose_kill (gconstpointer data)
{
  static const DisposeCase dc = {
    "dropping the last reference to a running process kills "
    "it (the default): it is gone from /proc, no zombie, none "
    "of our descriptors left, without any main loop running",
    FALSE, "5000",
  };

  run_dispose_case (data, &dc);
}

static void
test_dispose_leave_running (gconstpointer data)
{
  static const DisposeCase dc = {
    "with SPAWN_DISPOSE_LEAVE_RUNNING the process outlives "
    "its object, runs to its end and is reaped without a main "
    "loop; none of our descriptors is left",
    TRUE, "500",
  };

  run_dispose_case (data, &dc);
}

static void
test_kill_timeout (gconstpointer data)
{
  gint64 t0, elapsed;
  SpawnProcess *proc;
  Events ev;
  int round;

  g_test_summary ("the kill timeout SIGKILLs a process still running after "
                  "it, emitting TIMED_OUT then \"finished\" (a crash by "
                  "SIGKILL, with no CRASHED after the TIMED_OUT), "
                  "from the main loop and from wait_for_finished(); a process "
                  "that ends in time hears nothing of it");
  if (!testutil_use_backend (data))
    return;
  for (round = 0; round < 2; round++)
    {
      proc = testutil_helper_process ("sleep", "100000", NULL);
      events_watch (&ev, proc);
      spawn_process_set_kill_timeout (proc, 300);
      t0 = g_get_monotonic_time ();
      testutil_start_ok (proc);
      await_finished (proc, &ev, round == 1);
      elapsed = g_get_monotonic_time () - t0;
      g_test_message ("killed after %" G_GINT64_FORMAT " us", elapsed);
      g_assert_cmpint (elapsed, >=, 290 * 1000);
      g_assert_cmpint (elapsed, <, 10 * G_USEC_PER_SEC);
      assert_killed_by_timeout (proc, &ev);
      g_object_unref (proc);
      events_clear (&ev);
    }

  /* Generous: on the debug kernel under TCG starting a program can take
   * longer than 300 ms, and this one must end in time. */
  proc = testutil_helper_process ("exit", "5", NULL);
  events_watch (&ev, proc);
  spawn_process_set_kill_timeout (proc, 5000);
  t0 = g_get_monotonic_time ();
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 5);
  /* Past the timeout: its timer must be gone. */
  elapsed = (g_get_monotonic_time () - t0) / 1000;
  pump ((int) MAX (5300 - elapsed, 300));
  g_assert_cmpstr (ev.log->str, ==, "started finished");
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_kill_timeout_error (gconstpointer data)
{
  GError *error = NULL;
  int expected;
  const GError *last;
  SpawnProcess *proc;
  int round;

  g_test_summary ("code that only waits can tell a kill timeout from an "
                  "outside SIGKILL: after the timeout get_error() says "
                  "TIMED_OUT, after a SIGKILL from elsewhere CRASHED; both "
                  "end with the crash exit status and signal 9");
  if (!testutil_use_backend (data))
    return;
  for (round = 0; round < 2; round++)
    {
      proc = testutil_helper_process ("sleep", "100000", NULL);
      /* Round 0: our kill timeout; round 1: someone else's SIGKILL, long
       * before a timeout that is set but never reached. */
      spawn_process_set_kill_timeout (proc, round == 0 ? 200 : 600 * 1000);
      testutil_start_ok (proc);
      if (round == 1)
        g_assert_no_errno (kill (spawn_process_get_pid (proc), SIGKILL));
      g_assert_true (spawn_process_wait (proc, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_CRASH);
      g_assert_cmpint (spawn_process_get_exit_code (proc), ==, SIGKILL);
      last = spawn_process_get_error (proc);
      g_assert_nonnull (last);
      g_test_message ("round %d: %s", round, last->message);
      /* g_assert_error() does not parenthesise its code argument. */
      expected = round == 0 ? SPAWN_PROCESS_ERROR_TIMED_OUT : SPAWN_PROCESS_ERROR_CRASHED;
      g_assert_error (last, SPAWN_PROCESS_ERROR, expected);
      g_object_unref (proc);
    }
  testutil_assert_no_children ();
}

static void
test_cpu_times (gconstpointer data)
{
  SpawnExitInfo info;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("\"finished\" carries the child's CPU times");
  if (!testutil_backend_has_times (testutil_backend (data)))
    {
      g_test_skip ("the autoreap backend has no CPU times: stock 7.2's exit "
                   "information carries none (spawn-test's cpu-times checks "
                   "that it says so; kernel/patches-7.2 adds them)");
      return;
    }
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("busy", "300", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_test_message ("utime %" G_GUINT64_FORMAT " us, stime %" G_GUINT64_FORMAT " us",
                  ev.info.utime_usec, ev.info.stime_usec);
  g_assert_true (ev.info.have_times);
  /* 300 ms burnt, mostly in user mode, by the helper's precise clock; the
   * kernel's tick sampling misses ticks in a starved TCG guest (150 ms
   * measured), so check the order, not the precision (as spawn-test). */
  g_assert_cmpuint (ev.info.utime_usec, >=, 50000);
  g_assert_cmpuint (ev.info.utime_usec + ev.info.stime_usec, <=, 10000000);
  g_assert_true (spawn_process_get_exit_info (proc, &info));
  g_assert_cmpuint (info.utime_usec, ==, ev.info.utime_usec);
  g_assert_cmpuint (info.stime_usec, ==, ev.info.stime_usec);
  g_object_unref (proc);
  events_clear (&ev);
}

/* ---- defects found by review and by Qt's tst_qprocess ---- */

/* Let the clock pass @when (monotonic µs) on a context of our own, so
 * that no process's source is dispatched meanwhile: what a busy or late
 * main loop looks like to it. */
static void
let_time_pass (gint64 when)
{
  GMainContext *ctx = g_main_context_new ();

  while (g_get_monotonic_time () < when)
    {
      GSource *timeout = g_timeout_source_new ((when - g_get_monotonic_time ()) / 1000 + 1);
      gboolean expired = FALSE;

      g_source_set_callback (timeout, on_expired, &expired, NULL);
      g_source_attach (timeout, ctx);
      while (!expired)
        g_main_context_iteration (ctx, TRUE);
      g_source_destroy (timeout);
      g_source_unref (timeout);
    }
  g_main_context_unref (ctx);
}

static void
test_kill_timeout_late (gconstpointer data)
{
  SpawnProcess *proc;
  gint64 t0;
  Events ev;
  int round;

  g_test_summary ("a process that exited before its kill timeout, seen only "
                  "after the deadline (a late loop or wait), finished "
                  "normally: no TIMED_OUT, its own exit status");
  if (!testutil_use_backend (data))
    return;
  for (round = 0; round < 2; round++)
    {
      proc = testutil_helper_process ("exit", "3", NULL);
      events_watch (&ev, proc);
      spawn_process_set_kill_timeout (proc, 100);
      t0 = g_get_monotonic_time ();
      testutil_start_ok (proc);
      /* A zombie, or gone with CLONE_AUTOREAP: either way it ended. */
      assert_ended (spawn_process_get_pid (proc), FALSE);
      let_time_pass (t0 + 200 * 1000);
      await_finished (proc, &ev, round == 1);
      assert_exited (proc, &ev, 3);
      g_assert_cmpstr (ev.log->str, ==, "started finished");
      g_object_unref (proc);
      events_clear (&ev);
    }
}

static void
test_signal_exited (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("terminate() and kill() on a process that has exited but "
                  "whose end was not processed yet succeed and do nothing, "
                  "on every backend (QProcess: a no-op); the exit status is "
                  "its own");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("exit", "4", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  assert_ended (spawn_process_get_pid (proc), FALSE);
  g_assert_true (spawn_process_terminate (proc, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 4);
  g_assert_cmpstr (ev.log->str, ==, "started finished");
  g_object_unref (proc);
  events_clear (&ev);
}

/* Which handler drops the last reference, and when. */
typedef struct {
  const char *signal;
  int state;               /* state-changed: at this state */
  const char *cmd;         /* the helper's command, or NULL: no such program */
  const char *arg;
  gboolean blocking;       /* wait_for_finished() rather than the main loop */
  gboolean dropped;
} DropCase;

static void
drop (SpawnProcess *proc, DropCase *dc)
{
  if (dc->dropped)
    return;
  dc->dropped = TRUE;
  g_object_unref (proc);
}

static void
drop_now (SpawnProcess *proc, gpointer data)
{
  drop (proc, data);
}

static void
drop_on_state (SpawnProcess *proc, int state, gpointer data)
{
  DropCase *dc = data;

  if (state == dc->state)
    drop (proc, dc);
}

static void
drop_on_error (SpawnProcess *proc, GError *error G_GNUC_UNUSED, gpointer data)
{
  drop (proc, data);
}

static void
drop_on_finished (SpawnProcess *proc, int exit_code G_GNUC_UNUSED,
                  int exit_status G_GNUC_UNUSED, gpointer info G_GNUC_UNUSED,
                  gpointer data)
{
  drop (proc, data);
}

static void
drop_on_written (SpawnProcess *proc, guint64 count G_GNUC_UNUSED, gpointer data)
{
  drop (proc, data);
}

static gboolean
is_gone (gpointer data)
{
  return *(gpointer *) data == NULL;
}

static void
run_drop_case (DropCase *dc)
{
  const char *missing[] = { "no-such-program-anywhere", NULL };
  SpawnProcess *proc;
  gpointer weak;
  GCallback cb;

  g_test_message ("dropping the last reference in %s%s%s", dc->signal,
                  dc->blocking ? " from a wait" : "", dc->cmd ? "" : " (start fails)");
  proc = dc->cmd ? testutil_helper_process (dc->cmd, dc->arg, NULL) : spawn_process_new (missing);
  weak = proc;
  g_object_add_weak_pointer (G_OBJECT (proc), &weak);
  if (g_str_equal (dc->signal, "state-changed"))
    cb = G_CALLBACK (drop_on_state);
  else if (g_str_equal (dc->signal, "error-occurred"))
    cb = G_CALLBACK (drop_on_error);
  else if (g_str_equal (dc->signal, "finished"))
    cb = G_CALLBACK (drop_on_finished);
  else if (g_str_equal (dc->signal, "bytes-written"))
    cb = G_CALLBACK (drop_on_written);
  else
    cb = G_CALLBACK (drop_now);
  g_signal_connect (proc, dc->signal, cb, dc);
  /* Our only reference is the handler's to drop: @proc may be gone after
   * any call that emits. */
  if (!spawn_process_start (proc, NULL))
    g_assert_null (dc->cmd);
  if (weak != NULL && g_str_equal (dc->signal, "bytes-written"))
    g_assert_true (spawn_process_write (proc, "x\n", 2, NULL));
  if (weak != NULL && dc->blocking)
    spawn_process_wait_for_finished (proc, WAIT_MS, NULL, NULL);
  if (weak != NULL)
    g_assert_true (iterate_until (is_gone, &weak, WAIT_MS));
  g_assert_true (dc->dropped);
  g_assert_null (weak);
}

static void
test_drop_in_handler (gconstpointer data)
{
  DropCase cases[] = {
    { "state-changed", SPAWN_PROCESS_STARTING, "exit", "0", FALSE, FALSE },
    { "state-changed", SPAWN_PROCESS_RUNNING, "exit", "0", FALSE, FALSE },
    { "state-changed", SPAWN_PROCESS_NOT_RUNNING, "exit", "0", FALSE, FALSE },
    { "state-changed", SPAWN_PROCESS_NOT_RUNNING, "exit", "0", TRUE, FALSE },
    { "state-changed", SPAWN_PROCESS_NOT_RUNNING, NULL, NULL, FALSE, FALSE },
    { "started", 0, "exit", "0", FALSE, FALSE },
    { "error-occurred", 0, NULL, NULL, FALSE, FALSE },
    { "error-occurred", 0, "kill", "9", FALSE, FALSE },
    { "error-occurred", 0, "kill", "9", TRUE, FALSE },
    { "ready-read-stdout", 0, "lines", "3", FALSE, FALSE },
    { "ready-read-stdout", 0, "lines", "3", TRUE, FALSE },
    { "ready-read-stderr", 0, "stderr", "text", FALSE, FALSE },
    { "bytes-written", 0, "cat", NULL, FALSE, FALSE },
    { "finished", 0, "exit", "0", FALSE, FALSE },
    { "finished", 0, "exit", "0", TRUE, FALSE },
  };
  guint i;

  g_test_summary ("a handler of any signal may drop the last reference to "
                  "the process, from start(), write(), a wait or the main "
                  "loop: no use after free (run with MALLOC_PERTURB_ so that "
                  "one shows)");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  /* What MALLOC_PERTURB_=165 does, for this subprocess only (GLib 2.74
   * has no g_test_trap_subprocess_with_envp(), and setenv() in a process
   * with threads is unsafe): freed memory is overwritten, so a use after
   * free reads garbage instead of what was there. */
  if (mallopt (M_PERTURB, 165) != 1)
    g_test_message ("mallopt (M_PERTURB) refused: another allocator (ASan's "
                    "poisons freed memory itself)");
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    run_drop_case (&cases[i]);
  testutil_assert_no_children ();
}

/* Restart @proc as "exit 5" from a handler, once. */
typedef struct {
  GString *log;            /* "started", "finished:CODE" */
  int restarts;
  const char *cmd;         /* the second run's helper command */
  const char *arg;
} Restart;

static void
restart_now (SpawnProcess *proc, Restart *r)
{
  const char *argv[] = { testutil_helper, r->cmd, r->arg, NULL };

  if (r->restarts++ > 0)
    return;
  spawn_process_set_argv (proc, argv);
  testutil_start_ok (proc);
}

static void
restart_on_state (SpawnProcess *proc, int state, gpointer data)
{
  if (state == SPAWN_PROCESS_NOT_RUNNING)
    restart_now (proc, data);
}

static void
restart_on_error (SpawnProcess *proc, GError *error, gpointer data)
{
  if (error->code == SPAWN_PROCESS_ERROR_CRASHED)
    restart_now (proc, data);
}

static void
restart_on_finished (SpawnProcess *proc, int exit_code G_GNUC_UNUSED,
                     int exit_status G_GNUC_UNUSED, gpointer info G_GNUC_UNUSED,
                     gpointer data)
{
  restart_now (proc, data);
}

static void
log_run_started (SpawnProcess *proc G_GNUC_UNUSED, gpointer data)
{
  Restart *r = data;

  g_string_append (r->log, " started");
}

static void
log_run_finished (SpawnProcess *proc, int exit_code, int exit_status G_GNUC_UNUSED,
                  gpointer info, gpointer data)
{
  Restart *r = data;

  g_assert_cmpint (exit_code, ==, ((const SpawnExitInfo *) info)->status);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, exit_code);
  g_string_append_printf (r->log, " finished:%d", exit_code);
}

static gboolean
logged_two_runs (gpointer data)
{
  Restart *r = data;

  return g_str_has_suffix (r->log->str, "finished:5");
}

static void
test_restart_in_handler (gconstpointer data)
{
  static const struct {
    const char *signal;
    GCallback restart;
    const char *cmd, *arg;
    const char *want;
  } cases[] = {
    { "state-changed", G_CALLBACK (restart_on_state), "exit", "3",
      " started finished:3 started finished:5" },
    { "error-occurred", G_CALLBACK (restart_on_error), "kill", "9",
      " started finished:9 started finished:5" },
    { "finished", G_CALLBACK (restart_on_finished), "exit", "3",
      " started finished:3 started finished:5" },
  };
  GError *error = NULL;
  guint c;
  int round;

  g_test_summary ("a handler that starts the process again (from "
                  "state-changed, error-occurred or finished): the old run's "
                  "\"finished\" comes first, with the old run's values, and a "
                  "pending wait_for_finished() returns for the old run");
  if (!testutil_use_backend (data))
    return;
  for (c = 0; c < G_N_ELEMENTS (cases); c++)
    for (round = 0; round < 2; round++)
      {
        Restart r = { g_string_new (NULL), 0, "exit", "5" };
        SpawnProcess *proc = testutil_helper_process (cases[c].cmd, cases[c].arg, NULL);

        g_test_message ("restart from %s, %s", cases[c].signal,
                        round ? "wait_for_finished()" : "main loop");
        g_signal_connect (proc, "started", G_CALLBACK (log_run_started), &r);
        g_signal_connect (proc, "finished", G_CALLBACK (log_run_finished), &r);
        g_signal_connect (proc, cases[c].signal, cases[c].restart, &r);
        testutil_start_ok (proc);
        if (round == 1)
          {
            /* Returns for the first run; the second is still to wait for. */
            g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
            g_assert_no_error (error);
            g_assert_cmpint (r.restarts, ==, 1);
            wait_finished_ok (proc, WAIT_MS);
          }
        else
          g_assert_true (iterate_until (logged_two_runs, &r, WAIT_MS));
        g_assert_cmpstr (r.log->str, ==, cases[c].want);
        g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 5);
        g_object_unref (proc);
        g_string_free (r.log, TRUE);
      }

  /* A wait pending when "finished" starts a long run returns at once. */
  {
    Restart r = { g_string_new (NULL), 0, "sleep", "100000" };
    SpawnProcess *proc = testutil_helper_process ("exit", "3", NULL);

    g_signal_connect (proc, "started", G_CALLBACK (log_run_started), &r);
    g_signal_connect (proc, "finished", G_CALLBACK (log_run_finished), &r);
    g_signal_connect (proc, "finished", G_CALLBACK (restart_on_finished), &r);
    testutil_start_ok (proc);
    g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpstr (r.log->str, ==, " started finished:3 started");
    g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
    g_assert_true (spawn_process_kill (proc, &error));
    g_assert_no_error (error);
    wait_finished_ok (proc, WAIT_MS);
    g_assert_cmpstr (r.log->str, ==, " started finished:3 started finished:9");
    g_object_unref (proc);
    g_string_free (r.log, TRUE);
  }
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "exit-codes", test_exit_codes },
    { "crash", test_crash },
    { "terminate-kill", test_terminate_kill },
    { "many", test_many },
    { "threads", test_threads },
    { "dispose-kill", test_dispose_kill },
    { "dispose-leave-running", test_dispose_leave_running },
    { "kill-timeout", test_kill_timeout },
    { "kill-timeout-error", test_kill_timeout_error },
    { "cpu-times", test_cpu_times },
    { "kill-timeout-late", test_kill_timeout_late },
    { "signal-exited", test_signal_exited },
    { "drop-in-handler", test_drop_in_handler },
    { "restart-in-handler", test_restart_in_handler },
  };

  testutil_init (&argc, &argv);

  testutil_add_backend_cases ("/spawn/process", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
