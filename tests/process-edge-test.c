/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* SpawnProcess at its edges: a watching context that died, descriptors
 * closed behind our back, a status someone else took, input left at the
 * end, no program at all, a write the pipe took at once, communicate()
 * from the end's handlers and twice at a time, a write with no process,
 * a wait pending when the object is disposed, input after stdin closed.
 *
 * Each case is one that failed before its fix (the third round of outside
 * review, issue 24).  Every case that starts a process runs once per
 * backend; a backend the kernel lacks is skipped with the reason.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libspawn/libspawn.h>
#include "testutil.h"

#define WAIT_MS 30000

/* ---- a context that dies before the wait ---- */

static gpointer
start_from_dying_context (gpointer data)
{
  GMainContext *context = g_main_context_new ();
  SpawnProcess *proc = data;

  g_main_context_push_thread_default (context);
  testutil_start_ok (proc);
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return NULL;
}

static gpointer
try_acquire_default (gpointer data G_GNUC_UNUSED)
{
  GMainContext *context = g_main_context_default ();
  gboolean acquired = g_main_context_acquire (context);

  if (acquired)
    g_main_context_release (context);
  return GINT_TO_POINTER (acquired);
}

static void
assert_default_context_free (void)
{
  GThread *t = g_thread_new ("acquire-default", try_acquire_default, NULL);

  g_assert_true (GPOINTER_TO_INT (g_thread_join (t)));
}

static void
test_dead_context (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GBytes) out = NULL;
  GError *error = NULL;

  g_test_summary ("A worker thread starts a process from a context of its own, "
                  "then pops and frees that context: a later wait and "
                  "communicate() work, without a critical, and leave the "
                  "default context free for other threads");
  if (!testutil_use_backend (data))
    return;

  proc = testutil_helper_process ("exit", "3", NULL);
  g_thread_join (g_thread_new ("dying-context", start_from_dying_context, proc));
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 3);
  assert_default_context_free ();
  g_clear_object (&proc);

  proc = testutil_helper_process ("lines", "2", NULL);
  g_thread_join (g_thread_new ("dying-context", start_from_dying_context, proc));
  g_assert_true (spawn_process_communicate (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out),
                   "line 0\nline 1\nend", 17);
  assert_default_context_free ();
}

/* ---- descriptors closed behind our back ---- */

static void
count_error (SpawnProcess *proc G_GNUC_UNUSED, const GError *error, gpointer data)
{
  int *failed_to_start = data;

  if (g_error_matches (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_FAILED_TO_START))
    (*failed_to_start)++;
}

/* @proc holds @fd (given with take_fd() or set_channel_fd()), which the
 * application has closed: the start fails with INVAL before any pipe is
 * opened, and the number, once someone else's, is not closed again. */
static void
assert_closed_fd_refused (SpawnProcess *proc, int fd)
{
  GError *error = NULL;
  int failed_to_start = 0;
  int fds = testutil_count_fds ();
  int other;

  g_signal_connect (proc, "error-occurred", G_CALLBACK (count_error), &failed_to_start);
  g_assert_no_errno (close (fd));
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_cmpint (failed_to_start, ==, 1);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_cmpint (testutil_count_fds (), ==, fds - 1);

  /* The number is someone else's now. */
  other = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (other, >=, 0);
  if (other != fd)
    {
      g_assert_cmpint (dup2 (other, fd), ==, fd);
      g_assert_no_errno (close (other));
    }
  g_object_unref (proc);
  g_assert_cmpint (fcntl (fd, F_GETFD), >=, 0);
  g_assert_no_errno (close (fd));
  testutil_assert_no_children ();
}

static void
test_closed_take_fd (gconstpointer data)
{
  SpawnProcess *proc;
  int fd;

  g_test_summary ("take_fd() with a source fd the application closed before the "
                  "start: SPAWN_ERROR_INVAL and error-occurred, no child, and "
                  "the number is never closed a second time");
  if (!testutil_use_backend (data))
    return;
  fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  proc = testutil_helper_process ("cat", NULL);
  spawn_process_take_fd (proc, fd, 5);
  assert_closed_fd_refused (proc, fd);
}

