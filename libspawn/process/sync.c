/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* sync.c - GSubprocess's blocking calls, from any thread
 *
 * spawn_process_wait() and wait_check(), and the way communicate()
 * (async.c) blocks from a thread that cannot own the main context the
 * process is watched from.  A process's state belongs to that context:
 * whoever owns it may read and change it.  A caller that can own it (the
 * thread that runs it, or any thread while nobody runs it) waits as
 * wait_for_finished() does, polling the process itself (wait.c).  A
 * caller in another thread, while a loop runs that context, must not
 * touch the state: its waiter is put on the list from that context (a
 * source attached to it), the end of the run fills it there and wakes
 * the caller through a GCond (waiters.c).  GSubprocess instead waits on a
 * private context for a child watch that GLib's worker thread runs;
 * ours is run by the application's loop, which must therefore keep
 * running until the call returns, as for the async calls.
 *
 * A context found free is not proof that nobody runs it: a loop lets it
 * go for an instant between two iterations, and a polling loop (one
 * non-blocking iteration, then a sleep) leaves it free most of the time.
 * So a thread that finds it free, and was not its owner already, waits
 * as the owner only a slice at a time (SYNC_SLICE_MS), then gives it back
 * for SYNC_GAP_MS, long enough for a loop blocked on it to take it: the
 * loop's own sources (a timeout that cancels this very wait) are delayed
 * by at most a slice, never until the process ends.  With nobody running
 * the context, slices follow each other and the end is seen within
 * SYNC_GAP_MS.  While a loop does run it, the caller takes a slice only
 * after finding it free SYNC_FREE_CHECKS times, SYNC_RETRY_MS apart (GLib
 * says nothing when a context is released).
 */
#include "process-private.h"

/* How often a caller from another thread looks whether the context has
 * been left (nobody runs it any more), to take the wait over. */
#define SYNC_RETRY_MS 100
/* How many times in a row it must find the context free first. */
#define SYNC_FREE_CHECKS 3
/* How long a caller that found the context free waits as its owner, and
 * how long it then leaves it to others before it looks again. */
#define SYNC_SLICE_MS 100
#define SYNC_GAP_MS 10

/* The context @self is watched from, or NULL when it is not running. */
static GMainContext *
sync_get_context (SpawnProcess *self)
{
  GMainContext *context;

  g_mutex_lock (&self->context_lock);
  context = self->context != NULL ? g_main_context_ref (self->context) : NULL;
  g_mutex_unlock (&self->context_lock);
  return context;
}

gboolean
_spawn_process_sync_acquire (SpawnProcess *self, GMainContext **context)
{
  *context = sync_get_context (self);
  /* Its owner already: the thread that runs it (a handler calls us), or
   * one that acquired it.  Found free is not enough (see the top). */
  if (*context == NULL ||
      (g_main_context_is_owner (*context) && g_main_context_acquire (*context)))
    return TRUE;
  g_clear_pointer (context, g_main_context_unref);
  return FALSE;
}

void
_spawn_process_sync_release (GMainContext *context)
{
  if (context == NULL)
    return;
  g_main_context_release (context);
  g_main_context_unref (context);
}

SpawnProcessSync *
_spawn_process_sync_new (SpawnProcess *self)
{
  SpawnProcessSync *s = g_new0 (SpawnProcessSync, 1);

  g_atomic_ref_count_init (&s->ref);
  g_mutex_init (&s->lock);
  g_cond_init (&s->cond);
  s->process = g_object_ref (self);
  s->w.sync = s;
  return s;
}

/* In the owner of the context: @s->begin, and the answer to its caller.
 * With SYNC_WAITING the list holds a reference on @s. */
