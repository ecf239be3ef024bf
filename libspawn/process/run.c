/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* run.c - one run of a SpawnProcess: start, watch, end; every emission
 *
 * One GSource per running process watches everything it owns: the child's
 * fd (through the context's hub, core/child-hub.c, which makes the source
 * ready: one epoll set however many processes run), our ends of its pipes, and a ready time for the kill timeout (and
 * for the sigchld backend's recheck).  The blocking waits (wait.c) poll
 * the same descriptors themselves and feed the same
 * _spawn_process_events(), so both paths emit the same signals in the
 * same order.
 *
 * Here: start and start_detached(), the source and what a wakeup means,
 * writing to stdin, the end of a run and its emissions, terminate, kill
 * and send_signal.  Every signal of SpawnProcess is emitted from this
 * file (their ids live here; process.c registers them), never nested in
 * a handler of its own.  channel.c below moves the bytes and reports
 * errno; launch.c turns the configuration into a child.
 */
#include "process-private.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>

guint _spawn_process_signals[N_SIGNALS];
GParamSpec *_spawn_process_props[N_PROPS];

typedef struct {
  GSource source;
  SpawnProcess *process;       /* not a reference: dispose destroys us */
} ProcessSource;

static void
run_set_state (SpawnProcess *self, SpawnProcessState state)
{
  if (self->state == state)
    return;
  self->state = state;
  /* The PID and the backend come and go with the running state. */
  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), _spawn_process_props[PROP_STATE]);
  if (state != SPAWN_PROCESS_STARTING)
    g_object_notify_by_pspec (G_OBJECT (self), _spawn_process_props[PROP_PID]);
  if (state == SPAWN_PROCESS_RUNNING)
    g_object_notify_by_pspec (G_OBJECT (self), _spawn_process_props[PROP_BACKEND]);
  g_object_thaw_notify (G_OBJECT (self));
  g_signal_emit (self, _spawn_process_signals[SIGNAL_STATE_CHANGED], 0, (int) state);
}

static void
run_emit_error (SpawnProcess *self, SpawnProcessError code, const char *format, ...)
  G_GNUC_PRINTF (3, 4);

static void
run_emit_error (SpawnProcess *self, SpawnProcessError code, const char *format, ...)
{
  GError *error;
  va_list ap;

  va_start (ap, format);
  error = g_error_new_valist (SPAWN_PROCESS_ERROR, code, format, ap);
  va_end (ap);
  g_clear_error (&self->last_error);
  self->last_error = g_error_copy (error);
  g_signal_emit (self, _spawn_process_signals[SIGNAL_ERROR_OCCURRED], 0, error);
  g_error_free (error);
}

/* "was killed by signal 9 (SIGKILL)", for the messages.  sigabbrev_np()
 * is glibc's (2.32 and later; Debian 12 has 2.36). */
static char *
run_describe_signal (const SpawnExitInfo *info)
{
  const char *abbrev = sigabbrev_np (info->status);

  return g_strdup_printf ("was killed by signal %d (%s%s)%s", info->status,
                          abbrev != NULL ? "SIG" : "",
                          abbrev != NULL ? abbrev : "unknown",
                          info->kind == SPAWN_EXIT_DUMPED ? " and dumped core" : "");
}

/* The source */

gint64
_spawn_process_next_wakeup (SpawnProcess *self)
{
  gint64 next = -1;

  if (self->kill_deadline > 0)
    next = self->kill_deadline;
  if (self->next_recheck > 0 && (next < 0 || self->next_recheck < next))
    next = self->next_recheck;
  return next;
}

static void
run_update_ready_time (SpawnProcess *self)
{
  gint64 next = _spawn_process_next_wakeup (self);

  if (next >= 0)
    _spawn_process_attach_source (self);
  g_source_set_ready_time (self->source, next);
}

