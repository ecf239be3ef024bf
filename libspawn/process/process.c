/* spawn-process.c - SpawnProcess, a QProcess-style object over SpawnChild
 *
 * One GSource per running process watches everything it owns: the child's
 * fd, our ends of its pipes, and a ready time for the kill timeout (and
 * for the sigchld backend's recheck).  The blocking helpers poll the same
 * descriptors themselves and feed the same handlers, so both paths emit
 * the same signals in the same order.
 *
 * This file is the object and the life of a run: the GObject and its
 * signals, start and start_detached(), the source and what a wakeup means
 * (_spawn_process_events()), the end of a run and its emissions,
 * terminate/kill and the accessors of a run.  Every signal is emitted
 * from here.  Around it: spawn-process-config.c holds the configuration,
 * spawn-process-launch.c turns it into the child's stdio, fds and
 * environment, spawn-process-channel.c holds
 * the pipes and their buffers, spawn-process-wait.c the blocking waits and
 * execute().  What they share is in spawn-process-private.h.
 */
#include "process-private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (SpawnProcess, spawn_process, G_TYPE_OBJECT)
/**
 * spawn_process_error_quark:
 *
 * The error domain of #SpawnProcessError, %SPAWN_PROCESS_ERROR.
 *
 * Returns: the #GQuark of the domain
 */
G_DEFINE_QUARK (spawn-process-error-quark, spawn_process_error)

enum {
  SIGNAL_STARTED,
  SIGNAL_FINISHED,
  SIGNAL_ERROR_OCCURRED,
  SIGNAL_STATE_CHANGED,
  SIGNAL_READY_READ_STDOUT,
  SIGNAL_READY_READ_STDERR,
  SIGNAL_BYTES_WRITTEN,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

enum {
  PROP_0,
  PROP_ARGV,
  PROP_WORKING_DIRECTORY,
  PROP_FLAGS,
  PROP_KILL_TIMEOUT,
  PROP_DISPOSE_POLICY,
  PROP_KILL_ON_CLOSE,
  PROP_STATE,
  PROP_PID,
  PROP_BACKEND,
  PROP_EXIT_CODE,
  PROP_EXIT_STATUS,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

typedef struct {
  GSource source;
  SpawnProcess *process;       /* not a reference: dispose destroys us */
} ProcessSource;

static void
set_state (SpawnProcess *self, SpawnProcessState state)
{
  if (self->state == state)
    return;
  self->state = state;
  /* The PID and the backend come and go with the running state. */
  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_STATE]);
  if (state != SPAWN_PROCESS_STARTING)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_PID]);
  if (state == SPAWN_PROCESS_RUNNING)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_BACKEND]);
  g_object_thaw_notify (G_OBJECT (self));
  g_signal_emit (self, signals[SIGNAL_STATE_CHANGED], 0, (int) state);
}

void
_spawn_process_emit_error (SpawnProcess *self, SpawnProcessError code, const char *format, ...)
{
  GError *error;
  va_list ap;

  va_start (ap, format);
  error = g_error_new_valist (SPAWN_PROCESS_ERROR, code, format, ap);
  va_end (ap);
  g_clear_error (&self->last_error);
  self->last_error = g_error_copy (error);
  g_signal_emit (self, signals[SIGNAL_ERROR_OCCURRED], 0, error);
  g_error_free (error);
}

/**
 * spawn_process_get_error:
 * @self: a process
 *
 * The error of the last #SpawnProcess::error-occurred, like QProcess::error()
 * and errorString() in one; it stays until the next one.
 *
 * Returns: (transfer none) (nullable): that error, or %NULL if there was none
 */
const GError *
spawn_process_get_error (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return self->last_error;
}

gboolean
_spawn_process_fail (GError **error, SpawnProcessError code, const char *message)
{
  g_set_error_literal (error, SPAWN_PROCESS_ERROR, code, message);
  return FALSE;
}

/* The source */

