/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn-process.h - a QProcess-style process object over spawn_async_fd()
 *
 * SpawnProcess starts one program, feeds its stdin and buffers its stdout
 * and stderr, and reports its end, all from the thread-default main context
 * of the thread that called spawn_process_start().  Blocking helpers poll
 * the process's descriptors themselves, without running any main loop.
 * See docs/process.md for the mapping from QProcess.
 */
#pragma once

#if !defined (LIBSPAWN_INSIDE) && !defined (LIBSPAWN_COMPILATION)
#error "Only <libspawn/libspawn.h> can be included directly."
#endif

#include <gio/gio.h>

#include <libspawn/spawn-async.h>
#include <libspawn/spawn-job.h>
#include <libspawn/spawn-pty.h>

G_BEGIN_DECLS

#define SPAWN_PROCESS_ERROR (spawn_process_error_quark ())
SPAWN_AVAILABLE_IN_0_2
GQuark spawn_process_error_quark (void);

/**
 * SpawnProcessError:
 * @SPAWN_PROCESS_ERROR_FAILED_TO_START: the program could not be started
 *   (not found, not executable, a redirection file could not be opened…)
 * @SPAWN_PROCESS_ERROR_CRASHED: the process was ended by a signal (also
 *   when we sent it, except the kill timeout's SIGKILL, which is TIMED_OUT
 *   alone)
 * @SPAWN_PROCESS_ERROR_TIMED_OUT: a wait timed out, or the kill timeout
 *   ([method@Spawn.Process.set_kill_timeout]) expired and the process was
 *   killed (then no CRASHED follows: this stays the run's error)
 * @SPAWN_PROCESS_ERROR_READ_ERROR: reading the process's output failed, or
 *   a blocking helper could not poll its descriptors
 * @SPAWN_PROCESS_ERROR_WRITE_ERROR: writing to the process failed, for
 *   instance because it closed its stdin
 * @SPAWN_PROCESS_ERROR_NOT_RUNNING: the operation needs a running process
 * @SPAWN_PROCESS_ERROR_WRONG_THREAD: a blocking helper was called while
 *   another thread runs the main context the process is watched from
 *   (which would dispatch it meanwhile); nothing was done
 * @SPAWN_PROCESS_ERROR_RUNNING: [method@Spawn.Process.start] was called
 *   while the process runs; nothing was done (Since: 0.3)
 *
 * Error codes in the %SPAWN_PROCESS_ERROR domain, carried by the
 * #SpawnProcess::error-occurred signal and by the blocking helpers.
 */
typedef enum {
  SPAWN_PROCESS_ERROR_FAILED_TO_START,
  SPAWN_PROCESS_ERROR_CRASHED,
  SPAWN_PROCESS_ERROR_TIMED_OUT,
  SPAWN_PROCESS_ERROR_READ_ERROR,
  SPAWN_PROCESS_ERROR_WRITE_ERROR,
  SPAWN_PROCESS_ERROR_NOT_RUNNING,
  SPAWN_PROCESS_ERROR_WRONG_THREAD,
  SPAWN_PROCESS_ERROR_RUNNING,
} SpawnProcessError;

/**
 * SpawnProcessState:
 * @SPAWN_PROCESS_NOT_RUNNING: not started yet, failed to start, or ended
 * @SPAWN_PROCESS_STARTING: inside [method@Spawn.Process.start]
 * @SPAWN_PROCESS_RUNNING: started and not yet reported finished
 *
 * Where a #SpawnProcess is in its life, as QProcess::ProcessState.
 */
typedef enum {
  SPAWN_PROCESS_NOT_RUNNING,
  SPAWN_PROCESS_STARTING,
  SPAWN_PROCESS_RUNNING,
} SpawnProcessState;

/**
 * SpawnProcessExitStatus:
 * @SPAWN_PROCESS_EXIT_NORMAL: the process exited; the exit code is its status
 * @SPAWN_PROCESS_EXIT_CRASH: a signal ended it; the exit code is the signal
 *
 * How a run of a #SpawnProcess ended, as QProcess::ExitStatus.
 */
typedef enum {
  SPAWN_PROCESS_EXIT_NORMAL,
  SPAWN_PROCESS_EXIT_CRASH,
} SpawnProcessExitStatus;

/**
 * SpawnProcessChannel:
 * @SPAWN_PROCESS_STDIN: the process's standard input
 * @SPAWN_PROCESS_STDOUT: the process's standard output
 * @SPAWN_PROCESS_STDERR: the process's standard error
 *
 * One of the three standard channels of a process.
 */