static gboolean
run_source_dispatch (GSource *source, GSourceFunc callback G_GNUC_UNUSED,
                         gpointer user_data G_GNUC_UNUSED)
{
  SpawnProcess *self = ((ProcessSource *) source)->process;
  GIOCondition revents[4] = { 0, 0, 0, 0 };
  int i;

  for (i = 0; i < 3; i++)
    if (self->channels[i].tag != NULL)
      revents[i] = g_source_query_unix_fd (source, self->channels[i].tag);
  if (self->child_link != NULL && _spawn_ready_link_take_fired (self->child_link))
    revents[CHILD_SLOT] = G_IO_IN;
  g_object_ref (self);
  _spawn_process_events (self, revents, WAIT_NOTHING);
  /* Still running (a sigchld wake-up before the end): ask again. */
  if (revents[CHILD_SLOT] && self->child_link != NULL)
    _spawn_ready_link_rearm (self->child_link);
  g_object_unref (self);
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs run_source_funcs = {
  .dispatch = run_source_dispatch,
};

/* A run with no pipe and no deadline attaches no source (GLib walks
 * every attached source in every iteration, docs/design.md "Thousands of
 * children"): the hub of its context, at the source's priority, calls
 * this when the child's fd turns readable.  The hub holds a reference on
 * @data for the call. */
static void
run_child_ready (gpointer data)
{
  SpawnProcess *self = data;
  GIOCondition revents[4] = { 0, 0, 0, G_IO_IN };

  _spawn_process_events (self, revents, WAIT_NOTHING);
  /* Still running (a sigchld wake-up before the end): ask again. */
  if (self->child_link != NULL)
    _spawn_ready_link_rearm (self->child_link);
}

/* The child's fd into the hub of the run's context: as a link that
 * makes the source ready if the source is attached (one dispatch then
 * sees the pipes first, the child after), else as one the hub calls (a
 * source attached later leaves it so: the end drains the pipes before
 * "finished" whichever dispatch sees it first); if
 * no epoll fd can be had, polled by the source itself (the link's -errno
 * is no reason to fail a run that has started). */
static void
run_watch_child (SpawnProcess *self)
{
  int fd = spawn_child_get_fd (self->child);
  int err = 0;

  if (g_source_get_context (self->source) != NULL)
    self->child_link = _spawn_ready_link_new (self->source, fd, self->context, &err);
  else
    self->child_link = _spawn_ready_link_new_func (fd, self->context,
                                                   g_source_get_priority (self->source),
                                                   run_child_ready, self, g_object_ref,
                                                   g_object_unref, &err);
  if (self->child_link == NULL)
    {
      g_debug ("SpawnProcess “%s” polls its child's fd itself: %s",
               _spawn_process_program (self), g_strerror (-err));
      self->child_tag = g_source_add_unix_fd (self->source, fd, G_IO_IN);
      _spawn_process_attach_source (self);
    }
}

static void
run_unwatch_child (SpawnProcess *self)
{
  g_clear_pointer (&self->child_link, _spawn_ready_link_free);
  if (self->child_tag != NULL)
    g_source_remove_unix_fd (self->source, self->child_tag);
  self->child_tag = NULL;
}

static void
run_destroy_source (SpawnProcess *self)
{
  int i;

  if (self->source == NULL)
    return;
  for (i = 0; i < 3; i++)
    self->channels[i].tag = NULL;
  run_unwatch_child (self);
  g_source_destroy (self->source);
  g_clear_pointer (&self->source, g_source_unref);
}

/* "bytes-written" and "ready-read-*" */

/* "bytes-written", never from inside one of its handlers: a handler that
 * writes again would otherwise recurse once per write (tens of thousands
 * of frames for a pipe's worth of small writes).  Counts that come in
 * meanwhile are announced in a loop once the handler has returned.  The
 * caller holds a reference. */
static void
run_emit_bytes_written (SpawnProcess *self, guint64 written)
{
  if (self->emitting_written)
    {
      self->unannounced_written += written;
      return;
    }
  self->emitting_written = TRUE;
  while (written > 0)
    {
      g_signal_emit (self, _spawn_process_signals[SIGNAL_BYTES_WRITTEN], 0, written);
      written = self->unannounced_written;
      self->unannounced_written = 0;
    }
  self->emitting_written = FALSE;
}

/* "ready-read-*", never from inside one of its own handlers (one that
 * calls wait_for_ready_read(), say): data read meanwhile is announced
 * again once the handler has returned, if it is still buffered.  The
 * caller holds a reference. */
static void
run_emit_ready_read_channel (SpawnProcess *self, SpawnProcessChannel i)
{
  guint id = _spawn_process_signals[i == SPAWN_PROCESS_STDOUT ? SIGNAL_READY_READ_STDOUT
                                               : SIGNAL_READY_READ_STDERR];

  if (self->emitting_ready[i])
    {
      self->unannounced_ready[i] = TRUE;
      return;
    }
  self->emitting_ready[i] = TRUE;
  do
    {
      self->unannounced_ready[i] = FALSE;
      g_signal_emit (self, id, 0);
    }
  while (self->unannounced_ready[i] && _spawn_process_pending (&self->channels[i]) > 0);
  self->unannounced_ready[i] = FALSE;
  self->emitting_ready[i] = FALSE;
}

static void
run_emit_ready_read (SpawnProcess *self, const gboolean got[3])
{
  if (got[SPAWN_PROCESS_STDOUT])
    run_emit_ready_read_channel (self, SPAWN_PROCESS_STDOUT);
  if (got[SPAWN_PROCESS_STDERR])
    run_emit_ready_read_channel (self, SPAWN_PROCESS_STDERR);
}

/* Input and output, with what they cause announced */

/* Writes buffered stdin as far as the pipe takes it; "bytes-written" for
 * what went, "error-occurred" if the write failed (then FALSE). */
static gboolean
run_flush_stdin (SpawnProcess *self)
{
  gssize written = _spawn_process_write_stdin (self);

  if (written < 0)
    {
      run_emit_error (self, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                      "Cannot write to the stdin of “%s” (PID %d): %s",
                      _spawn_process_program (self), (int) spawn_child_get_pid (self->child),
                      g_strerror ((int) -written));
      return FALSE;
    }
  if (written > 0)
    run_emit_bytes_written (self, written);
  return TRUE;
}

/* Reads channel @i (all of it with @drain); TRUE if data arrived.  A
 * failed read is announced through "error-occurred". */
static gboolean
run_read (SpawnProcess *self, SpawnProcessChannel i, gboolean drain)
{
  int errnum = 0;
  gboolean got = _spawn_process_read_channel (self, i, drain, &errnum);

  if (errnum != 0)
    run_emit_error (self, SPAWN_PROCESS_ERROR_READ_ERROR,
                    "Cannot read the %s of “%s” (PID %d): %s",
                    i == SPAWN_PROCESS_STDOUT ? "stdout" : "stderr",
                    _spawn_process_program (self), (int) spawn_child_get_pid (self->child),
                    g_strerror (errnum));
  return got;
}

/* The end */

void
_spawn_process_release_running (SpawnProcess *self)
{
  int i;

  for (i = 0; i < 3; i++)
    _spawn_process_close_channel (self, i);
  run_destroy_source (self);
  g_mutex_lock (&self->context_lock);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_mutex_unlock (&self->context_lock);
  g_clear_pointer (&self->child, spawn_child_unref);
  self->end_held = FALSE;
  self->kill_deadline = 0;
  self->timed_out = FALSE;
  self->next_recheck = 0;
}

/* Emits what is left of the last run's end.  Each step is taken off
 * before its emission, and spawn_process_start() calls this first: a
 * handler that starts the process again (from "state-changed" or
 * "error-occurred") thus gets the old run's "finished", with the old
 * run's values, before the new run's "started".  The caller holds a
 * reference. */
static void
run_emit_end (SpawnProcess *self)
{
  while (self->end.step < END_DONE)
    {
      EndStep step = self->end.step++;
      const SpawnExitInfo *info = &self->end.info;

      switch (step)
        {
        case END_READY_STDOUT:
        case END_READY_STDERR:
          {
            SpawnProcessChannel i = step == END_READY_STDOUT ? SPAWN_PROCESS_STDOUT
                                                             : SPAWN_PROCESS_STDERR;

            if (self->end.got[i])
              run_emit_ready_read_channel (self, i);
          }
          break;
        case END_CRASHED:
          if (self->end.err < 0)
            run_emit_error (self, SPAWN_PROCESS_ERROR_CRASHED,
                            "The exit status of “%s” was lost: reaped by someone "
                            "else (%s)", _spawn_process_program (self),
                            g_strerror (-self->end.err));
          /* Killed by our kill timeout: its TIMED_OUT, already emitted,
           * said so and stays the run's error (spawn_process_get_error()),
           * so that code that only waits can tell it from someone
           * else's SIGKILL. */
          else if (info->kind != SPAWN_EXIT_EXITED &&
                   !(self->end.timed_out && info->status == SIGKILL))
            {
              g_autofree char *how = run_describe_signal (info);

              run_emit_error (self, SPAWN_PROCESS_ERROR_CRASHED, "“%s” %s",
                              _spawn_process_program (self), how);
            }
          break;
        case END_FINISHED:
          {
            guint run = self->end.run;

            self->finished_run = run;
            /* The waiters' share first: a handler may start the next
             * run, which empties the buffers and replaces self->end. */
            _spawn_process_waiters_ended (self, run);
            g_signal_emit (self, _spawn_process_signals[SIGNAL_FINISHED], 0,
                           self->end.err == 0 ? info->status : -1,
                           (int) (self->end.err == 0 && info->kind == SPAWN_EXIT_EXITED
                                    ? SPAWN_PROCESS_EXIT_NORMAL : SPAWN_PROCESS_EXIT_CRASH),
                           self->end.err == 0 ? info : NULL);
            _spawn_process_waiters_complete (self, run);
          }
          break;
        case END_DONE:
        default:
          break;
        }
    }
}

/* The child has ended: how (@err 0 and *@ended), or -ECHILD. */
static void
run_finish (SpawnProcess *self, int err, const SpawnExitInfo *ended)
{
  gboolean got[3] = { FALSE, FALSE, FALSE };
  gboolean timed_out = self->timed_out;
  SpawnExitInfo info;

  /* Whatever it wrote before it ended is in the pipes by now. */
  got[SPAWN_PROCESS_STDOUT] = run_read (self, SPAWN_PROCESS_STDOUT, TRUE);
  got[SPAWN_PROCESS_STDERR] = run_read (self, SPAWN_PROCESS_STDERR, TRUE);
  if (err == 0)
    {
      info = *ended;
      self->exit_info = info;
      self->have_exit = TRUE;
    }
  else
    {
      /* The status was taken by someone else (sigchld or pidfd backend
       * with a waitpid(-1) elsewhere): report a crash we know nothing of. */
      memset (&info, 0, sizeof info);
      info.kind = SPAWN_EXIT_KILLED;
      self->exit_info = info;
      self->have_exit = FALSE;
    }
  g_object_notify_by_pspec (G_OBJECT (self), _spawn_process_props[PROP_EXIT_CODE]);
  g_object_notify_by_pspec (G_OBJECT (self), _spawn_process_props[PROP_EXIT_STATUS]);
  _spawn_process_release_running (self);
  /* Input that never reached the process stays counted, as QProcess's
   * bytesToWrite(), until the next start empties every buffer. */
  self->close_write_requested = FALSE;
  /* Leftover data is still readable after "finished", as in QProcess. */
  self->channels[SPAWN_PROCESS_STDOUT].eof = TRUE;
  self->channels[SPAWN_PROCESS_STDERR].eof = TRUE;
  self->end.step = END_READY_STDOUT;
  self->end.run = self->run;
  memcpy (self->end.got, got, sizeof got);
  self->end.err = err;
  self->end.info = info;
  self->end.timed_out = timed_out;
  /* Not running from here on, so handlers cannot reach the child. */
  run_set_state (self, SPAWN_PROCESS_NOT_RUNNING);
  run_emit_end (self);
}

static void
run_check_deadlines (SpawnProcess *self)
{
  gint64 now = g_get_monotonic_time ();

  /* Called once the status has been looked for and was not there: the
   * process ran at the deadline as far as we can tell.  Only a kill that
   * reached it is a timeout: ESRCH (clonefd or sigchld: the process just
   * exited and was reaped by the kernel or by our SIGCHLD handler) means
   * its end is on its way. */
  if (self->kill_deadline > 0 && now >= self->kill_deadline)
    {
      self->kill_deadline = 0;
      if (_spawn_process_signal_child (self, SIGKILL, NULL))
        {
          self->timed_out = TRUE;
          run_emit_error (self, SPAWN_PROCESS_ERROR_TIMED_OUT,
                          "“%s” (PID %d) still ran after its kill timeout of %d ms "
                          "and was killed", _spawn_process_program (self),
                          (int) spawn_child_get_pid (self->child),
                          self->started.kill_timeout_ms);
        }
    }
  if (self->state == SPAWN_PROCESS_RUNNING && self->next_recheck > 0 &&
      now >= self->next_recheck)
    self->next_recheck = now + _spawn_child_get_recheck_interval (self->child) * 1000;
}

/* Whether the end waits for a communicate() that still reads (see
 * _spawn_process_waiters_reading()).  Only communicate(): QProcess's end,
 * and so every other call's, is the child's. */
static gboolean
run_output_holds_end (SpawnProcess *self)
{
  return _spawn_process_waiters_reading (self, self->run);
}

/* The child has ended while communicate() reads on: its fd, readable for
 * good, is no longer watched (the source and the waits would spin on it),
 * and only a job's kill timeout is kept.  The pipes' end of file, or that
 * communicate() leaving, brings the end. */
static void
run_hold_end (SpawnProcess *self)
{
  self->end_held = TRUE;
  /* A job's kill timeout still reaches the descendants that hold the
   * pipes; without a job nothing is left that we could signal. */
  if (self->started.job == NULL)
    self->kill_deadline = 0;
  self->next_recheck = 0;
  if (self->source != NULL)
    run_unwatch_child (self);
}

/* If the end is held but no communicate() reads an open pipe any more
 * (its pipes reached end of file, or it left without its end: cancelled,
 * abandoned by its thread), watch the child's fd again, which is
 * readable, so that the next dispatch or wait ends the run. */
void
_spawn_process_release_held_end (SpawnProcess *self)
{
  if (!self->end_held || run_output_holds_end (self))
    return;
  self->end_held = FALSE;
  if (self->source != NULL && self->child_link == NULL && self->child_tag == NULL)
    run_watch_child (self);
}

/* Everything a wakeup can mean, for both the source and the waits.
 * @revents: what poll said of stdin, stdout, stderr and the child's fd.
 * @what: a wait stops the pass once what it waits for has happened, as
 * QProcess's do: a wait for output or for a write that also processed
 * the end would leave the caller's next wait_for_finished() with a
 * process that is no longer running.
 * Handlers may do anything, including dropping their reference: the
 * caller holds one. */
void
_spawn_process_events (SpawnProcess *self, const GIOCondition revents[4], WaitFor what)
{
  gboolean got[3] = { FALSE, FALSE, FALSE };
  guint64 writes = self->write_count;
  SpawnExitInfo info;
  int err;

  if (self->state != SPAWN_PROCESS_RUNNING)
    return;
  if (revents[SPAWN_PROCESS_STDOUT])
    got[SPAWN_PROCESS_STDOUT] = run_read (self, SPAWN_PROCESS_STDOUT, FALSE);
  if (revents[SPAWN_PROCESS_STDERR])
    got[SPAWN_PROCESS_STDERR] = run_read (self, SPAWN_PROCESS_STDERR, FALSE);
  run_emit_ready_read (self, got);
  if (self->state != SPAWN_PROCESS_RUNNING)
    return;
  /* Before the early returns below: a pipe that has just closed may have
   * been the last one a held end waited for. */
  if (self->end_held)
    _spawn_process_release_held_end (self);
  if (what == WAIT_READY_READ && (got[SPAWN_PROCESS_STDOUT] || got[SPAWN_PROCESS_STDERR]))
    return;
  if (revents[SPAWN_PROCESS_STDIN])
    run_flush_stdin (self);
  if (self->state != SPAWN_PROCESS_RUNNING)
    return;
  if (what == WAIT_BYTES_WRITTEN && self->write_count != writes)
    return;
  /* The status first, then the deadlines: a loop or a wait that comes
   * late must not take a process that exited in time for one that ran
   * over.  Cheap when it has not ended: one non-blocking read or waitid. */
  err = _spawn_child_collect (self->child, &info);
  if (err != -EAGAIN && run_output_holds_end (self))
    {
      run_hold_end (self);
      run_check_deadlines (self);
      if (self->source != NULL)
        run_update_ready_time (self);
      return;
    }
  if (err != -EAGAIN)
    {
      run_finish (self, err, &info);
      return;
    }
  run_check_deadlines (self);
  if (self->state == SPAWN_PROCESS_RUNNING && self->source != NULL)
    run_update_ready_time (self);
}

/* Starting */

static gboolean run_start (SpawnProcess *self, GError **error);

/* start() while a run is on: an error, and nothing emitted. */
static gboolean
run_fail_running (SpawnProcess *self, GError **error)
{
  if (self->state == SPAWN_PROCESS_STARTING)
    g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_RUNNING,
                 "“%s” is being started: it cannot be started again until it "
                 "has ended", _spawn_process_program (self));
  else
    g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_RUNNING,
                 "“%s” is running (PID %d): it cannot be started again until "
                 "it has ended", _spawn_process_program (self),
                 (int) spawn_child_get_pid (self->child));
  return FALSE;
}

