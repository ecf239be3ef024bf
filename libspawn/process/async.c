/* spawn-process-async.c - SpawnProcess the GIO way: waits and communicate()
 *
 * spawn_process_wait_async(), wait_check_async() and communicate() in
 * both flavours wait for the end of one run.  Each is a SpawnProcessWaiter
 * on the process's list; the end of the run (emit_end() in
 * spawn-process.c) fills every waiter of that run just before "finished"
 * is emitted and completes them just after.  Nothing here polls or
 * dispatches on its own: the process's source (or a blocking wait) does
 * the work, and a GTask carries the result to the caller's thread-default
 * context.  A cancelled waiter only leaves the list: the process runs on,
 * its input stays queued and its output buffered.
 */
#include "process-private.h"

#include <string.h>

static void
waiter_clear (SpawnProcessWaiter *w)
{
  if (w->cancel_source != NULL)
    {
      g_source_destroy (w->cancel_source);
      g_clear_pointer (&w->cancel_source, g_source_unref);
    }
  g_clear_pointer (&w->out, g_bytes_unref);
  g_clear_pointer (&w->err, g_bytes_unref);
}

static void
waiter_free (gpointer data)
{
  waiter_clear (data);
  g_free (data);
}

/* Which of @self's channels are pipes of ours that communicate() reads. */
static void
note_pipes (SpawnProcess *self, SpawnProcessWaiter *w)
{
  int i;

  for (i = 0; i < 3; i++)
    w->pipes[i] = self->modes[i] == SPAWN_CHANNEL_PIPE;
}

/* What @w gets of a run that has ended; the status and the output are
 * those of the run just ended (self->exit_info, the buffers). */
static void
fill (SpawnProcess *self, SpawnProcessWaiter *w)
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

void
_spawn_process_waiters_ended (SpawnProcess *self, guint run)
{
  GList *l;

  for (l = self->waiters; l != NULL; l = l->next)
    {
      SpawnProcessWaiter *w = l->data;

      if (w->run == run && !w->ended)
        fill (self, w);
    }
}

/* Returns @w's task with what fill() found. */
static void
return_task (SpawnProcessWaiter *w)
{
  GTask *task = w->task;
  GError *error = NULL;

  if (w->cancel_source != NULL)
    g_source_destroy (w->cancel_source);
  if (w->write_failed)
    g_task_return_new_error (task, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                             "Writing the input to the process failed");
  else if (w->check && !w->have_exit)
    g_task_return_new_error (task, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST,
                             "The status of the process was lost");
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
      if (w->run != run || !w->ended || w->task == NULL)
        continue;
      self->waiters = g_list_delete_link (self->waiters, l);
      g_ptr_array_add (done, w->task);
    }
  for (i = 0; i < done->len; i++)
    {
      GTask *task = done->pdata[i];

      return_task (g_task_get_task_data (task));
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
      if (w->task == NULL)
        continue;    /* a blocking communicate(): its wait ends on its own */
      if (w->cancel_source != NULL)
        g_source_destroy (w->cancel_source);
      g_task_return_new_error (w->task, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                               "The process object was disposed");
      g_object_unref (w->task);
    }
}

static gboolean
waiter_cancelled (GCancellable *cancellable G_GNUC_UNUSED, gpointer data)
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
    }
  return G_SOURCE_REMOVE;
}

/* Which run a new waiter waits for: the running one, or one whose end is
 * being emitted right now up to "finished" (a waiter registered from a
 * handler of its end, "ready-read-*" or "error-occurred").  0 when the
 * process has ended already (*ended) or never ran (!*ended). */
static guint
run_to_wait_for (SpawnProcess *self, gboolean *ended)
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

/* Queues @task (its data a SpawnProcessWaiter) for the end of the run,
 * or completes it now. */
static void
add_waiter (SpawnProcess *self, GTask *task)
{
  SpawnProcessWaiter *w = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  gboolean ended;

  w->task = task;
  if (g_task_return_error_if_cancelled (task))
    return;
  w->run = run_to_wait_for (self, &ended);
  if (w->run == 0 && !ended)
    {
      g_task_return_new_error (task, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                               "The process is not running");
      return;
    }
  if (w->run == 0)
    {
      /* As GSubprocess: a process that has ended is waited for at once. */
      fill (self, w);
      return_task (w);
      return;
    }
  if (cancellable != NULL)
    {
      w->cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_callback (w->cancel_source,
                             (GSourceFunc) (void (*) (void)) waiter_cancelled,
                             g_object_ref (task), g_object_unref);
      g_source_attach (w->cancel_source, g_task_get_context (task));
    }
  /* The list's reference on the task. */
  g_object_ref (task);
  self->waiters = g_list_append (self->waiters, w);
}

