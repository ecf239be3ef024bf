/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* async.c - SpawnProcess the GIO way: waits and communicate()
 *
 * spawn_process_wait_async(), wait_check_async() and communicate() in
 * both flavours wait for the end of one run, as waiters (waiters.c).
 * Nothing here polls or dispatches on its own: the process's source (or
 * a blocking wait) does the work.  communicate() feeds stdin through
 * spawn_process_write() and the blocking one waits through wait.c.
 */
#include "process-private.h"

#include <string.h>

static void
async_wait (SpawnProcess *self, gboolean check, gpointer tag, GCancellable *cancellable,
            GAsyncReadyCallback callback, gpointer user_data)
{
  SpawnProcessWaiter *w = g_new0 (SpawnProcessWaiter, 1);
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, tag);
  w->check = check;
  g_task_set_task_data (task, w, _spawn_process_waiter_free);
  _spawn_process_waiter_add (self, task);
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
 * [method@Gio.Subprocess.wait_async] does.  @callback runs in the thread-default
 * main context of the caller; the process's end is still noticed from the
 * context it is watched from (or by a blocking wait), so that one must
 * run.  A process that has ended already is waited for at once.
 * Cancelling does not kill the process: the callback gets
 * %G_IO_ERROR_CANCELLED and the process can be waited for again.  The
 * task holds a reference on @self until then.  Call from the thread that
 * uses @self, and [method@Spawn.Process.wait_finish] from @callback.
 */
void
spawn_process_wait_async (SpawnProcess *self, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  async_wait (self, FALSE, spawn_process_wait_async, cancellable, callback, user_data);
}

/**
 * spawn_process_wait_finish:
 * @self: a process
 * @result: the #GAsyncResult the callback got
 * @error: return location for a #GError
 *
 * Finishes [method@Spawn.Process.wait_async].
 *
 * Returns: %TRUE once the process has ended, whatever its status (see
 *   [method@Spawn.Process.get_exit_info]); %FALSE with %G_IO_ERROR_CANCELLED, or
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
 * Waits for the end of the process without blocking and checks its
 * status: [method@Spawn.Process.wait_async] and
 * [func@GLib.spawn_check_wait_status] in one, as
 * [method@Gio.Subprocess.wait_check_async].  Call
 * [method@Spawn.Process.wait_check_finish] from @callback for the result.
 */
void
spawn_process_wait_check_async (SpawnProcess *self, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  async_wait (self, TRUE, spawn_process_wait_check_async, cancellable, callback, user_data);
}

/**
 * spawn_process_wait_check_finish:
 * @self: a process
 * @result: the #GAsyncResult the callback got
 * @error: return location for a #GError
 *
 * Finishes [method@Spawn.Process.wait_check_async].
 *
 * Returns: %TRUE if the process exited with status 0; %FALSE with a
 *   %G_SPAWN_EXIT_ERROR (the exit status is the code) or
 *   %G_SPAWN_ERROR_FAILED (a signal), as [func@GLib.spawn_check_wait_status] says,
 *   %SPAWN_ERROR_STATUS_LOST, or the errors of [method@Spawn.Process.wait_finish]
 */
gboolean
spawn_process_wait_check_finish (SpawnProcess *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) ==
                          spawn_process_wait_check_async, FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* Takes the pipes of %SPAWN_CHANNEL_STREAM channels back from their
 * streams, as GSubprocess's communicate() reads and closes its pipes,
 * and notes which channels are pipes of ours that communicate() reads. */
static gboolean
async_take_pipes (SpawnProcess *self, SpawnProcessWaiter *w, GError **error)
{
  int i;

  for (i = 0; i < 3; i++)
    if (!_spawn_process_adopt_stream (self, i, error))
      return FALSE;
  for (i = 0; i < 3; i++)
    w->pipes[i] = _spawn_process_channel_buffered (self, i);
  return TRUE;
}

/* communicate() */

/* Whether communicate() may have input to write: stdin is a pipe, ours
 * or a stream's (GSubprocess: %G_SUBPROCESS_FLAGS_STDIN_PIPE). */