/**
 * spawn_process_start:
 * @self: a process, not running
 * @error: return location for a #GError
 *
 * Starts the program.  On success #SpawnProcess::started has been emitted
 * before this returns, and from now on the process is watched from the
 * thread-default main context of the calling thread: run it (or use the
 * blocking helpers) for output, input and the end.  The configuration is
 * read here: setters called while it runs apply to the next start.
 *
 * Returns: %TRUE if the program runs; %FALSE with a %G_SPAWN_ERROR with
 *   GLib's code when exec or chdir failed in the child (as
 *   [func@GLib.spawn_async] and GSubprocess report them:
 *   %G_SPAWN_ERROR_NOENT, %G_SPAWN_ERROR_ACCES, %G_SPAWN_ERROR_CHDIR, …),
 *   else a %SPAWN_ERROR (a redirection that cannot be opened;
 *   %SPAWN_ERROR_INVAL when there is no program, or a descriptor given to
 *   the process is no longer open), after #SpawnProcess::error-occurred
 *   with %SPAWN_PROCESS_ERROR_FAILED_TO_START; or
 *   %SPAWN_PROCESS_ERROR_RUNNING, with nothing emitted, if it is running
 *   (or being started)
 */
gboolean
spawn_process_start (SpawnProcess *self, GError **error)
{
  gboolean ok;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->state != SPAWN_PROCESS_NOT_RUNNING)
    return run_fail_running (self, error);
  /* Every public call that emits holds a reference across its emissions
   * (as dispatch and the waits do): a handler may drop the caller's
   * last one. */
  g_object_ref (self);
  /* Called from a handler of the last run's end: that end first. */
  run_emit_end (self);
  /* ... whose handlers may have started it again themselves. */
  if (self->state == SPAWN_PROCESS_NOT_RUNNING)
    ok = run_start (self, error);
  else
    ok = run_fail_running (self, error);
  g_object_unref (self);
  return ok;
}