static void
wait_async (SpawnProcess *self, gboolean check, gpointer tag, GCancellable *cancellable,
            GAsyncReadyCallback callback, gpointer user_data)
{
  SpawnProcessWaiter *w = g_new0 (SpawnProcessWaiter, 1);
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, tag);
  w->check = check;
  g_task_set_task_data (task, w, waiter_free);
  add_waiter (self, task);
  g_object_unref (task);
}

/**
 * spawn_process_wait_async:
 * @self: a process
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the process has ended (after
 *   #SpawnProcess::finished), or the wait was cancelled
 * @user_data: data for @callback
 *
 * Waits for the end of the running process without blocking, as
 * g_subprocess_wait_async() does.  @callback runs in the thread-default
 * main context of the caller; the process's end is still noticed from the
 * context it is watched from (or by a blocking wait), so that one must
 * run.  A process that has ended already is waited for at once.
 * Cancelling does not kill the process: the callback gets
 * %G_IO_ERROR_CANCELLED and the process can be waited for again.  The
 * task holds a reference on @self until then.  Call from the thread that
 * uses @self.
 */
void
spawn_process_wait_async (SpawnProcess *self, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  wait_async (self, FALSE, spawn_process_wait_async, cancellable, callback, user_data);
}

/**
 * spawn_process_wait_finish:
 * @self: a process
 * @result: the #GAsyncResult the callback got
 * @error: return location for a #GError
 *
 * Finishes spawn_process_wait_async().
 *
 * Returns: %TRUE once the process has ended, whatever its status (see
 *   spawn_process_get_exit_info()); %FALSE with %G_IO_ERROR_CANCELLED, or
 *   %SPAWN_PROCESS_ERROR_NOT_RUNNING if it had not been started (or failed
 *   to start)
 */
