/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* waiters.c - the GIO waits for the end of a run, and what each gets
 *
 * spawn_process_wait_async(), wait_check_async() and communicate() in
 * both flavours (async.c) each put a SpawnProcessWaiter on the process's
 * list.  The end of the run (run_emit_end() in run.c) fills every waiter of
 * that run just before "finished" is emitted and completes them just
 * after; dispose fails the rest.  A GTask carries each result to its
 * caller's thread-default context.  A cancelled waiter only leaves the
 * list: the process runs on, its input stays queued and its output
 * buffered.
 */
#include "process-private.h"

void
_spawn_process_waiter_clear (SpawnProcessWaiter *w)
{
  if (w->cancel_source != NULL)
    {
      g_source_destroy (w->cancel_source);
      g_clear_pointer (&w->cancel_source, g_source_unref);
    }
  g_clear_pointer (&w->out, g_bytes_unref);
  g_clear_pointer (&w->err, g_bytes_unref);
}

void
_spawn_process_waiter_free (gpointer data)
{
  _spawn_process_waiter_clear (data);
  g_free (data);
}

/* What @w gets of a run that has ended; the status and the output are
 * those of the run just ended (self->exit_info, the buffers). */
void
_spawn_process_waiter_fill (SpawnProcess *self, SpawnProcessWaiter *w)
{
  w->ended = TRUE;
  w->have_exit = self->have_exit;
  w->info = self->exit_info;
  if (!w->capture)
    return;
  /* On a failed write the output stays where it is, for read_all(). */
  w->write_failed = self->write_errors != w->write_errors;
  if (w->write_failed)
    return;
  if (w->pipes[SPAWN_PROCESS_STDOUT])
    w->out = spawn_process_read_all (self, SPAWN_PROCESS_STDOUT);
  if (w->pipes[SPAWN_PROCESS_STDERR])
    w->err = spawn_process_read_all (self, SPAWN_PROCESS_STDERR);
}

SpawnProcessSync *
_spawn_process_sync_ref (SpawnProcessSync *s)
{
  g_atomic_ref_count_inc (&s->ref);
  return s;
}

void
_spawn_process_sync_unref (SpawnProcessSync *s)
{
  if (!g_atomic_ref_count_dec (&s->ref))
    return;
  _spawn_process_waiter_clear (&s->w);
  g_clear_pointer (&s->stdin_buf, g_bytes_unref);
  g_clear_pointer (&s->begin_source, g_source_unref);
  g_clear_error (&s->error);
  g_clear_object (&s->process);
  g_mutex_clear (&s->lock);
  g_cond_clear (&s->cond);
  g_free (s);
}