static gboolean
run_start (SpawnProcess *self, GError **error)
{
  GError *local_error = NULL;
  SpawnChild *child;
  int i;

  self->run++;
  /* This run's configuration: the setters change the next one's. */
  g_free (self->started.program);
  self->started.program = g_strdup (self->argv != NULL ? self->argv[0] : NULL);
  memcpy (self->started.modes, self->modes, sizeof self->started.modes);
  self->started.kill_timeout_ms = self->kill_timeout_ms;
  self->started.kill_on_close = self->kill_on_close;
  g_set_object (&self->started.job, self->job);
  /* Every buffer starts empty, stdin's unwritten rest of the last run
   * included (QProcess does the same). */
  for (i = 0; i < 3; i++)
    _spawn_process_reset_channel (&self->channels[i]);
  self->write_count_waited = self->write_count;
  self->have_exit = FALSE;
  memset (&self->exit_info, 0, sizeof self->exit_info);
  run_set_state (self, SPAWN_PROCESS_STARTING);

  child = _spawn_process_launch (self, FALSE, &local_error);
  if (child == NULL)
    {
      run_set_state (self, SPAWN_PROCESS_NOT_RUNNING);
      run_emit_error (self, SPAWN_PROCESS_ERROR_FAILED_TO_START, "%s",
                                 local_error->message);
      g_propagate_error (error, local_error);
      return FALSE;
    }
  self->child = child;
  self->backend = spawn_child_get_backend (child);

  self->source = g_source_new (&run_source_funcs, sizeof (ProcessSource));
  ((ProcessSource *) self->source)->process = self;
  g_source_set_static_name (self->source, "SpawnProcess");
  for (i = SPAWN_PROCESS_STDOUT; i <= SPAWN_PROCESS_STDERR; i++)
    if (self->channels[i].fd >= 0)
      self->channels[i].tag = g_source_add_unix_fd (self->source, self->channels[i].fd,
                                                     G_IO_IN);
  if (self->started.kill_timeout_ms > 0)
    self->kill_deadline = g_get_monotonic_time () +
                          (gint64) self->started.kill_timeout_ms * 1000;
  if (_spawn_child_get_recheck_interval (child) > 0)
    self->next_recheck = g_get_monotonic_time () +
                         _spawn_child_get_recheck_interval (child) * 1000;
  /* Ours until the end of the run: a thread that pops and frees the
   * context it started us from must not take the watch with it (a wait
   * then finds the context, owned by nobody, and runs it itself). */
  g_mutex_lock (&self->context_lock);
  self->context = g_main_context_ref_thread_default ();
  g_mutex_unlock (&self->context_lock);
  for (i = SPAWN_PROCESS_STDOUT; i <= SPAWN_PROCESS_STDERR; i++)
    if (self->channels[i].tag != NULL)
      _spawn_process_attach_source (self);
  run_update_ready_time (self);
  run_watch_child (self);

  run_set_state (self, SPAWN_PROCESS_RUNNING);
  if (self->close_write_requested)
    run_flush_stdin (self); /* closed before the start: closes it now */
  g_signal_emit (self, _spawn_process_signals[SIGNAL_STARTED], 0);
  return TRUE;
}