gboolean
spawn_process_wait_finish (SpawnProcess *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == spawn_process_wait_async,
                        FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * spawn_process_wait_check_async:
 * @self: a process
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the process has ended, or the wait
 *   was cancelled
 * @user_data: data for @callback
 *
 * spawn_process_wait_async() and g_spawn_check_wait_status() in one, as
 * g_subprocess_wait_check_async().
 */
void
spawn_process_wait_check_async (SpawnProcess *self, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  wait_async (self, TRUE, spawn_process_wait_check_async, cancellable, callback, user_data);
}

/**
 * spawn_process_wait_check_finish:
 * @self: a process
 * @result: the #GAsyncResult the callback got
 * @error: return location for a #GError
 *
 * Finishes spawn_process_wait_check_async().
 *
 * Returns: %TRUE if the process exited with status 0; %FALSE with a
 *   %G_SPAWN_EXIT_ERROR (the exit status is the code) or
 *   %G_SPAWN_ERROR_FAILED (a signal), as g_spawn_check_wait_status() says,
 *   %SPAWN_ERROR_STATUS_LOST, or the errors of spawn_process_wait_finish()
 */
gboolean
spawn_process_wait_check_finish (SpawnProcess *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) ==
                          spawn_process_wait_check_async, FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* communicate() */

typedef enum {
  BEGIN_FAILED,
  BEGIN_WAIT,      /* @w is on the list: wait for the end */
  BEGIN_DONE,      /* the process had ended: @w is filled */
} Begin;

/* Puts @w on the list, then feeds @stdin_buf and closes stdin.  @w is on
 * the list before the write, whose handlers may run the process to its
 * end. */
static Begin
communicate_begin (SpawnProcess *self, SpawnProcessWaiter *w, GBytes *stdin_buf,
                   gboolean async, GError **error)
{
  gsize len = stdin_buf != NULL ? g_bytes_get_size (stdin_buf) : 0;
  gboolean ended;
  GError *local_error = NULL;

  w->capture = TRUE;
  note_pipes (self, w);
  w->write_errors = self->write_errors;
  w->run = run_to_wait_for (self, &ended);
  if (w->run != 0 && !async && self->state != SPAWN_PROCESS_RUNNING)
    {
      /* A blocking wait from a handler of the end cannot wait. */
      w->run = 0;
      ended = FALSE;
    }
  if (w->run == 0 && !ended)
    {
      _spawn_process_fail (error, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                           "The process is not running");
      return BEGIN_FAILED;
    }
  if (w->run == 0)
    {
      if (len > 0)
        {
          _spawn_process_fail (error, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                               "The process has ended: its input cannot be written");
          return BEGIN_FAILED;
        }
      fill (self, w);
      return BEGIN_DONE;
    }
  if (len > 0 && self->state != SPAWN_PROCESS_RUNNING)
    {
      _spawn_process_fail (error, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                           "The process is ending: its input cannot be written");
      return BEGIN_FAILED;
    }

  /* With the list's reference on the task, if there is one. */
  if (async)
    g_object_ref (w->task);
  self->waiters = g_list_append (self->waiters, w);
  if (len > 0 &&
      !spawn_process_write (self, g_bytes_get_data (stdin_buf, NULL), len, &local_error))
    {
      /* A write that failed (EPIPE) fails the call once the process has
       * ended; a channel closed before we came fails it now. */
      if (self->write_errors == w->write_errors)
        {
          GList *l = g_list_find (self->waiters, w);

          if (l != NULL)
            {
              self->waiters = g_list_delete_link (self->waiters, l);
              if (async)
                g_object_unref (w->task);
            }
          g_propagate_error (error, local_error);
          return BEGIN_FAILED;
        }
      g_clear_error (&local_error);
    }
  if (self->state == SPAWN_PROCESS_RUNNING)
    spawn_process_close_write_channel (self);
  return BEGIN_WAIT;
}

/* Hands out what @w captured; FALSE with @error if the writing failed. */
static gboolean
communicate_result (SpawnProcessWaiter *w, GBytes **stdout_buf, GBytes **stderr_buf,
                    GError **error)
{
  if (w->write_failed)
    return _spawn_process_fail (error, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                                "Writing the input to the process failed");
  if (stdout_buf != NULL)
    *stdout_buf = g_steal_pointer (&w->out);
  if (stderr_buf != NULL)
    *stderr_buf = g_steal_pointer (&w->err);
  return TRUE;
}

/**
 * spawn_process_communicate:
 * @self: a running process
 * @stdin_buf: (nullable): input for the process; it must be a
 *   %SPAWN_CHANNEL_PIPE stdin unless this is %NULL
 * @cancellable: (nullable): a #GCancellable
 * @stdout_buf: (out) (optional) (nullable) (transfer full): what it wrote to
 *   stdout, or %NULL if stdout is not a pipe of ours
 * @stderr_buf: (out) (optional) (nullable) (transfer full): the same for
 *   stderr (%NULL when merged into stdout)
 * @error: return location for a #GError
 *
 * As g_subprocess_communicate(): writes @stdin_buf to the process, closes
 * its stdin (also when @stdin_buf is %NULL), reads its stdout and stderr
 * meanwhile, and returns once it has ended, with everything it wrote,
 * output buffered before the call included.  Blocks like
 * spawn_process_wait_for_finished(), emitting the same signals from
 * inside; handlers that read the buffers take that output away from this
 * call.  On a process that has ended already, returns what is still
 * buffered (and fails if there was input to write).
 *
 * Cancelling leaves the process running, its input queued and its output
 * buffered: a later communicate() with %NULL input, or the usual calls,
 * get the rest.
 *
 * Returns: %TRUE once the process has ended, whatever its status;
 *   %FALSE with %G_IO_ERROR_CANCELLED, %SPAWN_PROCESS_ERROR_NOT_RUNNING,
 *   %SPAWN_PROCESS_ERROR_WRITE_ERROR (the stdin channel was closed, or
 *   the process did not read all its input: reported once it has ended;
 *   the output then stays buffered), or the errors of
 *   spawn_process_wait_for_finished()
 */
gboolean
spawn_process_communicate (SpawnProcess *self, GBytes *stdin_buf, GCancellable *cancellable,
                           GBytes **stdout_buf, GBytes **stderr_buf, GError **error)
{
  SpawnProcessWaiter w = { 0 };
  gboolean ok = TRUE;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (stdin_buf == NULL ||
                          self->modes[SPAWN_PROCESS_STDIN] == SPAWN_CHANNEL_PIPE, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (stdout_buf != NULL)
    *stdout_buf = NULL;
  if (stderr_buf != NULL)
    *stderr_buf = NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  g_object_ref (self);
  switch (communicate_begin (self, &w, stdin_buf, FALSE, error))
    {
    case BEGIN_FAILED:
      ok = FALSE;
      break;
    case BEGIN_WAIT:
      /* Returns once this run's "finished" was emitted, that is once
       * _spawn_process_waiters_ended() has filled @w. */
      if (!w.ended)
        ok = _spawn_process_wait_for (self, WAIT_FINISHED, -1, cancellable, error);
      self->waiters = g_list_remove (self->waiters, &w);
      if (ok && !w.ended)
        ok = _spawn_process_fail (error, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                                  "The process is not running");
      break;
    case BEGIN_DONE:
    default:
      break;
    }
  ok = ok && communicate_result (&w, stdout_buf, stderr_buf, error);
  waiter_clear (&w);
  g_object_unref (self);
  return ok;
}

static void
communicate_async (SpawnProcess *self, GBytes *stdin_buf, gpointer tag,
                   GCancellable *cancellable, GAsyncReadyCallback callback,
                   gpointer user_data)
{
  SpawnProcessWaiter *w = g_new0 (SpawnProcessWaiter, 1);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  GError *error = NULL;

  g_task_set_source_tag (task, tag);
  g_task_set_task_data (task, w, waiter_free);
  w->task = task;
  if (g_task_return_error_if_cancelled (task))
    {
      g_object_unref (task);
      return;
    }
  switch (communicate_begin (self, w, stdin_buf, TRUE, &error))
    {
    case BEGIN_FAILED:
      g_task_return_error (task, error);
      break;
    case BEGIN_DONE:
      return_task (w);
      break;
    case BEGIN_WAIT:
    default:
      if (cancellable != NULL && !w->ended)
        {
          w->cancel_source = g_cancellable_source_new (cancellable);
          g_source_set_callback (w->cancel_source,
                                 (GSourceFunc) (void (*) (void)) waiter_cancelled,
                                 g_object_ref (task), g_object_unref);
          g_source_attach (w->cancel_source, g_task_get_context (task));
        }
      break;
    }
  g_object_unref (task);
}

/**
 * spawn_process_communicate_async:
 * @self: a running process
 * @stdin_buf: (nullable): input for the process, as for
 *   spawn_process_communicate()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the process has ended, or the call
 *   was cancelled
 * @user_data: data for @callback
 *
 * spawn_process_communicate() without blocking: the input is written and
 * the output read from the context the process is watched from, and
 * @callback runs in the thread-default main context of the caller.
 */
void
spawn_process_communicate_async (SpawnProcess *self, GBytes *stdin_buf,
                                 GCancellable *cancellable, GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (stdin_buf == NULL || self->modes[SPAWN_PROCESS_STDIN] == SPAWN_CHANNEL_PIPE);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  communicate_async (self, stdin_buf, spawn_process_communicate_async, cancellable, callback,
                     user_data);
}

/**
 * spawn_process_communicate_finish:
 * @self: a process
 * @result: the #GAsyncResult the callback got
 * @stdout_buf: (out) (optional) (nullable) (transfer full): what it wrote
 *   to stdout, or %NULL if stdout is not a pipe of ours
 * @stderr_buf: (out) (optional) (nullable) (transfer full): the same for
 *   stderr
 * @error: return location for a #GError
 *
 * Finishes spawn_process_communicate_async().
 *
 * Returns: as spawn_process_communicate(); on %FALSE both buffers are %NULL
 */
gboolean
spawn_process_communicate_finish (SpawnProcess *self, GAsyncResult *result,
                                  GBytes **stdout_buf, GBytes **stderr_buf, GError **error)
{
  SpawnProcessWaiter *w;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) ==
                          spawn_process_communicate_async, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (stdout_buf != NULL)
    *stdout_buf = NULL;
  if (stderr_buf != NULL)
    *stderr_buf = NULL;
  w = g_task_get_task_data (G_TASK (result));
  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;
  return communicate_result (w, stdout_buf, stderr_buf, error);
}

/* UTF-8 */

/* @bytes as a string, or FALSE with @error if it is not valid UTF-8 (a
 * NUL byte included: the string could not carry it). */
static gboolean
to_utf8 (GBytes *bytes, const char *name, char **out, GError **error)
{
  const char *data, *end;
  gsize len;

  *out = NULL;
  if (bytes == NULL)
    return TRUE;
  data = g_bytes_get_data (bytes, &len);
  if (!g_utf8_validate_len (data != NULL ? data : "", len, &end))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "Invalid UTF-8 in the process's %s at offset %" G_GSIZE_FORMAT,
                   name, (gsize) (end - (data != NULL ? data : "")));
      return FALSE;
    }
  *out = g_strndup (data != NULL ? data : "", len);
  return TRUE;
}

