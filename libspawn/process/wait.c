/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* wait.c - SpawnProcess without a main loop
 *
 * The blocking helpers: spawn_process_wait_for_*() poll the process's
 * descriptors themselves and hand what poll() says to the same
 * _spawn_process_events() (run.c) the source dispatches, so the same signals are
 * emitted in the same order; they own the main context the process is
 * watched from meanwhile.  spawn_process_execute() is a whole run on top
 * of them, from a private context.  A cancellable's fd is polled with the
 * rest; cancelling a wait leaves the process as it is.
 */
#include "process-private.h"

#include <errno.h>
#include <poll.h>

/* How often a blocking wait looks again while the end is held. */
#define HELD_RECHECK_MS 100

/* Waiting without a main loop */

/* One blocking wait: what it waits for, since when. */
typedef struct {
  WaitFor what;
  gint64 deadline;             /* monotonic µs, -1: none */
  guint64 reads, writes;       /* the process's counts when it began */
  guint run;
  gboolean polled;             /* at least once */
  GPollFD cancel_fd;
  gboolean have_cancel_fd;
} Wait;

/* While we block, no other thread may dispatch this object from the
 * context its source is attached to (which the running process keeps
 * alive, so that this is never the default context by mistake): own that context meanwhile (its
 * other users wait), and refuse if another thread owns it, which is
 * running it now.  Acquiring is recursive, so a wait from a handler that
 * context dispatched is fine.  *@context: what to release, or NULL. */
static gboolean
wait_acquire_context (SpawnProcess *self, GMainContext **context, GError **error)
{
  *context = NULL;
  if (self->context == NULL)
    return TRUE;
  *context = g_main_context_ref (self->context);
  if (g_main_context_acquire (*context))
    return TRUE;
  g_clear_pointer (context, g_main_context_unref);
  g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRONG_THREAD,
               "Cannot wait for “%s” here: another thread runs the main context "
               "it is watched from (spawn_process_wait() and communicate() "
               "work from any thread)", _spawn_process_program (self));
  return FALSE;
}

static void
wait_release_context (GMainContext *context)
{
  if (context == NULL)
    return;
  g_main_context_release (context);
  g_main_context_unref (context);
}

/* Whether @w is over: TRUE with *@ok once it is (*@ok FALSE with @error
 * set if it failed), FALSE to poll again. */
static gboolean
wait_is_over (SpawnProcess *self, const Wait *w, GCancellable *cancellable,
              gboolean *ok, GError **error)
{
  *ok = FALSE;
  /* First: a cancelled wait returns CANCELLED, also when what it
   * waited for happened in the same pass (as GIO's calls do). */
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return TRUE;
  /* For FINISHED: our run's "finished" was emitted.  A handler may have
   * started the next run since, which is not what we wait for (QProcess
   * returns once finished was emitted). */
  if ((w->what == WAIT_READY_READ && self->read_count != w->reads) ||
      (w->what == WAIT_BYTES_WRITTEN && self->write_count != w->writes) ||
      (w->what == WAIT_FINISHED && self->finished_run == w->run))
    return *ok = TRUE;
  if (self->run != w->run || self->state != SPAWN_PROCESS_RUNNING)
    return !_spawn_process_fail_not_running (self, error);
  /* Stdin closed with input left (a failed write): nothing more will go. */
  if (w->what == WAIT_BYTES_WRITTEN && self->channels[SPAWN_PROCESS_STDIN].fd < 0 &&
      _spawn_process_pending (&self->channels[SPAWN_PROCESS_STDIN]) > 0)
    {
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                   "The stdin of “%s” is closed: the rest of its input cannot be "
                   "written", _spawn_process_program (self));
      return TRUE;
    }
  /* Nothing buffered: spawn_process_write() may have written all of it at
   * once, unseen by any wait since.  Then write() followed by this wait
   * is TRUE, as QProcess's idiom expects; else there is nothing to wait
   * for. */
  if (w->what == WAIT_BYTES_WRITTEN &&
      _spawn_process_pending (&self->channels[SPAWN_PROCESS_STDIN]) == 0)
    {
      if (self->write_count != self->write_count_waited)
        return *ok = TRUE;
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                   "Nothing to write to “%s”", _spawn_process_program (self));
      return TRUE;
    }
  /* Only after one poll at least: with a timeout of 0 the caller asks
   * "anything now?", and a loop of such calls must get there. */
  if (w->polled && w->deadline >= 0 && g_get_monotonic_time () >= w->deadline)
    {
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT,
                   "Timed out waiting for “%s”", _spawn_process_program (self));
      return TRUE;
    }
  return FALSE;
}

