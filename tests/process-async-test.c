/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* The GIO-style calls: spawn_child_wait_async(), spawn_process_wait_async(),
 * wait_check_async(), communicate() and communicate_utf8() (sync and
 * async), and the GCancellable of every blocking call.
 *
 * The cases port what GLib's gio/tests/gsubprocess.c checks of
 * GSubprocess (exit1/cancel, exit1/cancel_in_cb, communicate with each
 * set of pipes, communicate/cancelled, utf8/invalid, communicate/nothing)
 * and add what a poll-based library must also get right: a cancelled wait
 * leaves the child running and uncollected, so that it can be waited for
 * again; callbacks run in the caller's thread-default context, never from
 * inside the _async() call; nothing leaks (descriptors, children).  Every
 * case runs once per backend (/spawn/async/<backend>/...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gio/gio.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <libspawn/libspawn.h>
#include "testutil.h"

#define WAIT_MS 30000
#define BIG_SIZE (10 * 1024 * 1024)

/* ---- helpers ---- */

static SpawnChild *
helper_child (const char *cmd, const char *arg)
{
  const char *argv[] = { testutil_helper, cmd, arg, NULL };
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                          NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (child);
  return child;
}

/* Alive, not a zombie: its status has not been taken or delivered. */
static gboolean
is_running (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  const char *paren;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return FALSE;
  paren = strrchr (stat, ')');
  return paren != NULL && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* What an async callback got, and where it ran. */
typedef struct {
  GAsyncResult *result;
  GObject *source;
  int calls;
  GMainContext *context;   /* of the source that dispatched it, or NULL */
  GThread *thread;
} Catch;

static void
catch_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  Catch *c = data;
  GSource *current = g_main_current_source ();

  c->calls++;
  g_assert_null (c->result);
  c->result = g_object_ref (result);
  c->source = source;
  c->context = current != NULL ? g_source_get_context (current) : NULL;
  c->thread = g_thread_self ();
}

static void
catch_clear (Catch *c)
{
  g_clear_object (&c->result);
  memset (c, 0, sizeof *c);
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the thread-default context until @c has its result; fails
 * after WAIT_MS. */
static void
catch_run (Catch *c)
{
  GMainContext *ctx = g_main_context_get_thread_default ();
  gboolean expired = FALSE;
  GSource *timeout = g_timeout_source_new (WAIT_MS);

  g_source_set_callback (timeout, set_flag, &expired, NULL);
  g_source_attach (timeout, ctx);
  while (c->result == NULL && !expired)
    g_main_context_iteration (ctx, TRUE);
  g_source_destroy (timeout);
  g_source_unref (timeout);
  g_assert_false (expired);
  g_assert_cmpint (c->calls, ==, 1);
  /* From a dispatch of the caller's context, in the caller's thread. */
  g_assert_true (c->context == (ctx != NULL ? ctx : g_main_context_default ()));
  g_assert_true (c->thread == g_thread_self ());
}

/* Runs the thread-default context for a few idle rounds (no waiting). */
static void
drain (void)
{
  int i;

  for (i = 0; i < 10; i++)
    g_main_context_iteration (g_main_context_get_thread_default (), FALSE);
}

static gboolean
cancel_idle (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

/* Cancels @cancellable from another thread after @ms, while the caller
 * blocks (if it is not blocking yet, the cancel comes before, and the
 * case checks the same thing).  A watchdog too: if the blocking call has
 * not returned WAIT_MS after the cancel, @pid (if not 0) is killed, so
 * that a cancel that is ignored fails the case (the wait then returns
 * TRUE, or the wrong error) instead of hanging it. */
typedef struct {
  GCancellable *cancellable;
  int ms;
  GPid pid;
  GMutex lock;
  GCond cond;
  gboolean returned;
} DelayedCancel;

static gpointer
delayed_cancel_main (gpointer data)
{
  DelayedCancel *d = data;
  gint64 until;

  g_usleep (d->ms * 1000);
  g_cancellable_cancel (d->cancellable);
  until = g_get_monotonic_time () + (gint64) WAIT_MS * 1000;
  g_mutex_lock (&d->lock);
  while (!d->returned)
    if (!g_cond_wait_until (&d->cond, &d->lock, until))
      {
        if (!d->returned && d->pid > 0)
          {
            g_printerr ("# watchdog: the cancelled call did not return, killing %d\n",
                        (int) d->pid);
            kill (d->pid, SIGKILL);
          }
        break;
      }
  g_mutex_unlock (&d->lock);
  return NULL;
}

static GThread *
cancel_later (GCancellable *cancellable, int ms, GPid pid, DelayedCancel **out)
{
  DelayedCancel *d = g_new0 (DelayedCancel, 1);

  d->cancellable = cancellable;
  d->ms = ms;
  d->pid = pid;
  g_mutex_init (&d->lock);
  g_cond_init (&d->cond);
  *out = d;
  return g_thread_new ("cancel", delayed_cancel_main, d);
}

/* The blocking call has returned: stop the watchdog, join. */
static void
cancel_later_join (GThread *t, DelayedCancel *d)
{
  g_mutex_lock (&d->lock);
  d->returned = TRUE;
  g_cond_signal (&d->cond);
  g_mutex_unlock (&d->lock);
  g_thread_join (t);
  g_mutex_clear (&d->lock);
  g_cond_clear (&d->cond);
  g_free (d);
}

/* A run before we count descriptors, so that what the library sets up
 * once (probes, the reaper, GLib's worker, the cancellable pipe pool) is
 * there already. */
static int
warm_up (void)
{
  g_autoptr (SpawnProcess) proc = testutil_helper_process ("exit", "0", NULL);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  GError *error = NULL;
  Catch c = { 0 };

  testutil_start_ok (proc);
  spawn_process_wait_async (proc, cancellable, catch_cb, &c);
  catch_run (&c);
  g_assert_true (spawn_process_wait_finish (proc, c.result, &error));
  g_assert_no_error (error);
  catch_clear (&c);
  drain ();
  return testutil_count_fds ();
}

static void
assert_clean (int fds)
{
  drain ();
  if (testutil_count_fds () != fds)
    {
      g_autoptr (GDir) d = g_dir_open ("/proc/self/fd", 0, NULL);
      const char *name;

      while ((name = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *path = g_strdup_printf ("/proc/self/fd/%s", name);
          g_autofree char *target = g_file_read_link (path, NULL);

          g_test_message ("fd %s -> %s", name, target);
        }
    }
  g_assert_cmpint (testutil_count_fds (), ==, fds);
  testutil_assert_no_children ();
}

static GBytes *
pattern_bytes (gsize size)
{
  guint8 *data = g_malloc (size);
  gsize i;

  /* Not periodic in 4096 or 65536, so a lost or repeated block shows. */
  for (i = 0; i < size; i++)
    data[i] = (guint8) ((i * 7 + i / 4099) & 0xff);
  return g_bytes_new_take (data, size);
}

/* ---- the low level: spawn_child_wait_async() ---- */

static void
test_child_wait_async (gconstpointer data)
{
  GError *error = NULL;
  SpawnExitInfo info;
  SpawnChild *child;
  Catch c = { 0 };
  int fds;

  g_test_summary ("spawn_child_wait_async() delivers the status from a dispatch of the "
                  "caller's thread-default context, never from inside the call; a second "
                  "wait gets the same status; finish() wants the same child");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();

  child = helper_child ("exit", "3");
  spawn_child_wait_async (child, NULL, catch_cb, &c);
  g_assert_cmpint (c.calls, ==, 0);
  catch_run (&c);
  /* The source object is a SpawnChildHandle holding @child (bindings
   * finish through it: src.wait_finish (res)). */
  g_assert_true (SPAWN_IS_CHILD_HANDLE (c.source));
  g_assert_true (spawn_child_handle_get_child (SPAWN_CHILD_HANDLE (c.source)) == child);
  g_assert_true (g_async_result_get_source_object (c.result) == c.source);
  g_object_unref (c.source);   /* the reference get_source_object() gave */
  g_assert_true (spawn_child_wait_finish (child, c.result, &info, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 3);
  catch_clear (&c);

  /* Collected once, delivered to every wait. */
  spawn_child_wait_async (child, NULL, catch_cb, &c);
  g_assert_cmpint (c.calls, ==, 0);
  catch_run (&c);
  memset (&info, 0, sizeof info);
  /* The same, finished through the source object. */
  g_assert_true (spawn_child_handle_wait_finish (SPAWN_CHILD_HANDLE (c.source), c.result,
                                                 &info, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.status, ==, 3);
  catch_clear (&c);
  memset (&info, 0, sizeof info);
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_cmpint (info.status, ==, 3);
  spawn_child_unref (child);

  /* A signal, with a pushed context. */
  {
    GMainContext *ctx = g_main_context_new ();

    g_main_context_push_thread_default (ctx);
    child = helper_child ("kill", "15");
    spawn_child_wait_async (child, NULL, catch_cb, &c);
    spawn_child_unref (child);     /* the wait holds its own */
    catch_run (&c);
    g_assert_true (c.context == ctx);
    /* Our reference is gone, the wait's keeps @child valid until the
     * result goes. */
    g_assert_true (spawn_child_wait_finish (child, c.result, &info, &error));
    g_assert_no_error (error);
    g_assert_cmpint (info.kind, !=, SPAWN_EXIT_EXITED);
    g_assert_cmpint (info.status, ==, SIGTERM);
    catch_clear (&c);
    g_main_context_pop_thread_default (ctx);
    g_main_context_unref (ctx);
  }
  assert_clean (fds);
}

static void
test_child_wait_cancel (gconstpointer data)
{
  GCancellable *cancellable;
  GError *error = NULL;
  SpawnExitInfo info;
  SpawnChild *child;
  GThread *t;
  DelayedCancel *dc = NULL;
  Catch c = { 0 };
  int fds;

  g_test_summary ("cancelling spawn_child_wait_async() or spawn_child_wait(), before or "
                  "during the wait, gives G_IO_ERROR_CANCELLED, does not signal the child "
                  "and does not take its status: it is waited for again afterwards");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  child = helper_child ("sleep", "100000");

  /* Before: async, never from inside the call. */
  cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  spawn_child_wait_async (child, cancellable, catch_cb, &c);
  g_assert_cmpint (c.calls, ==, 0);
  catch_run (&c);
  g_assert_false (spawn_child_wait_finish (child, c.result, &info, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  catch_clear (&c);
  /* Before: sync. */
  g_assert_false (spawn_child_wait (child, &info, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_object_unref (cancellable);
  g_assert_true (is_running (spawn_child_get_pid (child)));

  /* During: async, cancelled from the loop once the wait is pending. */
  cancellable = g_cancellable_new ();
  spawn_child_wait_async (child, cancellable, catch_cb, &c);
  g_idle_add (cancel_idle, cancellable);
  catch_run (&c);
  g_assert_false (spawn_child_wait_finish (child, c.result, &info, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  catch_clear (&c);
  g_object_unref (cancellable);
  g_assert_true (is_running (spawn_child_get_pid (child)));

  /* During: sync, cancelled from another thread. */
  cancellable = g_cancellable_new ();
  t = cancel_later (cancellable, 100, spawn_child_get_pid (child), &dc);
  g_assert_false (spawn_child_wait (child, &info, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  cancel_later_join (t, dc);
  g_object_unref (cancellable);
  g_assert_true (is_running (spawn_child_get_pid (child)));

  /* ... and it is still ours to wait for. */
  g_assert_true (spawn_child_send_signal (child, SIGKILL, &error));
  g_assert_no_error (error);
  cancellable = g_cancellable_new ();
  spawn_child_wait_async (child, cancellable, catch_cb, &c);
  catch_run (&c);
  g_assert_true (spawn_child_wait_finish (child, c.result, &info, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.status, ==, SIGKILL);
  catch_clear (&c);
  /* A cancel after the end changes nothing. */
  g_cancellable_cancel (cancellable);
  drain ();
  g_assert_cmpint (c.calls, ==, 0);
  g_object_unref (cancellable);
  spawn_child_unref (child);
  assert_clean (fds);
}

/* ---- SpawnProcess: wait_async(), wait_check_async() ---- */

typedef struct {
  GString *log;
  Catch c;
} Order;

static void
order_finished (SpawnProcess *p G_GNUC_UNUSED, int code G_GNUC_UNUSED,
                int status G_GNUC_UNUSED, gpointer info G_GNUC_UNUSED, gpointer data)
{
  g_string_append (((Order *) data)->log, "finished ");
}

static void
order_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  Order *o = data;

  g_string_append (o->log, "callback ");
  catch_cb (source, result, &o->c);
}

static void
test_process_wait_async (gconstpointer data)
{
  static const struct {
    const char *cmd, *arg;
    gboolean ok;
    GQuark domain;
    int code;
  } cases[] = {
    { "exit", "0", TRUE, 0, 0 },
    { "exit", "5", FALSE, 0 /* G_SPAWN_EXIT_ERROR */, 5 },
    { "kill", "9", FALSE, 1 /* G_SPAWN_ERROR */, G_SPAWN_ERROR_FAILED },
  };
  GError *error = NULL;
  guint i;
  int fds;

  g_test_summary ("wait_async() completes after \"finished\", with TRUE whatever the "
                  "status; wait_check_async() gives what g_spawn_check_wait_status() "
                  "says (G_SPAWN_EXIT_ERROR with the code, G_SPAWN_ERROR_FAILED for a "
                  "signal); an ended process is waited for at once (still not from inside "
                  "the call), one never started is NOT_RUNNING");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (SpawnProcess) proc = testutil_helper_process (cases[i].cmd, cases[i].arg, NULL);
      Order o = { g_string_new (""), { 0 } };
      Catch c = { 0 };
      gboolean ok;

      g_signal_connect (proc, "finished", G_CALLBACK (order_finished), &o);
      testutil_start_ok (proc);
      spawn_process_wait_async (proc, NULL, order_cb, &o);
      spawn_process_wait_check_async (proc, NULL, catch_cb, &c);
      g_assert_cmpint (o.c.calls + c.calls, ==, 0);
      catch_run (&o.c);
      g_assert_cmpstr (o.log->str, ==, "finished callback ");
      g_assert_true (o.c.source == G_OBJECT (proc));
      g_assert_true (spawn_process_wait_finish (proc, o.c.result, &error));
      g_assert_no_error (error);
      catch_clear (&o.c);
      if (c.result == NULL)
        catch_run (&c);
      ok = spawn_process_wait_check_finish (proc, c.result, &error);
      g_assert_cmpint (ok, ==, cases[i].ok);
      if (cases[i].ok)
        g_assert_no_error (error);
      else if (cases[i].domain == 0)
        g_assert_error (error, G_SPAWN_EXIT_ERROR, cases[i].code);
      else
        g_assert_error (error, G_SPAWN_ERROR, cases[i].code);
      g_clear_error (&error);
      catch_clear (&c);

      /* Ended: at once, but from the loop. */
      spawn_process_wait_check_async (proc, NULL, catch_cb, &c);
      g_assert_cmpint (c.calls, ==, 0);
      catch_run (&c);
      g_assert_cmpint (spawn_process_wait_check_finish (proc, c.result, &error), ==,
                       cases[i].ok);
      g_clear_error (&error);
      catch_clear (&c);
      g_string_free (o.log, TRUE);
    }

  {
    g_autoptr (SpawnProcess) proc = testutil_helper_process ("exit", "0", NULL);
    Catch c = { 0 };

    spawn_process_wait_async (proc, NULL, catch_cb, &c);
    g_assert_cmpint (c.calls, ==, 0);
    catch_run (&c);
    g_assert_false (spawn_process_wait_finish (proc, c.result, &error));
    g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
    g_clear_error (&error);
    catch_clear (&c);
  }

  /* The task holds the process: dropping ours while it waits is fine. */
  {
    SpawnProcess *proc = testutil_helper_process ("exit", "4", NULL);
    GWeakRef weak;
    Catch c = { 0 };

    g_weak_ref_init (&weak, proc);
    testutil_start_ok (proc);
    spawn_process_wait_async (proc, NULL, catch_cb, &c);
    g_object_unref (proc);
    catch_run (&c);
    g_assert_true (spawn_process_wait_finish (SPAWN_PROCESS (c.source), c.result, &error));
    g_assert_cmpint (spawn_process_get_exit_code (SPAWN_PROCESS (c.source)), ==, 4);
    catch_clear (&c);
    g_assert_null (g_weak_ref_get (&weak));
    g_weak_ref_clear (&weak);
  }
  assert_clean (fds);
}

static void
test_process_wait_cancel (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  GCancellable *cancellable;
  GError *error = NULL;
  GThread *t;
  DelayedCancel *dc = NULL;
  Catch c = { 0 };
  int fds;

  g_test_summary ("cancelling wait_async(), wait_check_async() or a wait_for_*() before "
                  "or during the wait gives G_IO_ERROR_CANCELLED and leaves the process "
                  "running; it can be waited for again");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  proc = testutil_helper_process ("sleep", "100000", NULL);
  testutil_start_ok (proc);

  cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  spawn_process_wait_async (proc, cancellable, catch_cb, &c);
  g_assert_cmpint (c.calls, ==, 0);
  catch_run (&c);
  g_assert_false (spawn_process_wait_finish (proc, c.result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  catch_clear (&c);
  g_assert_false (spawn_process_wait_for_finished (proc, -1, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_false (spawn_process_wait_for_ready_read (proc, -1, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_object_unref (cancellable);

  cancellable = g_cancellable_new ();
  spawn_process_wait_check_async (proc, cancellable, catch_cb, &c);
  g_idle_add (cancel_idle, cancellable);
  catch_run (&c);
  g_assert_false (spawn_process_wait_check_finish (proc, c.result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  catch_clear (&c);
  g_object_unref (cancellable);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  g_assert_true (is_running (spawn_process_get_pid (proc)));

  cancellable = g_cancellable_new ();
  t = cancel_later (cancellable, 100, spawn_process_get_pid (proc), &dc);
  g_assert_false (spawn_process_wait_for_finished (proc, -1, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  cancel_later_join (t, dc);
  g_object_unref (cancellable);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  g_assert_true (is_running (spawn_process_get_pid (proc)));

  g_assert_true (spawn_process_kill (proc, &error));
  spawn_process_wait_async (proc, NULL, catch_cb, &c);
  catch_run (&c);
  g_assert_true (spawn_process_wait_finish (proc, c.result, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_CRASH);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, SIGKILL);
  catch_clear (&c);
  g_clear_object (&proc);
  assert_clean (fds);
}

typedef struct {
  GMainLoop *loop;
  GCancellable *cancellable;
  int calls;
  GQuark domain;
  int code;
  gboolean cancel_in_cb;
} Exit1;

static gboolean
quit_idle (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
exit1_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  Exit1 *e = data;
  GError *error = NULL;

  e->calls++;
  g_assert_false (spawn_process_wait_check_finish (SPAWN_PROCESS (source), result, &error));
  g_assert_nonnull (error);
  e->domain = error->domain;
  e->code = error->code;
  g_clear_error (&error);
  if (e->cancel_in_cb)
    g_cancellable_cancel (e->cancellable);
  g_idle_add (quit_idle, e->loop);
}

static void
test_exit1_cancel (gconstpointer data)
{
  int round;
  int fds;

  g_test_summary ("GSubprocess's exit1/cancel and exit1/cancel_in_cb: a wait_check_async() "
                  "whose process a blocking wait ran to its end, cancelled before its "
                  "callback ran, gets CANCELLED (as GTask promises); one cancelled from "
                  "inside its own callback is called once, with the exit error");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  for (round = 0; round < 2; round++)
    {
      g_autoptr (SpawnProcess) proc = testutil_helper_process ("exit", "1", NULL);
      GError *error = NULL;
      Exit1 e = { g_main_loop_new (NULL, FALSE), g_cancellable_new (), 0, 0, 0, round == 1 };

      testutil_start_ok (proc);
      spawn_process_wait_check_async (proc, e.cancellable, exit1_cb, &e);
      g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 1);
      if (!e.cancel_in_cb)
        g_cancellable_cancel (e.cancellable);
      g_main_loop_run (e.loop);
      drain ();
      g_assert_cmpint (e.calls, ==, 1);
      if (e.cancel_in_cb)
        {
          g_assert_true (e.domain == G_SPAWN_EXIT_ERROR);
          g_assert_cmpint (e.code, ==, 1);
        }
      else
        {
          g_assert_true (e.domain == G_IO_ERROR);
          g_assert_cmpint (e.code, ==, G_IO_ERROR_CANCELLED);
        }
      g_main_loop_unref (e.loop);
      g_object_unref (e.cancellable);
    }
  assert_clean (fds);
}

/* A worker thread with its own context: the callback comes there. */

static int
wait_in_thread (guint index)
{
  g_autoptr (SpawnProcess) proc = testutil_helper_process ("exit", index % 2 ? "7" : "0", NULL);
  GError *error = NULL;
  Catch c = { 0 };
  int bad = 0;

  testutil_start_ok (proc);
  spawn_process_wait_check_async (proc, NULL, catch_cb, &c);
  catch_run (&c);     /* asserts the thread and the context */
  if (spawn_process_wait_check_finish (proc, c.result, &error) != (index % 2 == 0))
    bad++;
  if (index % 2 && !g_error_matches (error, G_SPAWN_EXIT_ERROR, 7))
    bad++;
  g_clear_error (&error);
  catch_clear (&c);
  return bad;
}

static void
test_wait_threads (gconstpointer data)
{
  int fds;

  g_test_summary ("wait_check_async() from 8 threads at once, each with its own "
                  "thread-default context: each callback runs in its own thread and context");
  if (!testutil_use_backend (data))
    return;
  warm_up ();
  /* The sigchld backend keeps one eventfd per child ever watched at
   * once, for reuse: have 8 at once before counting. */
  {
    SpawnChild *kids[8];
    guint i;

    for (i = 0; i < G_N_ELEMENTS (kids); i++)
      kids[i] = helper_child ("sleep", "100000");
    for (i = 0; i < G_N_ELEMENTS (kids); i++)
      {
        g_assert_true (spawn_child_send_signal (kids[i], SIGKILL, NULL));
        g_assert_true (spawn_child_wait (kids[i], NULL, NULL, NULL));
        spawn_child_unref (kids[i]);
      }
  }
  fds = testutil_count_fds ();
  testutil_run_in_threads (8, wait_in_thread);
  assert_clean (fds);
}

/* ---- communicate ---- */

typedef enum {
  SYNC_BYTES,
  ASYNC_BYTES,
  SYNC_UTF8,
  ASYNC_UTF8,
} Flavour;

static const char *
flavour_name (Flavour f)
{
  static const char *names[] = { "sync", "async", "sync utf8", "async utf8" };
  return names[f];
}

/* communicate() in @flavour; the output as GBytes whichever it was. */
static gboolean
communicate (SpawnProcess *proc, Flavour f, GBytes *in, GCancellable *cancellable,
             GBytes **out, GBytes **err, GError **error)
{
  g_autofree char *in_str = NULL;
  char *o = (char *) 0x1, *e = (char *) 0x1;
  Catch c = { 0 };
  gboolean ok;

  if (in != NULL && (f == SYNC_UTF8 || f == ASYNC_UTF8))
    in_str = g_strndup (g_bytes_get_data (in, NULL), g_bytes_get_size (in));
  *out = *err = (GBytes *) 0x1;
  switch (f)
    {
    case SYNC_BYTES:
      return spawn_process_communicate (proc, in, cancellable, out, err, error);
    case ASYNC_BYTES:
      spawn_process_communicate_async (proc, in, cancellable, catch_cb, &c);
      g_assert_cmpint (c.calls, ==, 0);
      catch_run (&c);
      g_assert_true (c.source == G_OBJECT (proc));
      ok = spawn_process_communicate_finish (proc, c.result, out, err, error);
      catch_clear (&c);
      return ok;
    case SYNC_UTF8:
      ok = spawn_process_communicate_utf8 (proc, in_str, cancellable, &o, &e, error);
      break;
    case ASYNC_UTF8:
    default:
      spawn_process_communicate_utf8_async (proc, in_str, cancellable, catch_cb, &c);
      g_assert_cmpint (c.calls, ==, 0);
      catch_run (&c);
      ok = spawn_process_communicate_utf8_finish (proc, c.result, &o, &e, error);
      catch_clear (&c);
      break;
    }
  *out = o != NULL ? g_bytes_new_take (o, strlen (o)) : NULL;
  *err = e != NULL ? g_bytes_new_take (e, strlen (e)) : NULL;
  return ok;
}

static void
assert_bytes (GBytes *got, const char *want)
{
  if (want == NULL)
    {
      g_assert_null (got);
      return;
    }
  g_assert_nonnull (got);
  g_assert_cmpmem (g_bytes_get_data (got, NULL), g_bytes_get_size (got), want, strlen (want));
}

static void
test_communicate (gconstpointer data)
{
  /* As GSubprocess's communicate tests over its flag vectors: every
   * combination of where stdout and stderr go. */
  static const struct {
    SpawnChannelMode out, err;
    const char *want_out, *want_err;
  } modes[] = {
    { SPAWN_CHANNEL_PIPE, SPAWN_CHANNEL_PIPE, "# hello\n", "err\n" },
    { SPAWN_CHANNEL_PIPE, SPAWN_CHANNEL_MERGE, "# hello\nerr\n", NULL },
    { SPAWN_CHANNEL_PIPE, SPAWN_CHANNEL_DISCARD, "# hello\n", NULL },
    { SPAWN_CHANNEL_DISCARD, SPAWN_CHANNEL_PIPE, NULL, "err\n" },
    { SPAWN_CHANNEL_DISCARD, SPAWN_CHANNEL_DISCARD, NULL, NULL },
  };
  g_autoptr (GBytes) in = g_bytes_new_static ("# hello\n", 8);
  guint i;
  Flavour f;
  int fds;

  g_test_summary ("communicate(), communicate_async() and the _utf8 pair feed the input, "
                  "close stdin, and return stdout and stderr, NULL for a channel that is "
                  "not a pipe of ours (merged, discarded); without a stdin pipe and no "
                  "input it works too; callbacks come from the loop");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  for (f = SYNC_BYTES; f <= ASYNC_UTF8; f++)
    for (i = 0; i < G_N_ELEMENTS (modes); i++)
      {
        g_autoptr (SpawnProcess) proc = testutil_sh_process ("cat; echo err >&2");
        GBytes *out, *err;
        GError *error = NULL;

        g_test_message ("%s, case %u", flavour_name (f), i);
        spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, modes[i].out);
        spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, modes[i].err);
        testutil_start_ok (proc);
        g_assert_true (communicate (proc, f, in, NULL, &out, &err, &error));
        g_assert_no_error (error);
        assert_bytes (out, modes[i].want_out);
        assert_bytes (err, modes[i].want_err);
        g_clear_pointer (&out, g_bytes_unref);
        g_clear_pointer (&err, g_bytes_unref);
        g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
        g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 0);
      }

  /* No stdin pipe, no input; and input NULL with a pipe closes it. */
  for (f = SYNC_BYTES; f <= ASYNC_UTF8; f++)
    for (i = 0; i < 2; i++)
      {
        g_autoptr (SpawnProcess) proc = testutil_sh_process ("cat; echo done");
        GBytes *out, *err;
        GError *error = NULL;

        if (i == 0)
          spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
        testutil_start_ok (proc);
        g_assert_true (communicate (proc, f, NULL, NULL, &out, &err, &error));
        g_assert_no_error (error);
        assert_bytes (out, "done\n");
        assert_bytes (err, "");
        g_clear_pointer (&out, g_bytes_unref);
        g_clear_pointer (&err, g_bytes_unref);
      }

  /* communicate/nothing: "" through cat gives "", not NULL. */
  for (f = SYNC_BYTES; f <= ASYNC_UTF8; f++)
    {
      g_autoptr (SpawnProcess) proc = testutil_helper_process ("cat", NULL);
      g_autoptr (GBytes) empty = g_bytes_new_static ("", 0);
      GBytes *out, *err;
      GError *error = NULL;

      spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_MERGE);
      testutil_start_ok (proc);
      g_assert_true (communicate (proc, f, empty, NULL, &out, &err, &error));
      g_assert_no_error (error);
      assert_bytes (out, "");
      g_assert_null (err);
      g_clear_pointer (&out, g_bytes_unref);
    }
  assert_clean (fds);
}

static void
test_communicate_big (gconstpointer data)
{
  g_autoptr (GBytes) in = pattern_bytes (BIG_SIZE);
  Flavour f;
  int fds;

  g_test_summary ("10 MiB through cat with communicate() and communicate_async(), and "
                  "1 MiB of stderr at the same time: no deadlock (input and output are "
                  "interleaved), every byte back in order");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  for (f = SYNC_BYTES; f <= ASYNC_BYTES; f++)
    {
      /* stderr fills its pipe too while stdin is still being fed. */
      g_autofree char *script =
        g_strdup_printf ("head -c 1048576 /dev/zero >&2 & %s cat; wait", testutil_helper);
      g_autoptr (SpawnProcess) proc = testutil_sh_process (script);
      GBytes *out = NULL, *err = NULL;
      GError *error = NULL;

      testutil_start_ok (proc);
      g_assert_true (communicate (proc, f, in, NULL, &out, &err, &error));
      g_assert_no_error (error);
      g_assert_nonnull (out);
      g_assert_cmpuint (g_bytes_get_size (out), ==, BIG_SIZE);
      g_assert_true (g_bytes_equal (out, in));
      g_assert_cmpuint (g_bytes_get_size (err), ==, 1048576);
      g_bytes_unref (out);
      g_bytes_unref (err);
    }
  assert_clean (fds);
}

static void
test_communicate_utf8_invalid (gconstpointer data)
{
  static const struct {
    const char *script;
    const char *message;
  } cases[] = {
    { "printf '\\377\\377'", "The stdout of “sh” is not valid UTF-8 (at byte 0)" },
    { "printf 'ok'; printf 'a\\377' >&2", "The stderr of “sh” is not valid UTF-8 (at byte 1)" },
    /* Valid bytes around a NUL: a C string cannot hold it. */
    { "printf 'a\\000b'", "The stdout of “sh” holds a NUL byte (at byte 1), which a "
      "string cannot carry" },
  };
  Flavour f;
  guint i;
  int fds;

  g_test_summary ("communicate_utf8() and its async pair fail with G_IO_ERROR_INVALID_DATA "
                  "on output that is not UTF-8 on either channel, or holds a NUL, with a "
                  "message that names the program, the channel and the byte, and "
                  "return NULL for both; the bytes flavours take the same output as it is");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  for (f = SYNC_BYTES; f <= ASYNC_UTF8; f++)
    for (i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        g_autoptr (SpawnProcess) proc = testutil_sh_process (cases[i].script);
        GBytes *out, *err;
        GError *error = NULL;
        gboolean ok;

        g_test_message ("%s: %s", flavour_name (f), cases[i].script);
        testutil_start_ok (proc);
        ok = communicate (proc, f, NULL, NULL, &out, &err, &error);
        if (f == SYNC_BYTES || f == ASYNC_BYTES)
          {
            g_assert_no_error (error);
            g_assert_true (ok);
            g_assert_nonnull (out);
            g_assert_cmpuint (g_bytes_get_size (out), >=, 2);
          }
        else
          {
            g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
            g_assert_cmpstr (error->message, ==, cases[i].message);
            g_assert_false (ok);
            g_assert_null (out);
            g_assert_null (err);
            g_clear_error (&error);
          }
        g_clear_pointer (&out, g_bytes_unref);
        g_clear_pointer (&err, g_bytes_unref);
      }

  /* Valid UTF-8 beyond ASCII passes. */
  {
    g_autoptr (SpawnProcess) proc = testutil_helper_process ("cat", NULL);
    char *out = NULL, *err = NULL;
    GError *error = NULL;

    testutil_start_ok (proc);
    g_assert_true (spawn_process_communicate_utf8 (proc, "h\xc3\xa9llo \xe2\x82\xac", NULL,
                                                   &out, &err, &error));
    g_assert_no_error (error);
    g_assert_cmpstr (out, ==, "h\xc3\xa9llo \xe2\x82\xac");
    g_assert_cmpstr (err, ==, "");
    g_free (out);
    g_free (err);
  }
  assert_clean (fds);
}

/* Runs the context until @n bytes of stdout are buffered. */
static void
await_stdout (SpawnProcess *proc, gsize n)
{
  gboolean expired = FALSE;
  guint id = g_timeout_add (WAIT_MS, set_flag, &expired);

  while (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT) < n && !expired)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (expired);
  g_source_remove (id);
}

static void
test_communicate_cancel (gconstpointer data)
{
  g_autoptr (GBytes) in = g_bytes_new_static ("# hello world\n", 14);
  Flavour f;
  int fds;

  g_test_summary ("communicate in each flavour, cancelled before it starts or while the "
                  "process runs, gives G_IO_ERROR_CANCELLED with NULL buffers and leaves "
                  "the process running; what it wrote stays buffered, and a second "
                  "communicate() gets it once the process ends");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  for (f = SYNC_BYTES; f <= ASYNC_UTF8; f++)
    {
      /* Echoes its line, then runs until killed (no child of sh's that
       * the kill would miss). */
      g_autoptr (SpawnProcess) proc = NULL;
      g_autofree char *script =
        g_strdup_printf ("read l; printf '%%s\\n' \"$l\"; exec %s sleep 100000", testutil_helper);
      GCancellable *cancellable;
      GBytes *out, *err;
      GError *error = NULL;
      GThread *t = NULL;
      DelayedCancel *dc = NULL;

      g_test_message ("%s", flavour_name (f));
      proc = testutil_sh_process (script);
      testutil_start_ok (proc);

      cancellable = g_cancellable_new ();
      g_cancellable_cancel (cancellable);
      g_assert_false (communicate (proc, f, in, cancellable, &out, &err, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_clear_error (&error);
      g_assert_null (out);
      g_assert_null (err);
      g_object_unref (cancellable);
      g_assert_true (is_running (spawn_process_get_pid (proc)));

      cancellable = g_cancellable_new ();
      if (f == SYNC_BYTES || f == SYNC_UTF8)
        t = cancel_later (cancellable, 100, spawn_process_get_pid (proc), &dc);
      else
        g_idle_add (cancel_idle, cancellable);
      g_assert_false (communicate (proc, f, in, cancellable, &out, &err, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_clear_error (&error);
      g_assert_null (out);
      g_assert_null (err);
      if (t != NULL)
        cancel_later_join (t, dc);
      g_object_unref (cancellable);
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
      g_assert_true (is_running (spawn_process_get_pid (proc)));

      /* The input was queued, its echo is read into the buffer... */
      await_stdout (proc, 14);
      /* ... where the next communicate() finds it. */
      g_assert_true (spawn_process_kill (proc, &error));
      g_assert_true (communicate (proc, f, NULL, NULL, &out, &err, &error));
      g_assert_no_error (error);
      assert_bytes (out, "# hello world\n");
      assert_bytes (err, "");
      g_clear_pointer (&out, g_bytes_unref);
      g_clear_pointer (&err, g_bytes_unref);
      g_assert_cmpint (spawn_process_get_exit_code (proc), ==, SIGKILL);
    }
  assert_clean (fds);
}

static void
test_communicate_ended (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GBytes) in = g_bytes_new_static ("x", 1);
  GBytes *out = NULL, *err = NULL;
  GError *error = NULL;
  Catch c = { 0 };
  int fds;

  g_test_summary ("communicate() on a process that has ended returns what is still "
                  "buffered, and fails with WRITE_ERROR if there was input to write; on one "
                  "never started it is NOT_RUNNING");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  proc = testutil_sh_process ("echo out; echo err >&2");
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (spawn_process_communicate (proc, in, NULL, &out, &err, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR);
  g_clear_error (&error);
  g_assert_null (out);
  spawn_process_communicate_async (proc, NULL, NULL, catch_cb, &c);
  g_assert_cmpint (c.calls, ==, 0);
  catch_run (&c);
  g_assert_true (spawn_process_communicate_finish (proc, c.result, &out, &err, &error));
  g_assert_no_error (error);
  assert_bytes (out, "out\n");
  assert_bytes (err, "err\n");
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);
  catch_clear (&c);
  /* Taken: a second one gets nothing more. */
  g_assert_true (spawn_process_communicate (proc, NULL, NULL, &out, &err, &error));
  assert_bytes (out, "");
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);
  g_clear_object (&proc);

  proc = testutil_helper_process ("cat", NULL);
  g_assert_false (spawn_process_communicate (proc, NULL, NULL, &out, &err, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
  g_clear_error (&error);
  g_clear_object (&proc);
  assert_clean (fds);
}

static void
test_communicate_write_error (gconstpointer data)
{
  g_autoptr (GBytes) in = pattern_bytes (1024 * 1024);
  Flavour f;
  int fds;

  g_test_summary ("a process that closes its stdin before reading 1 MiB of input: "
                  "communicate() fails with WRITE_ERROR once it has ended (no SIGPIPE), "
                  "its status is known and its output stays buffered");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  for (f = SYNC_BYTES; f <= ASYNC_BYTES; f++)
    {
      g_autoptr (SpawnProcess) proc = testutil_helper_process ("close-stdin-sleep", "0", NULL);
      g_autoptr (GBytes) left = NULL;
      GBytes *out, *err;
      GError *error = NULL;

      testutil_start_ok (proc);
      g_assert_false (communicate (proc, f, in, NULL, &out, &err, &error));
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR);
      g_clear_error (&error);
      g_assert_null (out);
      g_assert_null (err);
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
      g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 0);
      left = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);
      assert_bytes (left, "closed\n");
    }
  assert_clean (fds);
}

static void
test_execute_cancel (gconstpointer data)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  const char *argv[] = { testutil_helper, "sleep", "100000", NULL };
  GError *error = NULL;
  GThread *t;
  DelayedCancel *dc = NULL;
  gint64 start;
  int fds;

  g_test_summary ("execute() cancelled before the call starts nothing; cancelled while the "
                  "program runs, it kills and reaps it and returns G_IO_ERROR_CANCELLED");
  if (!testutil_use_backend (data))
    return;
  fds = warm_up ();
  t = cancel_later (cancellable, 100, 0, &dc);
  start = g_get_monotonic_time ();
  g_assert_false (spawn_process_execute (argv, -1, NULL, NULL, NULL, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  cancel_later_join (t, dc);
  g_assert_cmpint (g_get_monotonic_time () - start, <, WAIT_MS * 1000);
  testutil_assert_no_children ();

  g_assert_false (spawn_process_execute ((const char *[]) { "/nonexistent/x", NULL }, -1, NULL,
                                         NULL, NULL, cancellable, &error));
  /* Not started at all, so not NOENT. */
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  assert_clean (fds);
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "child-wait-async", test_child_wait_async },
    { "child-wait-cancel", test_child_wait_cancel },
    { "process-wait-async", test_process_wait_async },
    { "process-wait-cancel", test_process_wait_cancel },
    { "exit1-cancel", test_exit1_cancel },
    { "wait-threads", test_wait_threads },
    { "communicate", test_communicate },
    { "communicate-big", test_communicate_big },
    { "communicate-utf8-invalid", test_communicate_utf8_invalid },
    { "communicate-cancel", test_communicate_cancel },
    { "communicate-ended", test_communicate_ended },
    { "communicate-write-error", test_communicate_write_error },
    { "execute-cancel", test_execute_cancel },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/async", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