static void
sync_begin (SpawnProcess *self, SpawnProcessSync *s)
{
  GError *error = NULL;
  gboolean ok;

  g_mutex_lock (&s->lock);
  if (s->state != SYNC_QUEUED)
    {
      g_mutex_unlock (&s->lock);
      return;
    }
  g_mutex_unlock (&s->lock);
  /* Unlocked: begin may emit, and the handlers may do anything. */
  ok = s->begin (self, s, &error);
  g_mutex_lock (&s->lock);
  if (!ok)
    {
      s->error = error;
      s->state = SYNC_DONE;
    }
  else if (s->state == SYNC_QUEUED)
    s->state = g_list_find (self->waiters, &s->w) != NULL ? SYNC_WAITING : SYNC_DONE;
  else if (s->state == SYNC_ABANDONED && g_list_find (self->waiters, &s->w) != NULL)
    {
      /* Cancelled meanwhile: not on the list, or it would take the
       * output from the next communicate(). */
      self->waiters = g_list_remove (self->waiters, &s->w);
      g_atomic_ref_count_dec (&s->ref);  /* the list's; the source holds one */
    }
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
  /* Not under s->lock: _spawn_process_waiters_reading() takes it. */
  _spawn_process_release_held_end (self);
}

static gboolean
sync_begin_cb (gpointer data)
{
  SpawnProcessSync *s = data;

  sync_begin (s->process, s);
  return G_SOURCE_REMOVE;
}

/* The caller has gone (cancelled): off the list, from the owner. */
static gboolean
sync_abandon_cb (gpointer data)
{
  SpawnProcessSync *s = data;
  SpawnProcess *self = s->process;
  GList *l = g_list_find (self->waiters, &s->w);

  if (l != NULL)
    {
      self->waiters = g_list_delete_link (self->waiters, l);
      _spawn_process_sync_unref (s);
      _spawn_process_release_held_end (self);
    }
  return G_SOURCE_REMOVE;
}

static void
sync_cancelled (GCancellable *cancellable G_GNUC_UNUSED, gpointer data)
{
  SpawnProcessSync *s = data;

  g_mutex_lock (&s->lock);
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

/* What @s says once done: begin's error, or a cancel that came with the
 * end (cancelled, as GIO's calls are). */
static gboolean
sync_result (SpawnProcessSync *s, GCancellable *cancellable, GError **error)
{
  if (s->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&s->error));
      return FALSE;
    }
  return !g_cancellable_set_error_if_cancelled (cancellable, error);
}

/* Owning the context now: begin if nobody has, then wait as
 * wait_for_finished() does, until the end or, with @slice_ms >= 0, for
 * that long at most: then FALSE with *@again set and no error, @s still
 * waiting on the list.  A cancelled wait takes @s off the list. */
static gboolean
sync_direct (SpawnProcess *self, SpawnProcessSync *s, int slice_ms,
             GCancellable *cancellable, gboolean *again, GError **error)
{
  GError *wait_error = NULL;
  SyncState state;
  gboolean ok = TRUE;

  if (again != NULL)
    *again = FALSE;
  sync_begin (self, s);
  g_mutex_lock (&s->lock);
  state = s->state;
  g_mutex_unlock (&s->lock);
  if (state == SYNC_WAITING)
    {
      ok = _spawn_process_wait_for (self, WAIT_FINISHED, slice_ms, cancellable, &wait_error);
      g_mutex_lock (&s->lock);
      state = s->state;
      if (state == SYNC_WAITING && again != NULL &&
          g_error_matches (wait_error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT))
        {
          g_mutex_unlock (&s->lock);
          g_error_free (wait_error);
          *again = TRUE;
          return FALSE;
        }
      if (state == SYNC_WAITING)
        s->state = SYNC_ABANDONED;
      g_mutex_unlock (&s->lock);
      if (wait_error != NULL)
        g_propagate_error (error, wait_error);
      if (state == SYNC_WAITING)
        {
          sync_abandon_cb (s);
          if (ok)
            ok = _spawn_process_fail_not_running (self, error);
        }
    }
  return ok && sync_result (s, cancellable, error);
}

/* Sleeps until @s is done or cancelled, or @context can be taken (then
 * TRUE: this thread owns it now).  After @first_ms, one look suffices;
 * once another thread is seen owning it (a loop runs it), the context
 * must be found free SYNC_FREE_CHECKS times in a row, SYNC_RETRY_MS apart:
 * each take costs that loop up to a slice.  Called and returns with @s's
 * lock held. */
