/* spawn.c - the public edge: spawn_async_fd(), SpawnChild, backends, errors
 *
 * Backends (backend-*.c) return -errno; this file turns that into a GError
 * once.  The backend is chosen at first use and cached: forced through
 * spawn_set_backend() or LIBSPAWN_BACKEND, else the first of clonefd,
 * pidfd, sigchld whose probe says it works on this kernel.
 */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined (__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SPAWN_ASAN_UNPOISON(p, n) __asan_unpoison_memory_region ((p), (n))
#elif defined (__has_feature)
#if __has_feature (address_sanitizer)
#include <sanitizer/asan_interface.h>
#define SPAWN_ASAN_UNPOISON(p, n) __asan_unpoison_memory_region ((p), (n))
#endif
#endif
#ifndef SPAWN_ASAN_UNPOISON
#define SPAWN_ASAN_UNPOISON(p, n) ((void) 0)
#endif

/**
 * spawn_error_quark:
 *
 * The error domain of #SpawnError, %SPAWN_ERROR.
 *
 * Returns: the #GQuark of the domain
 */
G_DEFINE_QUARK (spawn-error-quark, spawn_error)

/* Room for the child between clone and exec, child_setup included.  Only
 * address space: pages are touched (and cost) only as the child uses them. */
#define CHILD_STACK_SIZE (1024 * 1024)
/* PROT_NONE below the stack, which grows down: running off its end faults
 * in the child (SIGSEGV) instead of writing into our memory, which the
 * child shares.  Several pages, so that a frame of up to 64 KiB that is
 * not probed (no -fstack-clash-protection) still lands in the guard. */
#define CHILD_STACK_GUARD (64 * 1024)

static const SpawnBackendOps * const backends[] = {
  &_spawn_backend_clonefd,
  &_spawn_backend_pidfd,
  &_spawn_backend_sigchld,
};

/* Probe results, cached only when they are answers about the kernel. */
enum { PROBE_UNKNOWN, PROBE_YES, PROBE_NO };
static gint probed[G_N_ELEMENTS (backends)];
/* The backend in use, as a SpawnBackend; AUTO until decided. */
static gint chosen = SPAWN_BACKEND_AUTO;
static GMutex choose_lock;
/* Whether each backend's kernel kill-on-close works here, same states. */
static gint probed_kill_on_close[G_N_ELEMENTS (backends)];

static int
error_code (int errnum)
{
  switch (errnum)
    {
    case ENOENT: return SPAWN_ERROR_NOENT;
    case EACCES: return SPAWN_ERROR_ACCES;
    case EPERM: return SPAWN_ERROR_PERM;
    case ENOEXEC: return SPAWN_ERROR_NOEXEC;
    case E2BIG: return SPAWN_ERROR_TOO_BIG;
    case ENOTDIR: return SPAWN_ERROR_NOTDIR;
    case EISDIR: return SPAWN_ERROR_ISDIR;
    case ELOOP: return SPAWN_ERROR_LOOP;
    case ENAMETOOLONG: return SPAWN_ERROR_NAMETOOLONG;
    case ETXTBSY: return SPAWN_ERROR_TXTBSY;
    case ELIBBAD: return SPAWN_ERROR_LIBBAD;
    case ENOMEM: return SPAWN_ERROR_NOMEM;
    case EMFILE: return SPAWN_ERROR_MFILE;
    case ENFILE: return SPAWN_ERROR_NFILE;
    case EAGAIN: return SPAWN_ERROR_AGAIN;
    case EINVAL: return SPAWN_ERROR_INVAL;
    case ESRCH: return SPAWN_ERROR_SRCH;
    case ENOSYS: return SPAWN_ERROR_NOSYS;
    case ECHILD: return SPAWN_ERROR_STATUS_LOST;
    default: return SPAWN_ERROR_FAILED;
    }
}

GError *
_spawn_error_new (int errnum, const char *format, ...)
{
  va_list ap;
  char *msg;
  GError *error;

  va_start (ap, format);
  msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  error = g_error_new (SPAWN_ERROR, error_code (errnum), "%s: %s", msg,
                       errnum == ECHILD
                         ? "exit status lost: reaped by someone else"
                         : g_strerror (errnum));
  g_free (msg);
  return error;
}

/**
 * spawn_backend_to_string:
 * @backend: a backend
 *
 * The backend's name, as the `LIBSPAWN_BACKEND` environment variable takes
 * it, for messages and logs.
 *
 * Returns: (nullable): "clonefd", "pidfd", "sigchld" or "auto"; %NULL for a
 *   value that is no backend
 */
const char *
spawn_backend_to_string (SpawnBackend backend)
{
  gsize i;

  if (backend == SPAWN_BACKEND_AUTO)
    return "auto";
  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    if (backends[i]->kind == backend)
      return backends[i]->name;
  return NULL;
}

static gsize
backend_index (SpawnBackend backend)
{
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    if (backends[i]->kind == backend)
      return i;
  g_assert_not_reached ();
}

/* Probe until there is an answer: 0 available, -ENOSYS not on this
 * kernel (both cached), or another -errno when the probe itself failed
 * (EMFILE, ENFILE, EAGAIN, ENOMEM: a full fd table, the process limit,
 * memory pressure), which is not cached: the next call probes again. */
static int
probe_backend (gsize i)
{
  int state = g_atomic_int_get (&probed[i]);
  int err;

  if (state == PROBE_UNKNOWN)
    {
      err = backends[i]->probe ();
      if (err != 0 && err != -ENOSYS && err != -EINVAL && err != -EPERM)
        {
          g_debug ("backend %s: probe failed, will retry: %s",
                   backends[i]->name, g_strerror (-err));
          return err;
        }
      state = err == 0 ? PROBE_YES : PROBE_NO;
      g_debug ("backend %s: %s", backends[i]->name,
               err == 0 ? "available" : g_strerror (-err));
      g_atomic_int_set (&probed[i], state);
    }
  return state == PROBE_YES ? 0 : -ENOSYS;
}

/* 0: the kernel kills @ops's children when their fd goes; -ENOSYS: not
 * here (or LIBSPAWN_KILL_ON_CLOSE=pdeathsig forbids it, for tests), so
 * PR_SET_PDEATHSIG it is; another -errno: the probe failed this time. */
static int
probe_kill_on_close (const SpawnBackendOps *ops)
{
  gsize i = backend_index (ops->kind);
  int state = g_atomic_int_get (&probed_kill_on_close[i]);
  int err;

  if (state == PROBE_UNKNOWN)
    {
      if (ops->probe_kill_on_close == NULL ||
          g_strcmp0 (g_getenv ("LIBSPAWN_KILL_ON_CLOSE"), "pdeathsig") == 0)
        err = -ENOSYS;
      else
        err = ops->probe_kill_on_close ();
      if (err != 0 && err != -ENOSYS && err != -EINVAL && err != -EPERM)
        return err;
      state = err == 0 ? PROBE_YES : PROBE_NO;
      g_debug ("backend %s: kill-on-close by %s", ops->name,
               err == 0 ? "the kernel" : "PR_SET_PDEATHSIG");
      g_atomic_int_set (&probed_kill_on_close[i], state);
    }
  return state == PROBE_YES ? 0 : -ENOSYS;
}

static gboolean
available (gsize i)
{
  return probe_backend (i) == 0;
}

/**
 * spawn_backend_is_available:
 * @backend: a backend other than %SPAWN_BACKEND_AUTO
 *
 * Whether @backend works on the running kernel.  The answer is probed once
 * and cached; a probe that could not run (fd table full, process limit,
 * out of memory) gives %FALSE this time and is tried again next time.
 *
 * Returns: %TRUE if spawn_set_backend() would accept @backend
 */
gboolean
spawn_backend_is_available (SpawnBackend backend)
{
  g_return_val_if_fail (backend != SPAWN_BACKEND_AUTO, FALSE);
  g_return_val_if_fail (spawn_backend_to_string (backend) != NULL, FALSE);

  return available (backend_index (backend));
}

/* A probe that failed for a passing reason is an error for this call,
 * never a fallback: nothing is chosen, and the next call probes again. */
static gboolean
choose (SpawnBackend want, const char *why, GError **error)
{
  gsize i;
  int err;

  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      if (want != SPAWN_BACKEND_AUTO && backends[i]->kind != want)
        continue;
      err = probe_backend (i);
      if (err == 0)
        {
          g_atomic_int_set (&chosen, backends[i]->kind);
          return TRUE;
        }
      if (err != -ENOSYS)
        {
          g_propagate_error (error,
                             _spawn_error_new (-err, "Cannot probe backend %s",
                                               backends[i]->name));
          return FALSE;
        }
      if (want != SPAWN_BACKEND_AUTO)
        {
          g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_NOSYS,
                       "Backend %s (%s) is not available on this kernel",
                       spawn_backend_to_string (want), why);
          return FALSE;
        }
    }
  g_assert_not_reached (); /* sigchld is always there */
}