/* Both, or neither and FALSE. */
static gboolean
bytes_to_utf8 (GBytes *out, GBytes *err, char **stdout_buf, char **stderr_buf,
               GError **error)
{
  g_autofree char *o = NULL;
  g_autofree char *e = NULL;
  gboolean ok;

  ok = to_utf8 (out, "stdout", &o, error) && to_utf8 (err, "stderr", &e, error);
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);
  if (!ok)
    return FALSE;
  if (stdout_buf != NULL)
    *stdout_buf = g_steal_pointer (&o);
  if (stderr_buf != NULL)
    *stderr_buf = g_steal_pointer (&e);
  return TRUE;
}

static GBytes *
string_bytes (const char *s)
{
  return s != NULL ? g_bytes_new (s, strlen (s)) : NULL;
}

/**
 * spawn_process_communicate_utf8:
 * @self: a running process
 * @stdin_buf: (nullable): input for the process, as for
 *   spawn_process_communicate()
 * @cancellable: (nullable): a #GCancellable
 * @stdout_buf: (out) (optional) (nullable) (transfer full): what it wrote to
 *   stdout, or %NULL if stdout is not a pipe of ours
 * @stderr_buf: (out) (optional) (nullable) (transfer full): the same for
 *   stderr
 * @error: return location for a #GError
 *
 * spawn_process_communicate() for text: the output of either channel
 * that is not valid UTF-8 (or holds a NUL byte) fails the call with
 * %G_IO_ERROR_INVALID_DATA, once the process has ended.
 *
 * Returns: as spawn_process_communicate(); on %FALSE both strings are %NULL
 */
