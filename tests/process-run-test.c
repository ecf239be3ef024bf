/* SpawnProcess: the QProcess-style object over spawn_async_fd().
 *
 * The cases follow what QProcess's autotest covers.  Every case runs once
 * per backend (/spawn/process/<backend>/...), forced with
 * spawn_set_backend(); a backend the kernel lacks is skipped with the
 * reason.  Cases that change process-wide state (the environment, SIGPIPE,
 * what lands on our stdout) run in a subprocess.  Waits poll for readiness
 * with a bound; nothing sleeps to synchronise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <libspawn/libspawn.h>
#include "process-testutil.h"

#define ECHO_SIZE (10 * 1024 * 1024)

/* ---- helpers of a few cases ---- */

static gboolean
has_error (Events *ev, int code)
{
  guint i;

  for (i = 0; i < ev->errors->len; i++)
    if (g_array_index (ev->errors, int, i) == code)
      return TRUE;
  return FALSE;
}

typedef struct {
  SpawnProcess *proc;
  SpawnProcessChannel channel;
} LineWait;

static gboolean
has_line (gpointer data)
{
  LineWait *w = data;

  return spawn_process_can_read_line (w->proc, w->channel);
}

/* Poll until we hold @want descriptors again: a background reaper may
 * close a process's last one just after the process has gone. */
static void
assert_fds_back_to (int want)
{
  int i, n = 0;

  for (i = 0; i < 1000; i++)
    {
      n = testutil_count_fds ();
      if (n == want)
        return;
      g_usleep (10 * 1000);
    }
  g_error ("we hold %d descriptors after 10 s, %d before", n, want);
}

static guint64
cpu_usec_self (void)
{
  struct rusage ru;

  g_assert_no_errno (getrusage (RUSAGE_SELF, &ru));
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * G_USEC_PER_SEC +
         ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* ---- the cases ---- */

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

static void
test_not_found (gconstpointer data)
{
  const char *missing[][2] = {
    { "no-such-program-anywhere", NULL },
    { "/nonexistent/program", NULL },
  };
  GError *error = NULL;
  int before;
  guint i;

  g_test_summary ("a program that does not exist: start() fails with "
                  "SPAWN_ERROR_NOENT, FAILED_TO_START is emitted, \"started\" "
                  "never is, the state stays NOT_RUNNING, nothing is left behind");
  if (!testutil_use_backend (data))
    return;
  warm_up ();
  before = testutil_count_fds ();
  for (i = 0; i < G_N_ELEMENTS (missing); i++)
    {
      SpawnProcess *proc = spawn_process_new (missing[i]);
      Events ev;

      events_watch (&ev, proc);
      g_assert_false (spawn_process_start (proc, &error));
      g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_NOENT);
      g_test_message ("%s", error->message);
      g_clear_error (&error);
      g_assert_cmpint (ev.started, ==, 0);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
      if (ev.states->len > 0)
        g_assert_cmpint (g_array_index (ev.states, int, ev.states->len - 1), ==,
                         SPAWN_PROCESS_NOT_RUNNING);

      g_assert_false (spawn_process_wait_for_started (proc, 1000, &error));
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
      g_clear_error (&error);
      g_assert_false (spawn_process_wait_for_finished (proc, 1000, NULL, &error));
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
      g_clear_error (&error);
      pump (100);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_object_unref (proc);
      events_clear (&ev);
    }
  g_assert_cmpint (testutil_count_fds (), ==, before);
  testutil_assert_no_children ();
}

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