static void
update_ready_time (SpawnProcess *self)
{
  gint64 next = -1;

  if (self->kill_deadline > 0)
    next = self->kill_deadline;
  if (self->next_recheck > 0 && (next < 0 || self->next_recheck < next))
    next = self->next_recheck;
  g_source_set_ready_time (self->source, next);
}

static gboolean
process_source_dispatch (GSource *source, GSourceFunc callback G_GNUC_UNUSED,
                         gpointer user_data G_GNUC_UNUSED)
{
  SpawnProcess *self = ((ProcessSource *) source)->process;
  GIOCondition revents[4] = { 0, 0, 0, 0 };
  int i;

  for (i = 0; i < 3; i++)
    if (self->channels[i].tag != NULL)
      revents[i] = g_source_query_unix_fd (source, self->channels[i].tag);
  if (self->child_tag != NULL)
    revents[CHILD_SLOT] = g_source_query_unix_fd (source, self->child_tag);
  g_object_ref (self);
  _spawn_process_events (self, revents, WAIT_NOTHING);
  g_object_unref (self);
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs process_source_funcs = {
  .dispatch = process_source_dispatch,
};

static void
destroy_source (SpawnProcess *self)
{
  int i;

  if (self->source == NULL)
    return;
  for (i = 0; i < 3; i++)
    self->channels[i].tag = NULL;
  self->child_tag = NULL;
  g_source_destroy (self->source);
  g_clear_pointer (&self->source, g_source_unref);
}

/* "bytes-written" and "ready-read-*" */

/* "bytes-written", never from inside one of its handlers: a handler that
 * writes again would otherwise recurse once per write (tens of thousands
 * of frames for a pipe's worth of small writes).  Counts that come in
 * meanwhile are announced in a loop once the handler has returned.  The
 * caller holds a reference. */
void
_spawn_process_emit_bytes_written (SpawnProcess *self, guint64 written)
{
  if (self->emitting_written)
    {
      self->unannounced_written += written;
      return;
    }
  self->emitting_written = TRUE;
  while (written > 0)
    {
      g_signal_emit (self, signals[SIGNAL_BYTES_WRITTEN], 0, written);
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
emit_ready_read_channel (SpawnProcess *self, SpawnProcessChannel i)
{
  guint id = signals[i == SPAWN_PROCESS_STDOUT ? SIGNAL_READY_READ_STDOUT
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
emit_ready_read (SpawnProcess *self, const gboolean got[3])
{
  if (got[SPAWN_PROCESS_STDOUT])
    emit_ready_read_channel (self, SPAWN_PROCESS_STDOUT);
  if (got[SPAWN_PROCESS_STDERR])
    emit_ready_read_channel (self, SPAWN_PROCESS_STDERR);
}

/* The end */

static void
release_running (SpawnProcess *self)
{
  int i;

  for (i = 0; i < 3; i++)
    _spawn_process_close_channel (self, i);
  destroy_source (self);
  g_clear_pointer (&self->child, spawn_child_unref);
  self->kill_deadline = 0;
  self->next_recheck = 0;
}

/* Emits what is left of the last run's end.  Each step is taken off
 * before its emission, and spawn_process_start() calls this first: a
 * handler that starts the process again (from "state-changed" or
 * "error-occurred") thus gets the old run's "finished", with the old
 * run's values, before the new run's "started".  The caller holds a
 * reference. */
static void
emit_end (SpawnProcess *self)
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
              emit_ready_read_channel (self, i);
          }
          break;
        case END_CRASHED:
          if (self->end.err < 0)
            _spawn_process_emit_error (self, SPAWN_PROCESS_ERROR_CRASHED,
                                       "The status of the process was lost: %s",
                                       g_strerror (-self->end.err));
          else if (info->kind != SPAWN_EXIT_EXITED)
            _spawn_process_emit_error (self, SPAWN_PROCESS_ERROR_CRASHED,
                                       "The process crashed (signal %d)", info->status);
          break;
        case END_FINISHED:
          {
            guint run = self->end.run;

            self->finished_run = run;
            /* The waiters' share first: a handler may start the next
             * run, which empties the buffers and replaces self->end. */
            _spawn_process_waiters_ended (self, run);
            g_signal_emit (self, signals[SIGNAL_FINISHED], 0,
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
finish (SpawnProcess *self, int err, const SpawnExitInfo *ended)
{
  gboolean got[3] = { FALSE, FALSE, FALSE };
  SpawnExitInfo info;

  /* Whatever it wrote before it ended is in the pipes by now. */
  got[SPAWN_PROCESS_STDOUT] = _spawn_process_read_channel (self, SPAWN_PROCESS_STDOUT, TRUE);
  got[SPAWN_PROCESS_STDERR] = _spawn_process_read_channel (self, SPAWN_PROCESS_STDERR, TRUE);
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
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_EXIT_CODE]);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_EXIT_STATUS]);
  release_running (self);
  _spawn_process_reset_channel (&self->channels[SPAWN_PROCESS_STDIN]);
  self->close_write_requested = FALSE;
  /* Leftover data is still readable after "finished", as in QProcess. */
  self->channels[SPAWN_PROCESS_STDOUT].eof = TRUE;
  self->channels[SPAWN_PROCESS_STDERR].eof = TRUE;
  self->end.step = END_READY_STDOUT;
  self->end.run = self->run;
  memcpy (self->end.got, got, sizeof got);
  self->end.err = err;
  self->end.info = info;
  /* Not running from here on, so handlers cannot reach the child. */
  set_state (self, SPAWN_PROCESS_NOT_RUNNING);
  emit_end (self);
}

static void
check_deadlines (SpawnProcess *self)
{
  gint64 now = g_get_monotonic_time ();

  /* Called once the status has been looked for and was not there: the
   * process ran at the deadline as far as we can tell.  Only a kill that
   * reached it is a timeout: ESRCH (clonefd, the process just exited and
   * was reaped by the kernel) means its end is on its way. */
  if (self->kill_deadline > 0 && now >= self->kill_deadline)
    {
      self->kill_deadline = 0;
      if (spawn_child_send_signal (self->child, SIGKILL, NULL))
        _spawn_process_emit_error (self, SPAWN_PROCESS_ERROR_TIMED_OUT,
                                   "Process %d killed after %d ms",
                                   (int) spawn_child_get_pid (self->child),
                                   self->kill_timeout_ms);
    }
  if (self->state == SPAWN_PROCESS_RUNNING && self->next_recheck > 0 &&
      now >= self->next_recheck)
    self->next_recheck = now + _spawn_child_get_recheck_interval (self->child) * 1000;
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
    got[SPAWN_PROCESS_STDOUT] = _spawn_process_read_channel (self, SPAWN_PROCESS_STDOUT,
                                                             FALSE);
  if (revents[SPAWN_PROCESS_STDERR])
    got[SPAWN_PROCESS_STDERR] = _spawn_process_read_channel (self, SPAWN_PROCESS_STDERR,
                                                             FALSE);
  emit_ready_read (self, got);
  if (self->state != SPAWN_PROCESS_RUNNING)
    return;
  if (what == WAIT_READY_READ && (got[SPAWN_PROCESS_STDOUT] || got[SPAWN_PROCESS_STDERR]))
    return;
  if (revents[SPAWN_PROCESS_STDIN])
    _spawn_process_flush_stdin (self);
  if (self->state != SPAWN_PROCESS_RUNNING)
    return;
  if (what == WAIT_BYTES_WRITTEN && self->write_count != writes)
    return;
  /* The status first, then the deadlines: a loop or a wait that comes
   * late must not take a process that exited in time for one that ran
   * over.  Cheap when it has not ended: one non-blocking read or waitid. */
  err = _spawn_child_collect (self->child, &info);
  if (err != -EAGAIN)
    {
      finish (self, err, &info);
      return;
    }
  check_deadlines (self);
  if (self->state == SPAWN_PROCESS_RUNNING && self->source != NULL)
    update_ready_time (self);
}

/* Starting */

static gboolean start (SpawnProcess *self, GError **error);

/**
 * spawn_process_start:
 * @self: a process, not running
 * @error: return location for a #GError
 *
 * Starts the program.  On success #SpawnProcess::started has been emitted
 * before this returns, and from now on the process is watched from the
 * thread-default main context of the calling thread: run it (or use the
 * blocking helpers) for output, input and the end.
 *
 * Returns: %TRUE if the program runs; %FALSE with a %SPAWN_ERROR (why
 *   exec, chdir or opening a redirection failed) after
 *   #SpawnProcess::error-occurred with %SPAWN_PROCESS_ERROR_FAILED_TO_START
 */
gboolean
spawn_process_start (SpawnProcess *self, GError **error)
{
  gboolean ok;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (self->argv != NULL && self->argv[0] != NULL, FALSE);
  g_return_val_if_fail (self->state == SPAWN_PROCESS_NOT_RUNNING, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Every public call that emits holds a reference across its emissions
   * (as dispatch and the waits do): a handler may drop the caller's
   * last one. */
  g_object_ref (self);
  /* Called from a handler of the last run's end: that end first. */
  emit_end (self);
  /* ... whose handlers may have started it again themselves. */
  if (self->state == SPAWN_PROCESS_NOT_RUNNING)
    ok = start (self, error);
  else
    {
      g_critical ("%s: a handler of the last run's end started the process again",
                  G_STRFUNC);
      ok = FALSE;
    }
  g_object_unref (self);
  return ok;
}

static gboolean
start (SpawnProcess *self, GError **error)
{
  GError *local_error = NULL;
  SpawnChild *child;
  GMainContext *context;
  int i;

  self->run++;
  for (i = 0; i < 3; i++)
    _spawn_process_reset_channel (&self->channels[i]);
  self->have_exit = FALSE;
  memset (&self->exit_info, 0, sizeof self->exit_info);
  set_state (self, SPAWN_PROCESS_STARTING);

  child = _spawn_process_launch (self, FALSE, &local_error);
  if (child == NULL)
    {
      set_state (self, SPAWN_PROCESS_NOT_RUNNING);
      _spawn_process_emit_error (self, SPAWN_PROCESS_ERROR_FAILED_TO_START, "%s",
                                 local_error->message);
      g_propagate_error (error, local_error);
      return FALSE;
    }
  self->child = child;
  self->backend = spawn_child_get_backend (child);

  self->source = g_source_new (&process_source_funcs, sizeof (ProcessSource));
  ((ProcessSource *) self->source)->process = self;
  g_source_set_static_name (self->source, "SpawnProcess");
  self->child_tag = g_source_add_unix_fd (self->source, spawn_child_get_fd (child), G_IO_IN);
  for (i = SPAWN_PROCESS_STDOUT; i <= SPAWN_PROCESS_STDERR; i++)
    if (self->channels[i].fd >= 0)
      self->channels[i].tag = g_source_add_unix_fd (self->source, self->channels[i].fd,
                                                     G_IO_IN);
  if (self->kill_timeout_ms > 0)
    self->kill_deadline = g_get_monotonic_time () + (gint64) self->kill_timeout_ms * 1000;
  if (_spawn_child_get_recheck_interval (child) > 0)
    self->next_recheck = g_get_monotonic_time () +
                         _spawn_child_get_recheck_interval (child) * 1000;
  update_ready_time (self);
  context = g_main_context_ref_thread_default ();
  g_source_attach (self->source, context);
  g_main_context_unref (context);

  set_state (self, SPAWN_PROCESS_RUNNING);
  if (self->close_write_requested)
    _spawn_process_flush_stdin (self); /* closed before the start: closes it now */
  g_signal_emit (self, signals[SIGNAL_STARTED], 0);
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
  g_return_val_if_fail (self->argv != NULL && self->argv[0] != NULL, FALSE);
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
      _spawn_process_emit_error (self, SPAWN_PROCESS_ERROR_FAILED_TO_START, "%s",
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

static gboolean
send_signal (SpawnProcess *self, int signum, GError **error)
{
  GError *local_error = NULL;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->state != SPAWN_PROCESS_RUNNING)
    return _spawn_process_fail (error, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                                "The process is not running");
  /* Through the process's fd: never a process that reused the PID. */
  if (!spawn_child_send_signal (self->child, signum, &local_error))
    {
      /* ESRCH: it has exited, and its end is on its way to us (clonefd,
       * whose kernel reaps it at once).  pidfd and sigchld signal the
       * zombie and succeed; QProcess does nothing and does not fail.
       * One answer on every backend: there was nothing left to end. */
      if (g_error_matches (local_error, SPAWN_ERROR, SPAWN_ERROR_SRCH))
        {
          g_error_free (local_error);
          return TRUE;
        }
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/**
 * spawn_process_terminate:
 * @self: a running process
 * @error: return location for a #GError
 *
 * Sends SIGTERM, through the process's fd where the backend has one, so
 * never to a process that reused the PID.  The end is reported as usual.
 *
 * Returns: %TRUE if sent
 */
gboolean
spawn_process_terminate (SpawnProcess *self, GError **error)
{
  return send_signal (self, SIGTERM, error);
}

/**
 * spawn_process_kill:
 * @self: a running process
 * @error: return location for a #GError
 *
 * Sends SIGKILL, as spawn_process_terminate() sends SIGTERM.
 *
 * Returns: %TRUE if sent
 */
gboolean
spawn_process_kill (SpawnProcess *self, GError **error)
{
  return send_signal (self, SIGKILL, error);
}

/**
 * spawn_process_send_signal:
 * @self: a running process
 * @signum: the signal to send, such as `SIGINT` or `SIGSTOP`
 * @error: return location for a #GError
 *
 * Sends @signum as spawn_process_terminate() sends SIGTERM, like
 * g_subprocess_send_signal() (which does not fail: it ignores a process
 * that is not running; we report %SPAWN_PROCESS_ERROR_NOT_RUNNING).
 *
 * Returns: %TRUE if sent (or if the process had already ended and its end
 *   is on its way)
 */
gboolean
spawn_process_send_signal (SpawnProcess *self, int signum, GError **error)
{
  return send_signal (self, signum, error);
}

/**
 * spawn_process_get_state:
 * @self: a process
 *
 * Where the process is in its life (also the #SpawnProcess:state property).
 *
 * Returns: where @self is in its life
 */
SpawnProcessState
spawn_process_get_state (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_PROCESS_NOT_RUNNING);
  return self->state;
}

/**
 * spawn_process_get_backend:
 * @self: a process
 *
 * Which backend (clonefd, pidfd or sigchld) watches the process.
 *
 * Returns: the backend watching the running or last run's child;
 *   %SPAWN_BACKEND_AUTO before the first start
 */
SpawnBackend
spawn_process_get_backend (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_BACKEND_AUTO);
  return self->backend;
}

/**
 * spawn_process_get_pid:
 * @self: a process
 *
 * The process ID of the running process, for display and logs: act on the
 * process through @self, never through its PID.
 *
 * Returns: the PID while running, else 0
 */
GPid
spawn_process_get_pid (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), 0);
  return self->child != NULL ? spawn_child_get_pid (self->child) : 0;
}

/**
 * spawn_process_get_child:
 * @self: a process
 *
 * The #SpawnChild of the running process, for the lower-level calls
 * (spawn_child_get_fd(), spawn_child_send_signal()).
 *
 * Returns: (transfer none) (nullable): the running child, else %NULL
 */
SpawnChild *
spawn_process_get_child (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return self->child;
}

/**
 * spawn_process_get_exit_info:
 * @self: a process
 * @info: (out caller-allocates): how it ended, with its CPU times
 *
 * How the last run ended, with its CPU times, as #SpawnProcess::finished
 * reported it.
 *
 * Returns: %TRUE after #SpawnProcess::finished with a known status
 */
gboolean
spawn_process_get_exit_info (SpawnProcess *self, SpawnExitInfo *info)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (info != NULL, FALSE);

  if (!self->have_exit)
    return FALSE;
  *info = self->exit_info;
  return TRUE;
}

/**
 * spawn_process_get_exit_code:
 * @self: a process
 *
 * The exit status of the last run, or the signal number that ended it, as
 * QProcess::exitCode().
 *
 * Returns: the exit status, or the signal number after a crash; -1 before
 *   the process has finished or when its status was lost
 */
int
spawn_process_get_exit_code (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), -1);
  return self->have_exit ? self->exit_info.status : -1;
}