static gboolean
async_stdin_is_pipe (SpawnProcess *self)
{
  SpawnChannelMode mode = self->started.modes[SPAWN_PROCESS_STDIN];

  return mode == SPAWN_CHANNEL_PIPE || _spawn_process_mode_is_pty (mode) ||
         mode == SPAWN_CHANNEL_STREAM;
}

/* Whether a communicate() of @run has not returned yet. */
static gboolean
async_communicating (SpawnProcess *self, guint run)
{
  GList *l;

  for (l = self->waiters; l != NULL; l = l->next)
    {
      SpawnProcessWaiter *other = l->data;

      if (other->capture && other->run == run && !other->ended)
        return TRUE;
    }
  return FALSE;
}

typedef enum {
  BEGIN_FAILED,
  BEGIN_WAIT,      /* @w is on the list: wait for the end */
  BEGIN_DONE,      /* the process had ended: @w is filled */
} Begin;

/* communicate_begin() on a running process: puts @w on the list, then
 * feeds @stdin_buf (@len bytes) and closes stdin. */
static Begin
communicate_enlist (SpawnProcess *self, SpawnProcessWaiter *w, GBytes *stdin_buf, gsize len,
                    GError **error)
{
  GError *local_error = NULL;

  /* With the list's reference on the task or the blocking call from
   * another thread, if there is one. */
  if (w->task != NULL)
    g_object_ref (w->task);
  else if (w->sync != NULL)
    _spawn_process_sync_ref (w->sync);
  self->waiters = g_list_append (self->waiters, w);
  /* Collecting until the end: the read buffer size no longer holds
   * back a full channel (the process could not end otherwise). */
  _spawn_process_watch_output (self, SPAWN_PROCESS_STDOUT);
  _spawn_process_watch_output (self, SPAWN_PROCESS_STDERR);
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
              if (w->task != NULL)
                g_object_unref (w->task);
              else if (w->sync != NULL)
                _spawn_process_sync_unref (w->sync);
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

/* Puts @w on the list, then feeds @stdin_buf and closes stdin.  @w is on
 * the list before the write, whose handlers may run the process to its
 * end. */
static Begin
communicate_begin (SpawnProcess *self, SpawnProcessWaiter *w, GBytes *stdin_buf,
                   gboolean async, GError **error)
{
  gsize len = stdin_buf != NULL ? g_bytes_get_size (stdin_buf) : 0;
  gboolean ended;

  w->capture = TRUE;
  w->write_errors = self->write_errors;
  w->run = _spawn_process_waiter_run (self, &ended);
  /* Two calls would split the output between them: GIO's answer. */
  if (w->run != 0 && async_communicating (self, w->run))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PENDING,
                   "communicate() is already running on “%s”",
                   _spawn_process_program (self));
      return BEGIN_FAILED;
    }
  if (w->run != 0 && !async && self->state != SPAWN_PROCESS_RUNNING)
    {
      /* From a handler of the end, which a blocking call cannot wait
       * for: the process has ended and its output is all buffered. */
      w->run = 0;
      ended = TRUE;
    }
  if (w->run == 0 && !ended)
    {
      _spawn_process_fail_not_running (self, error);
      return BEGIN_FAILED;
    }
  if (w->run == 0)
    {
      if (len > 0)
        {
          g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                       "“%s” has ended: its input cannot be written",
                       _spawn_process_program (self));
          return BEGIN_FAILED;
        }
      if (!async_take_pipes (self, w, error))
        return BEGIN_FAILED;
      _spawn_process_waiter_fill (self, w);
      return BEGIN_DONE;
    }
  if (len > 0 && self->state != SPAWN_PROCESS_RUNNING)
    {
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                   "“%s” is ending: its input cannot be written",
                   _spawn_process_program (self));
      return BEGIN_FAILED;
    }
  if (!async_take_pipes (self, w, error))
    return BEGIN_FAILED;
  return communicate_enlist (self, w, stdin_buf, len, error);
}