static gboolean
sync_sleep (SpawnProcessSync *s, GMainContext *context, GCancellable *cancellable,
            int first_ms)
{
  int ms = first_ms, needed = 1, free_checks = 0;

  while (s->state != SYNC_DONE && !g_cancellable_is_cancelled (cancellable))
    {
      gint64 until = g_get_monotonic_time () + ms * G_TIME_SPAN_MILLISECOND;

      if (g_cond_wait_until (&s->cond, &s->lock, until) || s->state == SYNC_DONE)
        continue;
      if (!g_main_context_acquire (context))
        {
          ms = SYNC_RETRY_MS;
          needed = SYNC_FREE_CHECKS;
          free_checks = 0;
        }
      else if (++free_checks >= needed)
        return TRUE;
      else
        g_main_context_release (context);
    }
  return FALSE;
}

/* Cancelled: the process runs on, and @s's waiter leaves the list (or
 * never gets on it).  Called with @s's lock held; releases it. */
static void
sync_abandon (SpawnProcessSync *s, GMainContext *context)
{
  SyncState was = s->state;

  s->state = SYNC_ABANDONED;
  g_mutex_unlock (&s->lock);
  if (was == SYNC_QUEUED)
    g_source_destroy (s->begin_source);
  else
    g_main_context_invoke_full (context, G_PRIORITY_DEFAULT, sync_abandon_cb,
                                _spawn_process_sync_ref (s),
                                (GDestroyNotify) _spawn_process_sync_unref);
}

gboolean
_spawn_process_sync_call (SpawnProcess *self, SpawnProcessSync *s, GCancellable *cancellable,
                          GError **error)
{
  g_autoptr (GMainContext) context = sync_get_context (self);
  gulong cancel_id = 0;
  gboolean owned, again, ok;

  /* Ended since the caller looked: nobody runs it any more. */
  if (context == NULL)
    return sync_direct (self, s, -1, cancellable, NULL, error);

  s->begin_source = g_idle_source_new ();
  g_source_set_priority (s->begin_source, G_PRIORITY_DEFAULT);
  g_source_set_static_name (s->begin_source, "SpawnProcess blocking call");
  g_source_set_callback (s->begin_source, sync_begin_cb, _spawn_process_sync_ref (s),
                         (GDestroyNotify) _spawn_process_sync_unref);
  g_source_attach (s->begin_source, context);
  if (cancellable != NULL)
    cancel_id = g_cancellable_connect (cancellable, G_CALLBACK (sync_cancelled), s, NULL);

  /* Free now: nobody runs it, or a loop is between two iterations. */
  owned = g_main_context_acquire (context);
  for (;;)
    {
      if (owned)
        {
          /* A slice as the owner; begins there if nobody has (the begin
           * source then has nothing left to do). */
          g_source_destroy (s->begin_source);
          ok = sync_direct (self, s, SYNC_SLICE_MS, cancellable, &again, error);
          g_main_context_release (context);
          if (!again)
            {
              g_cancellable_disconnect (cancellable, cancel_id);
              return ok;
            }
        }
      g_mutex_lock (&s->lock);
      owned = sync_sleep (s, context, cancellable, owned ? SYNC_GAP_MS : SYNC_RETRY_MS);
      if (owned)
        {
          g_mutex_unlock (&s->lock);
          continue;
        }
      if (s->state != SYNC_DONE)
        {
          sync_abandon (s, context);
          g_cancellable_disconnect (cancellable, cancel_id);
          g_cancellable_set_error_if_cancelled (cancellable, error);
          return FALSE;
        }
      g_mutex_unlock (&s->lock);
      g_cancellable_disconnect (cancellable, cancel_id);
      return sync_result (s, cancellable, error);
    }
}

/* spawn_process_wait() and wait_check() */

/* @s->begin for a wait: on the list for the running run, or filled at
 * once if it has ended. */
static gboolean
sync_wait_begin (SpawnProcess *self, SpawnProcessSync *s, GError **error)
{
  gboolean ended;

  s->w.run = _spawn_process_waiter_run (self, &ended);
  if (s->w.run == 0 && !ended)
    return _spawn_process_fail_not_running (self, error);
  /* Ended, or its end is being emitted (a handler of it waits): its
   * status is known, as GSubprocess's is then. */
  if (s->w.run == 0 || self->state != SPAWN_PROCESS_RUNNING)
    {
      _spawn_process_waiter_fill (self, &s->w);
      return TRUE;
    }
  self->waiters = g_list_append (self->waiters, _spawn_process_sync_ref (s));
  return TRUE;
}

