/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* SpawnProcess: the channels' bytes, both ways (the library's
 * process/channel.c, and run.c's write() and the emissions that announce
 * the bytes).
 *
 * 10 MB through cat driven by the main loop and by the blocking helpers;
 * stdout and stderr apart and merged; read_line(); close_write_channel();
 * a child that closes its stdout, or its stdin, and runs on; all the
 * output in the buffers by "finished", and "finished" while a grandchild
 * holds the pipe; empty buffers; handlers that write or wait again.
 *
 * The cases follow what QProcess's autotest covers.  Every case runs once
 * per backend (/spawn/process/<backend>/...), forced with
 * spawn_set_backend(); a backend the kernel lacks is skipped with the
 * reason.  Cases that change process-wide state (SIGPIPE) run in a
 * subprocess.  Waits poll for readiness with a bound; nothing sleeps to
 * synchronise.  The rest of /spawn/process is in process-run-test.c,
 * process-launch-test.c, process-wait-test.c and process-edge-test.c.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "process-testutil.h"

#define ECHO_SIZE (10 * 1024 * 1024)

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

static guint64
cpu_usec_self (void)
{
  struct rusage ru;

  g_assert_no_errno (getrusage (RUSAGE_SELF, &ru));
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * G_USEC_PER_SEC +
         ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
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

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "echo-main-loop", test_echo_main_loop },
    { "echo-blocking", test_echo_blocking },
    { "merged", test_merged },
    { "read-line", test_read_line },
    { "close-write-channel", test_close_write_channel },
    { "stdout-closed-early", test_stdout_closed_early },
    { "output-before-finished", test_output_before_finished },
    { "pipe-held-open", test_pipe_held_open },
    { "write-closed-stdin", test_write_closed_stdin },
    { "empty-buffers", test_empty_buffers },
    { "no-recursive-emission", test_no_recursive_emission },
  };

  testutil_init (&argc, &argv);

  testutil_add_backend_cases ("/spawn/process", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
