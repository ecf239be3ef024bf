/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn-async.h - start and watch child processes without process-wide state
 *
 * libspawn starts a program and hands back a SpawnChild: its PID and a file
 * descriptor that becomes readable when it ends.  A GSource on that
 * descriptor delivers the exit status and CPU times.  On a kernel with
 * clone4(CLONE_FD) nothing process-wide is touched at all; elsewhere pidfds
 * or, as a last resort, a chaining SIGCHLD handler do the job.
 */
#pragma once

#if !defined (LIBSPAWN_INSIDE) && !defined (LIBSPAWN_COMPILATION)
#error "Only <libspawn/libspawn.h> can be included directly."
#endif

#include <gio/gio.h>
#include <sys/types.h>

#include <libspawn/spawn-version-macros.h>

G_BEGIN_DECLS

#define SPAWN_ERROR (spawn_error_quark ())
SPAWN_AVAILABLE_IN_0_2
GQuark spawn_error_quark (void);

/**
 * SpawnError:
 * @SPAWN_ERROR_FAILED: anything not listed below
 * @SPAWN_ERROR_NOENT: program or working directory not found (ENOENT)
 * @SPAWN_ERROR_ACCES: permission denied (EACCES)
 * @SPAWN_ERROR_PERM: operation not permitted (EPERM)
 * @SPAWN_ERROR_NOEXEC: not an executable format (ENOEXEC)
 * @SPAWN_ERROR_TOO_BIG: argument list too long (E2BIG)
 * @SPAWN_ERROR_NOTDIR: a path component is not a directory (ENOTDIR)
 * @SPAWN_ERROR_ISDIR: the program is a directory (EISDIR)
 * @SPAWN_ERROR_LOOP: too many symbolic links (ELOOP)
 * @SPAWN_ERROR_NAMETOOLONG: a name is too long (ENAMETOOLONG)
 * @SPAWN_ERROR_TXTBSY: the program is being written (ETXTBSY)
 * @SPAWN_ERROR_LIBBAD: bad shared library or interpreter (ELIBBAD)
 * @SPAWN_ERROR_NOMEM: out of memory (ENOMEM)
 * @SPAWN_ERROR_MFILE: the process's fd table is full (EMFILE)
 * @SPAWN_ERROR_NFILE: the system's file table is full (ENFILE)
 * @SPAWN_ERROR_AGAIN: process limit reached (EAGAIN)
 * @SPAWN_ERROR_INVAL: invalid argument (EINVAL)
 * @SPAWN_ERROR_SRCH: the process has already ended (ESRCH)
 * @SPAWN_ERROR_NOSYS: the requested backend is not available here (ENOSYS)
 * @SPAWN_ERROR_STATUS_LOST: the child ended but its status was taken by
 *   someone else (a waitpid(-1) elsewhere, or SIGCHLD set to SIG_IGN)
 *
 * Error codes in the %SPAWN_ERROR domain; most are shaped after an errno.
 */
typedef enum {
  SPAWN_ERROR_FAILED,
  SPAWN_ERROR_NOENT,
  SPAWN_ERROR_ACCES,
  SPAWN_ERROR_PERM,
  SPAWN_ERROR_NOEXEC,
  SPAWN_ERROR_TOO_BIG,
  SPAWN_ERROR_NOTDIR,
  SPAWN_ERROR_ISDIR,
  SPAWN_ERROR_LOOP,
  SPAWN_ERROR_NAMETOOLONG,
  SPAWN_ERROR_TXTBSY,
  SPAWN_ERROR_LIBBAD,
  SPAWN_ERROR_NOMEM,
  SPAWN_ERROR_MFILE,
  SPAWN_ERROR_NFILE,
  SPAWN_ERROR_AGAIN,
  SPAWN_ERROR_INVAL,
  SPAWN_ERROR_SRCH,
  SPAWN_ERROR_NOSYS,
  SPAWN_ERROR_STATUS_LOST,
} SpawnError;