/* The backend for the next spawn, deciding it on first use. */
static const SpawnBackendOps *
current_ops (GError **error)
{
  const char *env;
  SpawnBackend want = SPAWN_BACKEND_AUTO;
  gboolean ok = TRUE;
  gsize i;

  if (g_atomic_int_get (&chosen) == SPAWN_BACKEND_AUTO)
    {
      g_mutex_lock (&choose_lock);
      if (g_atomic_int_get (&chosen) == SPAWN_BACKEND_AUTO)
        {
          env = g_getenv ("LIBSPAWN_BACKEND");
          if (env != NULL && *env != '\0' && g_strcmp0 (env, "auto") != 0)
            {
              for (i = 0; i < G_N_ELEMENTS (backends); i++)
                if (g_str_equal (env, backends[i]->name))
                  want = backends[i]->kind;
              if (want == SPAWN_BACKEND_AUTO)
                {
                  g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                               "LIBSPAWN_BACKEND=%s: not one of clonefd, "
                               "pidfd, sigchld, auto", env);
                  ok = FALSE;
                }
            }
          if (ok)
            ok = choose (want, "forced by LIBSPAWN_BACKEND", error);
        }
      g_mutex_unlock (&choose_lock);
      if (!ok)
        return NULL;
    }
  return backends[backend_index (g_atomic_int_get (&chosen))];
}