/**
 * spawn_process_get_exit_status:
 * @self: a process
 *
 * Whether the last run exited or crashed, as QProcess::exitStatus().
 *
 * Returns: %SPAWN_PROCESS_EXIT_CRASH if a signal ended the process (or its
 *   status was lost), else %SPAWN_PROCESS_EXIT_NORMAL (also before the
 *   process has finished)
 */
SpawnProcessExitStatus
spawn_process_get_exit_status (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_PROCESS_EXIT_NORMAL);
  return self->exit_info.kind == SPAWN_EXIT_EXITED ? SPAWN_PROCESS_EXIT_NORMAL
                                                   : SPAWN_PROCESS_EXIT_CRASH;
}

/* Configuration */

/**
 * spawn_process_new:
 * @argv: (array zero-terminated=1) (nullable): the program (searched in
 *   PATH) and its arguments, or %NULL to set them later
 *
 * Creates a process object for @argv. Nothing runs until
 * spawn_process_start().
 *
 * Returns: (transfer full): a new process object, not running
 */
SpawnProcess *
spawn_process_new (const char * const *argv)
{
  SpawnProcess *self = g_object_new (SPAWN_TYPE_PROCESS, NULL);

  if (argv != NULL)
    spawn_process_set_argv (self, argv);
  return self;
}