gboolean
spawn_process_communicate_utf8 (SpawnProcess *self, const char *stdin_buf,
                                GCancellable *cancellable, char **stdout_buf,
                                char **stderr_buf, GError **error)
{
  g_autoptr (GBytes) in = NULL;
  GBytes *out = NULL, *err = NULL;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (stdin_buf == NULL ||
                          self->modes[SPAWN_PROCESS_STDIN] == SPAWN_CHANNEL_PIPE, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (stdout_buf != NULL)
    *stdout_buf = NULL;
  if (stderr_buf != NULL)
    *stderr_buf = NULL;
  in = string_bytes (stdin_buf);
  if (!spawn_process_communicate (self, in, cancellable, &out, &err, error))
    return FALSE;
  return bytes_to_utf8 (out, err, stdout_buf, stderr_buf, error);
}

/**
 * spawn_process_communicate_utf8_async:
 * @self: a running process
 * @stdin_buf: (nullable): input for the process
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the process has ended, or the call
 *   was cancelled
 * @user_data: data for @callback
 *
 * spawn_process_communicate_utf8() without blocking, as
 * spawn_process_communicate_async().
 */
void
spawn_process_communicate_utf8_async (SpawnProcess *self, const char *stdin_buf,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GBytes) in = NULL;

  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (stdin_buf == NULL || self->modes[SPAWN_PROCESS_STDIN] == SPAWN_CHANNEL_PIPE);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  in = string_bytes (stdin_buf);
  communicate_async (self, in, spawn_process_communicate_utf8_async, cancellable, callback,
                     user_data);
}

/**
 * spawn_process_communicate_utf8_finish:
 * @self: a process
 * @result: the #GAsyncResult the callback got
 * @stdout_buf: (out) (optional) (nullable) (transfer full): its stdout
 * @stderr_buf: (out) (optional) (nullable) (transfer full): its stderr
 * @error: return location for a #GError
 *
 * Finishes spawn_process_communicate_utf8_async().
 *
 * Returns: as spawn_process_communicate_utf8()
 */
gboolean
spawn_process_communicate_utf8_finish (SpawnProcess *self, GAsyncResult *result,
                                       char **stdout_buf, char **stderr_buf, GError **error)
{
  SpawnProcessWaiter *w;
  GBytes *out = NULL, *err = NULL;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) ==
                          spawn_process_communicate_utf8_async, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (stdout_buf != NULL)
    *stdout_buf = NULL;
  if (stderr_buf != NULL)
    *stderr_buf = NULL;
  w = g_task_get_task_data (G_TASK (result));
  if (!g_task_propagate_boolean (G_TASK (result), error) ||
      !communicate_result (w, &out, &err, error))
    return FALSE;
  return bytes_to_utf8 (out, err, stdout_buf, stderr_buf, error);
}