typedef enum {
  SPAWN_PROCESS_STDIN,
  SPAWN_PROCESS_STDOUT,
  SPAWN_PROCESS_STDERR,
} SpawnProcessChannel;

/**
 * SpawnChannelMode:
 * @SPAWN_CHANNEL_PIPE: a pipe to us (the default): write to stdin, read
 *   stdout and stderr separately
 * @SPAWN_CHANNEL_MERGE: stderr only: goes wherever stdout goes (into the
 *   stdout buffer when stdout is a pipe)
 * @SPAWN_CHANNEL_FORWARD: the process shares our own descriptor
 * @SPAWN_CHANNEL_DISCARD: /dev/null
 * @SPAWN_CHANNEL_FILE: a file, set with [method@Spawn.Process.set_channel_file]
 * @SPAWN_CHANNEL_FD: a descriptor of the caller's, given with
 *   [method@Spawn.Process.set_channel_fd]
 * @SPAWN_CHANNEL_STREAM: a pipe to us, handed out as a GIO stream
 *   ([method@Spawn.Process.get_stdin_pipe] and friends) instead of buffered
 * @SPAWN_CHANNEL_PTY: a pseudo-terminal, buffered as a pipe is: the
 *   program runs in a session of its own with the terminal as its
 *   controlling terminal ([method@Spawn.Process.get_pty]).  All the
 *   channels in this mode share one terminal, which has one output: with
 *   stdout and stderr on it, both come through stdout.  Since: 0.3
 * @SPAWN_CHANNEL_PTY_STREAM: the pseudo-terminal of %SPAWN_CHANNEL_PTY,
 *   handed out as a GIO stream as %SPAWN_CHANNEL_STREAM hands out a pipe;
 *   the input streams read the terminal's end as end of file.  Since: 0.3
 *
 * Where one of the process's standard channels goes.
 */
typedef enum {
  SPAWN_CHANNEL_PIPE,
  SPAWN_CHANNEL_MERGE,
  SPAWN_CHANNEL_FORWARD,
  SPAWN_CHANNEL_DISCARD,
  SPAWN_CHANNEL_FILE,
  SPAWN_CHANNEL_FD,
  SPAWN_CHANNEL_STREAM,
  SPAWN_CHANNEL_PTY,
  SPAWN_CHANNEL_PTY_STREAM,
} SpawnChannelMode;

/**
 * SpawnProcessFlags:
 * @SPAWN_PROCESS_FLAGS_NONE: none
 * @SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP: look the program up in the
 *   PATH of the environment it gets
 * @SPAWN_PROCESS_FLAGS_INHERIT_FDS: leave our descriptors that are not
 *   close-on-exec open in the program
 * @SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP: the program leads a process
 *   group of its own, and terminate, kill, send_signal, the kill timeout
 *   and the dispose policy signal the whole group.  Since: 0.3
 * @SPAWN_PROCESS_FLAGS_NEW_SESSION: the program leads a session of its
 *   own (and so a process group, signalled as with
 *   %SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP), without a controlling
 *   terminal.  Since: 0.3
 *
 * How a #SpawnProcess starts its program: see [method@Spawn.Process.set_flags].
 */
typedef enum {
  SPAWN_PROCESS_FLAGS_NONE = 0,
  SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP = 1 << 0,
  SPAWN_PROCESS_FLAGS_INHERIT_FDS = 1 << 1,
  SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP = 1 << 2,
  SPAWN_PROCESS_FLAGS_NEW_SESSION = 1 << 3,
} SpawnProcessFlags;

/**
 * SpawnDisposePolicy:
 * @SPAWN_DISPOSE_KILL: the last reference to a running process kills it
 *   with SIGKILL (the default); it is reaped in the background
 * @SPAWN_DISPOSE_LEAVE_RUNNING: the process runs on without its pipes and
 *   is reaped in the background when it ends
 *
 * What happens to a process still running when its #SpawnProcess goes.
 * Neither leaves a zombie or one of our descriptors behind.
 */
typedef enum {
  SPAWN_DISPOSE_KILL,
  SPAWN_DISPOSE_LEAVE_RUNNING,
} SpawnDisposePolicy;

/**
 * SpawnProcess:
 *
 * One program, started and watched from the thread-default main context
 * of the thread that called [method@Spawn.Process.start], in the manner of
 * QProcess and GSubprocess: it feeds the program's stdin, buffers its
 * stdout and stderr (or hands them out as GIO streams), reports its end
 * with #SpawnProcess::finished and offers blocking, GIO-style async and
 * cancellable waits.  [Porting from QProcess and
 * GSubprocess](process.html), the SpawnProcess guide, maps both onto it,
 * call by call.
 */