void
_spawn_process_sync_hand_back (SpawnProcessSync *s)
{
  g_mutex_lock (&s->lock);
  if (s->state != SYNC_ABANDONED)
    s->state = SYNC_DONE;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

/* Whether the caller of @w's blocking call from another thread has gone:
 * then @w takes nothing (the output stays buffered for the next call). */
static gboolean
waiters_abandoned (SpawnProcessWaiter *w)
{
  gboolean abandoned;

  if (w->sync == NULL)
    return FALSE;
  g_mutex_lock (&w->sync->lock);
  abandoned = w->sync->state == SYNC_ABANDONED;
  g_mutex_unlock (&w->sync->lock);
  return abandoned;
}

gboolean
_spawn_process_waiters_reading (SpawnProcess *self, guint run)
{
  GList *l;
  int i;

  for (l = self->waiters; l != NULL; l = l->next)
    {
      SpawnProcessWaiter *w = l->data;

      /* A cancelled task whose cancel source has not run yet (its
       * owner may be blocked in a wait) no longer reads either. */
      if (!w->capture || w->run != run || w->ended || waiters_abandoned (w) ||
          (w->task != NULL && g_cancellable_is_cancelled (g_task_get_cancellable (w->task))))
        continue;
      for (i = SPAWN_PROCESS_STDOUT; i <= SPAWN_PROCESS_STDERR; i++)
        if (w->pipes[i] && self->channels[i].fd >= 0)
          return TRUE;
    }
  return FALSE;
}

void
_spawn_process_waiters_ended (SpawnProcess *self, guint run)
{
  GList *l;

  for (l = self->waiters; l != NULL; l = l->next)
    {
      SpawnProcessWaiter *w = l->data;

      if (w->run == run && !w->ended && !waiters_abandoned (w))
        _spawn_process_waiter_fill (self, w);
    }
}

void
_spawn_process_waiter_return (SpawnProcessWaiter *w)
{
  GTask *task = w->task;
  SpawnProcess *self = g_task_get_source_object (task);
  GError *error = NULL;

  if (w->cancel_source != NULL)
    g_source_destroy (w->cancel_source);
  if (w->write_failed)
    g_task_return_new_error (task, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                             "“%s” did not read all its input",
                             _spawn_process_program (self));
  else if (w->check && !w->have_exit)
    g_task_return_new_error (task, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST,
                             "The exit status of “%s” was lost: reaped by someone else",
                             _spawn_process_program (self));
  else if (w->check &&
           !g_spawn_check_wait_status (spawn_exit_info_to_wait_status (&w->info), &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

void
_spawn_process_waiters_complete (SpawnProcess *self, guint run)
{
  GPtrArray *done = g_ptr_array_new ();
  GList *l, *next;
  guint i;

  /* Off the list first: a callback may run from g_task_return_*() and
   * wait again, start the next run or cancel another waiter. */
  for (l = self->waiters; l != NULL; l = next)
    {
      SpawnProcessWaiter *w = l->data;

      next = l->next;
      if (w->run == run && w->sync != NULL)
        {
          /* A blocking call from another thread: wake it. */
          self->waiters = g_list_delete_link (self->waiters, l);
          _spawn_process_sync_hand_back (w->sync);
          _spawn_process_sync_unref (w->sync);
          continue;
        }
      if (w->run != run || !w->ended || w->task == NULL)
        continue;
      self->waiters = g_list_delete_link (self->waiters, l);
      g_ptr_array_add (done, w->task);
    }
  for (i = 0; i < done->len; i++)
    {
      GTask *task = done->pdata[i];

      _spawn_process_waiter_return (g_task_get_task_data (task));
      g_object_unref (task);
    }
  g_ptr_array_unref (done);
}

void
_spawn_process_waiters_dispose (SpawnProcess *self)
{
  while (self->waiters != NULL)
    {
      SpawnProcessWaiter *w = self->waiters->data;

      self->waiters = g_list_delete_link (self->waiters, self->waiters);
      if (w->sync != NULL)
        {
          /* Not filled: its caller gets NOT_RUNNING. */
          _spawn_process_sync_hand_back (w->sync);
          _spawn_process_sync_unref (w->sync);
          continue;
        }
      if (w->task == NULL)
        continue;    /* a blocking communicate(): its wait ends on its own */
      if (w->cancel_source != NULL)
        g_source_destroy (w->cancel_source);
      g_task_return_new_error (w->task, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                               "The object of “%s” was disposed",
                               _spawn_process_program (self));
      g_object_unref (w->task);
    }
}

static gboolean
waiters_cancelled (GCancellable *cancellable G_GNUC_UNUSED, gpointer data)
{
  GTask *task = data;
  SpawnProcess *self = g_task_get_source_object (task);
  SpawnProcessWaiter *w = g_task_get_task_data (task);
  GList *l = g_list_find (self->waiters, w);

  /* Not on the list: completed already, this source is on its way out. */
  if (l != NULL)
    {
      self->waiters = g_list_delete_link (self->waiters, l);
      g_task_return_error_if_cancelled (task);
      g_object_unref (task);
      /* If the end was held for this communicate(), the process's
       * source looks again at its next dispatch (run.c). */
      if (self->source != NULL)
        g_source_set_ready_time (self->source, 0);
    }
  return G_SOURCE_REMOVE;
}

void
_spawn_process_waiter_watch_cancellable (SpawnProcessWaiter *w)
{
  GCancellable *cancellable = g_task_get_cancellable (w->task);

  if (cancellable == NULL)
    return;
  w->cancel_source = g_cancellable_source_new (cancellable);
  g_source_set_callback (w->cancel_source, (GSourceFunc) (void (*) (void)) waiters_cancelled,
                         g_object_ref (w->task), g_object_unref);
  g_source_attach (w->cancel_source, g_task_get_context (w->task));
}

guint
_spawn_process_waiter_run (SpawnProcess *self, gboolean *ended)
{
  *ended = FALSE;
  if (self->state == SPAWN_PROCESS_RUNNING)
    return self->run;
  if (self->end.run == self->run && self->finished_run != self->run &&
      self->end.step <= END_FINISHED)
    return self->run;
  *ended = self->run > 0 && self->finished_run == self->run;
  return 0;
}

void
_spawn_process_waiter_add (SpawnProcess *self, GTask *task)
{
  SpawnProcessWaiter *w = g_task_get_task_data (task);
  gboolean ended;

  w->task = task;
  if (g_task_return_error_if_cancelled (task))
    return;
  w->run = _spawn_process_waiter_run (self, &ended);
  if (w->run == 0 && !ended)
    {
      g_task_return_error (task, _spawn_process_not_running_error (self));
      return;
    }
  if (w->run == 0)
    {
      /* As GSubprocess: a process that has ended is waited for at once. */
      _spawn_process_waiter_fill (self, w);
      _spawn_process_waiter_return (w);
      return;
    }
  _spawn_process_waiter_watch_cancellable (w);
  /* The list's reference on the task. */
  g_object_ref (task);
  self->waiters = g_list_append (self->waiters, w);
}