/* GObject */

static void
spawn_process_dispose (GObject *object)
{
  SpawnProcess *self = SPAWN_PROCESS (object);

  if (self->child != NULL && self->dispose_policy == SPAWN_DISPOSE_KILL)
    spawn_child_send_signal (self->child, SIGKILL, NULL);
  /* Leave it running, as long as the application: a reference that the
   * reaper holds until it ends, so that our last one does not kill it. */
  else if (self->child != NULL && self->kill_on_close)
    _spawn_child_keep_alive (self->child);
  /* Unreferencing the child hands it to the reaper (or the kernel). */
  release_running (self);
  self->state = SPAWN_PROCESS_NOT_RUNNING;
  _spawn_process_waiters_dispose (self);
  G_OBJECT_CLASS (spawn_process_parent_class)->dispose (object);
}

static void
spawn_process_finalize (GObject *object)
{
  SpawnProcess *self = SPAWN_PROCESS (object);
  int i;

  _spawn_process_clear_config (self);
  for (i = 0; i < 3; i++)
    {
      g_byte_array_unref (self->channels[i].data);
      g_clear_object (&self->channels[i].stream);
    }
  g_clear_error (&self->last_error);
  G_OBJECT_CLASS (spawn_process_parent_class)->finalize (object);
}

static void
spawn_process_init (SpawnProcess *self)
{
  int i;

  _spawn_process_init_config (self);
  for (i = 0; i < 3; i++)
    {
      self->channels[i].fd = -1;
      self->channels[i].data = g_byte_array_new ();
    }
  self->end.step = END_DONE;
}

