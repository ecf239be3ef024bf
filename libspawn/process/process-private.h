/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* process-private.h - what the files of process/ share
 *
 * SpawnProcess is one object in ten files (see the comment at the top of
 * process.c, and of each): the instance struct, the signal and property
 * ids, and the _spawn_process_* functions they call across files;
 * everything else stays static in its file.  The files call each other
 * one way only: subprocess.c and async.c -> sync.c -> wait.c -> run.c ->
 * launch.c, waiters.c -> config.c -> channel.c, status.c
 * (docs/design.md).  Of the core, only spawn-core.h.  Not installed.
 */
#pragma once

#include "spawn-core.h"
#include <libspawn/spawn-process.h>
#include <libspawn/spawn-job.h>

typedef struct {
  int fd;                 /* our end; -1 when closed */
  gpointer tag;           /* in the source, or NULL */
  GByteArray *data;       /* stdin: still to write; others: still to read */
  gsize pos;              /* bytes of @data already written or read */
  gboolean eof;           /* stdout/stderr: the process closed its end */
  /* SPAWN_CHANNEL_STREAM: our end as a GUnixOutputStream (stdin) or
   * GUnixInputStream, from the last start; @fd stays -1 until
   * communicate() takes the pipe back from the stream (@adopted): from
   * then on, for the rest of the run, it is read and written as a pipe. */
  GObject *stream;
  gboolean adopted;
  /* stdin on a terminal: whether the last byte written ended a line, for
   * the end of file close_write_channel() types (channel.c). */
  gboolean at_line_start;
} Channel;

/* The emissions that report a run's end, in order (run_emit_end() in
 * run.c). */
typedef enum {
  END_READY_STDOUT,
  END_READY_STDERR,
  END_CRASHED,
  END_FINISHED,
  END_DONE,
} EndStep;

/* Index of the child's fd next to the three channels. */
#define CHILD_SLOT 3

struct _SpawnProcess {
  GObject parent_instance;

  /* Configuration */
  char **argv;
  char *working_directory;
  char **environment;          /* NULL: ours at start time */
  GHashTable *env_changes;     /* name → value, or NULL to unset */
  SpawnChannelMode modes[3];
  char *files[3];
  gboolean appends[3];
  int channel_fds[3];          /* SPAWN_CHANNEL_FD: ours, or -1 */
  GArray *source_fds;          /* int: spawn_process_take_fd(), ours */
  GArray *target_fds;          /* int: the numbers the child gets */
  GSpawnChildSetupFunc child_setup;
  gpointer child_setup_data;
  GDestroyNotify child_setup_destroy;
  SpawnProcessFlags flags;
  int kill_timeout_ms;
  SpawnDisposePolicy dispose_policy;
  gboolean kill_on_close;
  gsize read_buffer_size;      /* 0: unlimited */
  SpawnJob *job;               /* NULL: the child alone */
  guint16 window_rows;         /* for SPAWN_CHANNEL_PTY; 0: the default */
  guint16 window_columns;

  /* What the running (or last) run was started with: the setters change
   * the next start's configuration, never the running one's. */
  struct {
    char *program;             /* argv[0], for messages */
    SpawnChannelMode modes[3];
    int kill_timeout_ms;
    gboolean kill_on_close;
    /* The job the run was started in (a reference), which kill() and the
     * kill timeout signal: never the one set_job() names since. */
    SpawnJob *job;
  } started;

  /* While running */
  SpawnProcessState state;
  SpawnChild *child;
  /* The terminal of the running or last run's SPAWN_CHANNEL_PTY
   * channels, or NULL; the channels hold copies of its master. */
  SpawnPty *pty;
  SpawnBackend backend;        /* of the running or last child */
  gboolean signal_group;       /* the child leads its own process group */
  GSource *source;
  GMainContext *context;       /* the source's, ours while running */
  /* Guards @context, which a blocking call from another thread reads
   * (sync.c); everything else is the owner's of @context. */
  GMutex context_lock;
  SpawnReadyLink *child_link;  /* the child's fd in the context's hub */
  gpointer child_tag;          /* or, with no hub to be had, in the source */
  /* The child has ended, but a communicate() still reads a pipe that a
   * descendant holds open: the run ends at that pipe's end of file, as
   * GSubprocess's communicate() returns (run.c). */
  gboolean end_held;
  Channel channels[3];
  gboolean close_write_requested;
  gint64 kill_deadline;        /* monotonic µs, 0: none */
  gboolean timed_out;          /* the kill timeout's SIGKILL reached the child */
  gint64 next_recheck;         /* monotonic µs, 0: none */
  guint64 read_count;          /* reads that brought data, for the waits */
  guint64 write_count;
  guint64 write_count_waited;  /* write_count at the last bytes-written wait */
  guint64 write_errors;        /* writes to stdin that failed */

