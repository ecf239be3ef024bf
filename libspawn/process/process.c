/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* process.c - SpawnProcess, a QProcess-style object over SpawnChild
 *
 * The GObject: its type, its properties and signals (registered here,
 * emitted from run.c), construction, dispose and finalize.  The object's
 * work is spread by subject over the files of process/ (each says what it
 * holds at its top): config.c (what will be started), launch.c (the
 * configuration made into a child), run.c (one run: start, watch, end,
 * every emission), channel.c (pipes and buffers), status.c (what a run
 * says: state, PID, exit), wait.c (the blocking waits and execute()),
 * sync.c (GSubprocess's blocking waits, from any thread), waiters.c (the
 * list of GIO waits for a run's end), async.c (the GIO waits and
 * communicate()), subprocess.c (GSubprocessFlags and
 * spawn_process_newv()).  What they share is in process-private.h.
 */
#include "process-private.h"

#include <signal.h>

G_DEFINE_FINAL_TYPE (SpawnProcess, spawn_process, G_TYPE_OBJECT)
/**
 * spawn_process_error_quark:
 *
 * The error domain of #SpawnProcessError, %SPAWN_PROCESS_ERROR.
 *
 * Returns: the #GQuark of the domain
 */
G_DEFINE_QUARK (spawn-process-error-quark, spawn_process_error)

/**
 * spawn_process_new:
 * @argv: (array zero-terminated=1) (element-type filename) (nullable): the
 *   program (searched in PATH) and its arguments, or %NULL to set them
 *   later
 *
 * Creates a process object for @argv. Nothing runs until
 * [method@Spawn.Process.start].
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
    _spawn_process_signal_child (self, SIGKILL, NULL);
  /* The program has ended, what it left in the job it ran in has not.
   * Never a job this process only names (never started in it). */
  else if (self->started.job != NULL && self->dispose_policy == SPAWN_DISPOSE_KILL)
    spawn_job_kill (self->started.job, NULL);
  /* Leave it running, as long as the application: a reference that the
   * reaper holds until it ends, so that our last one does not kill it. */
  else if (self->child != NULL && self->started.kill_on_close)
    _spawn_child_keep_alive (self->child);
  /* Unreferencing the child hands it to the reaper (or the kernel). */
  _spawn_process_release_running (self);
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
  g_clear_pointer (&self->pty, spawn_pty_unref);
  g_free (self->started.program);
  g_clear_object (&self->started.job);
  g_mutex_clear (&self->context_lock);
  G_OBJECT_CLASS (spawn_process_parent_class)->finalize (object);
}

static void
spawn_process_init (SpawnProcess *self)
{
  int i;

  _spawn_process_init_config (self);
  g_mutex_init (&self->context_lock);
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
    case PROP_READ_BUFFER_SIZE:
      g_value_set_uint64 (value, self->read_buffer_size);
      break;
    case PROP_JOB:
      g_value_set_object (value, self->job);
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
    case PROP_READ_BUFFER_SIZE:
      spawn_process_set_read_buffer_size (self, (gsize) g_value_get_uint64 (value));
      break;
    case PROP_JOB:
      spawn_process_set_job (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
spawn_process_class_init (SpawnProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamSpec **props = _spawn_process_props;
  guint *signals = _spawn_process_signals;
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->dispose = spawn_process_dispose;
  object_class->finalize = spawn_process_finalize;
  object_class->get_property = spawn_process_get_property;
  object_class->set_property = spawn_process_set_property;

  /**
   * SpawnProcess:argv: (setter set_argv) (getter get_argv) (type GStrv<filename>)
   *
   * The program and its arguments: spawn_process_set_argv().
   */
  props[PROP_ARGV] = g_param_spec_boxed ("argv", NULL, NULL, G_TYPE_STRV, rw);
  /**
   * SpawnProcess:working-directory: (setter set_working_directory) (getter get_working_directory) (type filename)
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
   * SpawnProcess:read-buffer-size: (setter set_read_buffer_size) (getter get_read_buffer_size)
   *
   * The most bytes buffered per output channel before reading stops
   * (QAbstractSocket::setReadBufferSize()); 0 for no limit.
   *
   * Since: 0.3
   */
  props[PROP_READ_BUFFER_SIZE] = g_param_spec_uint64 ("read-buffer-size", NULL, NULL,
                                                      0, G_MAXSIZE, 0, rw);
  /**
   * SpawnProcess:job: (setter set_job) (getter get_job)
   *
   * The job the program and its descendants belong to, or %NULL.
   *
   * Since: 0.3
   */
  props[PROP_JOB] = g_param_spec_object ("job", NULL, NULL, SPAWN_TYPE_JOB, rw);
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
   * The program runs; emitted from [method@Spawn.Process.start].
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
   * Emitted when some of the input queued by [method@Spawn.Process.write] has gone
   * to the process, as QProcess::bytesWritten.
   */
  signals[SIGNAL_BYTES_WRITTEN] =
    g_signal_new ("bytes-written", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
}