/**
 * spawn_get_backend:
 *
 * The backend new children are started with, chosen now if it has not been
 * yet.  If `LIBSPAWN_BACKEND` names a backend that is not available, or
 * a probe could not run (fd table full, process limit), this returns
 * %SPAWN_BACKEND_AUTO and spawn_async_fd() fails with the reason.
 *
 * Returns: the backend in use
 */
SpawnBackend
spawn_get_backend (void)
{
  if (current_ops (NULL) == NULL)
    return SPAWN_BACKEND_AUTO;
  return g_atomic_int_get (&chosen);
}

/**
 * spawn_set_backend:
 * @backend: the backend to use from now on, or %SPAWN_BACKEND_AUTO for the
 *   best one available
 * @error: return location for a #GError
 *
 * Forces a backend for the children started from now on (those already
 * running keep theirs).  Overrides `LIBSPAWN_BACKEND`.  A backend that is not
 * available on this kernel is refused with %SPAWN_ERROR_NOSYS; nothing falls
 * back silently.  A probe that could not run fails with its own error
 * (%SPAWN_ERROR_MFILE, %SPAWN_ERROR_AGAIN, %SPAWN_ERROR_NOMEM...) and is
 * tried again by the next call.
 *
 * Returns: %TRUE if @backend is now in use
 */
gboolean
spawn_set_backend (SpawnBackend backend, GError **error)
{
  gboolean ok;

  g_return_val_if_fail (spawn_backend_to_string (backend) != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&choose_lock);
  ok = choose (backend, "forced by spawn_set_backend()", error);
  g_mutex_unlock (&choose_lock);
  return ok;
}

void
_spawn_exit_info_from_code (SpawnExitInfo *info, int code, int status)
{
  memset (info, 0, sizeof (*info));
  info->status = status;
  switch (code)
    {
    case CLD_KILLED:
      info->kind = SPAWN_EXIT_KILLED;
      break;
    case CLD_DUMPED:
      info->kind = SPAWN_EXIT_DUMPED;
      break;
    default:
      info->kind = SPAWN_EXIT_EXITED;
      break;
    }
}

void
_spawn_exit_info_from_wait_status (SpawnExitInfo *info, int wait_status,
                                   const struct rusage *ru)
{
  if (WIFSIGNALED (wait_status))
    _spawn_exit_info_from_code (info,
                                WCOREDUMP (wait_status) ? CLD_DUMPED : CLD_KILLED,
                                WTERMSIG (wait_status));
  else
    _spawn_exit_info_from_code (info, CLD_EXITED, WEXITSTATUS (wait_status));
  if (ru != NULL)
    _spawn_exit_info_set_rusage (info, ru);
}

void
_spawn_exit_info_set_rusage (SpawnExitInfo *info, const struct rusage *ru)
{
  info->utime_usec = ru->ru_utime.tv_sec * G_USEC_PER_SEC + ru->ru_utime.tv_usec;
  info->stime_usec = ru->ru_stime.tv_sec * G_USEC_PER_SEC + ru->ru_stime.tv_usec;
  info->have_times = TRUE;
}

G_DEFINE_BOXED_TYPE (SpawnExitInfo, spawn_exit_info, spawn_exit_info_copy, spawn_exit_info_free)

/**
 * spawn_exit_info_copy:
 * @info: how a child ended
 *
 * Copies @info, for a binding or a closure that keeps it beyond the
 * callback.
 *
 * Returns: (transfer full): a copy of @info, for spawn_exit_info_free()
 */
SpawnExitInfo *
spawn_exit_info_copy (const SpawnExitInfo *info)
{
  g_return_val_if_fail (info != NULL, NULL);
  return g_memdup2 (info, sizeof *info);
}

/**
 * spawn_exit_info_free:
 * @info: (transfer full): a copy from spawn_exit_info_copy()
 *
 * Frees a copy made by spawn_exit_info_copy().
 */
void
spawn_exit_info_free (SpawnExitInfo *info)
{
  g_free (info);
}

/**
 * spawn_exit_info_to_wait_status:
 * @info: how a child ended
 *
 * The status waitpid() would have given, for code that passes it on to
 * g_spawn_check_wait_status() or tests it with WIFEXITED() and friends.
 *
 * Returns: a waitpid()-style status
 */