  /* SpawnProcessWaiter *: GIO-style waits and communicate() calls that
   * wait for the end of a run, oldest first. */
  GList *waiters;

  /* No signal is emitted again from inside a handler of its own (a
   * handler that writes from "bytes-written", or waits for output in
   * "ready-read-*"): what happens meanwhile is announced once it has
   * returned, from the emission that was running. */
  gboolean emitting_written;
  guint64 unannounced_written;
  gboolean emitting_ready[3];
  gboolean unannounced_ready[3];

  /* The last "error-occurred" */
  GError *last_error;

  /* After the end */
  gboolean have_exit;
  SpawnExitInfo exit_info;

  /* Runs, so that waits and emissions belong to one: @run counts starts,
   * @finished_run is the last run whose "finished" was emitted. */
  guint run;
  guint finished_run;
  /* What is left to emit of the last run's end (see run_emit_end() in
   * run.c). */
  struct {
    int step;                  /* the next EndStep */
    guint run;
    gboolean got[3];
    int err;
    SpawnExitInfo info;
    gboolean timed_out;        /* ended by our kill timeout's SIGKILL */
  } end;
};

/* A run attaches its source only once it has something of its own to
 * poll or a time to wake, a pipe or a deadline (docs/design.md,
 * "Thousands of children"); until then the hub calls it.  Not before
 * run_start() has the context: it attaches then. */
static inline void
_spawn_process_attach_source (SpawnProcess *self)
{
  if (self->source != NULL && self->context != NULL &&
      g_source_get_context (self->source) == NULL)
    g_source_attach (self->source, self->context);
}

/* What a blocking wait waits for; the source waits for nothing. */
typedef enum {
  WAIT_NOTHING,
  WAIT_READY_READ,
  WAIT_BYTES_WRITTEN,
  WAIT_FINISHED,
} WaitFor;

typedef struct _SpawnProcessSync SpawnProcessSync;

/* One wait_async(), wait_check_async() or communicate() for the end of
 * @run.  Asynchronous ones are the task data of @task, and the list holds
 * a reference on the task; the blocking communicate() has no task, and a
 * blocking call from a thread that does not run the process's context
 * (sync.c) has @sync instead, on which the list holds a reference. */
typedef struct {
  guint run;
  GTask *task;
  SpawnProcessSync *sync;
  GSource *cancel_source;
  gboolean check;              /* wait_check: fail unless it exited 0 */
  gboolean capture;            /* communicate: take the buffered output */
  gboolean pipes[3];           /* which channels were pipes of ours */
  guint64 write_errors;        /* self->write_errors when it began */
  /* Filled at the end of @run, before "finished" is emitted. */
  gboolean ended;
  gboolean have_exit;
  gboolean write_failed;
  SpawnExitInfo info;
  GBytes *out;
  GBytes *err;
} SpawnProcessWaiter;

/* A blocking call made from a thread that cannot own the context the
 * process is watched from (another thread runs it): its waiter is put on
 * the list from that context, and the end of the run hands it back
 * through @lock and @cond (sync.c, waiters.c). */
typedef enum {
  SYNC_QUEUED,                 /* the waiter is not on the list yet */
  SYNC_WAITING,                /* on the list */
  SYNC_DONE,                   /* filled (or failed, in @error) */
  SYNC_ABANDONED,              /* its caller has gone (cancelled) */
} SyncState;

struct _SpawnProcessSync {
  SpawnProcessWaiter w;
  gatomicrefcount ref;
  GMutex lock;
  GCond cond;
  SyncState state;             /* under @lock */
  SpawnProcess *process;       /* a reference */
  GBytes *stdin_buf;           /* communicate()'s input, or NULL */
  GSource *begin_source;       /* in the process's context, or NULL */
  /* Puts @w on the list from the owner of the process's context:
   * SYNC_WAITING, SYNC_DONE, or FALSE with @error. */
  gboolean (*begin) (SpawnProcess *self, SpawnProcessSync *s, GError **error);
  GError *error;               /* why begin failed */
};

/* Whether channels in @mode are on the pseudo-terminal, or are handed
 * out as GIO streams. */
static inline gboolean
_spawn_process_mode_is_pty (SpawnChannelMode mode)
{
  return mode == SPAWN_CHANNEL_PTY || mode == SPAWN_CHANNEL_PTY_STREAM;
}

static inline gboolean
_spawn_process_mode_is_stream (SpawnChannelMode mode)
{
  return mode == SPAWN_CHANNEL_STREAM || mode == SPAWN_CHANNEL_PTY_STREAM;
}