static void
test_closed_channel_fd (gconstpointer data)
{
  SpawnProcess *proc;
  int fd;

  g_test_summary ("set_channel_fd() with an fd the application closed before the "
                  "start: SPAWN_ERROR_INVAL, and never closed a second time");
  if (!testutil_use_backend (data))
    return;
  fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  proc = testutil_helper_process ("cat", NULL);
  spawn_process_set_channel_fd (proc, SPAWN_PROCESS_STDOUT, fd);
  assert_closed_fd_refused (proc, fd);
}

/* ---- a status someone else took ---- */

static gpointer
reap_everything (gpointer data G_GNUC_UNUSED)
{
  /* The application's waitpid(-1), in a thread of its own; this test
   * process is a subprocess of its own, so it steals only from us. */
  for (;;)
    if (waitpid (-1, NULL, __WALL) < 0 && errno == ECHILD)
      g_usleep (200);
  return NULL;
}

static void
test_execute_status_lost (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "7", NULL };
  int i, lost = 0, exited = 0;

  g_test_summary ("spawn_process_execute() with a waitpid(-1) thread in the "
                  "application: each run either reports its status or fails "
                  "with SPAWN_ERROR_STATUS_LOST, never TRUE with @info untouched");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;

  g_thread_unref (g_thread_new ("waitpid-thief", reap_everything, NULL));
  for (i = 0; i < 20; i++)
    {
      SpawnExitInfo info = { .kind = SPAWN_EXIT_KILLED, .status = 99 };
      GError *error = NULL;

      if (spawn_process_execute (argv, WAIT_MS, NULL, NULL, &info, NULL, &error))
        {
          g_assert_no_error (error);
          g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
          g_assert_cmpint (info.status, ==, 7);
          exited++;
        }
      else
        {
          g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST);
          g_clear_error (&error);
          lost++;
        }
    }
  g_test_message ("backend %s: %d statuses reported, %d lost and said so",
                  spawn_backend_to_string (testutil_backend (data)), exited, lost);
}

/* ---- input left at the end ---- */

static void
test_stdin_kept_at_end (gconstpointer data)
{
  const char *cat[] = { testutil_helper, "cat", NULL };
  g_autoptr (SpawnProcess) proc = NULL;
  g_autofree char *big = g_malloc0 (1024 * 1024);
  g_autoptr (GBytes) in = g_bytes_new_static ("line3\n", 6);
  g_autoptr (GBytes) out = NULL;
  GError *error = NULL;

  g_test_summary ("As QProcess's startStopStartStopBuffers: input the process "
                  "never read is still counted by get_bytes_to_write() after "
                  "its end, and the next start begins with every buffer empty");
  if (!testutil_use_backend (data))
    return;

  /* It never reads: 1 MiB is more than any pipe holds. */
  proc = testutil_helper_process ("sleep", "100000", NULL);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, big, 1024 * 1024, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (spawn_process_get_bytes_to_write (proc), >, 0);
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (spawn_process_get_bytes_to_write (proc), >, 0);

  spawn_process_set_argv (proc, cat);
  testutil_start_ok (proc);
  g_assert_cmpuint (spawn_process_get_bytes_to_write (proc), ==, 0);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 0);
  g_assert_true (spawn_process_communicate (proc, in, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out), "line3\n", 6);
}

/* ---- no program ---- */