/**
 * SpawnBackend:
 * @SPAWN_BACKEND_AUTO: the best one the kernel offers (the default)
 * @SPAWN_BACKEND_CLONEFD: clone4(CLONE_FD | CLONE_AUTOREAP): no zombie, no
 *   SIGCHLD, the exit status read from the fd
 * @SPAWN_BACKEND_PIDFD: clone(CLONE_PIDFD), reaped with waitid(P_PIDFD)
 * @SPAWN_BACKEND_SIGCHLD: an ordinary child and a chaining SIGCHLD handler
 * @SPAWN_BACKEND_AUTOREAP: clone3(CLONE_PIDFD | CLONE_AUTOREAP), Linux 7.1:
 *   no zombie, no SIGCHLD, the exit status from ioctl(PIDFD_GET_INFO), no
 *   CPU times (Since: 0.3)
 *
 * How children are started and watched.  [What each backend
 * guarantees](design.html#what-each-backend-guarantees) is in the design
 * notes.
 */
typedef enum {
  SPAWN_BACKEND_AUTO,
  SPAWN_BACKEND_CLONEFD,
  SPAWN_BACKEND_PIDFD,
  SPAWN_BACKEND_SIGCHLD,
  SPAWN_BACKEND_AUTOREAP,
} SpawnBackend;

SPAWN_AVAILABLE_IN_0_2
SpawnBackend spawn_get_backend (void);
SPAWN_AVAILABLE_IN_0_2
gboolean     spawn_set_backend (SpawnBackend backend, GError **error);
SPAWN_AVAILABLE_IN_0_2
const char  *spawn_backend_to_string (SpawnBackend backend);
SPAWN_AVAILABLE_IN_0_2
gboolean     spawn_backend_is_available (SpawnBackend backend);

SPAWN_AVAILABLE_IN_0_3
const char  *spawn_check_version (guint required_major, guint required_minor,
                                  guint required_micro);

/**
 * SpawnExitKind:
 * @SPAWN_EXIT_EXITED: the process called exit(); status is its exit status
 * @SPAWN_EXIT_KILLED: a signal ended it; status is the signal number
 * @SPAWN_EXIT_DUMPED: a signal ended it and it dumped core
 *
 * How a child ended: the kind of #SpawnExitInfo.
 */
typedef enum {
  SPAWN_EXIT_EXITED,
  SPAWN_EXIT_KILLED,
  SPAWN_EXIT_DUMPED,
} SpawnExitKind;

/**
 * SpawnExitInfo:
 * @kind: how the process ended
 * @status: the exit status (@kind %SPAWN_EXIT_EXITED) or the signal number
 * @utime_usec: user CPU time of the process, in microseconds
 * @stime_usec: system CPU time of the process, in microseconds
 * @have_times: %FALSE when the backend could not learn the CPU times (a
 *   status recovered through PIDFD_GET_INFO after someone else reaped the
 *   child; every child of the autoreap backend on a stock kernel, as Linux
 *   7.2's exit information carries no times; libspawn's kernel/patches-7.2
 *   adds them); the times are then 0
 *
 * How a child ended.
 */
typedef struct {
  SpawnExitKind kind;
  int status;
  guint64 utime_usec;
  guint64 stime_usec;
  gboolean have_times;
} SpawnExitInfo;

#define SPAWN_TYPE_EXIT_INFO (spawn_exit_info_get_type ())
SPAWN_AVAILABLE_IN_0_2
GType spawn_exit_info_get_type (void);
SPAWN_AVAILABLE_IN_0_2
SpawnExitInfo *spawn_exit_info_copy (const SpawnExitInfo *info);
SPAWN_AVAILABLE_IN_0_2
void spawn_exit_info_free (SpawnExitInfo *info);
SPAWN_AVAILABLE_IN_0_2
int spawn_exit_info_to_wait_status (const SpawnExitInfo *info);

typedef struct _SpawnChild SpawnChild;

#define SPAWN_TYPE_CHILD (spawn_child_get_type ())
SPAWN_AVAILABLE_IN_0_2
GType spawn_child_get_type (void);

/**
 * SpawnChildWatchFunc:
 * @child: the child that ended
 * @info: (nullable): how it ended, or %NULL if @error is set
 * @error: (nullable): why its status could not be had
 *   (%SPAWN_ERROR_STATUS_LOST), or %NULL
 * @user_data: data passed to [method@Spawn.Child.watch_add]
 *
 * Called once, from the main context of the watch, when @child has ended.
 *
 * [method@Spawn.Child.watch_add] and [func@Spawn.Child.watch_add_full]
 * attach the watch to the thread-default main context of their caller,
 * not to the global default one as [func@GLib.child_watch_add] does.  The
 * watch holds a reference on @child until it is removed, so @child is valid
 * here even if the caller dropped its own reference.
 */