/* Bytes of @c still to write (stdin) or to read (stdout, stderr). */
static inline gsize
_spawn_process_pending (const Channel *c)
{
  return c->data->len - c->pos;
}

/* Sets @error to @code with @message; returns FALSE. */
static inline gboolean
_spawn_process_fail (GError **error, SpawnProcessError code, const char *message)
{
  g_set_error_literal (error, SPAWN_PROCESS_ERROR, code, message);
  return FALSE;
}

/* The program for messages: the running (or last) run's, else the one
 * configured, else a placeholder. */
static inline const char *
_spawn_process_program (SpawnProcess *self)
{
  if (self->started.program != NULL)
    return self->started.program;
  if (self->argv != NULL && self->argv[0] != NULL)
    return self->argv[0];
  return "(no program)";
}

static inline GError *
_spawn_process_not_running_error (SpawnProcess *self)
{
  if (self->run == 0)
    return g_error_new (SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                        "“%s” is not running: it was never started",
                        _spawn_process_program (self));
  return g_error_new (SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING,
                      "“%s” is not running", _spawn_process_program (self));
}

/* SPAWN_PROCESS_ERROR_NOT_RUNNING in @error; returns FALSE. */
static inline gboolean
_spawn_process_fail_not_running (SpawnProcess *self, GError **error)
{
  g_propagate_error (error, _spawn_process_not_running_error (self));
  return FALSE;
}

/* The ids of the signals and properties: registered by process.c's
 * class_init, used (emitted, notified) by run.c. */
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

enum {
  PROP_0,
  PROP_ARGV,
  PROP_WORKING_DIRECTORY,
  PROP_FLAGS,
  PROP_KILL_TIMEOUT,
  PROP_DISPOSE_POLICY,
  PROP_KILL_ON_CLOSE,
  PROP_READ_BUFFER_SIZE,
  PROP_STATE,
  PROP_PID,
  PROP_BACKEND,
  PROP_EXIT_CODE,
  PROP_EXIT_STATUS,
  PROP_JOB,
  N_PROPS
};

/* run.c */

extern guint _spawn_process_signals[N_SIGNALS];
extern GParamSpec *_spawn_process_props[N_PROPS];
/* Handles what poll reported for stdin, stdout, stderr and the child's fd
 * (@revents, indexed by channel and CHILD_SLOT); a wait passes @what. */
void _spawn_process_events (SpawnProcess *self, const GIOCondition revents[4],
                            WaitFor what);
/* The earliest of the kill deadline and the next recheck (monotonic µs),
 * or -1 for none. */
gint64 _spawn_process_next_wakeup (SpawnProcess *self);

/* Closes the channels, destroys the source and drops the child. */
void _spawn_process_release_running (SpawnProcess *self);
/* Lets an end held for communicate() come once nobody reads an open pipe
 * any more; called where a communicate() leaves without its end. */
void _spawn_process_release_held_end (SpawnProcess *self);

/* wait.c */

/* The blocking wait behind the spawn_process_wait_for_*() calls. */
gboolean _spawn_process_wait_for (SpawnProcess *self, WaitFor what, int timeout_ms,
                                  GCancellable *cancellable, GError **error);

/* waiters.c */

void _spawn_process_waiter_clear (SpawnProcessWaiter *w);
/* A GDestroyNotify for a task's SpawnProcessWaiter. */
void _spawn_process_waiter_free (gpointer data);
/* Which run a new waiter waits for: the running one, or one whose end is
 * being emitted right now up to "finished" (a waiter registered from a
 * handler of its end, "ready-read-*" or "error-occurred").  0 when the
 * process has ended already (*ended) or never ran (!*ended). */
guint _spawn_process_waiter_run (SpawnProcess *self, gboolean *ended);
/* What @w gets of a run that has ended: the status and, for communicate,
 * the output. */
void _spawn_process_waiter_fill (SpawnProcess *self, SpawnProcessWaiter *w);
/* Returns @w's task with what _spawn_process_waiter_fill() found. */
void _spawn_process_waiter_return (SpawnProcessWaiter *w);
/* Queues @task (its data a SpawnProcessWaiter) for the end of the run,
 * or completes it now. */
void _spawn_process_waiter_add (SpawnProcess *self, GTask *task);
/* Cancelling @w's task's cancellable takes @w off the list and returns
 * its task cancelled. */
void _spawn_process_waiter_watch_cancellable (SpawnProcessWaiter *w);
/* Whether a communicate() of @run (not abandoned by its caller, not
 * cancelled) still reads a stdout or stderr pipe that is open: a
 * descendant of the child may hold it after the child has ended. */