int
spawn_exit_info_to_wait_status (const SpawnExitInfo *info)
{
  g_return_val_if_fail (info != NULL, 0);

  switch (info->kind)
    {
    case SPAWN_EXIT_KILLED:
      return info->status & 0x7f;
    case SPAWN_EXIT_DUMPED:
      return (info->status & 0x7f) | 0x80;
    case SPAWN_EXIT_EXITED:
    default:
      return (info->status & 0xff) << 8;
    }
}

/* The child's stack: mapped, with a guard below it, never a heap block.
 * Returns its lowest usable address, or NULL with errno set. */
static void *
child_stack_new (void)
{
  char *base;

  base = mmap (NULL, CHILD_STACK_GUARD + CHILD_STACK_SIZE, PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return NULL;
  if (mprotect (base + CHILD_STACK_GUARD, CHILD_STACK_SIZE,
                PROT_READ | PROT_WRITE) < 0)
    {
      int saved_errno = errno;
      munmap (base, CHILD_STACK_GUARD + CHILD_STACK_SIZE);
      errno = saved_errno;
      return NULL;
    }
  /* The child's frames poison ASan's shadow of this range, which we share
   * (CLONE_VM), and exec never unwinds them: a new mapping at the same
   * address would inherit the stale poison. */
  SPAWN_ASAN_UNPOISON (base + CHILD_STACK_GUARD, CHILD_STACK_SIZE);
  return base + CHILD_STACK_GUARD;
}

/* CLONE_VFORK: by the time start() returns the child has exec'd or exited
 * and no longer runs on this stack. */
static void
child_stack_free (void *stack)
{
  if (stack != NULL)
    munmap ((char *) stack - CHILD_STACK_GUARD,
            CHILD_STACK_GUARD + CHILD_STACK_SIZE);
}

static void
close_pair (int p[2])
{
  if (p[0] >= 0)
    close (p[0]);
  if (p[1] >= 0)
    close (p[1]);
  p[0] = p[1] = -1;
}

int
_spawn_fd_above_stdio (int fd)
{
  int moved;

  if (fd < 0 || fd > 2)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    return fd;
  close (fd);
  return moved;
}

static int
open_pipe (int p[2], gboolean want)
{
  p[0] = p[1] = -1;
  if (!want)
    return 0;
  if (pipe2 (p, O_CLOEXEC) < 0)
    return -errno;
  p[0] = _spawn_fd_above_stdio (p[0]);
  p[1] = _spawn_fd_above_stdio (p[1]);
  return 0;
}

/* fds[i] for the child: a pipe end, a caller's fd, /dev/null or ours. */
static int
child_stdio (int pipe_end, int fd, gboolean to_null, gboolean inherit)
{
  if (pipe_end >= 0)
    return pipe_end;
  if (fd >= 0)
    return fd;
  if (to_null)
    return SPAWN_FD_NULL;
  return inherit ? SPAWN_FD_INHERIT : SPAWN_FD_NULL;
}

static const char *
step_name (SpawnChildStep step)
{
  switch (step)
    {
    case SPAWN_CHILD_STEP_CHDIR:
      return "Failed to change to directory";
    case SPAWN_CHILD_STEP_FDS:
      return "Failed to set up file descriptors for";
    case SPAWN_CHILD_STEP_KILL_ON_CLOSE:
      return "Failed to set up kill-on-close for";
    case SPAWN_CHILD_STEP_EXEC:
    default:
      return "Failed to execute child process";
    }
}

#define INHERITS_OR_NULL_STDIN (G_SPAWN_STDIN_FROM_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDIN)
#define INHERITS_OR_NULL_STDOUT (G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDOUT)
#define INHERITS_OR_NULL_STDERR (G_SPAWN_STDERR_TO_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDERR)

static int *
no_pipe (int *pipe_out)
{
  if (pipe_out != NULL)
    *pipe_out = -1;
  return NULL;
}

/**
 * spawn_async_fd:
 * @working_directory: (nullable): the child's working directory, or %NULL
 *   for ours
 * @argv: (array zero-terminated=1): the program and its arguments;
 *   non-empty
 * @envp: (array zero-terminated=1) (nullable): the child's environment, or
 *   %NULL for ours
 * @flags: #GSpawnFlags: %G_SPAWN_SEARCH_PATH, %G_SPAWN_SEARCH_PATH_FROM_ENVP,
 *   %G_SPAWN_FILE_AND_ARGV_ZERO, %G_SPAWN_LEAVE_DESCRIPTORS_OPEN,
 *   %G_SPAWN_STDOUT_TO_DEV_NULL, %G_SPAWN_STDERR_TO_DEV_NULL,
 *   %G_SPAWN_CHILD_INHERITS_STDIN, %G_SPAWN_STDIN_FROM_DEV_NULL,
 *   %G_SPAWN_CHILD_INHERITS_STDOUT, %G_SPAWN_CHILD_INHERITS_STDERR mean what
 *   they mean for g_spawn_async_with_pipes_and_fds(); %G_SPAWN_DO_NOT_REAP_CHILD
 *   and %G_SPAWN_CLOEXEC_PIPES change nothing (the child is always watched
 *   through its handle; our pipe ends are always close-on-exec)
 * @child_setup: (scope call) (nullable): called in the child just before
 *   exec.  It shares our memory and runs on a 1 MiB stack of its own
 *   (with a guard below: overflowing it kills the child with SIGSEGV,
 *   which the watch reports, and leaves us intact) while the spawning
 *   thread waits: it must be async-signal-safe (no malloc, no locks, no
 *   stdio; signal-safety(7)) and must not write to memory we use
 * @user_data: (closure child_setup): data for @child_setup
 * @stdin_fd: fd to become the child's stdin, or -1
 * @stdout_fd: fd to become the child's stdout, or -1
 * @stderr_fd: fd to become the child's stderr, or -1
 * @source_fds: (array length=n_fds) (nullable): our fds to pass on
 * @target_fds: (array length=n_fds) (nullable): the numbers they get in the
 *   child; all distinct and >= 3
 * @n_fds: length of @source_fds and @target_fds
 * @stdin_pipe_out: (out) (optional): our (write) end of a new stdin pipe
 * @stdout_pipe_out: (out) (optional): our (read) end of a new stdout pipe
 * @stderr_pipe_out: (out) (optional): our (read) end of a new stderr pipe
 * @error: return location for a #GError
 *
 * Starts a program and returns a handle to it, with the program already
 * running: a failure to exec (no such program, not executable, bad
 * interpreter, argument list too long, bad working directory) is reported
 * here, with an errno-shaped #SpawnError naming the program, and leaves no
 * child, zombie or fd behind.
 *
 * The child gets its stdio and the mapped fds and nothing else of ours
 * (unless %G_SPAWN_LEAVE_DESCRIPTORS_OPEN).  Watch it with
 * spawn_child_watch_add(); drop the handle whenever you like: a child
 * nobody watches any more is still reaped when it ends.
 *
 * Thread-safe.  The child is started with CLONE_VM | CLONE_VFORK, so the
 * cost does not grow with the size of the parent.
 *
 * Returns: (transfer full) (nullable): the child, or %NULL with @error set
 */
SpawnChild *
spawn_async_fd (const char          *working_directory,
                const char * const  *argv,
                const char * const  *envp,
                GSpawnFlags          flags,
                GSpawnChildSetupFunc child_setup,
                gpointer             user_data,
                int                  stdin_fd,
                int                  stdout_fd,
                int                  stderr_fd,
                const int           *source_fds,
                const int           *target_fds,
                gsize                n_fds,
                int                 *stdin_pipe_out,
                int                 *stdout_pipe_out,
                int                 *stderr_pipe_out,
                GError             **error)
{
  return spawn_async_fd_full (working_directory, argv, envp, flags,
                              child_setup, user_data, stdin_fd, stdout_fd,
                              stderr_fd, source_fds, target_fds, n_fds,
                              stdin_pipe_out, stdout_pipe_out,
                              stderr_pipe_out, SPAWN_CHILD_FLAGS_NONE, error);
}

/**
 * spawn_async_fd_full:
 * @working_directory: (nullable): as for spawn_async_fd()
 * @argv: (array zero-terminated=1): as for spawn_async_fd()
 * @envp: (array zero-terminated=1) (nullable): as for spawn_async_fd()
 * @flags: as for spawn_async_fd()
 * @child_setup: (scope call) (nullable): as for spawn_async_fd()
 * @user_data: (closure child_setup): data for @child_setup
 * @stdin_fd: as for spawn_async_fd()
 * @stdout_fd: as for spawn_async_fd()
 * @stderr_fd: as for spawn_async_fd()
 * @source_fds: (array length=n_fds) (nullable): as for spawn_async_fd()
 * @target_fds: (array length=n_fds) (nullable): as for spawn_async_fd()
 * @n_fds: length of @source_fds and @target_fds
 * @stdin_pipe_out: (out) (optional): as for spawn_async_fd()
 * @stdout_pipe_out: (out) (optional): as for spawn_async_fd()
 * @stderr_pipe_out: (out) (optional): as for spawn_async_fd()
 * @child_flags: #SpawnChildFlags, for what #GSpawnFlags cannot say
 * @error: return location for a #GError
 *
 * spawn_async_fd() with #SpawnChildFlags.
 *
 * With %SPAWN_CHILD_KILL_ON_CLOSE the child is killed with SIGKILL when the
 * last #SpawnChild reference goes while it runs, and when the application
 * dies, however it dies.  With the clonefd backend on a kernel that has
 * CLONE_FD_AUTOKILL the kernel does it when the last copy of the clone fd
 * is closed (a fork() of the application that has not exec'd keeps it
 * alive).  Elsewhere the child gets PR_SET_PDEATHSIG(SIGKILL) before exec,
 * from a thread of the library that never exits (so a spawning thread that
 * ends does not take the child with it); a setuid, setgid or
 * file-capabilities program loses that setting at exec and survives the
 * application.  Descendants of the child are never killed.  See
 * docs/api.md.
 *
 * Returns: (transfer full) (nullable): the child, or %NULL with @error set
 */
SpawnChild *
spawn_async_fd_full (const char          *working_directory,
                     const char * const  *argv,
                     const char * const  *envp,
                     GSpawnFlags          flags,
                     GSpawnChildSetupFunc child_setup,
                     gpointer             user_data,
                     int                  stdin_fd,
                     int                  stdout_fd,
                     int                  stderr_fd,
                     const int           *source_fds,
                     const int           *target_fds,
                     gsize                n_fds,
                     int                 *stdin_pipe_out,
                     int                 *stdout_pipe_out,
                     int                 *stderr_pipe_out,
                     SpawnChildFlags      child_flags,
                     GError             **error)
{
  const SpawnBackendOps *ops;
  SpawnLaunch launch = { 0 };
  SpawnChild *child = NULL;
  int in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
  SpawnChildReport report = { 0, 0 };
  GError *launcher_error = NULL;
  const char *path = NULL;
  char **shell_argv = NULL;
  int *lifted = NULL;
  void *stack = NULL;
  sigset_t all;
  gsize i, j, argc;
  int saved_errno = errno;
  int by_kernel = -ENOSYS;
  int err;

  /* GLib's preconditions, as g_spawn_async_with_pipes_and_fds() has them. */
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);
  g_return_val_if_fail ((flags & INHERITS_OR_NULL_STDIN) != INHERITS_OR_NULL_STDIN, NULL);
  g_return_val_if_fail ((flags & INHERITS_OR_NULL_STDOUT) != INHERITS_OR_NULL_STDOUT, NULL);
  g_return_val_if_fail ((flags & INHERITS_OR_NULL_STDERR) != INHERITS_OR_NULL_STDERR, NULL);
  g_return_val_if_fail (stdin_pipe_out == NULL || stdin_fd < 0, NULL);
  g_return_val_if_fail (stdout_pipe_out == NULL || stdout_fd < 0, NULL);
  g_return_val_if_fail (stderr_pipe_out == NULL || stderr_fd < 0, NULL);
  g_return_val_if_fail (n_fds == 0 || (source_fds != NULL && target_fds != NULL), NULL);
  g_return_val_if_fail ((child_flags & ~SPAWN_CHILD_KILL_ON_CLOSE) == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* As in GLib, a flag that says where a stream goes beats a pipe asked
   * for it: no pipe is made (GLib leaves *pipe_out alone; we set -1). */
  if (flags & INHERITS_OR_NULL_STDIN)
    stdin_pipe_out = no_pipe (stdin_pipe_out);
  if (flags & INHERITS_OR_NULL_STDOUT)
    stdout_pipe_out = no_pipe (stdout_pipe_out);
  if (flags & INHERITS_OR_NULL_STDERR)
    stderr_pipe_out = no_pipe (stderr_pipe_out);

  /* A bad fd mapping is a GError, as GLib's are, not a critical.  Checked
   * before we open anything: a source fd that is not open now could
   * otherwise become one of our pipes. */
  for (i = 0; i < n_fds; i++)
    {
      if (source_fds[i] < 0 || fcntl (source_fds[i], F_GETFD) < 0)
        {
          g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                       "Invalid source file descriptor %d for “%s”",
                       source_fds[i], argv[0]);
          errno = saved_errno;
          return NULL;
        }
      if (target_fds[i] < 3)
        {
          g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                       "Invalid target file descriptor %d for “%s”: 0, 1 "
                       "and 2 are set by stdin_fd, stdout_fd and stderr_fd",
                       target_fds[i], argv[0]);
          errno = saved_errno;
          return NULL;
        }
      for (j = 0; j < i; j++)
        if (target_fds[i] == target_fds[j])
          {
            g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                         "Target file descriptor %d given twice for “%s”",
                         target_fds[i], argv[0]);
            errno = saved_errno;
            return NULL;
          }
    }

  ops = current_ops (error);
  if (ops == NULL)
    return NULL;
  if (child_flags & SPAWN_CHILD_KILL_ON_CLOSE)
    {
      by_kernel = probe_kill_on_close (ops);
      if (by_kernel != 0 && by_kernel != -ENOSYS)
        {
          g_propagate_error (error,
                             _spawn_error_new (-by_kernel,
                                               "Cannot probe kill-on-close for “%s”",
                                               argv[0]));
          errno = saved_errno;
          return NULL;
        }
    }

  /* Everything the child will need, allocated now: it may not allocate. */
  launch.working_directory = working_directory;
  launch.file = argv[0];
  launch.argv = (char * const *) ((flags & G_SPAWN_FILE_AND_ARGV_ZERO) ? argv + 1 : argv);
  launch.envp = (char * const *) (envp != NULL ? envp : (const char * const *) environ);
  if ((flags & (G_SPAWN_SEARCH_PATH | G_SPAWN_SEARCH_PATH_FROM_ENVP)) &&
      strchr (launch.file, '/') == NULL)
    {
      if (flags & G_SPAWN_SEARCH_PATH_FROM_ENVP)
        path = g_environ_getenv ((char **) envp, "PATH");
      if (path == NULL && (flags & G_SPAWN_SEARCH_PATH))
        path = g_getenv ("PATH");
      /* GLib's default, "." last (libc puts it first). */
      if (path == NULL)
        path = "/bin:/usr/bin:.";
      launch.search_path = path;
      launch.path_buffer = g_malloc (strlen (path) + strlen (launch.file) + 2);
    }
  for (argc = 0; launch.argv[argc] != NULL; argc++)
    ;
  /* "/bin/sh", the file, argv[1..argc-1], NULL: argc + 2 slots, but 3
   * when G_SPAWN_FILE_AND_ARGV_ZERO leaves argv empty (argc 0). */
  shell_argv = g_new0 (char *, MAX (argc, 1) + 2);
  shell_argv[0] = (char *) "/bin/sh";
  for (i = 1; i < argc; i++)
    shell_argv[i + 1] = launch.argv[i];
  launch.shell_argv = shell_argv;
  launch.close_descriptors = !(flags & G_SPAWN_LEAVE_DESCRIPTORS_OPEN);
  launch.source_fds = source_fds;
  launch.target_fds = target_fds;
  launch.n_fds = n_fds;
  lifted = g_new (int, n_fds + 1);
  launch.lifted_fds = lifted;
  for (i = 0; i < n_fds; i++)
    launch.max_target_fd = MAX (launch.max_target_fd, target_fds[i]);
  launch.child_setup = child_setup;
  launch.child_setup_data = user_data;
  stack = child_stack_new ();
  if (stack == NULL)
    {
      err = -errno;
      goto out;
    }

  if ((err = open_pipe (in_pipe, stdin_pipe_out != NULL)) < 0 ||
      (err = open_pipe (out_pipe, stdout_pipe_out != NULL)) < 0 ||
      (err = open_pipe (err_pipe, stderr_pipe_out != NULL)) < 0)
    goto out;
  launch.fds[0] = child_stdio (in_pipe[0], stdin_fd,
                               flags & G_SPAWN_STDIN_FROM_DEV_NULL,
                               flags & G_SPAWN_CHILD_INHERITS_STDIN);
  launch.fds[1] = child_stdio (out_pipe[1], stdout_fd,
                               flags & G_SPAWN_STDOUT_TO_DEV_NULL, TRUE);
  launch.fds[2] = child_stdio (err_pipe[1], stderr_fd,
                               flags & G_SPAWN_STDERR_TO_DEV_NULL, TRUE);
  launch.report = &report;

  child = g_new0 (SpawnChild, 1);
  child->ref_count = 1;
  child->ops = ops;
  child->fd = -1;
  child->kill_on_close = (child_flags & SPAWN_CHILD_KILL_ON_CLOSE) != 0;
  g_mutex_init (&child->lock);

  /* No handler of ours may run in the child; it restores this mask. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &launch.parent_mask);
  if (child->kill_on_close && by_kernel == 0)
    launch.kernel_kill_on_close = TRUE;
  if (child->kill_on_close && by_kernel != 0)
    err = _spawn_launcher_start (ops, child, &launch, stack, CHILD_STACK_SIZE,
                                 &launcher_error);
  else
    err = ops->start (child, &launch, stack, CHILD_STACK_SIZE);
  pthread_sigmask (SIG_SETMASK, &launch.parent_mask, NULL);
  if (launcher_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&launcher_error));
      err = 0;
      g_clear_pointer (&child, spawn_child_unref);
      goto out;
    }
  if (err < 0)
    goto out;
  /* A pidfd or clone fd in 0-2 would become a later child's stdio. */
  child->fd = _spawn_fd_above_stdio (child->fd);

  /* CLONE_VFORK: the child has exec'd or exited by now, and said which. */
  if (report.errnum != 0)
    {
      ops->discard (child);
      g_atomic_int_set (&child->collected, TRUE); /* reaped by discard() */
      g_propagate_error (error,
                         _spawn_error_new (report.errnum, "%s “%s”",
                                           step_name (report.step),
                                           report.step == SPAWN_CHILD_STEP_CHDIR
                                             ? working_directory : argv[0]));
      err = 0;
      g_clear_pointer (&child, spawn_child_unref);
      goto out;
    }

  if (stdin_pipe_out != NULL)
    {
      *stdin_pipe_out = in_pipe[1];
      in_pipe[1] = -1;
    }
  if (stdout_pipe_out != NULL)
    {
      *stdout_pipe_out = out_pipe[0];
      out_pipe[0] = -1;
    }
  if (stderr_pipe_out != NULL)
    {
      *stderr_pipe_out = err_pipe[0];
      err_pipe[0] = -1;
    }