typedef void (*SpawnChildWatchFunc) (SpawnChild          *child,
                                     const SpawnExitInfo *info,
                                     const GError        *error,
                                     gpointer             user_data);

SPAWN_AVAILABLE_IN_0_2
SpawnChild *spawn_async_fd (const char           *working_directory,
                            const char * const   *argv,
                            const char * const   *envp,
                            GSpawnFlags           flags,
                            GSpawnChildSetupFunc  child_setup,
                            gpointer              user_data,
                            int                   stdin_fd,
                            int                   stdout_fd,
                            int                   stderr_fd,
                            const int            *source_fds,
                            const int            *target_fds,
                            gsize                 n_fds,
                            int                  *stdin_pipe_out,
                            int                  *stdout_pipe_out,
                            int                  *stderr_pipe_out,
                            GError              **error);

/**
 * SpawnChildFlags:
 * @SPAWN_CHILD_FLAGS_NONE: nothing beyond what #GSpawnFlags say
 * @SPAWN_CHILD_KILL_ON_CLOSE: the child does not outlive its handle or the
 *   application: it is killed (SIGKILL) when the last #SpawnChild
 *   reference goes while it runs, and when the application dies by any
 *   means (exit, SIGKILL, crash, OOM killer).  How the second part is done,
 *   and its limits, depend on the backend: see [Kill on
 *   close](api.html#kill-on-close-children-that-do-not-outlive-the-application)
 *   in the C API overview
 * @SPAWN_CHILD_NEW_PROCESS_GROUP: the child starts a process group of its
 *   own (setpgid(0, 0) before exec), which its descendants join unless
 *   they leave it; [method@Spawn.Child.send_signal_to_group] signals it
 *   all.  Since: 0.3
 * @SPAWN_CHILD_NEW_SESSION: the child starts a session of its own
 *   (setsid() before exec), and with it a process group, and loses its
 *   controlling terminal.  Since: 0.3
 * @SPAWN_CHILD_CONTROLLING_TERMINAL: the child starts a session of its
 *   own (as %SPAWN_CHILD_NEW_SESSION) whose controlling terminal is the
 *   terminal on its stdin, stdout or stderr (the first that is one,
 *   TIOCSCTTY before exec): give it the slave of a [struct@Spawn.Pty].
 *   Without a terminal on any of them the start fails with
 *   %SPAWN_ERROR_FAILED ("Failed to give a controlling terminal to…:
 *   Inappropriate ioctl for device").  Since: 0.3
 *
 * What [func@Spawn.async_fd_full] adds to #GSpawnFlags, which are GLib's.
 */
typedef enum {
  SPAWN_CHILD_FLAGS_NONE = 0,
  SPAWN_CHILD_KILL_ON_CLOSE = 1 << 0,
  SPAWN_CHILD_NEW_PROCESS_GROUP = 1 << 1,
  SPAWN_CHILD_NEW_SESSION = 1 << 2,
  SPAWN_CHILD_CONTROLLING_TERMINAL = 1 << 3,
} SpawnChildFlags;

SPAWN_AVAILABLE_IN_0_2
SpawnChild *spawn_async_fd_full (const char           *working_directory,
                                 const char * const   *argv,
                                 const char * const   *envp,
                                 GSpawnFlags           flags,
                                 GSpawnChildSetupFunc  child_setup,
                                 gpointer              user_data,
                                 int                   stdin_fd,
                                 int                   stdout_fd,
                                 int                   stderr_fd,
                                 const int            *source_fds,
                                 const int            *target_fds,
                                 gsize                 n_fds,
                                 int                  *stdin_pipe_out,
                                 int                  *stdout_pipe_out,
                                 int                  *stderr_pipe_out,
                                 SpawnChildFlags       child_flags,
                                 GError              **error);

/**
 * SpawnPipeFlags:
 * @SPAWN_PIPE_FLAGS_NONE: no pipe: each stream goes where the #GSpawnFlags
 *   and the fds say
 * @SPAWN_PIPE_STDIN: a pipe to the child's stdin
 * @SPAWN_PIPE_STDOUT: a pipe from the child's stdout
 * @SPAWN_PIPE_STDERR: a pipe from the child's stderr
 *
 * Which pipes [func@Spawn.async_fd_with_pipes] makes: the ones a binding
 * asks for, since it cannot pass %NULL for an out parameter.
 *
 * Since: 0.3
 */