/* Milliseconds to the earliest of @deadline and the process's own. */
static int
wait_poll_timeout (SpawnProcess *self, gint64 deadline)
{
  gint64 now = g_get_monotonic_time ();
  gint64 next = _spawn_process_next_wakeup (self);
  gint64 until = deadline;

  if (next >= 0 && (until < 0 || next < until))
    until = next;
  /* While the end is held for a communicate(), look again every
   * HELD_RECHECK_MS: a communicate cancelled or abandoned meanwhile has
   * its cancel handled in the context this wait keeps from running. */
  if (self->end_held)
    {
      gint64 recheck = now + HELD_RECHECK_MS * 1000;

      if (until < 0 || recheck < until)
        until = recheck;
    }
  if (until < 0)
    return -1;
  /* Round up: waking a little late beats spinning a little early. */
  return until <= now ? 0 : (int) MIN ((until - now + 999) / 1000, G_MAXINT);
}

/* Polls the process's descriptors (and the cancellable's) once and hands
 * what poll said to _spawn_process_events().  FALSE with @error if poll
 * itself failed. */
static gboolean
wait_poll_once (SpawnProcess *self, Wait *w, GError **error)
{
  struct pollfd pfd[5];
  GIOCondition revents[4] = { 0, 0, 0, 0 };
  int slot[5];
  int n = 0, i;

  for (i = 0; i < 3; i++)
    {
      Channel *c = &self->channels[i];

      if (c->fd < 0 || (i == SPAWN_PROCESS_STDIN && _spawn_process_pending (c) == 0) ||
          (i != SPAWN_PROCESS_STDIN && _spawn_process_output_full (self, i)))
        continue;
      pfd[n].fd = c->fd;
      pfd[n].events = i == SPAWN_PROCESS_STDIN ? POLLOUT : POLLIN;
      slot[n++] = i;
    }
  /* Not while the end is held for communicate() (run.c): the fd of a
   * child that has ended stays readable. */
  if (!self->end_held)
    {
      pfd[n].fd = spawn_child_get_fd (self->child);
      pfd[n].events = POLLIN;
      slot[n++] = CHILD_SLOT;
    }
  if (w->have_cancel_fd)
    {
      pfd[n].fd = w->cancel_fd.fd;
      pfd[n].events = POLLIN;
      slot[n++] = -1;
    }
  if (poll (pfd, n, wait_poll_timeout (self, w->deadline)) < 0 && errno != EINTR)
    {
      int errsv = errno;

      /* EINVAL (RLIMIT_NOFILE below our fd count) or ENOMEM: the wait
       * failed, the process did not; it is still ours to wait for. */
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_READ_ERROR,
                   "Cannot poll the descriptors of “%s” (PID %d): %s",
                   _spawn_process_program (self),
                   (int) spawn_child_get_pid (self->child), g_strerror (errsv));
      return FALSE;
    }
  w->polled = TRUE;
  for (i = 0; i < n; i++)
    if (slot[i] >= 0)
      revents[slot[i]] = pfd[i].revents;
  _spawn_process_events (self, revents, w->what);
  return TRUE;
}

gboolean
_spawn_process_wait_for (SpawnProcess *self, WaitFor what, int timeout_ms,
                         GCancellable *cancellable, GError **error)
{
  Wait w = { .what = what, .deadline = -1, .reads = self->read_count,
             .writes = self->write_count, .run = self->run };
  GMainContext *context;
  gboolean ok = FALSE;

  if (timeout_ms >= 0)
    w.deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  if (!wait_acquire_context (self, &context, error))
    return FALSE;
  g_object_ref (self);
  w.have_cancel_fd = g_cancellable_make_pollfd (cancellable, &w.cancel_fd);
  while (!wait_is_over (self, &w, cancellable, &ok, error) &&
         wait_poll_once (self, &w, error))
    ;
  if (w.have_cancel_fd)
    g_cancellable_release_fd (cancellable);
  if (ok && what == WAIT_BYTES_WRITTEN)
    self->write_count_waited = self->write_count;
  g_object_unref (self);
  wait_release_context (context);
  return ok;
}

/**
 * spawn_process_wait_for_started:
 * @self: a process
 * @timeout_ms: ignored: [method@Spawn.Process.start] returns started or failed
 * @error: return location for a #GError
 *
 * For code written against QProcess::waitForStarted().
 *
 * Returns: %TRUE if the process is running; %FALSE with
 *   %SPAWN_PROCESS_ERROR_NOT_RUNNING otherwise
 */