out:
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Failed to start “%s”",
                                                  argv[0]));
      g_clear_pointer (&child, spawn_child_unref);
    }
  close_pair (in_pipe);
  close_pair (out_pipe);
  close_pair (err_pipe);
  child_stack_free (stack);
  g_free (lifted);
  g_free (shell_argv);
  g_free (launch.path_buffer);
  errno = saved_errno;
  return child;
}

/**
 * SpawnChild: (ref-func spawn_child_ref) (unref-func spawn_child_unref)
 *
 * A handle to a child started by spawn_async_fd(): its PID, its process
 * fd, and its exit once it has ended.  Reference-counted and thread-safe.
 */
G_DEFINE_BOXED_TYPE (SpawnChild, spawn_child, spawn_child_ref, spawn_child_unref)

/**
 * spawn_child_ref:
 * @child: a child
 *
 * Takes a reference to @child.
 *
 * Returns: (transfer full): @child
 */
SpawnChild *
spawn_child_ref (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, NULL);

  g_atomic_int_inc (&child->ref_count);
  return child;
}

/**
 * spawn_child_unref:
 * @child: (transfer full): a child
 *
 * Drops a reference.  The last one does not wait for the process: a child
 * still running is killed first if it was started with
 * %SPAWN_CHILD_KILL_ON_CLOSE, then handed to a private reaper thread (pidfd and sigchld
 * backends) or left to the kernel (clonefd), so it never becomes a zombie.
 */