#define SPAWN_TYPE_PROCESS (spawn_process_get_type ())
/* The macro's first declaration is spawn_process_get_type()'s. */
SPAWN_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (SpawnProcess, spawn_process, SPAWN, PROCESS, GObject)

SPAWN_AVAILABLE_IN_0_2
SpawnProcess *spawn_process_new (const char * const *argv);
/* GSubprocess-style: started at once, GSubprocessFlags' meaning
 * (subprocess.c) */
SPAWN_AVAILABLE_IN_0_3
SpawnProcess *spawn_process_newv (const char * const *argv, GSubprocessFlags flags,
                                  GError **error);
SPAWN_AVAILABLE_IN_0_3
SpawnProcess *spawn_process_new_with_flags (GSubprocessFlags flags, GError **error,
                                            const char *argv0, ...) G_GNUC_NULL_TERMINATED;
SPAWN_AVAILABLE_IN_0_3
void spawn_process_set_subprocess_flags (SpawnProcess *self, GSubprocessFlags flags);

/* Configuration: may be changed at any time; takes effect at the next
 * start, never on the running program (docs/process.md). */
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_argv (SpawnProcess *self, const char * const *argv);
SPAWN_AVAILABLE_IN_0_2
const char * const *spawn_process_get_argv (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_working_directory (SpawnProcess *self, const char *path);
SPAWN_AVAILABLE_IN_0_2
const char *spawn_process_get_working_directory (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_environment (SpawnProcess *self, const char * const *envp);
SPAWN_AVAILABLE_IN_0_2
char **spawn_process_get_environment (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_setenv (SpawnProcess *self, const char *name, const char *value);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_unsetenv (SpawnProcess *self, const char *name);
SPAWN_AVAILABLE_IN_0_2
char *spawn_process_getenv (SpawnProcess *self, const char *name);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_channel_mode (SpawnProcess *self, SpawnProcessChannel channel,
                                     SpawnChannelMode mode);
SPAWN_AVAILABLE_IN_0_2
SpawnChannelMode spawn_process_get_channel_mode (SpawnProcess *self,
                                                 SpawnProcessChannel channel);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_channel_file (SpawnProcess *self, SpawnProcessChannel channel,
                                     const char *path, gboolean append);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_channel_fd (SpawnProcess *self, SpawnProcessChannel channel,
                                   int fd);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_take_fd (SpawnProcess *self, int source_fd, int target_fd);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_child_setup (SpawnProcess *self,
                                    GSpawnChildSetupFunc child_setup,
                                    gpointer user_data, GDestroyNotify destroy);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_flags (SpawnProcess *self, SpawnProcessFlags flags);
SPAWN_AVAILABLE_IN_0_2
SpawnProcessFlags spawn_process_get_flags (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_kill_timeout (SpawnProcess *self, int timeout_ms);
SPAWN_AVAILABLE_IN_0_2
int spawn_process_get_kill_timeout (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_dispose_policy (SpawnProcess *self, SpawnDisposePolicy policy);
SPAWN_AVAILABLE_IN_0_2
SpawnDisposePolicy spawn_process_get_dispose_policy (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_set_kill_on_close (SpawnProcess *self, gboolean kill_on_close);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_get_kill_on_close (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_3
void spawn_process_set_read_buffer_size (SpawnProcess *self, gsize size);
SPAWN_AVAILABLE_IN_0_3
gsize spawn_process_get_read_buffer_size (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_3
void spawn_process_set_job (SpawnProcess *self, SpawnJob *job);
SPAWN_AVAILABLE_IN_0_3
SpawnJob *spawn_process_get_job (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_process_set_window_size (SpawnProcess *self, guint16 rows,
                                        guint16 columns, GError **error);
SPAWN_AVAILABLE_IN_0_3
void spawn_process_get_window_size (SpawnProcess *self, guint16 *rows,
                                    guint16 *columns);

/* Running */
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_start (SpawnProcess *self, GError **error);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_start_detached (SpawnProcess *self, GPid *pid_out,
                                       GError **error);
SPAWN_AVAILABLE_IN_0_2
SpawnProcessState spawn_process_get_state (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
const GError *spawn_process_get_error (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
GPid spawn_process_get_pid (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
SpawnBackend spawn_process_get_backend (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
SpawnChild *spawn_process_get_child (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_3
SpawnPty *spawn_process_get_pty (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_terminate (SpawnProcess *self, GError **error);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_kill (SpawnProcess *self, GError **error);

/* After "finished" */
SPAWN_AVAILABLE_IN_0_2
int spawn_process_get_exit_code (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
SpawnProcessExitStatus spawn_process_get_exit_status (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_get_exit_info (SpawnProcess *self, SpawnExitInfo *info);
/* After "finished", GSubprocess-style (spawn-process-status.c) */
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_get_if_exited (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_get_if_signaled (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
int spawn_process_get_term_sig (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_get_successful (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
int spawn_process_get_status (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_send_signal (SpawnProcess *self, int signum, GError **error);

/* Output */
SPAWN_AVAILABLE_IN_0_2
gsize spawn_process_get_bytes_available (SpawnProcess *self,
                                         SpawnProcessChannel channel);
SPAWN_AVAILABLE_IN_0_2
GBytes *spawn_process_read_all (SpawnProcess *self, SpawnProcessChannel channel);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_can_read_line (SpawnProcess *self,
                                      SpawnProcessChannel channel);
SPAWN_AVAILABLE_IN_0_2
char *spawn_process_read_line (SpawnProcess *self, SpawnProcessChannel channel);

/* SPAWN_CHANNEL_STREAM channels */
SPAWN_AVAILABLE_IN_0_2
GOutputStream *spawn_process_get_stdin_pipe (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
GInputStream *spawn_process_get_stdout_pipe (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
GInputStream *spawn_process_get_stderr_pipe (SpawnProcess *self);

/* Input */
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_write (SpawnProcess *self, const void *data, gsize len,
                              GError **error);
SPAWN_AVAILABLE_IN_0_2
gsize spawn_process_get_bytes_to_write (SpawnProcess *self);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_close_write_channel (SpawnProcess *self);

/* Blocking helpers: poll the process's descriptors, run no main loop.
 * timeout_ms < 0 waits for ever. */
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_wait_for_started (SpawnProcess *self, int timeout_ms,
                                         GError **error);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_wait_for_ready_read (SpawnProcess *self, int timeout_ms,
                                            GCancellable *cancellable,
                                            GError **error);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_wait_for_bytes_written (SpawnProcess *self, int timeout_ms,
                                               GCancellable *cancellable,
                                               GError **error);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_wait_for_finished (SpawnProcess *self, int timeout_ms,
                                          GCancellable *cancellable,
                                          GError **error);

/* GSubprocess-style blocking waits: from any thread, TRUE at once on a
 * process that has ended (sync.c). */
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_process_wait (SpawnProcess *self, GCancellable *cancellable,
                             GError **error);
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_process_wait_check (SpawnProcess *self, GCancellable *cancellable,
                                   GError **error);

SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_execute (const char * const *argv, int timeout_ms,
                                GBytes **stdout_out, GBytes **stderr_out,
                                SpawnExitInfo *info, GCancellable *cancellable,
                                GError **error);

/* GIO-style: the callback runs in the thread-default main context of the
 * caller; the process is still watched from its own (see docs/process.md). */
SPAWN_AVAILABLE_IN_0_2
void spawn_process_wait_async (SpawnProcess *self, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_wait_finish (SpawnProcess *self, GAsyncResult *result,
                                    GError **error);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_wait_check_async (SpawnProcess *self, GCancellable *cancellable,
                                     GAsyncReadyCallback callback,
                                     gpointer user_data);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_wait_check_finish (SpawnProcess *self, GAsyncResult *result,
                                          GError **error);

SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_communicate (SpawnProcess *self, GBytes *stdin_buf,
                                    GCancellable *cancellable, GBytes **stdout_buf,
                                    GBytes **stderr_buf, GError **error);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_communicate_async (SpawnProcess *self, GBytes *stdin_buf,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_communicate_finish (SpawnProcess *self, GAsyncResult *result,
                                           GBytes **stdout_buf, GBytes **stderr_buf,
                                           GError **error);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_communicate_utf8 (SpawnProcess *self, const char *stdin_buf,
                                         GCancellable *cancellable, char **stdout_buf,
                                         char **stderr_buf, GError **error);
SPAWN_AVAILABLE_IN_0_2
void spawn_process_communicate_utf8_async (SpawnProcess *self, const char *stdin_buf,
                                           GCancellable *cancellable,
                                           GAsyncReadyCallback callback,
                                           gpointer user_data);
SPAWN_AVAILABLE_IN_0_2
gboolean spawn_process_communicate_utf8_finish (SpawnProcess *self,
                                                GAsyncResult *result,
                                                char **stdout_buf, char **stderr_buf,
                                                GError **error);

G_END_DECLS