static void
spawn_process_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SpawnProcess *self = SPAWN_PROCESS (object);

  switch (prop_id)
    {
    case PROP_ARGV:
      g_value_set_boxed (value, self->argv);
      break;
    case PROP_WORKING_DIRECTORY:
      g_value_set_string (value, self->working_directory);
      break;
    case PROP_FLAGS:
      g_value_set_flags (value, self->flags);
      break;
    case PROP_KILL_TIMEOUT:
      g_value_set_int (value, self->kill_timeout_ms);
      break;
    case PROP_DISPOSE_POLICY:
      g_value_set_enum (value, self->dispose_policy);
      break;
    case PROP_KILL_ON_CLOSE:
      g_value_set_boolean (value, self->kill_on_close);
      break;
    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;
    case PROP_PID:
      g_value_set_int (value, spawn_process_get_pid (self));
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_EXIT_CODE:
      g_value_set_int (value, spawn_process_get_exit_code (self));
      break;
    case PROP_EXIT_STATUS:
      g_value_set_enum (value, spawn_process_get_exit_status (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
spawn_process_set_property (GObject *object, guint prop_id, const GValue *value,
                            GParamSpec *pspec)
{
  SpawnProcess *self = SPAWN_PROCESS (object);

  switch (prop_id)
    {
    case PROP_ARGV:
      /* NULL from g_object_new() without argv: nothing to set yet. */
      if (g_value_get_boxed (value) != NULL)
        spawn_process_set_argv (self, g_value_get_boxed (value));
      break;
    case PROP_WORKING_DIRECTORY:
      spawn_process_set_working_directory (self, g_value_get_string (value));
      break;
    case PROP_FLAGS:
      spawn_process_set_flags (self, g_value_get_flags (value));
      break;
    case PROP_KILL_TIMEOUT:
      spawn_process_set_kill_timeout (self, g_value_get_int (value));
      break;
    case PROP_DISPOSE_POLICY:
      spawn_process_set_dispose_policy (self, g_value_get_enum (value));
      break;
    case PROP_KILL_ON_CLOSE:
      spawn_process_set_kill_on_close (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
spawn_process_class_init (SpawnProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->dispose = spawn_process_dispose;
  object_class->finalize = spawn_process_finalize;
  object_class->get_property = spawn_process_get_property;
  object_class->set_property = spawn_process_set_property;

  /**
   * SpawnProcess:argv: (setter set_argv) (getter get_argv)
   *
   * The program and its arguments: spawn_process_set_argv().
   */
  props[PROP_ARGV] = g_param_spec_boxed ("argv", NULL, NULL, G_TYPE_STRV, rw);
  /**
   * SpawnProcess:working-directory: (setter set_working_directory) (getter get_working_directory)
   *
   * Where the program starts, %NULL for ours.
   */
  props[PROP_WORKING_DIRECTORY] = g_param_spec_string ("working-directory", NULL, NULL, NULL, rw);
  /**
   * SpawnProcess:flags: (setter set_flags) (getter get_flags)
   *
   * How the program is started: spawn_process_set_flags().
   */
  props[PROP_FLAGS] = g_param_spec_flags ("flags", NULL, NULL, SPAWN_TYPE_PROCESS_FLAGS,
                                          SPAWN_PROCESS_FLAGS_NONE, rw);
  /**
   * SpawnProcess:kill-timeout: (setter set_kill_timeout) (getter get_kill_timeout)
   *
   * Milliseconds after its start before a still running process is killed;
   * 0 for never.
   */
  props[PROP_KILL_TIMEOUT] = g_param_spec_int ("kill-timeout", NULL, NULL, 0, G_MAXINT, 0, rw);
  /**
   * SpawnProcess:dispose-policy: (setter set_dispose_policy) (getter get_dispose_policy)
   *
   * What the last reference does to a running process.
   */
  props[PROP_DISPOSE_POLICY] = g_param_spec_enum ("dispose-policy", NULL, NULL,
                                                  SPAWN_TYPE_DISPOSE_POLICY,
                                                  SPAWN_DISPOSE_KILL, rw);
  /**
   * SpawnProcess:kill-on-close: (setter set_kill_on_close) (getter get_kill_on_close)
   *
   * Whether the process is killed when the application dies, however it
   * dies (%SPAWN_CHILD_KILL_ON_CLOSE).
   */
  props[PROP_KILL_ON_CLOSE] = g_param_spec_boolean ("kill-on-close", NULL, NULL, FALSE, rw);
  /**
   * SpawnProcess:state: (getter get_state)
   *
   * Where the process is in its life; notified before #SpawnProcess::state-changed.
   */
  props[PROP_STATE] = g_param_spec_enum ("state", NULL, NULL, SPAWN_TYPE_PROCESS_STATE,
                                         SPAWN_PROCESS_NOT_RUNNING, ro);
  /**
   * SpawnProcess:pid: (getter get_pid)
   *
   * The PID while running, else 0.
   */
  props[PROP_PID] = g_param_spec_int ("pid", NULL, NULL, 0, G_MAXINT, 0, ro);
  /**
   * SpawnProcess:backend: (getter get_backend)
   *
   * The backend watching the running or last child.
   */
  props[PROP_BACKEND] = g_param_spec_enum ("backend", NULL, NULL, SPAWN_TYPE_BACKEND,
                                           SPAWN_BACKEND_AUTO, ro);
  /**
   * SpawnProcess:exit-code: (getter get_exit_code)
   *
   * The exit status, or the signal number after a crash; -1 before the
   * end or when the status was lost.  Notified before #SpawnProcess::finished.
   */
  props[PROP_EXIT_CODE] = g_param_spec_int ("exit-code", NULL, NULL, -1, G_MAXINT, -1, ro);
  /**
   * SpawnProcess:exit-status: (getter get_exit_status)
   *
   * Whether the last run exited or crashed.
   */
  props[PROP_EXIT_STATUS] = g_param_spec_enum ("exit-status", NULL, NULL,
                                               SPAWN_TYPE_PROCESS_EXIT_STATUS,
                                               SPAWN_PROCESS_EXIT_NORMAL, ro);
  g_object_class_install_properties (object_class, N_PROPS, props);

  /**
   * SpawnProcess::started:
   *
   * The program runs; emitted from spawn_process_start().
   */
  signals[SIGNAL_STARTED] =
    g_signal_new ("started", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * SpawnProcess::finished:
   * @self: the process
   * @exit_code: the exit status, or the signal number after a crash
   * @exit_status: how it ended
   * @info: (nullable): the whole #SpawnExitInfo, with the CPU times, valid
   *   during the emission; %NULL when the status was lost
   *
   * The process has ended and its output is buffered.
   */
  signals[SIGNAL_FINISHED] =
    g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_INT,
                  SPAWN_TYPE_PROCESS_EXIT_STATUS,
                  SPAWN_TYPE_EXIT_INFO | G_SIGNAL_TYPE_STATIC_SCOPE);
  /**
   * SpawnProcess::error-occurred:
   * @self: the process
   * @error: a %SPAWN_PROCESS_ERROR
   *
   * Something went wrong: see #SpawnProcessError.
   */
  signals[SIGNAL_ERROR_OCCURRED] =
    g_signal_new ("error-occurred", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1,
                  G_TYPE_ERROR | G_SIGNAL_TYPE_STATIC_SCOPE);
  /**
   * SpawnProcess::state-changed:
   * @self: the process
   * @state: the new state
   *
   * Emitted when the process moves to another #SpawnProcessState, after
   * #GObject::notify for #SpawnProcess:state.
   */
  signals[SIGNAL_STATE_CHANGED] =
    g_signal_new ("state-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, SPAWN_TYPE_PROCESS_STATE);
  /**
   * SpawnProcess::ready-read-stdout:
   *
   * New stdout data is buffered.
   */
  signals[SIGNAL_READY_READ_STDOUT] =
    g_signal_new ("ready-read-stdout", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * SpawnProcess::ready-read-stderr:
   *
   * New stderr data is buffered.
   */
  signals[SIGNAL_READY_READ_STDERR] =
    g_signal_new ("ready-read-stderr", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * SpawnProcess::bytes-written:
   * @self: the process
   * @count: how many bytes of the buffered input went to the process
   *
   * Emitted when some of the input queued by spawn_process_write() has gone
   * to the process, as QProcess::bytesWritten.
   */
  signals[SIGNAL_BYTES_WRITTEN] =
    g_signal_new ("bytes-written", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
}