void
spawn_child_unref (SpawnChild *child)
{
  g_return_if_fail (child != NULL);

  if (!g_atomic_int_dec_and_test (&child->ref_count))
    return;
  /* Not left to the kernel even where it would do it (clonefd with
   * AUTOKILL): a fork() of the application may share the fd. */
  if (child->pid > 0 && child->kill_on_close &&
      !g_atomic_int_get (&child->collected))
    {
      g_mutex_lock (&child->lock);
      if (!child->collected)
        child->ops->send_signal (child, SIGKILL);
      g_mutex_unlock (&child->lock);
    }
  if (child->pid > 0 && child->ops->needs_reaping &&
      !g_atomic_int_get (&child->collected))
    {
      /* Resurrected with one reference, which the reaper drops. */
      g_atomic_int_set (&child->ref_count, 1);
      _spawn_reaper_adopt (child);
      return;
    }
  if (child->pid > 0)
    child->ops->finalize (child);
  g_mutex_clear (&child->lock);
  g_free (child);
}

/**
 * spawn_child_get_pid:
 * @child: a child
 *
 * The child's process ID.  With the clonefd backend the kernel reaps the
 * child itself, so once it has ended the PID may name another process:
 * use it for display, use the handle to act on the child.
 *
 * Returns: the PID
 */
