/* spawn-process-private.h - what the spawn-process*.c files share
 *
 * SpawnProcess is one object in six files (see the comment at the top of
 * each): spawn-process.c (the GObject, start, the source, the end of a run
 * and every signal emission), spawn-process-config.c (the configuration,
 * its setters and getters), spawn-process-launch.c (configuration to
 * pipes, files, fds and environment for spawn_async_fd()),
 * spawn-process-channel.c (pipes, buffers, reading and writing),
 * spawn-process-wait.c (the blocking waits and execute()) and
 * spawn-process-async.c (the GIO-style waits and communicate()).  This header
 * holds the instance struct and the _spawn_process_* functions they call
 * across files; everything else stays static in its file.  Not installed.
 */
#pragma once

#include "spawn-core.h"
#include <libspawn/spawn-process.h>

typedef struct {
  int fd;                 /* our end; -1 when closed */
  gpointer tag;           /* in the source, or NULL */
  GByteArray *data;       /* stdin: still to write; others: still to read */
  gsize pos;              /* bytes of @data already written or read */
  gboolean eof;           /* stdout/stderr: the process closed its end */
  /* SPAWN_CHANNEL_STREAM: our end as a GUnixOutputStream (stdin) or
   * GUnixInputStream, from the last start; @fd stays -1. */
  GObject *stream;
} Channel;

/* The emissions that report a run's end, in order (emit_end() in
 * spawn-process.c). */
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

  /* While running */
  SpawnProcessState state;
  SpawnChild *child;
  SpawnBackend backend;        /* of the running or last child */
  GSource *source;
  gpointer child_tag;
  Channel channels[3];
  gboolean close_write_requested;
  gint64 kill_deadline;        /* monotonic µs, 0: none */
  gint64 next_recheck;         /* monotonic µs, 0: none */
  guint64 read_count;          /* reads that brought data, for the waits */
  guint64 write_count;
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
  /* What is left to emit of the last run's end (see emit_end() in
   * spawn-process.c). */
  struct {
    int step;                  /* the next EndStep */
    guint run;
    gboolean got[3];
    int err;
    SpawnExitInfo info;
  } end;
};

/* What a blocking wait waits for; the source waits for nothing. */
typedef enum {
  WAIT_NOTHING,
  WAIT_READY_READ,
  WAIT_BYTES_WRITTEN,
  WAIT_FINISHED,
} WaitFor;

/* One wait_async(), wait_check_async() or communicate() for the end of
 * @run.  Asynchronous ones are the task data of @task, and the list holds
 * a reference on the task; the blocking communicate() has no task. */
typedef struct {
  guint run;
  GTask *task;
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

/* Bytes of @c still to write (stdin) or to read (stdout, stderr). */
static inline gsize
_spawn_process_pending (const Channel *c)
{
  return c->data->len - c->pos;
}

/* spawn-process.c */

/* "error-occurred" with a SPAWN_PROCESS_ERROR of @code. */
void _spawn_process_emit_error (SpawnProcess *self, SpawnProcessError code,
                                const char *format, ...) G_GNUC_PRINTF (3, 4);
/* Sets @error to @code with @message; returns FALSE. */
gboolean _spawn_process_fail (GError **error, SpawnProcessError code, const char *message);
/* "bytes-written" for @written bytes, never nested (the caller holds a
 * reference). */
void _spawn_process_emit_bytes_written (SpawnProcess *self, guint64 written);
/* Handles what poll reported for stdin, stdout, stderr and the child's fd
 * (@revents, indexed by channel and CHILD_SLOT); a wait passes @what. */
void _spawn_process_events (SpawnProcess *self, const GIOCondition revents[4],
                            WaitFor what);

/* spawn-process-wait.c */

/* The blocking wait behind the spawn_process_wait_for_*() calls. */
gboolean _spawn_process_wait_for (SpawnProcess *self, WaitFor what, int timeout_ms,
                                  GCancellable *cancellable, GError **error);

/* spawn-process-async.c */

/* At the end of @run, just before "finished": what every waiter of @run
 * will get (status, output). */
void _spawn_process_waiters_ended (SpawnProcess *self, guint run);
/* After "finished": completes the waiters _spawn_process_waiters_ended()
 * filled. */
void _spawn_process_waiters_complete (SpawnProcess *self, guint run);
/* Dispose: fails the waiters left (only g_object_run_dispose() gets
 * here with any, as each task holds a reference). */
void _spawn_process_waiters_dispose (SpawnProcess *self);

/* spawn-process-config.c */

void _spawn_process_init_config (SpawnProcess *self);
/* Frees the configuration and closes the descriptors it owns. */
void _spawn_process_clear_config (SpawnProcess *self);
/* The environment the child gets, or NULL for ours unchanged. */
char **_spawn_process_build_environment (SpawnProcess *self);

/* spawn-process-launch.c */

/* spawn_async_fd() with the configuration; NULL and @error on failure. */
SpawnChild *_spawn_process_launch (SpawnProcess *self, gboolean detached, GError **error);

/* spawn-process-channel.c */

/* Empties @c's buffer and clears its end of file. */
void _spawn_process_reset_channel (Channel *c);
/* Takes channel @i out of the source and closes our end. */
void _spawn_process_close_channel (SpawnProcess *self, SpawnProcessChannel i);
/* Writes buffered stdin; FALSE (after "error-occurred") if that failed. */
gboolean _spawn_process_flush_stdin (SpawnProcess *self);
/* Reads channel @i (all of it with @drain); TRUE if data arrived. */
gboolean _spawn_process_read_channel (SpawnProcess *self, SpawnProcessChannel i,
                                      gboolean drain);