gboolean _spawn_process_waiters_reading (SpawnProcess *self, guint run);
/* At the end of @run, just before "finished": what every waiter of @run
 * will get (status, output). */
void _spawn_process_waiters_ended (SpawnProcess *self, guint run);
/* After "finished": completes the waiters _spawn_process_waiters_ended()
 * filled. */
void _spawn_process_waiters_complete (SpawnProcess *self, guint run);
/* A SpawnProcessSync: another reference, and dropping one. */
SpawnProcessSync *_spawn_process_sync_ref (SpawnProcessSync *s);
void _spawn_process_sync_unref (SpawnProcessSync *s);
/* Marks @s done (unless its caller abandoned it) and wakes its caller. */
void _spawn_process_sync_hand_back (SpawnProcessSync *s);
/* Dispose: fails the waiters left (only g_object_run_dispose() gets
 * here with any, as each task holds a reference). */
void _spawn_process_waiters_dispose (SpawnProcess *self);

/* sync.c */

/* Whether this thread may work on @self directly (it owns the context
 * @self is watched from, or @self is not running): then *@context is what
 * to release with _spawn_process_sync_release(). */
gboolean _spawn_process_sync_acquire (SpawnProcess *self, GMainContext **context);
void _spawn_process_sync_release (GMainContext *context);
/* Runs @s from a thread that does not own the context @self is watched
 * from: @s->begin runs there (or here, a slice at a time, while nobody
 * runs it), and this waits (cancellably) until the end of the run has
 * filled @s->w.  FALSE with @error if begin failed or the
 * wait was cancelled. */
gboolean _spawn_process_sync_call (SpawnProcess *self, SpawnProcessSync *s,
                                   GCancellable *cancellable, GError **error);
/* A new SpawnProcessSync for @self, one reference. */
SpawnProcessSync *_spawn_process_sync_new (SpawnProcess *self);

/* config.c */

void _spawn_process_init_config (SpawnProcess *self);
/* Frees the configuration and closes the descriptors it owns. */
void _spawn_process_clear_config (SpawnProcess *self);
/* The environment the child gets, or NULL for ours unchanged. */
char **_spawn_process_build_environment (SpawnProcess *self);

/* launch.c */

/* spawn_async_fd_full() with the configuration; NULL and @error on
 * failure, with nothing left open. */
SpawnChild *_spawn_process_launch (SpawnProcess *self, gboolean detached, GError **error);
/* Sends @signum to what the running child stands for: its process group
 * with SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP or _NEW_SESSION, else the
 * child alone. */
gboolean _spawn_process_signal_child (SpawnProcess *self, int signum, GError **error);

/* channel.c: no signal is emitted here; run.c announces what happened. */

/* Empties @c's buffer and clears its end of file. */
void _spawn_process_reset_channel (Channel *c);
/* Takes channel @i out of the source and closes our end. */
void _spawn_process_close_channel (SpawnProcess *self, SpawnProcessChannel i);
/* Writes buffered stdin as far as the pipe takes it: the bytes written,
 * or -errno after a failed write (stdin closed; what was not written
 * stays in the buffer until the next start). */
gssize _spawn_process_write_stdin (SpawnProcess *self);
/* Reads channel @i (all of it with @drain); TRUE if data arrived.  A
 * failed read closes the channel and sets *@errnum.  Without @drain it
 * stops at the read buffer size (spawn_process_set_read_buffer_size()). */
gboolean _spawn_process_read_channel (SpawnProcess *self, SpawnProcessChannel i,
                                      gboolean drain, int *errnum);
/* Whether output channel @i is not read for now: its buffer holds
 * read-buffer-size bytes and no communicate() is collecting. */
gboolean _spawn_process_output_full (SpawnProcess *self, SpawnProcessChannel i);
/* Watches output channel @i from the source unless it is full, or
 * stops: after its buffer grew or shrank, or the limit changed. */
void _spawn_process_watch_output (SpawnProcess *self, SpawnProcessChannel i);
/* Whether SpawnProcess buffers channel @i: a %SPAWN_CHANNEL_PIPE, or a
 * %SPAWN_CHANNEL_STREAM that communicate() took back from its stream. */
gboolean _spawn_process_channel_buffered (SpawnProcess *self, SpawnProcessChannel i);
/* communicate() on a %SPAWN_CHANNEL_STREAM channel: takes the pipe back
 * from its stream (which is closed, as GSubprocess's communicate()
 * closes its pipes) and from now on buffers it as a pipe; on a process
 * that has ended, reads what is left in it.  FALSE with
 * %G_IO_ERROR_PENDING if the stream has an operation pending. */
gboolean _spawn_process_adopt_stream (SpawnProcess *self, SpawnProcessChannel i,
                                      GError **error);