GPid
spawn_child_get_pid (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, 0);
  return child->pid;
}

/**
 * spawn_child_get_fd:
 * @child: a child
 *
 * The descriptor that turns readable when the child has ended (a clone fd,
 * a pidfd, or an eventfd woken by the SIGCHLD handler).  It belongs to the
 * child: poll it, don't read or close it.
 *
 * Returns: the descriptor
 */
int
spawn_child_get_fd (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, -1);
  return child->fd;
}

/**
 * spawn_child_get_backend:
 * @child: a child
 *
 * Which backend started @child and watches it.
 *
 * Returns: the backend that started @child
 */
SpawnBackend
spawn_child_get_backend (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, SPAWN_BACKEND_AUTO);
  return child->ops->kind;
}

int
_spawn_child_collect (SpawnChild *child)
{
  int err;

  g_mutex_lock (&child->lock);
  if (!child->collected)
    {
      err = child->ops->collect (child, &child->info);
      if (err != -EAGAIN)
        {
          child->collect_error = err;
          g_atomic_int_set (&child->collected, TRUE);
        }
    }
  err = child->collected ? child->collect_error : -EAGAIN;
  g_mutex_unlock (&child->lock);
  return err;
}

/**
 * spawn_child_send_signal:
 * @child: a child
 * @signum: the signal
 * @error: return location for a #GError
 *
 * Sends @signum to the child, never to a process that reused its PID:
 * through the clone fd or the pidfd where the backend has one; with the
 * sigchld backend, only while its PID is still the child's (nobody else
 * reaped it, same start time; see docs/design.md for the windows a
 * waitpid(-1) elsewhere still leaves).
 *
 * Returns: %TRUE if sent; %FALSE with %SPAWN_ERROR_SRCH if the child has
 *   already ended
 */
gboolean
spawn_child_send_signal (SpawnChild *child, int signum, GError **error)
{
  int err = -ESRCH;

  g_return_val_if_fail (child != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&child->lock);
  if (!child->collected)
    err = child->ops->send_signal (child, signum);
  g_mutex_unlock (&child->lock);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot signal process %d",
                                                  (int) child->pid));
      return FALSE;
    }
  return TRUE;
}