gboolean
spawn_process_wait_for_started (SpawnProcess *self, int timeout_ms G_GNUC_UNUSED,
                                GError **error)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->state == SPAWN_PROCESS_RUNNING)
    return TRUE;
  return _spawn_process_fail_not_running (self, error);
}

/**
 * spawn_process_wait_for_ready_read:
 * @self: a running process
 * @timeout_ms: at most this long, or -1
 * @cancellable: (nullable): a #GCancellable; cancelling returns
 *   %G_IO_ERROR_CANCELLED and leaves the process running
 * @error: return location for a #GError
 *
 * Blocks until new output is buffered (stdout or stderr), by polling the
 * process's descriptors; signals are emitted from here as they would be
 * from the main context.
 *
 * Only %SPAWN_CHANNEL_PIPE channels are buffered: when neither stdout nor
 * stderr is one (a %SPAWN_CHANNEL_STREAM is read through its stream, not
 * here), this fails at once with %SPAWN_PROCESS_ERROR_READ_ERROR.  A
 * channel whose buffer holds the read buffer size
 * ([method@Spawn.Process.set_read_buffer_size]) is not read until some of
 * it is taken.
 *
 * Returns: %TRUE if there is new output; %FALSE with
 *   %SPAWN_PROCESS_ERROR_TIMED_OUT, or %SPAWN_PROCESS_ERROR_NOT_RUNNING if
 *   it ended without writing more, or %SPAWN_PROCESS_ERROR_READ_ERROR if
 *   no output channel is buffered (see [method@Spawn.Process.wait_for_finished]
 *   for the other errors)
 */
gboolean
spawn_process_wait_for_ready_read (SpawnProcess *self, int timeout_ms,
                                GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Nothing we read could ever make it return TRUE (QProcess answers
   * false at once when its read channel is closed). */
  if (self->state == SPAWN_PROCESS_RUNNING &&
      !_spawn_process_channel_buffered (self, SPAWN_PROCESS_STDOUT) &&
      !_spawn_process_channel_buffered (self, SPAWN_PROCESS_STDERR))
    {
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_READ_ERROR,
                   "Cannot wait for output of “%s”: neither its stdout nor its stderr "
                   "is a pipe that the process object reads (a stream, or not a pipe)",
                   self->argv[0]);
      return FALSE;
    }
  return _spawn_process_wait_for (self, WAIT_READY_READ, timeout_ms, cancellable, error);
}

/**
 * spawn_process_wait_for_bytes_written:
 * @self: a running process
 * @timeout_ms: at most this long, or -1
 * @cancellable: (nullable): a #GCancellable; cancelling returns
 *   %G_IO_ERROR_CANCELLED and leaves the process running
 * @error: return location for a #GError
 *
 * Blocks until some of the buffered input has been written to the process.
 * [method@Spawn.Process.write] writes what the pipe takes right away: if that was
 * all of it (nothing buffered now) and no wait has seen it yet, this
 * returns %TRUE at once, so that QProcess's idiom write() then
 * waitForBytesWritten() holds.  With nothing buffered and nothing written
 * since the last wait, it fails, as QProcess::waitForBytesWritten()
 * returns false.
 *
 * Returns: %TRUE if some was written; %FALSE with
 *   %SPAWN_PROCESS_ERROR_TIMED_OUT, %SPAWN_PROCESS_ERROR_NOT_RUNNING or
 *   %SPAWN_PROCESS_ERROR_WRITE_ERROR (nothing buffered, or the write failed)
 */
gboolean
spawn_process_wait_for_bytes_written (SpawnProcess *self, int timeout_ms,
                                GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return _spawn_process_wait_for (self, WAIT_BYTES_WRITTEN, timeout_ms, cancellable, error);
}

/**
 * spawn_process_wait_for_finished:
 * @self: a running process
 * @timeout_ms: at most this long, or -1
 * @cancellable: (nullable): a #GCancellable; cancelling returns
 *   %G_IO_ERROR_CANCELLED and leaves the process running
 * @error: return location for a #GError
 *
 * Blocks until the process has ended and #SpawnProcess::finished has been
 * emitted, reading its output and writing its input meanwhile.  On a
 * timeout the process is left running.  A handler of that run's end may
 * have started the process again: this returns all the same.
 *
 * Like every wait, this polls at least once (also with a @timeout_ms of
 * 0), owns the main context the process is watched from while it blocks,
 * and refuses to wait if another thread owns (runs) that context.
 *
 * Returns: %TRUE if it finished; %FALSE with %SPAWN_PROCESS_ERROR_TIMED_OUT,
 *   %SPAWN_PROCESS_ERROR_NOT_RUNNING if it was not running,
 *   %SPAWN_PROCESS_ERROR_WRONG_THREAD if another thread runs its context,
 *   %SPAWN_PROCESS_ERROR_READ_ERROR if poll() failed, or
 *   %G_IO_ERROR_CANCELLED
 */