/* What wait_check() says of the status @w got. */
static gboolean
sync_check (SpawnProcess *self, const SpawnProcessWaiter *w, GError **error)
{
  if (!w->have_exit)
    {
      g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST,
                   "The exit status of “%s” was lost: reaped by someone else",
                   _spawn_process_program (self));
      return FALSE;
    }
  return g_spawn_check_wait_status (spawn_exit_info_to_wait_status (&w->info), error);
}

static gboolean
sync_wait (SpawnProcess *self, gboolean check, GCancellable *cancellable, GError **error)
{
  SpawnProcessSync *s;
  GMainContext *context;
  gboolean ok;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  g_object_ref (self);
  s = _spawn_process_sync_new (self);
  s->begin = sync_wait_begin;
  if (_spawn_process_sync_acquire (self, &context))
    {
      ok = sync_direct (self, s, -1, cancellable, NULL, error);
      _spawn_process_sync_release (context);
    }
  else
    ok = _spawn_process_sync_call (self, s, cancellable, error);
  if (ok && !s->w.ended)
    ok = _spawn_process_fail_not_running (self, error);
  if (ok && check)
    ok = sync_check (self, &s->w, error);
  _spawn_process_sync_unref (s);
  g_object_unref (self);
  return ok;
}

/**
 * spawn_process_wait:
 * @self: a process that was started
 * @cancellable: (nullable): a #GCancellable; cancelling returns
 *   %G_IO_ERROR_CANCELLED and leaves the process running
 * @error: return location for a #GError
 *
 * Blocks until the process has ended, as [method@Gio.Subprocess.wait]: a
 * process that has already ended (also one whose end a communicate() or
 * a wait has seen) is waited for at once.  The status is then in
 * [method@Spawn.Process.get_exit_info] and the GSubprocess-style getters.
 *
 * Safe from any thread, as GSubprocess's: the thread that runs the main
 * context the process is watched from (or any thread while nobody runs
 * it) waits by polling the process itself, as
 * [method@Spawn.Process.wait_for_finished] does, and the signals are
 * emitted from here; from another thread, while a loop runs that
 * context, the loop notices the end and wakes this call, so that loop
 * must keep running until this returns (as for
 * [method@Spawn.Process.wait_async]).  Never call it, from another thread,
 * while the thread that runs that context is blocked in a handler of it:
 * nobody would notice the end.
 *
 * Unlike [method@Spawn.Process.wait_for_finished] (QProcess's rule), a
 * process that has ended is not an error.
 *
 * Returns: %TRUE once it has ended, whatever its status; %FALSE with
 *   %G_IO_ERROR_CANCELLED (also, as with GIO's calls, if @cancellable was
 *   cancelled before the call), %SPAWN_PROCESS_ERROR_NOT_RUNNING if it was
 *   never started (or failed to start), or
 *   %SPAWN_PROCESS_ERROR_READ_ERROR if poll() failed
 *
 * Since: 0.3
 */
gboolean
spawn_process_wait (SpawnProcess *self, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return sync_wait (self, FALSE, cancellable, error);
}

/**
 * spawn_process_wait_check:
 * @self: a process that was started
 * @cancellable: (nullable): a #GCancellable; cancelling returns
 *   %G_IO_ERROR_CANCELLED and leaves the process running
 * @error: return location for a #GError
 *
 * Waits for the end of the process and checks its status, as
 * [method@Gio.Subprocess.wait_check]: [method@Spawn.Process.wait] and
 * [func@GLib.spawn_check_wait_status] in one, from any thread, and at once
 * for a process that has already ended (after communicate(), say).
 *
 * Returns: %TRUE if the process exited with status 0; %FALSE with a
 *   %G_SPAWN_EXIT_ERROR (the exit status is the code) or
 *   %G_SPAWN_ERROR_FAILED (a signal ended it), as
 *   [func@GLib.spawn_check_wait_status] says; %SPAWN_ERROR_STATUS_LOST if
 *   someone else reaped it; or the errors of [method@Spawn.Process.wait]
 *
 * Since: 0.3
 */
gboolean
spawn_process_wait_check (SpawnProcess *self, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return sync_wait (self, TRUE, cancellable, error);
}