/* Hands out what @w captured; FALSE with @error if the writing failed. */
static gboolean
communicate_result (SpawnProcess *self, SpawnProcessWaiter *w, GBytes **stdout_buf,
                    GBytes **stderr_buf, GError **error)
{
  if (w->write_failed)
    {
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                   "“%s” did not read all its input", _spawn_process_program (self));
      return FALSE;
    }
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
 *   %SPAWN_CHANNEL_PIPE or %SPAWN_CHANNEL_STREAM stdin unless this is %NULL
 * @cancellable: (nullable): a #GCancellable
 * @stdout_buf: (out) (optional) (nullable) (transfer full): what it wrote to
 *   stdout, or %NULL if stdout is not a pipe (%SPAWN_CHANNEL_PIPE or
 *   %SPAWN_CHANNEL_STREAM)
 * @stderr_buf: (out) (optional) (nullable) (transfer full): the same for
 *   stderr (%NULL when merged into stdout)
 * @error: return location for a #GError
 *
 * As [method@Gio.Subprocess.communicate]: writes @stdin_buf to the process, closes
 * its stdin (also when @stdin_buf is %NULL), reads its stdout and stderr
 * meanwhile, and returns once it has ended and those pipes are at end of
 * file, with everything written to them, output buffered before the call
 * included.  As GSubprocess's, it reads to the end what a descendant that
 * inherited a pipe writes after the child has exited (`sh -c 'echo a;
 * (sleep 1; echo b) &'` gives both lines); until then the run has not
 * ended ("finished" comes after, and the other waits wait with it).  Blocks like
 * [method@Spawn.Process.wait_for_finished], emitting the same signals from
 * inside; handlers that read the buffers take that output away from this
 * call.  On a process that has ended already, returns what is still
 * buffered (and fails if there was input to write); so does a call from a
 * handler of its end ("ready-read-*", "error-occurred", "finished").  One
 * communicate() at a time: another one (blocking or async) while it runs
 * fails with %G_IO_ERROR_PENDING, as GIO's calls do, instead of sharing
 * the output out between them.
 *
 * A %SPAWN_CHANNEL_STREAM channel is read (or, for stdin, written) as
 * GSubprocess's communicate() uses its pipes: the pipe is taken back from
 * its stream, which is closed, and buffered like a %SPAWN_CHANNEL_PIPE
 * for the rest of the run (its "ready-read-*" signal included); what the
 * caller already read from the stream is not returned again.  A stream
 * with an operation pending fails the call with %G_IO_ERROR_PENDING.
 * While a communicate() runs, the read buffer size
 * ([method@Spawn.Process.set_read_buffer_size]) does not apply: it
 * collects everything, as the process could not end otherwise.
 *
 * Cancelling leaves the process running, its input queued and its output
 * buffered: a later communicate() with %NULL input, or the usual calls,
 * get the rest.  If the child had ended and only a descendant held the
 * pipes open, the run then ends at once.
 *
 * Safe from any thread, as [method@Gio.Subprocess.communicate] and
 * [method@Spawn.Process.wait] are: from a thread while another one runs
 * the main context the process is watched from, the work is done there
 * and this call sleeps until the end, so that context must keep running
 * until it returns.
 *
 * Returns: %TRUE once the process has ended, whatever its status;
 *   %FALSE with %G_IO_ERROR_CANCELLED, %G_IO_ERROR_PENDING (another
 *   communicate(), or a stream's operation),
 *   %SPAWN_PROCESS_ERROR_NOT_RUNNING, %SPAWN_PROCESS_ERROR_WRITE_ERROR (the stdin channel was closed, or
 *   the process did not read all its input: reported once it has ended;
 *   the output then stays buffered), or the errors of
 *   [method@Spawn.Process.wait_for_finished]
 */
/* SpawnProcessSync.begin for communicate(), in the owner of the context. */
static gboolean
communicate_sync_begin (SpawnProcess *self, SpawnProcessSync *s, GError **error)
{
  return communicate_begin (self, &s->w, s->stdin_buf, FALSE, error) != BEGIN_FAILED;
}

/* communicate() from a thread while another one runs the context the
 * process is watched from: begun and ended there (sync.c). */
static gboolean
communicate_from_thread (SpawnProcess *self, GBytes *stdin_buf, GCancellable *cancellable,
                         GBytes **stdout_buf, GBytes **stderr_buf, GError **error)
{
  SpawnProcessSync *s = _spawn_process_sync_new (self);
  gboolean ok;

  s->stdin_buf = stdin_buf != NULL ? g_bytes_ref (stdin_buf) : NULL;
  s->begin = communicate_sync_begin;
  ok = _spawn_process_sync_call (self, s, cancellable, error);
  if (ok && !s->w.ended)
    ok = _spawn_process_fail_not_running (self, error);
  ok = ok && communicate_result (self, &s->w, stdout_buf, stderr_buf, error);
  _spawn_process_sync_unref (s);
  return ok;
}

gboolean
spawn_process_communicate (SpawnProcess *self, GBytes *stdin_buf, GCancellable *cancellable,
                           GBytes **stdout_buf, GBytes **stderr_buf, GError **error)
{
  SpawnProcessWaiter w = { 0 };
  GMainContext *context;
  gboolean ok = TRUE;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (stdin_buf == NULL ||
                          async_stdin_is_pipe (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (stdout_buf != NULL)
    *stdout_buf = NULL;
  if (stderr_buf != NULL)
    *stderr_buf = NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  g_object_ref (self);
  if (!_spawn_process_sync_acquire (self, &context))
    {
      ok = communicate_from_thread (self, stdin_buf, cancellable, stdout_buf, stderr_buf,
                                    error);
      g_object_unref (self);
      return ok;
    }
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
      _spawn_process_release_held_end (self);
      if (ok && !w.ended)
        ok = _spawn_process_fail_not_running (self, error);
      break;
    case BEGIN_DONE:
    default:
      break;
    }
  ok = ok && communicate_result (self, &w, stdout_buf, stderr_buf, error);
  _spawn_process_waiter_clear (&w);
  _spawn_process_sync_release (context);
  g_object_unref (self);
  return ok;
}

static void
async_communicate (SpawnProcess *self, GBytes *stdin_buf, gpointer tag,
                   GCancellable *cancellable, GAsyncReadyCallback callback,
                   gpointer user_data)
{
  SpawnProcessWaiter *w = g_new0 (SpawnProcessWaiter, 1);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  GError *error = NULL;

  g_task_set_source_tag (task, tag);
  g_task_set_task_data (task, w, _spawn_process_waiter_free);
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
      _spawn_process_waiter_return (w);
      break;
    case BEGIN_WAIT:
    default:
      if (!w->ended)
        _spawn_process_waiter_watch_cancellable (w);
      break;
    }
  g_object_unref (task);
}

/**
 * spawn_process_communicate_async:
 * @self: a running process
 * @stdin_buf: (nullable): input for the process, as for
 *   [method@Spawn.Process.communicate]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the process has ended, or the call
 *   was cancelled
 * @user_data: data for @callback
 *
 * Communicates with the process without blocking, as
 * [method@Spawn.Process.communicate] does blocking: the input is written
 * and the output read from the context the process is watched from, and
 * @callback runs in the thread-default main context of the caller.  Call
 * [method@Spawn.Process.communicate_finish] from @callback for the output.
 */
void
spawn_process_communicate_async (SpawnProcess *self, GBytes *stdin_buf,
                                 GCancellable *cancellable, GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (stdin_buf == NULL || async_stdin_is_pipe (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  async_communicate (self, stdin_buf, spawn_process_communicate_async, cancellable, callback,
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
 * Finishes [method@Spawn.Process.communicate_async].
 *
 * Returns: as [method@Spawn.Process.communicate]; on %FALSE both buffers are %NULL
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
  return communicate_result (self, w, stdout_buf, stderr_buf, error);
}

/* UTF-8 */

/* @bytes as a string, or FALSE with @error if it is not valid UTF-8 (a
 * NUL byte included: the string could not carry it).  @name is the
 * channel's, @program the process's, for the message. */
static gboolean
async_to_utf8 (GBytes *bytes, const char *name, const char *program, char **out,
               GError **error)
{
  const char *data, *end;
  gsize len;

  *out = NULL;
  if (bytes == NULL)
    return TRUE;
  data = g_bytes_get_data (bytes, &len);
  if (data == NULL)
    data = "";
  if (!g_utf8_validate_len (data, len, &end))
    {
      if (end < data + len && *end == '\0')
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                     "The %s of “%s” holds a NUL byte (at byte %" G_GSIZE_FORMAT "), "
                     "which a string cannot carry", name, program, (gsize) (end - data));
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                     "The %s of “%s” is not valid UTF-8 (at byte %" G_GSIZE_FORMAT ")",
                     name, program, (gsize) (end - data));
      return FALSE;
    }
  *out = g_strndup (data, len);
  return TRUE;
}

/* Both, or neither and FALSE. */
static gboolean
async_bytes_to_utf8 (SpawnProcess *self, GBytes *out, GBytes *err, char **stdout_buf,
                     char **stderr_buf, GError **error)
{
  const char *program = _spawn_process_program (self);
  g_autofree char *o = NULL;
  g_autofree char *e = NULL;
  gboolean ok;

  ok = async_to_utf8 (out, "stdout", program, &o, error) &&
       async_to_utf8 (err, "stderr", program, &e, error);
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
async_string_bytes (const char *s)
{
  return s != NULL ? g_bytes_new (s, strlen (s)) : NULL;
}

/**
 * spawn_process_communicate_utf8:
 * @self: a running process
 * @stdin_buf: (nullable): input for the process, as for
 *   [method@Spawn.Process.communicate]
 * @cancellable: (nullable): a #GCancellable
 * @stdout_buf: (out) (optional) (nullable) (transfer full): what it wrote to
 *   stdout, or %NULL if stdout is not a pipe of ours
 * @stderr_buf: (out) (optional) (nullable) (transfer full): the same for
 *   stderr
 * @error: return location for a #GError
 *
 * Communicates with the process in text: as
 * [method@Spawn.Process.communicate], but the output of either channel
 * that is not valid UTF-8 (or holds a NUL byte) fails the call with
 * %G_IO_ERROR_INVALID_DATA, once the process has ended.
 *
 * Returns: as [method@Spawn.Process.communicate]; on %FALSE both strings are %NULL
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
                          async_stdin_is_pipe (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (stdout_buf != NULL)
    *stdout_buf = NULL;
  if (stderr_buf != NULL)
    *stderr_buf = NULL;
  in = async_string_bytes (stdin_buf);
  if (!spawn_process_communicate (self, in, cancellable, &out, &err, error))
    return FALSE;
  return async_bytes_to_utf8 (self, out, err, stdout_buf, stderr_buf, error);
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
 * Communicates with the process in text without blocking:
 * [method@Spawn.Process.communicate_utf8] as
 * [method@Spawn.Process.communicate_async].  Call
 * [method@Spawn.Process.communicate_utf8_finish] from @callback for the
 * output.
 */
void
spawn_process_communicate_utf8_async (SpawnProcess *self, const char *stdin_buf,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GBytes) in = NULL;

  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (stdin_buf == NULL || async_stdin_is_pipe (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  in = async_string_bytes (stdin_buf);
  async_communicate (self, in, spawn_process_communicate_utf8_async, cancellable, callback,
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
 * Finishes [method@Spawn.Process.communicate_utf8_async].
 *
 * Returns: as [method@Spawn.Process.communicate_utf8]
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
      !communicate_result (self, w, &out, &err, error))
    return FALSE;
  return async_bytes_to_utf8 (self, out, err, stdout_buf, stderr_buf, error);
}