/**
 * spawn_process_start_detached:
 * @self: a process
 * @pid_out: (out) (optional): the PID of the new process
 * @error: return location for a #GError
 *
 * Starts the program with the configuration of @self and forgets it: it
 * runs in a new session (setsid(), so it has no controlling terminal and
 * is in no process group of ours), is not watched by @self, never becomes
 * a zombie, and channels in %SPAWN_CHANNEL_PIPE mode are forwarded.  @self
 * is not changed and may be running.
 *
 * Returns: %TRUE if the program runs; %FALSE with a %SPAWN_ERROR, after
 *   #SpawnProcess::error-occurred with %SPAWN_PROCESS_ERROR_FAILED_TO_START
 */
gboolean
spawn_process_start_detached (SpawnProcess *self, GPid *pid_out, GError **error)
{
  GError *local_error = NULL;
  Channel saved[3];
  SpawnChild *child;
  int i;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* plumb() opens no pipe when detached, but keep a running process's
   * channels out of its reach all the same. */
  memcpy (saved, self->channels, sizeof saved);
  for (i = 0; i < 3; i++)
    {
      self->channels[i].fd = -1;
      self->channels[i].tag = NULL;
    }
  child = _spawn_process_launch (self, TRUE, &local_error);
  memcpy (self->channels, saved, sizeof saved);
  if (child == NULL)
    {
      /* As QProcess 6 does; @self's own state is not touched. */
      g_object_ref (self);
      run_emit_error (self, SPAWN_PROCESS_ERROR_FAILED_TO_START, "%s",
                                 local_error->message);
      g_object_unref (self);
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (pid_out != NULL)
    *pid_out = spawn_child_get_pid (child);
  /* The reaper (or the kernel, with clonefd) takes it from here. */
  spawn_child_unref (child);
  return TRUE;
}

/* Control */

/* @ending: terminate() or kill(), which have nothing to do on a process
 * that is not running (QProcess's and g_subprocess_force_exit()'s rule);
 * send_signal() reports NOT_RUNNING there. */
static gboolean
run_send_signal (SpawnProcess *self, int signum, gboolean ending, GError **error)
{
  GError *local_error = NULL;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->state != SPAWN_PROCESS_RUNNING && ending)
    return TRUE;
  if (self->state != SPAWN_PROCESS_RUNNING)
    return _spawn_process_fail_not_running (self, error);
  /* Through the process's fd: never a process that reused the PID. */
  if (!_spawn_process_signal_child (self, signum, &local_error))
    {
      /* ESRCH: it has exited, and its end is on its way to us (clonefd,
       * whose kernel reaps it at once; sigchld, whose SIGCHLD handler
       * does).  pidfd signals the zombie and succeeds; QProcess does
       * nothing and does not fail.
       * One answer on every backend: there was nothing left to end. */
      if (g_error_matches (local_error, SPAWN_ERROR, SPAWN_ERROR_SRCH))
        {
          g_error_free (local_error);
          return TRUE;
        }
      g_propagate_prefixed_error (error, local_error, "“%s”: ", _spawn_process_program (self));
      return FALSE;
    }
  return TRUE;
}