static void
assert_no_program_refused (SpawnProcess *proc)
{
  GError *error = NULL;
  int failed_to_start = 0;

  g_signal_connect (proc, "error-occurred", G_CALLBACK (count_error), &failed_to_start);
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_clear_error (&error);
  g_assert_false (spawn_process_start_detached (proc, NULL, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_clear_error (&error);
  g_assert_cmpint (failed_to_start, ==, 2);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_error (spawn_process_get_error (proc), SPAWN_PROCESS_ERROR,
                  SPAWN_PROCESS_ERROR_FAILED_TO_START);
}

static void
test_no_program (void)
{
  const char *empty[] = { NULL };
  SpawnProcess *proc;

  g_test_summary ("A process without a program (none given, or an empty argv "
                  "set through the property) fails to start with "
                  "SPAWN_ERROR_INVAL and error-occurred, as QProcess's "
                  "FailedToStart, not with a critical");
  proc = spawn_process_new (NULL);
  assert_no_program_refused (proc);
  g_object_unref (proc);
  proc = g_object_new (SPAWN_TYPE_PROCESS, "argv", empty, NULL);
  g_assert_null (spawn_process_get_argv (proc));
  assert_no_program_refused (proc);
  g_object_unref (proc);
}

/* ---- a write the pipe took at once ---- */

static void
test_bytes_written_at_once (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;

  g_test_summary ("write() that the pipe takes at once, then "
                  "wait_for_bytes_written(): TRUE, as QProcess; a second wait "
                  "with nothing written since fails with WRITE_ERROR");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, "hello\n", 6, &error));
  g_assert_cmpuint (spawn_process_get_bytes_to_write (proc), ==, 0);
  g_assert_true (spawn_process_wait_for_bytes_written (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (spawn_process_wait_for_bytes_written (proc, WAIT_MS, NULL, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR);
  g_clear_error (&error);
  spawn_process_close_write_channel (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
}

/* ---- communicate() from the end's handlers, and twice ---- */

typedef struct {
  gboolean called;
  gboolean ok;
  GBytes *out;
  GError *error;
} Communicated;

static void
communicate_on_end (SpawnProcess *proc, SpawnProcessState state, gpointer data)
{
  Communicated *c = data;

  if (state != SPAWN_PROCESS_NOT_RUNNING || c->called)
    return;
  c->called = TRUE;
  c->ok = spawn_process_communicate (proc, NULL, NULL, &c->out, NULL, &c->error);
}

static void
test_communicate_in_end_handler (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  Communicated c = { 0 };
  GError *error = NULL;

  g_test_summary ("communicate() from a handler of the end (state-changed to "
                  "not running, before \"finished\") returns what is buffered, as "
                  "its documentation says of an ended process");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("lines", "2", NULL);
  g_signal_connect (proc, "state-changed", G_CALLBACK (communicate_on_end), &c);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (c.called);
  g_assert_no_error (c.error);
  g_assert_true (c.ok);
  g_assert_cmpmem (g_bytes_get_data (c.out, NULL), g_bytes_get_size (c.out),
                   "line 0\nline 1\nend", 17);
  g_bytes_unref (c.out);
}

static void
communicated (GObject *source, GAsyncResult *result, gpointer data)
{
  Communicated *c = data;

  c->called = TRUE;
  c->ok = spawn_process_communicate_finish (SPAWN_PROCESS (source), result, &c->out, NULL,
                                            &c->error);
}

static void
test_communicate_twice (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GBytes) in = g_bytes_new_static ("abc", 3);
  g_autoptr (GBytes) out = NULL;
  Communicated first = { 0 }, second = { 0 };
  GError *error = NULL;

  g_test_summary ("A second communicate() while one runs fails with "
                  "G_IO_ERROR_PENDING (async or blocking) instead of getting "
                  "nothing; the first gets all of the output");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  testutil_start_ok (proc);
  spawn_process_communicate_async (proc, in, NULL, communicated, &first);
  spawn_process_communicate_async (proc, NULL, NULL, communicated, &second);
  g_assert_false (spawn_process_communicate (proc, NULL, NULL, &out, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_PENDING);
  g_clear_error (&error);
  while (!first.called || !second.called)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (first.error);
  g_assert_cmpmem (g_bytes_get_data (first.out, NULL), g_bytes_get_size (first.out), "abc", 3);
  g_assert_false (second.ok);
  g_assert_error (second.error, G_IO_ERROR, G_IO_ERROR_PENDING);
  g_assert_null (second.out);
  g_bytes_unref (first.out);
  g_clear_error (&second.error);
}

/* ---- a write with no process to take it ---- */

static void
test_write_not_running (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GBytes) out = NULL;
  GError *error = NULL;

  g_test_summary ("spawn_process_write() before the start and after the end "
                  "fails with NOT_RUNNING, and what it refused is not kept for "
                  "the run that follows");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  g_assert_false (spawn_process_write (proc, "early", 5, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_clear_error (&error);

  testutil_start_ok (proc);
  g_assert_true (spawn_process_write (proc, "run", 3, &error));
  g_assert_no_error (error);
  spawn_process_close_write_channel (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  out = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out), "run", 3);

  g_assert_false (spawn_process_write (proc, "late", 4, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_clear_error (&error);
}

/* ---- a wait pending when the object is disposed ---- */

typedef struct {
  gboolean called;
  gboolean ok;
  GError *error;
} Waited;

static void
waited (GObject *source, GAsyncResult *result, gpointer data)
{
  Waited *w = data;

  w->called = TRUE;
  w->ok = spawn_process_wait_finish (SPAWN_PROCESS (source), result, &w->error);
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_dispose_pending_wait (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  Waited w = { 0 };
  gboolean timed_out = FALSE;
  guint timeout;

  g_test_summary ("g_object_run_dispose() (a binding's destroy) with a "
                  "wait_async() pending answers it: NOT_RUNNING, saying the "
                  "object was disposed, not a callback that never comes");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  testutil_start_ok (proc);
  spawn_process_wait_async (proc, NULL, waited, &w);
  g_object_run_dispose (G_OBJECT (proc));
  timeout = g_timeout_add (WAIT_MS, set_flag, &timed_out);
  while (!w.called && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (timeout);
  g_assert_true (w.called);
  g_assert_false (w.ok);
  g_assert_error (w.error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_assert_nonnull (strstr (w.error->message, "disposed"));
  g_clear_error (&w.error);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
}

/* ---- input after the write channel was closed ---- */

static void
test_communicate_after_close_write (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GBytes) in = g_bytes_new_static ("abc", 3);
  g_autoptr (GBytes) out = NULL;
  GError *error = NULL;

  g_test_summary ("communicate() with input after close_write_channel() "
                  "fails at once with WRITE_ERROR instead of waiting for the "
                  "end with the input dropped; it leaves no waiter behind, and "
                  "a second communicate() without input gets the output");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("lines", "2", NULL);
  testutil_start_ok (proc);
  spawn_process_close_write_channel (proc);
  g_assert_false (spawn_process_communicate (proc, in, NULL, &out, NULL, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR);
  g_clear_error (&error);
  g_assert_null (out);
  g_assert_true (spawn_process_communicate (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out),
                   "line 0\nline 1\nend", 17);
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "edge/dead-context", test_dead_context },
    { "edge/closed-take-fd", test_closed_take_fd },
    { "edge/closed-channel-fd", test_closed_channel_fd },
    { "edge/execute-status-lost", test_execute_status_lost },
    { "edge/stdin-kept-at-end", test_stdin_kept_at_end },
    { "edge/bytes-written-at-once", test_bytes_written_at_once },
    { "edge/communicate-in-end-handler", test_communicate_in_end_handler },
    { "edge/communicate-twice", test_communicate_twice },
    { "edge/write-not-running", test_write_not_running },
    { "edge/dispose-pending-wait", test_dispose_pending_wait },
    { "edge/communicate-after-close-write", test_communicate_after_close_write },
  };

  testutil_init (&argc, &argv);
  g_test_add_func ("/spawn/process/edge/no-program", test_no_program);
  testutil_add_backend_cases ("/spawn/process", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