typedef enum {
  SPAWN_PIPE_FLAGS_NONE = 0,
  SPAWN_PIPE_STDIN = 1 << 0,
  SPAWN_PIPE_STDOUT = 1 << 1,
  SPAWN_PIPE_STDERR = 1 << 2,
} SpawnPipeFlags;

SPAWN_AVAILABLE_IN_0_3
SpawnChild *spawn_async_fd_with_pipes (const char          *working_directory,
                                       const char * const  *argv,
                                       const char * const  *envp,
                                       GSpawnFlags          flags,
                                       SpawnChildFlags      child_flags,
                                       SpawnPipeFlags       pipes,
                                       int                  stdin_fd,
                                       int                  stdout_fd,
                                       int                  stderr_fd,
                                       const int           *source_fds,
                                       const int           *target_fds,
                                       gsize                n_fds,
                                       int                 *stdin_pipe_out,
                                       int                 *stdout_pipe_out,
                                       int                 *stderr_pipe_out,
                                       GError             **error);

SPAWN_AVAILABLE_IN_0_2
SpawnChild  *spawn_child_ref (SpawnChild *child);
SPAWN_AVAILABLE_IN_0_2
void         spawn_child_unref (SpawnChild *child);
SPAWN_AVAILABLE_IN_0_2
GPid         spawn_child_get_pid (SpawnChild *child);
SPAWN_AVAILABLE_IN_0_2
int          spawn_child_get_fd (SpawnChild *child);
SPAWN_AVAILABLE_IN_0_2
SpawnBackend spawn_child_get_backend (SpawnChild *child);
SPAWN_AVAILABLE_IN_0_2
gboolean     spawn_child_send_signal (SpawnChild *child, int signum, GError **error);
SPAWN_AVAILABLE_IN_0_3
gboolean     spawn_child_send_signal_to_group (SpawnChild *child, int signum,
                                               GError **error);
SPAWN_AVAILABLE_IN_0_2
gboolean     spawn_child_wait (SpawnChild *child, SpawnExitInfo *info,
                               GCancellable *cancellable, GError **error);
SPAWN_AVAILABLE_IN_0_2
void         spawn_child_wait_async (SpawnChild *child, GCancellable *cancellable,
                                     GAsyncReadyCallback callback,
                                     gpointer user_data);
SPAWN_AVAILABLE_IN_0_2
gboolean     spawn_child_wait_finish (SpawnChild *child, GAsyncResult *result,
                                      SpawnExitInfo *info, GError **error);

/**
 * SpawnChildHandle:
 *
 * A #GObject that holds a #SpawnChild: the source object of
 * [method@Spawn.Child.wait_async]'s result, so that a callback can finish
 * the wait from the source object it is given, as GIO's callbacks do
 * (`src.wait_finish (res)` in Python and JavaScript).  A #SpawnChild is a
 * boxed type, and a #GTask's source object must be a #GObject.
 *
 * Since: 0.3
 */
#define SPAWN_TYPE_CHILD_HANDLE (spawn_child_handle_get_type ())
/* The macro's first declaration is spawn_child_handle_get_type()'s. */
SPAWN_AVAILABLE_IN_0_3
G_DECLARE_FINAL_TYPE (SpawnChildHandle, spawn_child_handle, SPAWN, CHILD_HANDLE, GObject)

SPAWN_AVAILABLE_IN_0_3
SpawnChild *spawn_child_handle_get_child (SpawnChildHandle *self);
SPAWN_AVAILABLE_IN_0_3
gboolean    spawn_child_handle_wait_finish (SpawnChildHandle *self,
                                            GAsyncResult *result,
                                            SpawnExitInfo *info, GError **error);

SPAWN_AVAILABLE_IN_0_2
GSource *spawn_child_watch_source_new (SpawnChild *child);
SPAWN_AVAILABLE_IN_0_2
guint    spawn_child_watch_add (SpawnChild *child, SpawnChildWatchFunc function,
                                gpointer data);
SPAWN_AVAILABLE_IN_0_2
guint    spawn_child_watch_add_full (int priority, SpawnChild *child,
                                     SpawnChildWatchFunc function, gpointer data,
                                     GDestroyNotify notify);
SPAWN_AVAILABLE_IN_0_3
guint    spawn_child_watch_add_shared (int priority, SpawnChild *child,
                                       SpawnChildWatchFunc function, gpointer data,
                                       GDestroyNotify notify);
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_child_watch_remove_shared (guint id);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SpawnChild, spawn_child_unref)

G_END_DECLS