/**
 * spawn_process_terminate:
 * @self: a process
 * @error: return location for a #GError
 *
 * Sends SIGTERM, through the process's fd where the backend has one, so
 * never to a process that reused the PID.  The end is reported as usual.
 * On a process that is not running (never started, or ended) it does
 * nothing and returns %TRUE, as QProcess::terminate() does nothing there.
 * Since 0.3 (before: %SPAWN_PROCESS_ERROR_NOT_RUNNING).
 *
 * Returns: %TRUE if sent, or if there was nothing to end
 */
gboolean
spawn_process_terminate (SpawnProcess *self, GError **error)
{
  return run_send_signal (self, SIGTERM, TRUE, error);
}

/**
 * spawn_process_kill:
 * @self: a process
 * @error: return location for a #GError
 *
 * Sends SIGKILL, as [method@Spawn.Process.terminate] sends SIGTERM.  On a
 * process that is not running (never started, or ended) it does nothing
 * and returns %TRUE, as [method@Gio.Subprocess.force_exit] and
 * QProcess::kill() do nothing there.  Since 0.3 (before:
 * %SPAWN_PROCESS_ERROR_NOT_RUNNING).
 *
 * Returns: %TRUE if sent, or if there was nothing to end
 */
gboolean
spawn_process_kill (SpawnProcess *self, GError **error)
{
  return run_send_signal (self, SIGKILL, TRUE, error);
}