/* terminate() and kill() fail on @proc: it does not run. */
static void
assert_signals_refused (SpawnProcess *proc)
{
  GError *error = NULL;

  g_assert_false (spawn_process_terminate (proc, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_clear_error (&error);
  g_assert_false (spawn_process_kill (proc, &error));
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
                  "SIGKILL, each reported as a crash; both fail on a process "
                  "that is not running");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("sleep", "100000", NULL);
  events_watch (&ev, proc);
  assert_signals_refused (proc);

  testutil_start_ok (proc);
  g_assert_true (spawn_process_terminate (proc, &error));
  g_assert_no_error (error);
  run_until_finished (&ev);
  assert_crashed (proc, &ev, SIGTERM);
  g_assert_cmpstr (ev.log->str, ==, "started error:crashed finished");

  assert_signals_refused (proc);
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

static void
test_echo_main_loop (gconstpointer data)
{
  g_autofree guint8 *want = pattern (ECHO_SIZE);
  SpawnProcess *proc;
  GError *error = NULL;
  gsize off, n;
  Events ev;

  g_test_summary ("10 MB through cat and back, driven by the main loop, "
                  "without deadlock and byte for byte; bytes-written adds up");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  ev.collect = TRUE;
  testutil_start_ok (proc);
  /* Uneven pieces, so no boundary lines up with a pipe's size. */
  for (off = 0; off < ECHO_SIZE; off += n)
    {
      n = MIN (1000003, ECHO_SIZE - off);
      g_assert_true (spawn_process_write (proc, want + off, n, &error));
      g_assert_no_error (error);
    }
  spawn_process_close_write_channel (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_assert_cmpuint (ev.errors->len, ==, 0);
  g_assert_cmpint (ev.ready_stdout, >, 0);
  g_assert_cmpuint (ev.written, ==, ECHO_SIZE);
  g_assert_cmpuint (spawn_process_get_bytes_to_write (proc), ==, 0);
  assert_same_bytes (ev.out->data, ev.out->len, want, ECHO_SIZE);
  /* All of it had arrived by "finished". */
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 0);
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_echo_blocking (gconstpointer data)
{
  g_autofree guint8 *want = pattern (ECHO_SIZE);
  GByteArray *got = g_byte_array_new ();
  GError *error = NULL;
  SpawnProcess *proc;
  GBytes *bytes;
  Events ev;
  int i;

  g_test_summary ("10 MB through cat and back with the blocking helpers "
                  "only: wait_for_bytes_written() and wait_for_finished() "
                  "read while they write, so neither deadlocks");
  if (!testutil_use_backend (data))
    return;

  /* wait_for_bytes_written () until all is out, then wait_for_ready_read (). */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, want, ECHO_SIZE, &error));
  g_assert_no_error (error);
  for (i = 0; spawn_process_get_bytes_to_write (proc) > 0; i++)
    {
      g_assert_cmpint (i, <, 100000);
      g_assert_true (spawn_process_wait_for_bytes_written (proc, WAIT_MS, NULL, &error));
      g_assert_no_error (error);
      collect_channel (proc, SPAWN_PROCESS_STDOUT, got);
    }
  g_assert_cmpuint (ev.written, ==, ECHO_SIZE);
  spawn_process_close_write_channel (proc);
  for (i = 0; spawn_process_get_state (proc) == SPAWN_PROCESS_RUNNING; i++)
    {
      gboolean ok;

      g_assert_cmpint (i, <, 100000);
      ok = spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error);
      collect_channel (proc, SPAWN_PROCESS_STDOUT, got);
      if (!ok)
        {
          /* It finished while we waited. */
          g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
          g_clear_error (&error);
          g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
        }
    }
  collect_channel (proc, SPAWN_PROCESS_STDOUT, got);
  assert_exited (proc, &ev, 0);
  g_assert_cmpint (ev.ready_stdout, >, 0);
  assert_same_bytes (got->data, got->len, want, ECHO_SIZE);
  g_object_unref (proc);
  events_clear (&ev);

  /* All in, close, and only wait_for_finished (): it has to do both sides. */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, want, ECHO_SIZE, &error));
  g_assert_no_error (error);
  spawn_process_close_write_channel (proc);
  wait_finished_ok (proc, 120000);
  assert_exited (proc, &ev, 0);
  g_assert_cmpuint (ev.written, ==, ECHO_SIZE);
  bytes = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);
  assert_same_bytes (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                     want, ECHO_SIZE);
  g_bytes_unref (bytes);
  g_object_unref (proc);
  events_clear (&ev);
  g_byte_array_unref (got);
}

static void
test_merged (gconstpointer data)
{
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("stdout and stderr are read separately by default; with "
                  "stderr MERGE both arrive, interleaved in order, on stdout");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("interleave", "3", NULL);
  events_watch (&ev, proc);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDERR), ==,
                   SPAWN_CHANNEL_PIPE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_assert_cmpint (ev.ready_stdout, >, 0);
  g_assert_cmpint (ev.ready_stderr, >, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "out 0\nout 1\nout 2\n");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "err 0\nerr 1\nerr 2\n");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("interleave", "3", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_MERGE);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDERR), ==,
                   SPAWN_CHANNEL_MERGE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_assert_cmpint (ev.ready_stderr, ==, 0);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDERR), ==, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT,
                   "out 0\nerr 0\nout 1\nerr 1\nout 2\nerr 2\n");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);
}

/* Wait with wait_for_ready_read () until @n bytes are buffered on stdout. */
static void
wait_for_available (SpawnProcess *proc, gsize n)
{
  GError *error = NULL;
  int i;

  for (i = 0; spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT) < n; i++)
    {
      g_assert_cmpint (i, <, 1000);
      g_assert_true (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error));
      g_assert_no_error (error);
    }
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, n);
}

static void
assert_line (SpawnProcess *proc, const char *want)
{
  char *line;

  g_assert_true (spawn_process_can_read_line (proc, SPAWN_PROCESS_STDOUT));
  line = spawn_process_read_line (proc, SPAWN_PROCESS_STDOUT);
  g_assert_cmpstr (line, ==, want);
  g_free (line);
}

static void
assert_no_line (SpawnProcess *proc)
{
  g_assert_false (spawn_process_can_read_line (proc, SPAWN_PROCESS_STDOUT));
  g_assert_null (spawn_process_read_line (proc, SPAWN_PROCESS_STDOUT));
}