gboolean
spawn_process_wait_for_finished (SpawnProcess *self, int timeout_ms,
                                GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->state != SPAWN_PROCESS_RUNNING)
    return _spawn_process_fail_not_running (self, error);
  return _spawn_process_wait_for (self, WAIT_FINISHED, timeout_ms, cancellable, error);
}

/**
 * spawn_process_execute:
 * @argv: (array zero-terminated=1) (element-type filename): the program
 *   (searched in PATH) and its arguments
 * @timeout_ms: how long it may run, or -1
 * @stdout_out: (out) (optional): what it wrote to stdout; %NULL: stdout is
 *   forwarded to ours
 * @stderr_out: (out) (optional): the same for stderr
 * @info: (out caller-allocates) (optional): how it ended
 * @cancellable: (nullable): a #GCancellable: cancelling kills the program
 *   (it is ours alone) and returns %G_IO_ERROR_CANCELLED once it is reaped
 * @error: return location for a #GError
 *
 * Runs a program to its end, like QProcess::execute() or [func@GLib.spawn_sync],
 * with stdin from /dev/null.  No main loop runs, and the process is
 * watched from a private main context, so this is safe from any thread
 * whatever the other threads' loops do.  A program still running after
 * @timeout_ms is killed and reaped.
 *
 * Returns: %TRUE if it ran to its end (whatever its status); %FALSE with a
 *   %SPAWN_ERROR if it could not start, %SPAWN_ERROR_STATUS_LOST if it
 *   ended but someone else reaped it (a waitpid(-1) elsewhere, pidfd and
 *   sigchld backends), %SPAWN_PROCESS_ERROR_TIMED_OUT, or
 *   %G_IO_ERROR_CANCELLED (also, without starting it, if @cancellable was
 *   cancelled before the call)
 */
gboolean
spawn_process_execute (const char * const *argv, int timeout_ms, GBytes **stdout_out,
                       GBytes **stderr_out, SpawnExitInfo *info, GCancellable *cancellable,
                       GError **error)
{
  /* Declared first, freed last: after the process and its source. */
  g_autoptr (GMainContext) context = g_main_context_new ();
  g_autoptr (SpawnProcess) p = NULL;
  GError *local_error = NULL;
  SpawnExitInfo ended;
  gboolean started;

  g_return_val_if_fail (argv != NULL && argv[0] != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  p = spawn_process_new (argv);
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDOUT,
                                  stdout_out ? SPAWN_CHANNEL_PIPE : SPAWN_CHANNEL_FORWARD);
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDERR,
                                  stderr_out ? SPAWN_CHANNEL_PIPE : SPAWN_CHANNEL_FORWARD);
  /* Watched from a context nobody runs: in a thread that pushed none the
   * thread-default one is the global default, and the main thread's loop
   * would dispatch @p while we wait for it here. */
  g_main_context_push_thread_default (context);
  started = spawn_process_start (p, error);
  g_main_context_pop_thread_default (context);
  if (!started)
    return FALSE;
  if (!spawn_process_wait_for_finished (p, timeout_ms, cancellable, &local_error))
    {
      /* Timed out or cancelled: the program is ours alone, so it ends
       * here, and is reaped before we return. */
      spawn_process_kill (p, NULL);
      spawn_process_wait_for_finished (p, -1, NULL, NULL);
      if (g_error_matches (local_error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT))
        {
          g_clear_error (&local_error);
          g_set_error (&local_error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT,
                       "“%s” still ran after %d ms and was killed", argv[0], timeout_ms);
        }
      g_propagate_error (error, local_error);
      return FALSE;
    }
  /* Ran to its end, but someone else (a waitpid(-1) elsewhere, with the
   * pidfd or sigchld backend) took its status: say so, never TRUE with
   * @info untouched, which would read as whatever it held. */
  if (!spawn_process_get_exit_info (p, &ended))
    {
      g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_STATUS_LOST,
                   "“%s” ran to its end, but its exit status was lost: reaped by "
                   "someone else (a waitpid(-1) elsewhere in the application?)",
                   argv[0]);
      return FALSE;
    }
  if (stdout_out != NULL)
    *stdout_out = spawn_process_read_all (p, SPAWN_PROCESS_STDOUT);
  if (stderr_out != NULL)
    *stderr_out = spawn_process_read_all (p, SPAWN_PROCESS_STDERR);
  if (info != NULL)
    *info = ended;
  return TRUE;
}