/**
 * spawn_process_send_signal:
 * @self: a running process
 * @signum: the signal to send, such as `SIGINT` or `SIGSTOP`
 * @error: return location for a #GError
 *
 * Sends @signum as [method@Spawn.Process.terminate] sends SIGTERM, like
 * [method@Gio.Subprocess.send_signal] (which does not fail: it ignores a process
 * that is not running; we report %SPAWN_PROCESS_ERROR_NOT_RUNNING).
 *
 * Returns: %TRUE if sent (or if the process had already ended and its end
 *   is on its way)
 */
gboolean
spawn_process_send_signal (SpawnProcess *self, int signum, GError **error)
{
  return run_send_signal (self, signum, FALSE, error);
}


/* Writing */


/**
 * spawn_process_write:
 * @self: a running process
 * @data: (array length=len) (element-type guint8): bytes for its stdin
 * @len: how many
 * @error: return location for a #GError
 *
 * Buffers @data for the process's stdin pipe and writes what the pipe
 * takes now; the rest goes from the main context or the blocking helpers.
 * Never raises SIGPIPE: a process that closed its stdin gives
 * %SPAWN_PROCESS_ERROR_WRITE_ERROR, also through
 * #SpawnProcess::error-occurred.
 *
 * Returns: %TRUE if buffered; %FALSE with %SPAWN_PROCESS_ERROR_NOT_RUNNING,
 *   or %SPAWN_PROCESS_ERROR_WRITE_ERROR if stdin is not a pipe, was closed,
 *   or the write failed
 */
