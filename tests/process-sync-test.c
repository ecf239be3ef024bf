/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* process-sync-test.c - GSubprocess's blocking calls from any thread, and
 * what SpawnProcess says when it is used in the wrong state
 *
 * spawn_process_wait() and wait_check() on a process that has ended,
 * was never started, or is waited for with a cancellable cancelled
 * before; a worker thread that waits while the thread that owns the
 * process's context holds it without running it, and then lets it go
 * (the worker takes the wait over); start() while running; the setters
 * while running (the next start's); communicate() on a child whose
 * background job holds its stdout, from a worker and cancelled; and the
 * messages of the errors,
 * which name the program and say what happened.  Side by side with
 * GSubprocess: tests/port-test.c.
 */
#include "process-testutil.h"
#include "testutil.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

static void
assert_message_has (const GError *error, const char *part)
{
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, part));
}

static void
test_wait_ended (gconstpointer data)
{
  g_autoptr (GCancellable) cancelled = g_cancellable_new ();
  g_autofree char *out = NULL;
  SpawnProcess *proc;
  GError *error = NULL;

  g_test_summary ("wait() and wait_check() on a process that has ended (after "
                  "communicate) return at once, as GSubprocess's: TRUE, and "
                  "G_SPAWN_EXIT_ERROR with the status; wait_for_finished() keeps "
                  "QProcess's NOT_RUNNING; a never started process is NOT_RUNNING "
                  "naming the program; a cancellable cancelled before fails the wait");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_sh_process ("echo hi; exit 4");
  g_assert_false (spawn_process_wait (proc, NULL, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  assert_message_has (error, "“sh” is not running");
  g_clear_error (&error);

  testutil_start_ok (proc);
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "hi\n");
  g_assert_true (spawn_process_wait (proc, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (spawn_process_wait_check (proc, NULL, &error));
  g_assert_error (error, G_SPAWN_EXIT_ERROR, 4);
  g_clear_error (&error);
  g_assert_false (spawn_process_wait_for_finished (proc, -1, NULL, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  assert_message_has (error, "“sh”");
  g_clear_error (&error);
  g_cancellable_cancel (cancelled);
  g_assert_false (spawn_process_wait (proc, cancelled, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_object_unref (proc);

  /* The blocking wait itself, from the owning thread, and a signal. */
  proc = testutil_helper_process ("sleep", "100000", NULL);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_true (spawn_process_wait (proc, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (spawn_process_wait_check (proc, NULL, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED);
  g_clear_error (&error);
  g_assert_true (spawn_process_get_if_signaled (proc));
  g_assert_cmpint (spawn_process_get_term_sig (proc), ==, SIGKILL);
  g_object_unref (proc);
  testutil_assert_no_children ();
}

/* A worker's wait on a process whose context the main thread holds. */
typedef struct {
  SpawnProcess *proc;
  gboolean ok;
  GError *error;
  GThread *finished_in;
} Takeover;

static void
takeover_finished (SpawnProcess *proc G_GNUC_UNUSED, int code G_GNUC_UNUSED,
                   int status G_GNUC_UNUSED, gpointer info G_GNUC_UNUSED, gpointer data)
{
  Takeover *t = data;

  t->finished_in = g_thread_self ();
}

static gpointer
takeover_thread (gpointer data)
{
  Takeover *t = data;

  t->ok = spawn_process_wait_check (t->proc, NULL, &t->error);
  return NULL;
}

static void
test_wait_takeover (gconstpointer data)
{
  Takeover t = { NULL, FALSE, NULL, NULL };
  GMainContext *context = g_main_context_default ();
  GThread *thread;
  gint64 deadline;

  g_test_summary ("a worker waits while the main thread owns the process's context "
                  "(its wait is queued there); the main thread then lets the context "
                  "go without running it: the worker takes the wait over, sees the "
                  "end and returns TRUE; \"finished\" is emitted in the worker");
  if (!testutil_use_backend (data))
    return;
  t.proc = testutil_helper_process ("cat", NULL);
  g_signal_connect (t.proc, "finished", G_CALLBACK (takeover_finished), &t);
  testutil_start_ok (t.proc);
  g_assert_true (g_main_context_acquire (context));
  thread = g_thread_new ("waiter", takeover_thread, &t);
  /* The worker's request is an idle source in our context: ready once
   * it has been queued (cat writes nothing, its own source is idle). */
  deadline = g_get_monotonic_time () + WAIT_MS * G_TIME_SPAN_MILLISECOND;
  while (!g_main_context_pending (context))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (1000);
    }
  spawn_process_close_write_channel (t.proc);
  g_main_context_release (context);
  g_thread_join (thread);
  g_assert_no_error (t.error);
  g_assert_true (t.ok);
  g_assert_true (t.finished_in == thread);
  g_assert_true (spawn_process_get_successful (t.proc));
  /* The queued request was taken back: nothing left to dispatch for it. */
  while (g_main_context_iteration (context, FALSE))
    ;
  g_object_unref (t.proc);
  testutil_assert_no_children ();
}

/* A wait from a worker while the main thread runs the context by
 * polling: one iteration without blocking, then a sleep. */
typedef struct {
  SpawnProcess *proc;
  GCancellable *cancellable;
  gboolean ok;
  GError *error;
  int done;
} PollingWait;

static gpointer
polling_wait_thread (gpointer data)
{
  PollingWait *pw = data;

  pw->ok = spawn_process_wait (pw->proc, pw->cancellable, &pw->error);
  g_atomic_int_set (&pw->done, 1);
  return NULL;
}

static gboolean
polling_cancel_cb (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

static void
test_wait_polling_loop (gconstpointer data)
{
  PollingWait pw = { NULL, NULL, FALSE, NULL, 0 };
  GError *error = NULL;
  GThread *thread;
  gint64 deadline;

  g_test_summary ("a worker waits for a long sleep while the main thread runs "
                  "the context by polling (a non-blocking iteration, then 20 ms "
                  "of sleep: the context is free most of the time); that loop's "
                  "timeout cancels the wait 300 ms in: the wait says CANCELLED "
                  "and the process still runs.  A worker that took a context it "
                  "found free until the end kept the timeout from running");
  if (!testutil_use_backend (data))
    return;
  pw.proc = testutil_helper_process ("sleep", "100000", NULL);
  testutil_start_ok (pw.proc);
  pw.cancellable = g_cancellable_new ();
  g_timeout_add (300, polling_cancel_cb, pw.cancellable);
  thread = g_thread_new ("waiter", polling_wait_thread, &pw);
  deadline = g_get_monotonic_time () + WAIT_MS * G_TIME_SPAN_MILLISECOND;
  while (!g_atomic_int_get (&pw.done))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (20 * 1000);
    }
  g_thread_join (thread);
  g_assert_error (pw.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (pw.ok);
  g_clear_error (&pw.error);
  g_assert_cmpint (spawn_process_get_state (pw.proc), ==, SPAWN_PROCESS_RUNNING);
  g_assert_true (spawn_process_kill (pw.proc, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_wait (pw.proc, NULL, &error));
  g_assert_no_error (error);
  /* Nothing of the cancelled wait is left to dispatch. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_object_unref (pw.cancellable);
  g_object_unref (pw.proc);
  testutil_assert_no_children ();
}

static void
test_start_running (gconstpointer data)
{
  SpawnProcess *proc;
  GError *error = NULL;
  Events ev;

  g_test_summary ("start() while running fails with SPAWN_PROCESS_ERROR_RUNNING "
                  "naming the program and its PID, emits nothing and leaves the "
                  "run alone");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("sleep", "100000", NULL);
  events_watch (&ev, proc);
  testutil_start_ok (proc);
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_RUNNING);
  assert_message_has (error, testutil_helper);
  {
    g_autofree char *pid = g_strdup_printf ("PID %d", (int) spawn_process_get_pid (proc));

    assert_message_has (error, pid);
  }
  g_clear_error (&error);
  g_assert_cmpstr (ev.log->str, ==, "started");
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  g_assert_true (spawn_process_kill (proc, &error));
  wait_finished_ok (proc, WAIT_MS);
  assert_crashed (proc, &ev, SIGKILL);
  g_object_unref (proc);
  events_clear (&ev);
  testutil_assert_no_children ();
}

static void
test_setters_running (gconstpointer data)
{
  g_autofree char *out = NULL;
  SpawnProcess *proc;
  GError *error = NULL;

  g_test_summary ("the setters while running apply to the next start: a running "
                  "`cat` keeps its stdout pipe (communicate still reads it) and "
                  "its kill timeout; the next start runs the new argv with the "
                  "new modes");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_sh_process ("cat");
  testutil_start_ok (proc);
  spawn_process_set_argv (proc, (const char *[]) { "sh", "-c", "echo second", NULL });
  spawn_process_set_working_directory (proc, "/");
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_MERGE);
  spawn_process_set_kill_timeout (proc, 1);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDIN), ==,
                   SPAWN_CHANNEL_DISCARD);
  /* The running cat still has its stdin and stdout pipes, and no kill
   * timeout. */
  g_assert_true (spawn_process_communicate_utf8 (proc, "first\n", NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "first\n");
  g_assert_true (spawn_process_get_successful (proc));
  g_clear_pointer (&out, g_free);
  spawn_process_set_kill_timeout (proc, 0);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "second\n");
  g_object_unref (proc);
  testutil_assert_no_children ();
}

static void
on_error_message (SpawnProcess *proc G_GNUC_UNUSED, const GError *error, gpointer data)
{
  g_ptr_array_add (data, g_strdup (error->message));
}

static void
test_messages (gconstpointer data)
{
  g_autoptr (GPtrArray) messages = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *pid = NULL;
  SpawnProcess *proc;
  const GError *last;
  GError *error = NULL;
  int fds[2];

  g_test_summary ("every error names the program and says what happened: a "
                  "signal by number and name, the kill timeout with the PID, a "
                  "redirection file by channel, program and path, a closed "
                  "channel fd by channel name, a write to an ended process");
  if (!testutil_use_backend (data))
    return;

  proc = testutil_sh_process ("kill -9 $$");
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait (proc, NULL, &error));
  last = spawn_process_get_error (proc);
  g_assert_error (last, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_CRASHED);
  g_assert_cmpstr (last->message, ==, "“sh” was killed by signal 9 (SIGKILL)");
  g_assert_false (spawn_process_write (proc, "x", 1, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_assert_cmpstr (error->message, ==, "“sh” is not running");
  g_clear_error (&error);
  /* kill() on an ended process does nothing, as g_subprocess_force_exit()
   * (process-flags-test); send_signal() says why it cannot. */
  g_assert_true (spawn_process_kill (proc, &error));
  g_assert_no_error (error);
  g_assert_false (spawn_process_send_signal (proc, SIGTERM, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_assert_cmpstr (error->message, ==, "“sh” is not running");
  g_clear_error (&error);
  g_object_unref (proc);

  proc = testutil_helper_process ("sleep", "100000", NULL);
  spawn_process_set_kill_timeout (proc, 50);
  g_signal_connect (proc, "error-occurred", G_CALLBACK (on_error_message), messages);
  testutil_start_ok (proc);
  pid = g_strdup_printf ("“%s” (PID %d) still ran after its kill timeout of 50 ms "
                         "and was killed", testutil_helper,
                         (int) spawn_process_get_pid (proc));
  g_assert_true (spawn_process_wait (proc, NULL, &error));
  g_assert_no_error (error);
  /* One error for one end: the timeout's message says it was killed. */
  g_assert_cmpuint (messages->len, ==, 1);
  g_assert_cmpstr (messages->pdata[0], ==, pid);
  g_assert_cmpstr (spawn_process_get_error (proc)->message, ==, pid);
  g_object_unref (proc);

  proc = testutil_sh_process ("true");
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, "/nonexistent/dir/out", FALSE);
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_NOENT);
  g_assert_cmpstr (error->message, ==,
                   "stdout of “sh”: cannot open “/nonexistent/dir/out”: "
                   "No such file or directory");
  g_clear_error (&error);
  g_object_unref (proc);

  g_assert_no_errno (pipe (fds));
  close (fds[1]);
  proc = testutil_sh_process ("true");
  spawn_process_set_channel_fd (proc, SPAWN_PROCESS_STDERR, fds[0]);
  close (fds[0]);
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  assert_message_has (error, "for its stderr is not open");
  assert_message_has (error, "“sh”");
  g_clear_error (&error);
  g_object_unref (proc);
  testutil_assert_no_children ();
}

/* ---- communicate() while a descendant holds the child's stdout ---- */

typedef struct {
  SpawnProcess *proc;
  const char *input;
  GCancellable *cancellable;
  char *out;
  gboolean ok;
  GError *error;
  int done;
} Held;

static gpointer
held_communicate_thread (gpointer data)
{
  Held *h = data;

  h->ok = spawn_process_communicate_utf8 (h->proc, h->input, h->cancellable, &h->out, NULL,
                                          &h->error);
  g_atomic_int_set (&h->done, 1);
  return NULL;
}

static SpawnProcess *
held_start (const char *script, const char *arg)
{
  const char *argv[] = { "sh", "-c", script, "sh", arg, NULL };
  GError *error = NULL;
  SpawnProcess *proc = spawn_process_newv (argv, G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                   G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                           &error);

  g_assert_no_error (error);
  g_assert_nonnull (proc);
  return proc;
}

static void
held_worker (gconstpointer data, gboolean loop)
{
  Held h = { NULL, "go\n", NULL, NULL, FALSE, NULL, 0 };
  GError *error = NULL;
  GThread *thread;
  gint64 deadline;

  if (!testutil_use_backend (data))
    return;
  /* The child waits for its input, so that its end cannot be seen before
   * communicate() has begun; then it ends at once, and its background
   * subshell writes "b" 300 ms later through the stdout it inherited. */
  h.proc = held_start ("read x; echo a; (sleep 0.3; echo b) &", NULL);
  thread = g_thread_new ("communicate", held_communicate_thread, &h);
  deadline = g_get_monotonic_time () + WAIT_MS * G_TIME_SPAN_MILLISECOND;
  while (loop && !g_atomic_int_get (&h.done))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (5 * 1000);
    }
  g_thread_join (thread);
  g_assert_no_error (h.error);
  g_assert_true (h.ok);
  g_assert_cmpstr (h.out, ==, "a\nb\n");
  g_assert_true (spawn_process_wait_check (h.proc, NULL, &error));
  g_assert_no_error (error);
  g_free (h.out);
  g_object_unref (h.proc);
  testutil_assert_no_children ();
}

static void
test_communicate_held_worker (gconstpointer data)
{
  g_test_summary ("communicate_utf8 from a worker while the main thread runs the "
                  "process's context; the child ends first and its background "
                  "subshell writes a second line later: both lines, as "
                  "GSubprocess (the run ends at the pipe's end of file)");
  held_worker (data, TRUE);
}

static void
test_communicate_held_worker_alone (gconstpointer data)
{
  g_test_summary ("the same with nobody running the context (the main thread "
                  "only joins): the worker polls it itself, slice by slice, "
                  "without spinning on the ended child's fd");
  held_worker (data, FALSE);
}

static gpointer
held_cancel_thread (gpointer data)
{
  g_usleep (300 * 1000);
  g_cancellable_cancel (data);
  return NULL;
}

static void
test_communicate_held_cancel (gconstpointer data)
{
  g_autofree char *dir = NULL, *pidfile = NULL;
  Held h = { NULL, NULL, NULL, NULL, FALSE, NULL, 0 };
  GError *error = NULL;
  GThread *thread;

  g_test_summary ("a blocking communicate_utf8 on a child that ends at once and "
                  "leaves `sleep 100` holding its stdout, cancelled from another "
                  "thread: CANCELLED; then wait_check returns with the child's "
                  "status (the end held for communicate is let go) and the "
                  "process is no longer running");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("sync-test-XXXXXX", &error);
  g_assert_no_error (error);
  pidfile = g_build_filename (dir, "holder.pid", NULL);
  h.proc = held_start ("echo a; sleep 100 < /dev/null & echo $! > \"$1\"", pidfile);
  h.cancellable = g_cancellable_new ();
  thread = g_thread_new ("cancel", held_cancel_thread, h.cancellable);
  h.ok = spawn_process_communicate_utf8 (h.proc, NULL, h.cancellable, &h.out, NULL,
                                         &h.error);
  g_thread_join (thread);
  g_assert_error (h.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (h.ok);
  g_assert_null (h.out);
  g_clear_error (&h.error);
  g_assert_true (spawn_process_wait_check (h.proc, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_state (h.proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_cmpint (spawn_process_get_exit_code (h.proc), ==, 0);
  /* What the child wrote before the cancel stays buffered. */
  g_autoptr (GBytes) rest = spawn_process_read_all (h.proc, SPAWN_PROCESS_STDOUT);
  g_assert_cmpmem (g_bytes_get_data (rest, NULL), g_bytes_get_size (rest), "a\n", 2);

  testutil_kill_pidfile (pidfile);
  g_assert_no_errno (g_rmdir (dir));
  g_object_unref (h.cancellable);
  g_object_unref (h.proc);
  testutil_assert_no_children ();
}


static void
held_async_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Held *h = data;
  g_autoptr (GBytes) out = NULL;

  h->ok = spawn_process_communicate_finish (SPAWN_PROCESS (source), res, &out, NULL,
                                            &h->error);
  if (out != NULL)
    h->out = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  g_atomic_int_set (&h->done, 1);
}

static void
test_communicate_held_ready_read (gconstpointer data)
{
  const char *argv[] = { "sh", "-c", "echo a; (sleep 1; echo b) &", NULL };
  Held h = { NULL, NULL, NULL, NULL, FALSE, NULL, 0 };
  GError *error = NULL;
  gint64 deadline;

  g_test_summary ("communicate_async is pending while the owner's "
                  "wait_for_ready_read() passes read: the child ends (its end "
                  "held for communicate), then one pass reads the descendant's "
                  "last line and the end of file at once and returns for the "
                  "data; the end must still come, and communicate complete "
                  "with both lines");
  if (!testutil_use_backend (data))
    return;
  h.proc = spawn_process_new (argv);
  spawn_process_set_channel_mode (h.proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (h.proc);
  spawn_process_communicate_async (h.proc, NULL, NULL, held_async_cb, &h);
  g_assert_true (spawn_process_wait_for_ready_read (h.proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  /* The child's end is seen and held; "b" comes a second later. */
  if (!spawn_process_wait_for_ready_read (h.proc, 200, NULL, &error))
    {
      g_test_message ("second wait: %s", error->message);
      g_clear_error (&error);
    }
  /* "b" and the end of file are both in the pipe for the next pass. */
  g_usleep (1500 * 1000);
  if (!spawn_process_wait_for_ready_read (h.proc, 2000, NULL, &error))
    {
      g_test_message ("third wait: %s", error->message);
      g_clear_error (&error);
    }
  deadline = g_get_monotonic_time () + WAIT_MS * G_TIME_SPAN_MILLISECOND;
  while (!g_atomic_int_get (&h.done))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (10 * 1000);
    }
  g_assert_no_error (h.error);
  g_assert_true (h.ok);
  g_assert_cmpstr (h.out, ==, "a\nb\n");
  g_assert_cmpint (spawn_process_get_state (h.proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_free (h.out);
  g_object_unref (h.proc);
  testutil_assert_no_children ();
}

static void
test_communicate_held_abandoned (gconstpointer data)
{
  g_autofree char *dir = NULL, *pidfile = NULL;
  Held h = { NULL, "go\n", NULL, NULL, FALSE, NULL, 0 };
  GError *error = NULL;
  GThread *worker, *canceller;
  gint64 deadline;

  g_test_summary ("a worker's communicate_utf8 holds the end (the child ended, "
                  "`sleep 100` holds stdout) and is cancelled while the owner "
                  "thread blocks in wait_for_finished(), which keeps the "
                  "worker's cancel from being dispatched: the wait must still "
                  "see that nobody reads any more and end the run, with the "
                  "holder still running");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("sync-test-XXXXXX", &error);
  g_assert_no_error (error);
  pidfile = g_build_filename (dir, "holder.pid", NULL);
  h.proc = held_start ("read x; echo a; sleep 100 < /dev/null & echo $! > \"$1\"", pidfile);
  h.cancellable = g_cancellable_new ();
  /* This thread owns the context throughout, so that the worker's call
   * is queued into it (a worker that found it free would wait as its
   * owner, and our wait_for_finished() would be refused). */
  g_assert_true (g_main_context_acquire (NULL));
  worker = g_thread_new ("communicate", held_communicate_thread, &h);
  /* Run the context until the worker's communicate holds the end: the
   * PID reads 0 then, while the state is still RUNNING. */
  deadline = g_get_monotonic_time () + WAIT_MS * G_TIME_SPAN_MILLISECOND;
  while (spawn_process_get_pid (h.proc) != 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (5 * 1000);
    }
  g_assert_cmpint (spawn_process_get_state (h.proc), ==, SPAWN_PROCESS_RUNNING);
  canceller = g_thread_new ("cancel", held_cancel_thread, h.cancellable);
  g_assert_true (spawn_process_wait_for_finished (h.proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_thread_join (canceller);
  g_thread_join (worker);
  g_assert_error (h.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&h.error);
  g_assert_cmpint (spawn_process_get_exit_code (h.proc), ==, 0);

  /* The run ended although the holder still runs. */
  testutil_kill_pidfile (pidfile);
  g_assert_no_errno (g_rmdir (dir));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_main_context_release (NULL);
  g_object_unref (h.cancellable);
  g_object_unref (h.proc);
  testutil_assert_no_children ();
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "wait-ended", test_wait_ended },
    { "wait-takeover", test_wait_takeover },
    { "wait-polling-loop", test_wait_polling_loop },
    { "communicate-held-worker", test_communicate_held_worker },
    { "communicate-held-worker-alone", test_communicate_held_worker_alone },
    { "communicate-held-cancel", test_communicate_held_cancel },
    { "communicate-held-ready-read", test_communicate_held_ready_read },
    { "communicate-held-abandoned", test_communicate_held_abandoned },
    { "start-running", test_start_running },
    { "setters-running", test_setters_running },
    { "messages", test_messages },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/sync", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