static void
test_read_line (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;
  int i;

  g_test_summary ("read_line() returns whole lines without their newline, "
                  "nothing while a line is incomplete, and the unterminated "
                  "rest as the last line once the channel is at EOF");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("lines", "5", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  for (i = 0; i < 5; i++)
    {
      char want[16];

      g_snprintf (want, sizeof (want), "line %d", i);
      assert_line (proc, want);
    }
  assert_line (proc, "end");
  assert_no_line (proc);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 0);
  g_object_unref (proc);
  events_clear (&ev);

  /* Piece by piece through cat, with the blocking helpers. */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, "abc", 3, &error));
  g_assert_no_error (error);
  wait_for_available (proc, 3);
  assert_no_line (proc);
  /* A NULL read_line() consumed nothing. */
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 3);
  g_assert_true (spawn_process_write (proc, "def\n\nghi", 8, &error));
  g_assert_no_error (error);
  wait_for_available (proc, 11);
  assert_line (proc, "abcdef");
  assert_line (proc, "");
  assert_no_line (proc);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 3);
  spawn_process_close_write_channel (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 0);
  assert_line (proc, "ghi");
  assert_no_line (proc);
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_close_write_channel (gconstpointer data)
{
  g_autofree guint8 *want = pattern (1024 * 1024);
  GError *error = NULL;
  SpawnProcess *proc;
  GBytes *bytes;
  Events ev;

  g_test_summary ("close_write_channel() closes cat's stdin once what was "
                  "written has gone out, so cat exits; writing after it fails "
                  "with WRITE_ERROR");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, "hello", 5, &error));
  g_assert_no_error (error);
  spawn_process_close_write_channel (proc);
  g_assert_false (spawn_process_write (proc, "more", 4, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR);
  g_clear_error (&error);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "hello");
  g_object_unref (proc);
  events_clear (&ev);

  /* More than a pipe holds, closed at once: all of it still goes out. */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, want, 1024 * 1024, &error));
  g_assert_no_error (error);
  spawn_process_close_write_channel (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 0);
  bytes = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);
  assert_same_bytes (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                     want, 1024 * 1024);
  g_bytes_unref (bytes);
  g_object_unref (proc);
  events_clear (&ev);

  /* Nothing written at all. */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  spawn_process_close_write_channel (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_stdout_closed_early (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;
  guint64 cpu;
  LineWait w;
  Events ev;
  GPid pid;

  g_test_summary ("a child that closes its stdout and runs on: EOF on stdout "
                  "is not the end of the process, nothing spins on the dead "
                  "pipe, and \"finished\" comes when it exits");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("close-stdout", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  pid = spawn_process_get_pid (proc);
  /* "bye" has no newline: it reads as a line only once stdout is at EOF. */
  w.proc = proc;
  w.channel = SPAWN_PROCESS_STDOUT;
  g_assert_true (iterate_until (has_line, &w, WAIT_MS));
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  g_assert_cmpint (ev.finished, ==, 0);
  assert_alive (pid);
  assert_line (proc, "bye");

  /* A poll on the hung-up pipe would return at once, every time. */
  cpu = cpu_usec_self ();
  pump (500);
  g_assert_false (spawn_process_wait_for_finished (proc, 500, NULL, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
  g_clear_error (&error);
  cpu = cpu_usec_self () - cpu;
  g_test_message ("CPU used over 1 s of waiting: %" G_GUINT64_FORMAT " us", cpu);
  g_assert_cmpuint (cpu, <, 400 * 1000);
  g_assert_cmpint (ev.finished, ==, 0);
  assert_alive (pid);

  spawn_process_close_write_channel (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 3);
  g_assert_cmpstr (ev.log->str, ==, "started finished");
  g_object_unref (proc);
  events_clear (&ev);
}

static gint
cmp_str_ptr (gconstpointer a, gconstpointer b, gpointer data G_GNUC_UNUSED)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

static void
sort_strv (char **v)
{
  g_qsort_with_data (v, g_strv_length (v), sizeof (char *), cmp_str_ptr, NULL);
}

/* Run "spawn-helper environ" as configured in @proc; its environment, sorted. */
static char **
child_environ (SpawnProcess *proc)
{
  char *out, **lines;
  Events ev;
  guint n;

  events_watch (&ev, proc);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  out = read_all_str (proc, SPAWN_PROCESS_STDOUT);
  lines = g_strsplit (out, "\n", -1);
  /* The last newline leaves an empty string behind (none if no output). */
  n = g_strv_length (lines);
  if (n > 0)
    {
      g_assert_cmpstr (lines[n - 1], ==, "");
      g_free (lines[n - 1]);
      lines[n - 1] = NULL;
    }
  sort_strv (lines);
  g_free (out);
  events_clear (&ev);
  return lines;
}

static void
test_environment (gconstpointer data)
{
  const char *whole[] = { "SPAWN_ONLY=1", "SPAWN_B=2", NULL };
  const char *none[] = { NULL };
  const char *want_whole[] = { "SPAWN_B=two", "SPAWN_C=3", NULL };
  char **got, **want;
  SpawnProcess *proc;

  g_test_summary ("the environment: inherited at start time with setenv() "
                  "and unsetenv() on top, or replaced whole with the same on "
                  "top, or empty");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_setenv ("SPAWN_TEST_PARENT", "parent", TRUE);
  g_setenv ("SPAWN_TEST_DROP", "drop", TRUE);

  proc = testutil_helper_process ("environ", NULL);
  spawn_process_setenv (proc, "SPAWN_TEST_ADDED", "added");
  spawn_process_setenv (proc, "SPAWN_TEST_PARENT", "overridden");
  spawn_process_unsetenv (proc, "SPAWN_TEST_DROP");
  /* Set after the process was configured: what counts is start time. */
  g_setenv ("SPAWN_TEST_LATE", "late", TRUE);
  want = g_get_environ ();
  want = g_environ_setenv (want, "SPAWN_TEST_ADDED", "added", TRUE);
  want = g_environ_setenv (want, "SPAWN_TEST_PARENT", "overridden", TRUE);
  want = g_environ_unsetenv (want, "SPAWN_TEST_DROP");
  sort_strv (want);
  got = child_environ (proc);
  g_assert_cmpstrv (got, want);
  g_strfreev (got);
  g_strfreev (want);
  g_object_unref (proc);

  proc = testutil_helper_process ("environ", NULL);
  spawn_process_set_environment (proc, whole);
  spawn_process_setenv (proc, "SPAWN_C", "3");
  spawn_process_setenv (proc, "SPAWN_B", "two");
  spawn_process_unsetenv (proc, "SPAWN_ONLY");
  got = child_environ (proc);
  g_assert_cmpstrv (got, want_whole);
  g_strfreev (got);
  g_object_unref (proc);

  proc = testutil_helper_process ("environ", NULL);
  spawn_process_set_environment (proc, none);
  got = child_environ (proc);
  g_assert_cmpstrv (got, none);
  g_strfreev (got);
  g_object_unref (proc);
}

static void
test_working_directory (gconstpointer data)
{
  g_autofree char *dir = NULL, *real = NULL, *want = NULL;
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("the working directory reaches the child; one that does "
                  "not exist is FAILED_TO_START with SPAWN_ERROR_NOENT");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-process-cwd-XXXXXX", &error);
  g_assert_no_error (error);
  real = realpath (dir, NULL);
  g_assert_nonnull (real);

  proc = testutil_helper_process ("pwd", NULL);
  events_watch (&ev, proc);
  spawn_process_set_working_directory (proc, dir);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  want = g_strconcat (real, "\n", NULL);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, want);
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("pwd", NULL);
  events_watch (&ev, proc);
  spawn_process_set_working_directory (proc, "/nonexistent/dir");
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_object_unref (proc);
  events_clear (&ev);
  g_rmdir (dir);
}

/* Poll until /proc/PID/cmdline shows spawn-helper: it has exec'd. */
static void
assert_runs_helper (GPid pid)
{
  char path[64];
  int i;

  g_snprintf (path, sizeof (path), "/proc/%d/cmdline", (int) pid);
  for (i = 0; i < 1000; i++)
    {
      g_autofree char *cmdline = NULL;

      if (g_file_get_contents (path, &cmdline, NULL, NULL) &&
          g_str_has_suffix (cmdline, "/spawn-helper"))
        return;
      g_usleep (10 * 1000);
    }
  g_error ("PID %d does not run spawn-helper after 10 s", (int) pid);
}

static void
test_start_detached (gconstpointer data)
{
  g_autofree char *dir = NULL, *real = NULL, *out = NULL, *want = NULL;
  const char *missing[] = { "no-such-program-anywhere", NULL };
  GError *error = NULL;
  SpawnProcess *proc;
  GPid pid = 0;
  Events ev;

  g_test_summary ("start_detached() returns the PID of a process that runs "
                  "with our argv, cwd, env and channels, PIPE meaning our own "
                  "stdio, emits nothing, and never becomes a zombie");
  /* PIPE channels are forwarded: the output lands on our stdio. */
  if (!testutil_use_backend (data) ||
      !testutil_isolated_output ("*out 0\nout 1\n*", "*err 0\nerr 1\n*"))
    return;
  dir = g_dir_make_tmp ("spawn-process-detached-XXXXXX", &error);
  g_assert_no_error (error);
  real = realpath (dir, NULL);
  g_assert_nonnull (real);
  out = g_build_filename (dir, "out", NULL);

  /* It runs on by itself, to the end: "survived" is its last act. */
  proc = testutil_helper_process ("sleep-print", "200", "survived", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  g_assert_cmpint (pid, >, 0);
  assert_runs_helper (pid);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  assert_ended (pid, TRUE);
  assert_file (out, "survived");
  /* Nothing to report on a process we let go. */
  pump (50);
  g_assert_cmpstr (ev.log->str, ==, "");
  g_object_unref (proc);
  events_clear (&ev);

  /* Working directory and environment. */
  proc = testutil_helper_process ("pwd", NULL);
  spawn_process_set_working_directory (proc, dir);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_ended (pid, TRUE);
  want = g_strconcat (real, "\n", NULL);
  assert_file (out, want);
  g_object_unref (proc);

  proc = testutil_helper_process ("env", "SPAWN_DETACHED", NULL);
  spawn_process_setenv (proc, "SPAWN_DETACHED", "yes");
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_ended (pid, TRUE);
  assert_file (out, "yes\n");
  g_object_unref (proc);

  proc = testutil_helper_process ("interleave", "2", NULL);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_ended (pid, TRUE);
  g_object_unref (proc);

  proc = spawn_process_new (missing);
  g_assert_false (spawn_process_start_detached (proc, &pid, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_object_unref (proc);

  testutil_assert_no_children ();
  remove_tree (dir);
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
                  "it, emitting TIMED_OUT then CRASHED then \"finished\", "
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
      assert_crashed (proc, &ev, SIGKILL);
      g_assert_cmpstr (ev.log->str, ==, "started error:timed-out error:crashed finished");
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

static gboolean
has_write_error (gpointer data)
{
  return has_error (data, SPAWN_PROCESS_ERROR_WRITE_ERROR);
}

/* SIGPIPE is still at its default disposition, not blocked nor pending. */
static void
assert_sigpipe_untouched (void)
{
  struct sigaction sa;
  sigset_t set;

  g_assert_no_errno (sigaction (SIGPIPE, NULL, &sa));
  g_assert_true (sa.sa_handler == SIG_DFL);
  g_assert_no_errno (sigprocmask (SIG_BLOCK, NULL, &set));
  g_assert_false (sigismember (&set, SIGPIPE));
  g_assert_no_errno (sigpending (&set));
  g_assert_false (sigismember (&set, SIGPIPE));
}

static void
test_write_closed_stdin (gconstpointer data)
{
  g_autofree guint8 *junk = pattern (200000);
  GError *error = NULL;
  SpawnProcess *proc;
  LineWait w;
  sigset_t set;
  Events ev;
  int round;

  g_test_summary ("writing to a child that closed its stdin gives "
                  "WRITE_ERROR and no SIGPIPE, with SIGPIPE at SIG_DFL: when "
                  "it closed before the write, and when it closes with input "
                  "still buffered, seen by the main loop and by "
                  "wait_for_bytes_written(); the child runs on");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  signal (SIGPIPE, SIG_DFL);
  sigemptyset (&set);
  sigaddset (&set, SIGPIPE);
  g_assert_no_errno (sigprocmask (SIG_UNBLOCK, &set, NULL));
  w.channel = SPAWN_PROCESS_STDOUT;

  for (round = 0; round < 3; round++)
    {
      proc = testutil_helper_process (round == 0 ? "close-stdin-sleep" : "close-stdin-on-usr1",
                             "100000", NULL);
      events_watch (&ev, proc);
      w.proc = proc;
      testutil_start_ok (proc);
      if (round == 0)
        {
          g_assert_true (iterate_until (has_line, &w, WAIT_MS));
          assert_line (proc, "closed");
          /* The write may be tried at once, or later from the main loop. */
          if (!spawn_process_write (proc, junk, 100000, &error))
            {
              g_test_message ("write failed at once: %s", error->message);
              g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR);
              g_clear_error (&error);
            }
          g_assert_true (iterate_until (has_write_error, &ev, WAIT_MS));
        }
      else
        {
          g_assert_true (iterate_until (has_line, &w, WAIT_MS));
          assert_line (proc, "ready");
          /* It reads nothing: more than a pipe holds stays with us. */
          g_assert_true (spawn_process_write (proc, junk, 200000, &error));
          g_assert_no_error (error);
          g_assert_cmpuint (spawn_process_get_bytes_to_write (proc), >, 0);
          g_assert_true (spawn_child_send_signal (spawn_process_get_child (proc),
                                                  SIGUSR1, &error));
          g_assert_no_error (error);
          if (round == 1)
            g_assert_true (iterate_until (has_write_error, &ev, WAIT_MS));
          else
            {
              g_assert_false (spawn_process_wait_for_bytes_written (proc, WAIT_MS, NULL, &error));
              g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR);
              g_clear_error (&error);
            }
        }
      g_assert_cmpstr (ev.log->str, ==, "started error:write-error");
      assert_sigpipe_untouched ();
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
      assert_alive (spawn_process_get_pid (proc));
      g_assert_true (spawn_process_kill (proc, &error));
      g_assert_no_error (error);
      run_until_finished (&ev);
      assert_crashed (proc, &ev, SIGKILL);
      g_object_unref (proc);
      events_clear (&ev);
    }
  assert_sigpipe_untouched ();
}

static void
test_channel_file (gconstpointer data)
{
  g_autofree char *dir = NULL, *out = NULL, *err = NULL, *in = NULL;
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("FILE channels: stdout and stderr truncate or append, "
                  "stdin reads the file, stderr MERGE follows stdout into "
                  "its file; nothing reaches our buffers");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-process-file-XXXXXX", &error);
  g_assert_no_error (error);
  out = g_build_filename (dir, "out", NULL);
  err = g_build_filename (dir, "err", NULL);
  in = g_build_filename (dir, "in", NULL);

  g_assert_true (g_file_set_contents (out, "old content, longer than the new\n", -1, NULL));
  proc = testutil_helper_process ("lines", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDOUT), ==,
                   SPAWN_CHANNEL_FILE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_file (out, "line 0\nline 1\nend");
  g_assert_cmpint (ev.ready_stdout, ==, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("lines", "1", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, TRUE);
  testutil_start_ok (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 0);
  assert_file (out, "line 0\nline 1\nendline 0\nend");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDERR, err, FALSE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_file (err, "err 0\nerr 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "out 0\nout 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);

  /* cat ends at the file's end: no close_write_channel () needed. */
  g_assert_true (g_file_set_contents (in, "from a file\n", -1, NULL));
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDIN, in, FALSE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "from a file\n");
  assert_file (in, "from a file\n");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_MERGE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_file (out, "out 0\nerr 0\nout 1\nerr 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);
  remove_tree (dir);
}

static void
test_channel_discard (gconstpointer data)
{
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("DISCARD channels are /dev/null: output is written (the "
                  "helper checks) and lost, stdin reads EOF at once");
  if (!testutil_use_backend (data))
    return;
  /* interleave exits 1 if a write fails: a closed fd would show. */
  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_assert_cmpint (ev.ready_stdout, ==, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "err 0\nerr 1\n");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 0);
  g_assert_cmpint (ev.ready_stderr, ==, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "out 0\nout 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_channel_forward (gconstpointer data)
{
  GBytes *out = NULL, *err = NULL;
  GError *error = NULL;
  SpawnExitInfo info;
  SpawnProcess *proc;
  const char *lines[] = { testutil_helper, "lines", "1", NULL };
  const char *to_stderr[] = { testutil_helper, "stderr", "execute-err", NULL };
  Events ev;

  g_test_summary ("FORWARD channels share our own stdio, for start() and "
                  "for the NULL out pointers of execute()");
  if (!testutil_use_backend (data) ||
      !testutil_isolated_output ("*out 0\nout 1\n*line 0\nend*",
                                 "*err 0\nerr 1\n*execute-err*"))
    return;
  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_FORWARD);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);

  /* Our stdin here is /dev/null (g_test_trap_subprocess): cat ends. */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_FORWARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_object_unref (proc);
  events_clear (&ev);

  g_assert_true (spawn_process_execute (lines, WAIT_MS, NULL, &err, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (err), ==, 0);
  g_clear_pointer (&err, g_bytes_unref);
  g_assert_true (spawn_process_execute (to_stderr, WAIT_MS, &out, NULL, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (out), ==, 0);
  g_clear_pointer (&out, g_bytes_unref);
}

static void
test_bad_file (gconstpointer data)
{
  g_autofree char *dir = NULL, *out = NULL, *out_contents = NULL;
  struct {
    SpawnProcessChannel channel;
    const char *path;
    int code;   /* in SPAWN_ERROR, or -1: any */
  } cases[] = {
    { SPAWN_PROCESS_STDIN, "/nonexistent/dir/in", SPAWN_ERROR_NOENT },
    { SPAWN_PROCESS_STDOUT, "/nonexistent/dir/out", SPAWN_ERROR_NOENT },
    { SPAWN_PROCESS_STDERR, "/nonexistent/dir/err", SPAWN_ERROR_NOENT },
    { SPAWN_PROCESS_STDOUT, NULL /* the directory */, -1 },
  };
  GError *error = NULL;
  int before;
  guint i;

  g_test_summary ("a FILE channel that cannot be opened fails start() with "
                  "FAILED_TO_START; the program does not run, nothing is left");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-process-badfile-XXXXXX", &error);
  g_assert_no_error (error);
  out = g_build_filename (dir, "out", NULL);
  warm_up ();
  before = testutil_count_fds ();
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      /* Its stdout, where it is not the bad one, would show it ran. */
      SpawnProcess *proc = testutil_helper_process ("lines", "1", NULL);
      Events ev;

      events_watch (&ev, proc);
      if (cases[i].channel != SPAWN_PROCESS_STDOUT)
        spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
      spawn_process_set_channel_file (proc, cases[i].channel,
                                      cases[i].path ? cases[i].path : dir, FALSE);
      g_assert_false (spawn_process_start (proc, &error));
      g_assert_nonnull (error);
      g_test_message ("%s", error->message);
      g_assert_true (error->domain == SPAWN_ERROR);
      if (cases[i].code >= 0)
        g_assert_error (error, SPAWN_ERROR, cases[i].code);
      g_clear_error (&error);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
      pump (50);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_object_unref (proc);
      events_clear (&ev);
    }
  if (g_file_get_contents (out, &out_contents, NULL, NULL))
    g_assert_cmpstr (out_contents, ==, "");
  g_assert_cmpint (testutil_count_fds (), ==, before);
  testutil_assert_no_children ();
  remove_tree (dir);
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
  g_assert_true (info.have_times);
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
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_NOENT);
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

static void
test_cpu_times (gconstpointer data)
{
  SpawnExitInfo info;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("\"finished\" carries the child's CPU times");
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
  /* 300 ms burnt, mostly in user mode; ticks and a busy host blur it. */
  g_assert_cmpuint (ev.info.utime_usec, >=, 200000);
  g_assert_true (spawn_process_get_exit_info (proc, &info));
  g_assert_cmpuint (info.utime_usec, ==, ev.info.utime_usec);
  g_assert_cmpuint (info.stime_usec, ==, ev.info.stime_usec);
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_output_before_finished (gconstpointer data)
{
  const int n = 20000;
  GString *want_out = g_string_new (NULL), *want_err = g_string_new (NULL);
  SpawnProcess *proc;
  Events ev;
  int i, round;

  g_test_summary ("by \"finished\", all the child wrote to stdout and "
                  "stderr (far more than a pipe holds) is in the buffers, "
                  "from the main loop and from wait_for_finished()");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < n; i++)
    {
      g_string_append_printf (want_out, "out %d\n", i);
      g_string_append_printf (want_err, "err %d\n", i);
    }
  for (round = 0; round < 2; round++)
    {
      char arg[16];

      g_snprintf (arg, sizeof (arg), "%d", n);
      proc = testutil_helper_process ("interleave", arg, NULL);
      events_watch (&ev, proc);
      /* Read only in "finished": what is not there by then is lost. */
      g_signal_handlers_disconnect_by_func (proc, on_ready_stdout, &ev);
      g_signal_handlers_disconnect_by_func (proc, on_ready_stderr, &ev);
      ev.collect = TRUE;
      testutil_start_ok (proc);
      await_finished (proc, &ev, round == 1);
      assert_exited (proc, &ev, 0);
      g_assert_cmpmem (ev.out->data, ev.out->len, want_out->str, want_out->len);
      g_assert_cmpmem (ev.err->data, ev.err->len, want_err->str, want_err->len);
      /* ... and nothing came after. */
      pump (50);
      g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 0);
      g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDERR), ==, 0);
      g_object_unref (proc);
      events_clear (&ev);
    }
  g_string_free (want_out, TRUE);
  g_string_free (want_err, TRUE);
}

static void
test_pipe_held_open (gconstpointer data)
{
  g_autofree char *script = NULL, *out = NULL;
  const char *argv[] = { "sh", "-c", NULL, NULL };
  SpawnProcess *proc;
  GPid grandchild;
  Events ev;

  g_test_summary ("\"finished\" comes when the process exits even though a "
                  "grandchild still holds its stdout open");
  if (!testutil_use_backend (data))
    return;
  script = g_strdup_printf ("'%s' sleep 100000 & echo $!", testutil_helper);
  argv[2] = script;
  proc = spawn_process_new (argv);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  out = read_all_str (proc, SPAWN_PROCESS_STDOUT);
  grandchild = atoi (out);
  g_assert_cmpint (grandchild, >, 0);
  assert_alive (grandchild);
  g_assert_no_errno (kill (grandchild, SIGKILL));
  /* Not ours to reap (sh's child, now init's): just see it die. */
  assert_ended (grandchild, FALSE);
  g_object_unref (proc);
  events_clear (&ev);
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

static void
test_environment_duplicate (gconstpointer data)
{
  const char *envp[] = { "SPAWN_DUP=first", "SPAWN_OTHER=1", "SPAWN_DUP=second", NULL };
  g_auto (GStrv) env = NULL;
  SpawnProcess *proc;

  g_test_summary ("set_environment() with a name given twice: the later "
                  "entry wins and the child gets the name once, as with "
                  "QProcessEnvironment");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("environ", NULL);
  spawn_process_set_environment (proc, envp);
  env = child_environ (proc);
  g_assert_cmpuint (g_strv_length (env), ==, 2);
  g_assert_cmpstr (env[0], ==, "SPAWN_DUP=second");
  g_assert_cmpstr (env[1], ==, "SPAWN_OTHER=1");
  g_object_unref (proc);
}

/* Every reading call on @proc's @channel, which holds nothing. */
static void
assert_channel_empty (SpawnProcess *proc, SpawnProcessChannel channel)
{
  GBytes *bytes;

  g_assert_cmpuint (spawn_process_get_bytes_available (proc, channel), ==, 0);
  g_assert_false (spawn_process_can_read_line (proc, channel));
  g_assert_null (spawn_process_read_line (proc, channel));
  bytes = spawn_process_read_all (proc, channel);
  g_assert_nonnull (bytes);
  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 0);
  g_bytes_unref (bytes);
}

static void
test_empty_buffers (gconstpointer data)
{
  GError *error = NULL;
  SpawnProcess *proc;

  g_test_summary ("reading from buffers that never held a byte (a new "
                  "object, a silent process) and writing nothing pass no "
                  "NULL buffer to the C library (run under UBSan)");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  assert_channel_empty (proc, SPAWN_PROCESS_STDOUT);
  assert_channel_empty (proc, SPAWN_PROCESS_STDERR);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, NULL, 0, &error));
  g_assert_no_error (error);
  assert_channel_empty (proc, SPAWN_PROCESS_STDOUT);
  assert_channel_empty (proc, SPAWN_PROCESS_STDERR);
  spawn_process_close_write_channel (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_channel_empty (proc, SPAWN_PROCESS_STDOUT);
  assert_channel_empty (proc, SPAWN_PROCESS_STDERR);
  g_object_unref (proc);
}

typedef struct {
  SpawnProcess *proc;
  int depth;               /* handlers of the signal now running */
  int max_depth;
  guint64 written;
  guint64 to_write;
  int emissions;
  int waits;
  GByteArray *got;
} Reentry;

static void
on_written_write_more (SpawnProcess *proc, guint64 count, gpointer data)
{
  static const char chunk[16] = "0123456789abcde";
  Reentry *r = data;
  GError *error = NULL;

  r->depth++;
  r->max_depth = MAX (r->max_depth, r->depth);
  r->written += count;
  r->emissions++;
  if (r->to_write > 0)
    {
      r->to_write -= sizeof chunk;
      g_assert_true (spawn_process_write (proc, chunk, sizeof chunk, &error));
      g_assert_no_error (error);
    }
  r->depth--;
}

static void
on_ready_wait_more (SpawnProcess *proc, gpointer data)
{
  Reentry *r = data;
  GError *error = NULL;

  r->depth++;
  r->max_depth = MAX (r->max_depth, r->depth);
  r->emissions++;
  collect_channel (proc, SPAWN_PROCESS_STDOUT, r->got);
  /* Ask for more and wait for it from inside the handler, a few times. */
  while (r->waits < 20)
    {
      r->waits++;
      g_assert_true (spawn_process_write (proc, "more\n", 5, &error));
      g_assert_no_error (error);
      g_assert_true (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error));
      g_assert_no_error (error);
      collect_channel (proc, SPAWN_PROCESS_STDOUT, r->got);
    }
  r->depth--;
}

static gboolean
is_finished_or_waited (gpointer data)
{
  Reentry *r = data;

  return r->waits >= 20;
}

static void
test_no_recursive_emission (gconstpointer data)
{
  GError *error = NULL;
  Reentry r;
  Events ev;
  int round;

  g_test_summary ("a bytes-written handler that writes again, and a "
                  "ready-read-stdout handler that waits for more output, are "
                  "not re-entered (QIODevice's guarantee): 1 MB in 16-byte "
                  "writes from the handler, each count announced once");
  if (!testutil_use_backend (data))
    return;

  memset (&r, 0, sizeof r);
  r.proc = testutil_helper_process ("cat", NULL);
  r.to_write = 1024 * 1024;
  events_watch (&ev, r.proc);
  spawn_process_set_channel_mode (r.proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_DISCARD);
  g_signal_connect (r.proc, "bytes-written", G_CALLBACK (on_written_write_more), &r);
  testutil_start_ok (r.proc);
  g_assert_true (spawn_process_write (r.proc, "go", 2, &error));
  g_assert_no_error (error);
  /* Whatever the handlers left buffered goes out from here. */
  while (r.to_write > 0 || spawn_process_get_bytes_to_write (r.proc) > 0)
    {
      g_assert_true (spawn_process_wait_for_bytes_written (r.proc, WAIT_MS, NULL, &error));
      g_assert_no_error (error);
    }
  spawn_process_close_write_channel (r.proc);
  wait_finished_ok (r.proc, WAIT_MS);
  assert_exited (r.proc, &ev, 0);
  g_test_message ("%d emissions of bytes-written", r.emissions);
  g_assert_cmpint (r.max_depth, ==, 1);
  g_assert_cmpuint (r.written, ==, 2 + 1024 * 1024);
  g_assert_cmpuint (ev.written, ==, 2 + 1024 * 1024);
  g_object_unref (r.proc);
  events_clear (&ev);

  for (round = 0; round < 2; round++)
    {
      memset (&r, 0, sizeof r);
      r.got = g_byte_array_new ();
      r.proc = testutil_helper_process ("cat", NULL);
      events_watch (&ev, r.proc);
      g_signal_connect (r.proc, "ready-read-stdout", G_CALLBACK (on_ready_wait_more), &r);
      testutil_start_ok (r.proc);
      g_assert_true (spawn_process_write (r.proc, "first\n", 6, &error));
      g_assert_no_error (error);
      /* From the main loop, then from a wait. */
      if (round == 0)
        g_assert_true (iterate_until (is_finished_or_waited, &r, WAIT_MS));
      else
        while (r.waits < 20)
          {
            g_assert_true (spawn_process_wait_for_ready_read (r.proc, WAIT_MS, NULL, &error));
            g_assert_no_error (error);
          }
      spawn_process_close_write_channel (r.proc);
      wait_finished_ok (r.proc, WAIT_MS);
      assert_exited (r.proc, &ev, 0);
      collect_channel (r.proc, SPAWN_PROCESS_STDOUT, r.got);
      g_assert_cmpint (r.max_depth, ==, 1);
      g_assert_cmpuint (r.got->len, ==, 6 + 20 * 5);
      g_object_unref (r.proc);
      g_byte_array_unref (r.got);
      events_clear (&ev);
    }
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

/* Field @field (1-based, as in proc(5)) of /proc/PID/stat, from the
 * state on (field 3): comm may hold anything, so from the last ')'. */
static long
stat_field (GPid pid, int field)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  g_auto (GStrv) fields = NULL;
  char *paren;

  g_assert_true (g_file_get_contents (path, &stat, NULL, NULL));
  paren = strrchr (stat, ')');
  g_assert_nonnull (paren);
  fields = g_strsplit (paren + 2, " ", -1);
  g_assert_cmpuint (g_strv_length (fields), >, (guint) field - 3);
  return strtol (fields[field - 3], NULL, 10);
}

static void
test_start_detached_session (gconstpointer data)
{
  const char *missing[] = { "no-such-program-anywhere", NULL };
  GError *error = NULL;
  SpawnProcess *proc;
  GPid pid = 0;
  Events ev;

  g_test_summary ("start_detached() puts the program in a session and "
                  "process group of its own (a Ctrl-C for ours does not reach "
                  "it), and a failure emits error-occurred FAILED_TO_START as "
                  "QProcess 6 does");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("sleep", "100000", NULL);
  events_watch (&ev, proc);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_runs_helper (pid);
  g_test_message ("ours: pgid %d sid %d; detached: pgid %ld sid %ld",
                  (int) getpgrp (), (int) getsid (0), stat_field (pid, 5), stat_field (pid, 6));
  g_assert_cmpint (stat_field (pid, 5), !=, getpgrp ());
  g_assert_cmpint (stat_field (pid, 6), !=, getsid (0));
  /* Its own leader: the session and the group are its PID. */
  g_assert_cmpint (stat_field (pid, 6), ==, pid);
  g_assert_cmpint (stat_field (pid, 5), ==, pid);
  g_assert_no_errno (kill (pid, SIGKILL));
  assert_ended (pid, TRUE);
  g_assert_cmpstr (ev.log->str, ==, "");
  g_object_unref (proc);
  events_clear (&ev);

  proc = spawn_process_new (missing);
  events_watch (&ev, proc);
  g_assert_false (spawn_process_start_detached (proc, &pid, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_cmpuint (ev.states->len, ==, 0);
  g_object_unref (proc);
  events_clear (&ev);
  testutil_assert_no_children ();
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "exit-codes", test_exit_codes },
    { "crash", test_crash },
    { "not-found", test_not_found },
    { "wait-timeout", test_wait_timeout },
    { "terminate-kill", test_terminate_kill },
    { "echo-main-loop", test_echo_main_loop },
    { "echo-blocking", test_echo_blocking },
    { "merged", test_merged },
    { "read-line", test_read_line },
    { "close-write-channel", test_close_write_channel },
    { "stdout-closed-early", test_stdout_closed_early },
    { "output-before-finished", test_output_before_finished },
    { "pipe-held-open", test_pipe_held_open },
    { "environment", test_environment },
    { "working-directory", test_working_directory },
    { "start-detached", test_start_detached },
    { "many", test_many },
    { "threads", test_threads },
    { "dispose-kill", test_dispose_kill },
    { "dispose-leave-running", test_dispose_leave_running },
    { "kill-timeout", test_kill_timeout },
    { "write-closed-stdin", test_write_closed_stdin },
    { "channel-file", test_channel_file },
    { "channel-discard", test_channel_discard },
    { "channel-forward", test_channel_forward },
    { "bad-file", test_bad_file },
    { "execute", test_execute },
    { "cpu-times", test_cpu_times },
    { "wait-zero", test_wait_zero },
    { "wait-one-thing", test_wait_one_thing },
    { "poll-fails", test_poll_fails },
    { "kill-timeout-late", test_kill_timeout_late },
    { "signal-exited", test_signal_exited },
    { "environment-duplicate", test_environment_duplicate },
    { "empty-buffers", test_empty_buffers },
    { "no-recursive-emission", test_no_recursive_emission },
    { "drop-in-handler", test_drop_in_handler },
    { "execute-threads", test_execute_threads },
    { "wait-foreign-context", test_wait_foreign_context },
    { "restart-in-handler", test_restart_in_handler },
    { "start-detached-session", test_start_detached_session },
  };

  testutil_init (&argc, &argv);

  testutil_add_backend_cases ("/spawn/process", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