gboolean
spawn_process_write (SpawnProcess *self, const void *data, gsize len, GError **error)
{
  Channel *c;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (data != NULL || len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  c = &self->channels[SPAWN_PROCESS_STDIN];
  if (self->state != SPAWN_PROCESS_RUNNING)
    return _spawn_process_fail_not_running (self, error);
  if (c->fd < 0 || self->close_write_requested)
    {
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                   "Cannot write to “%s”: %s", _spawn_process_program (self),
                   self->started.modes[SPAWN_PROCESS_STDIN] != SPAWN_CHANNEL_PIPE &&
                   self->started.modes[SPAWN_PROCESS_STDIN] != SPAWN_CHANNEL_PTY
                     ? "its stdin is not a pipe of ours"
                     : "its stdin has been closed");
      return FALSE;
    }
  if (len > 0)
    g_byte_array_append (c->data, data, len);
  g_object_ref (self);
  if (!run_flush_stdin (self))
    {
      g_set_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_WRITE_ERROR,
                   "Cannot write to “%s”: it closed its stdin",
                   _spawn_process_program (self));
      g_object_unref (self);
      return FALSE;
    }
  g_object_unref (self);
  return TRUE;
}

/**
 * spawn_process_close_write_channel:
 * @self: a process
 *
 * Closes the process's stdin once everything buffered has been written,
 * so that it sees end of file.
 */
void
spawn_process_close_write_channel (SpawnProcess *self)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));

  self->close_write_requested = TRUE;
  if (self->state != SPAWN_PROCESS_RUNNING)
    return;
  g_object_ref (self);
  run_flush_stdin (self);
  g_object_unref (self);
}
