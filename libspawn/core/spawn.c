/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn.c - spawn_async_fd(): from the caller's arguments to a running child
 *
 * In order: check the fd map (before anything is opened, so that a source
 * fd that is not open cannot turn out to be one of our own pipes), take
 * the backend (backend.c), build the child's plan with everything it will
 * need (it may not allocate), open the stdio pipes, start the child with
 * every signal blocked (from the pdeathsig thread for a kill-on-close
 * child the kernel cannot kill), read its report, hand our pipe ends out.
 * One exit: what was opened for the child is closed, the caller's errno
 * is restored, and on failure nothing is left behind.
 */
#include "core-private.h"
#include "job-private.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
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

/* Room for the child between clone and exec, child_setup included.  Only
 * address space: pages are touched (and cost) only as the child uses them. */
#define CHILD_STACK_SIZE (1024 * 1024)
/* PROT_NONE below the stack, which grows down: running off its end faults
 * in the child (SIGSEGV) instead of writing into our memory, which the
 * child shares.  Several pages, so that a frame of up to 64 KiB that is
 * not probed (no -fstack-clash-protection) still lands in the guard. */
#define CHILD_STACK_GUARD (64 * 1024)

/* The child's stack: mapped, with a guard below it, never a heap block.
 * Returns its lowest usable address, or NULL with errno set. */
static void *
child_stack_map (void)
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
  /* Shadow that a mapping unmapped from here before left poisoned. */
  SPAWN_ASAN_UNPOISON (base + CHILD_STACK_GUARD, CHILD_STACK_SIZE);
  return base + CHILD_STACK_GUARD;
}

/* One stack kept from the last spawn for the next, or NULL.  mmap,
 * mprotect and munmap of a stack per spawn were 8 % of the parent's CPU
 * time with thousands of children (perf, the many benchmark).  A spawn
 * takes it with an exchange: one that finds none (another thread's spawn
 * has it, or a child_setup that spawns runs on it) maps its own. */
static gpointer spare_stack;

static void *
child_stack_take (void)
{
  void *stack = g_atomic_pointer_exchange (&spare_stack, NULL);

  return stack != NULL ? stack : child_stack_map ();
}

/* CLONE_VFORK: by the time start() returns the child has exec'd or exited
 * and no longer runs on @stack.  Kept as the spare if there is none, else
 * unmapped. */
static void
child_stack_give_back (void *stack)
{
  if (stack == NULL)
    return;
  /* The child's frames poison ASan's shadow of the range, which we share
   * (CLONE_VM), and exec never unwinds them: the next child on it, or a
   * new mapping at the same address, would inherit the stale poison. */
  SPAWN_ASAN_UNPOISON (stack, CHILD_STACK_SIZE);
  if (!g_atomic_pointer_compare_and_exchange (&spare_stack, NULL, stack))
    munmap ((char *) stack - CHILD_STACK_GUARD,
            CHILD_STACK_GUARD + CHILD_STACK_SIZE);
}

/* Whether children may share our descriptor table until they make their
 * own (base.h, share_fds_below): asked once of a probe child on a stack
 * of ours.  A clone that failed (EAGAIN: a pids limit) is no answer
 * about the kernel and is asked again at the next spawn. */
static gboolean
fd_table_shareable (void)
{
  static int answer;   /* 0: not asked yet; 1: yes; 2: no */
  void *stack;
  int err;

  if (g_atomic_int_get (&answer) != 0)
    return g_atomic_int_get (&answer) == 1;
  stack = child_stack_take ();
  if (stack == NULL)
    return FALSE;
  err = _spawn_fd_table_probe (stack, CHILD_STACK_SIZE);
  child_stack_give_back (stack);
  if (err == -EAGAIN || err == -ENOMEM)
    return FALSE;
  g_debug ("children's descriptor tables: %s",
           err == 0 ? "each its own, copied up to its highest descriptor"
                    : g_strerror (-err));
  g_atomic_int_set (&answer, err == 0 ? 1 : 2);
  return err == 0;
}

/* A word of the kernel's descriptor bitmaps. */
#define FD_TABLE_WORD ((int) sizeof (long) * 8)

/* plan->share_fds_below (base.h): above every descriptor the child uses,
 * its stdio's sources, the fds passed on and the job's cgroup.procs; 0
 * where it may use any (a child_setup, G_SPAWN_LEAVE_DESCRIPTORS_OPEN),
 * where the kernel kills on close (our series refuses CLONE_FILES with
 * CLONE_FD_AUTOKILL, and with 7.1's CLONE_PIDFD_AUTOKILL too the child
 * would hold its own pidfd until exec), or where no child can.
 *
 * Also 0 where the child inherits one of our 0-2 that is closed: the
 * clone's own pidfd or clone fd is allocated in the table the child
 * shares, so it would take that slot and the child would hand itself
 * on as its stdio.  Elsewhere it lands at 3 or above, close-on-exec,
 * and the child's table may hold it until exec: harmless without the
 * kernel's kill-on-close.  (Another thread that closes an inherited 0-2
 * between this check and the clone still races it: the child then gets
 * its own pidfd there, where a plain clone would give it a closed slot.) */
static void
spawn_plan_fd_table (SpawnExecPlan *plan)
{
  int below = 3;
  gsize i;

  plan->share_fds_below = 0;
  if (!plan->close_descriptors || plan->child_setup != NULL ||
      plan->kernel_kill_on_close || !fd_table_shareable ())
    return;
  for (i = 0; i < 3; i++)
    if (plan->fds[i] == SPAWN_FD_INHERIT && fcntl (i, F_GETFD) < 0)
      return;
  for (i = 0; i < 3; i++)
    below = MAX (below, plan->fds[i] + 1);
  for (i = 0; i < plan->n_fds; i++)
    below = MAX (below, plan->source_fds[i] + 1);
  below = MAX (below, plan->cgroup_procs_fd + 1);
  /* A whole word of the kernel's bitmaps: before 5.18 (1c24a186398f,
   * backported to stable) an unshare to a bound inside a word copied the
   * files of that word but not all of their bits, so a descriptor we use
   * could look free.  A table has 64 slots at least anyway. */
  plan->share_fds_below = (below + FD_TABLE_WORD - 1) / FD_TABLE_WORD * FD_TABLE_WORD;
}

/* A bad fd mapping is a GError, as GLib's are, not a critical.  The
 * caller's stdio fds too: one that is not open now could turn out to be
 * one of the pipes we open next, and the child would get our pipe. */
static gboolean
spawn_check_fd_map (const char *argv0, const int stdio[3], const int *source_fds,
                    const int *target_fds, gsize n_fds, GError **error)
{
  static const char * const names[] = { "stdin", "stdout", "stderr" };
  gsize i, j;

  for (i = 0; i < 3; i++)
    if (stdio[i] >= 0 && fcntl (stdio[i], F_GETFD) < 0)
      {
        g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                     "Invalid %s file descriptor %d for “%s”: it is not open",
                     names[i], stdio[i], argv0);
        return FALSE;
      }

  for (i = 0; i < n_fds; i++)
    {
      if (source_fds[i] < 0 || fcntl (source_fds[i], F_GETFD) < 0)
        {
          g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                       "Invalid source file descriptor %d for “%s”",
                       source_fds[i], argv0);
          return FALSE;
        }
      if (target_fds[i] < 3)
        {
          g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                       "Invalid target file descriptor %d for “%s”: 0, 1 "
                       "and 2 are set by stdin_fd, stdout_fd and stderr_fd",
                       target_fds[i], argv0);
          return FALSE;
        }
      for (j = 0; j < i; j++)
        if (target_fds[i] == target_fds[j])
          {
            g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                         "Target file descriptor %d given twice for “%s”",
                         target_fds[i], argv0);
            return FALSE;
          }
    }
  return TRUE;
}

/* With SPAWN_CHILD_KILL_ON_CLOSE: who kills the child, the kernel
 * (*@by_kernel 0) or PR_SET_PDEATHSIG from our thread (-ENOSYS).  FALSE
 * with @error if the probe could not run this time. */
static gboolean
spawn_probe_kill_on_close (const SpawnBackendOps *ops, SpawnChildFlags child_flags,
                           const char *argv0, int *by_kernel, GError **error)
{
  if (!(child_flags & SPAWN_CHILD_KILL_ON_CLOSE))
    return TRUE;
  *by_kernel = _spawn_backend_probe_kill_on_close (ops);
  if (*by_kernel == 0 || *by_kernel == -ENOSYS)
    return TRUE;
  g_propagate_error (error, _spawn_error_new (-*by_kernel,
                                              "Cannot probe kill-on-close for “%s”",
                                              argv0));
  return FALSE;
}

/* Everything the child will need but its stdio, allocated now: between
 * clone and exec it may not allocate.  Undone by spawn_plan_clear(). */
static void
spawn_plan_init (SpawnExecPlan *plan, const char *working_directory,
                 const char * const *argv, const char * const *envp, GSpawnFlags flags,
                 GSpawnChildSetupFunc child_setup, gpointer user_data,
                 const int *source_fds, const int *target_fds, gsize n_fds)
{
  const char *path = NULL;
  gsize i, argc;

  plan->working_directory = working_directory;
  plan->file = argv[0];
  plan->argv = (char * const *) ((flags & G_SPAWN_FILE_AND_ARGV_ZERO) ? argv + 1 : argv);
  plan->envp = (char * const *) (envp != NULL ? envp : (const char * const *) environ);
  if ((flags & (G_SPAWN_SEARCH_PATH | G_SPAWN_SEARCH_PATH_FROM_ENVP)) &&
      strchr (plan->file, '/') == NULL)
    {
      if (flags & G_SPAWN_SEARCH_PATH_FROM_ENVP)
        path = g_environ_getenv ((char **) plan->envp, "PATH");
      if (path == NULL && (flags & G_SPAWN_SEARCH_PATH))
        path = g_getenv ("PATH");
      /* GLib's default, "." last (libc puts it first). */
      if (path == NULL)
        path = "/bin:/usr/bin:.";
      plan->search_path = path;
      plan->path_buffer = g_malloc (strlen (path) + strlen (plan->file) + 2);
    }
  for (argc = 0; plan->argv[argc] != NULL; argc++)
    ;
  /* "/bin/sh", the file, argv[1..argc-1], NULL: argc + 2 slots, but 3
   * when G_SPAWN_FILE_AND_ARGV_ZERO leaves argv empty (argc 0). */
  plan->shell_argv = g_new0 (char *, MAX (argc, 1) + 2);
  plan->shell_argv[0] = (char *) "/bin/sh";
  for (i = 1; i < argc; i++)
    plan->shell_argv[i + 1] = plan->argv[i];
  plan->close_descriptors = !(flags & G_SPAWN_LEAVE_DESCRIPTORS_OPEN);
  plan->source_fds = source_fds;
  plan->target_fds = target_fds;
  plan->n_fds = n_fds;
  plan->lifted_fds = g_new (int, n_fds + 1);
  for (i = 0; i < n_fds; i++)
    plan->max_target_fd = MAX (plan->max_target_fd, target_fds[i]);
  plan->child_setup = child_setup;
  plan->child_setup_data = user_data;
}

static void
spawn_plan_clear (SpawnExecPlan *plan)
{
  g_free (plan->lifted_fds);
  g_free (plan->shell_argv);
  g_free (plan->path_buffer);
}

/* The stdio pipes asked for (*@pipe_out[i] not NULL); -1 elsewhere. */
static int
spawn_stdio_open (int pipes[3][2], int * const pipe_out[3])
{
  int i, err;

  for (i = 0; i < 3; i++)
    if (pipe_out[i] != NULL && (err = _spawn_fd_pipe (pipes[i])) < 0)
      return err;
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

/* What becomes the child's 0, 1 and 2. */
static void
spawn_stdio_plan (SpawnExecPlan *plan, int pipes[3][2], const int fds[3], GSpawnFlags flags)
{
  plan->fds[0] = child_stdio (pipes[0][0], fds[0], flags & G_SPAWN_STDIN_FROM_DEV_NULL,
                              flags & G_SPAWN_CHILD_INHERITS_STDIN);
  plan->fds[1] = child_stdio (pipes[1][1], fds[1], flags & G_SPAWN_STDOUT_TO_DEV_NULL, TRUE);
  plan->fds[2] = child_stdio (pipes[2][1], fds[2], flags & G_SPAWN_STDERR_TO_DEV_NULL, TRUE);
}

/* Our ends (stdin's write end, the others' read ends) to the caller;
 * spawn_stdio_close() closes the rest. */
static void
spawn_stdio_hand_out (int pipes[3][2], int * const pipe_out[3])
{
  int i;

  for (i = 0; i < 3; i++)
    if (pipe_out[i] != NULL)
      {
        int ours = i == 0 ? 1 : 0;

        *pipe_out[i] = pipes[i][ours];
        pipes[i][ours] = -1;
      }
}

static void
spawn_stdio_close (int pipes[3][2])
{
  int i;

  for (i = 0; i < 3; i++)
    _spawn_fd_close_pair (pipes[i]);
}

/* Starts @child on @stack with every signal blocked (no handler of ours
 * may run in the child, which restores plan->parent_mask), from the
 * pdeathsig thread if @pdeathsig.  0 or -errno; an error that says more
 * than an errno (the pdeathsig thread's refusal) is set in @error. */
static int
spawn_start_masked (SpawnChild *child, SpawnExecPlan *plan, void *stack,
                    gboolean pdeathsig, GError **error)
{
  sigset_t all;
  int err;

  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &plan->parent_mask);
  if (pdeathsig)
    err = _spawn_pdeathsig_thread_start (child->ops, child, plan, stack, CHILD_STACK_SIZE,
                                         error);
  else
    err = child->ops->start (child, plan, stack, CHILD_STACK_SIZE);
  pthread_sigmask (SIG_SETMASK, &plan->parent_mask, NULL);
  /* A pidfd or clone fd in 0-2 would become a later child's stdio. */
  if (err == 0)
    child->fd = _spawn_fd_above_stdio (child->fd);
  return err;
}

/* CLONE_VFORK: the child has exec'd or exited by now, and said which.
 * It failed: reap it, and say which step failed, on what. */
static void
spawn_report_failure (SpawnChild *child, const SpawnExecReport *report,
                      const char *working_directory, const char *argv0, GError **error)
{
  child->ops->discard (child);
  g_atomic_int_set (&child->collected, TRUE); /* reaped by discard() */
  g_propagate_error (error, _spawn_error_new_exec (report->step, report->errnum,
                                                   working_directory, argv0));
}

#define INHERITS_OR_NULL_STDIN (G_SPAWN_STDIN_FROM_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDIN)
#define INHERITS_OR_NULL_STDOUT (G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDOUT)
#define INHERITS_OR_NULL_STDERR (G_SPAWN_STDERR_TO_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDERR)

/* As in GLib, a flag that says where a stream goes (@elsewhere) beats a
 * pipe asked for it: no pipe is made (GLib leaves *pipe_out alone; we
 * set -1). */
static int *
spawn_pipe_out (int *pipe_out, gboolean elsewhere)
{
  if (elsewhere && pipe_out != NULL)
    *pipe_out = -1;
  return elsewhere ? NULL : pipe_out;
}

/**
 * spawn_async_fd: (skip)
 * @working_directory: (type filename) (nullable): the child's working
 *   directory, or %NULL for ours
 * @argv: (array zero-terminated=1) (element-type filename): the program and
 *   its arguments; non-empty
 * @envp: (array zero-terminated=1) (element-type filename) (nullable): the
 *   child's environment, or %NULL for ours
 * @flags: #GSpawnFlags: %G_SPAWN_SEARCH_PATH, %G_SPAWN_SEARCH_PATH_FROM_ENVP,
 *   %G_SPAWN_FILE_AND_ARGV_ZERO, %G_SPAWN_LEAVE_DESCRIPTORS_OPEN,
 *   %G_SPAWN_STDOUT_TO_DEV_NULL, %G_SPAWN_STDERR_TO_DEV_NULL,
 *   %G_SPAWN_CHILD_INHERITS_STDIN, %G_SPAWN_STDIN_FROM_DEV_NULL,
 *   %G_SPAWN_CHILD_INHERITS_STDOUT, %G_SPAWN_CHILD_INHERITS_STDERR mean what
 *   they mean for [func@GLib.spawn_async_with_pipes_and_fds]; %G_SPAWN_DO_NOT_REAP_CHILD
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
 * [method@Spawn.Child.watch_add]; drop the handle whenever you like: a child
 * nobody watches any more is still reaped when it ends.
 *
 * Thread-safe.  The child is started with CLONE_VM | CLONE_VFORK, so the
 * cost does not grow with the size of the parent.
 *
 * Not for bindings (skipped in the introspection data; since 0.3): no
 * function of an interpreted language is async-signal-safe, so none can be
 * a @child_setup, and a binding cannot pass %NULL for an out parameter, so
 * it would always get three pipes.  Bindings call
 * [func@Spawn.async_fd_with_pipes], which has no @child_setup and makes only
 * the pipes asked for.
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

/* What a spawn is, as the public functions were given it. */
typedef struct {
  SpawnJob *job;                    /* NULL: none */
  const char *working_directory;
  const char * const *argv;
  const char * const *envp;
  GSpawnFlags flags;
  GSpawnChildSetupFunc child_setup;
  gpointer user_data;
  int fds[3];                       /* stdin_fd, stdout_fd, stderr_fd */
  const int *source_fds;
  const int *target_fds;
  gsize n_fds;
  int *pipe_out[3];                 /* stdin_pipe_out... */
  SpawnChildFlags child_flags;
} SpawnRequest;

static SpawnChild *spawn_start (const SpawnRequest *req, GError **error);

/* Kill-on-close for a job's tree: the kernel's (CLONE_FD_AUTOKILL) and
 * PR_SET_PDEATHSIG reach only the child.  A guardian outside the job, a
 * shell in a session of its own whose stdin is a pipe only we hold, kills
 * the job's cgroup and removes it when that pipe reports EOF: when the job
 * is closed, or when the application dies, however it dies.  Limits: it
 * is killable (by its user, or the OOM killer) like any process; a fork of
 * the application that does not exec holds the pipe open too; and the
 * process-group mode has none (its children still die with us, their
 * descendants do not).  Once per cgroup: the job gives the argv to one
 * spawn at a time. */
static gboolean
spawn_start_guardian (SpawnJob *job, const char *argv0, GError **error)
{
  g_auto (GStrv) argv = _spawn_job_guardian_claim (job);
  SpawnRequest req = { NULL, "/", NULL, NULL,
                       G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                       NULL, NULL, { -1, -1, -1 }, NULL, NULL, 0, { NULL, NULL, NULL },
                       SPAWN_CHILD_NEW_SESSION };
  SpawnChild *guardian;
  GError *local_error = NULL;
  int fd = -1;

  if (argv == NULL)
    return TRUE;
  req.argv = (const char * const *) argv;
  req.pipe_out[0] = &fd;
  guardian = spawn_start (&req, &local_error);
  _spawn_job_set_guardian (job, guardian, fd);
  if (guardian == NULL)
    {
      g_set_error (error, SPAWN_ERROR, local_error->code,
                   "Cannot start the guardian that kills the job of “%s” with the "
                   "application: %s", argv0, local_error->message);
      g_error_free (local_error);
      return FALSE;
    }
  return TRUE;
}

/* GLib's preconditions, as g_spawn_async_with_pipes_and_fds() has them. */
static gboolean
spawn_request_valid (const SpawnRequest *req, GError **error)
{
  g_return_val_if_fail (req->argv != NULL && req->argv[0] != NULL, FALSE);
  g_return_val_if_fail ((req->flags & INHERITS_OR_NULL_STDIN) != INHERITS_OR_NULL_STDIN, FALSE);
  g_return_val_if_fail ((req->flags & INHERITS_OR_NULL_STDOUT) != INHERITS_OR_NULL_STDOUT,
                        FALSE);
  g_return_val_if_fail ((req->flags & INHERITS_OR_NULL_STDERR) != INHERITS_OR_NULL_STDERR,
                        FALSE);
  g_return_val_if_fail (req->pipe_out[0] == NULL || req->fds[0] < 0, FALSE);
  g_return_val_if_fail (req->pipe_out[1] == NULL || req->fds[1] < 0, FALSE);
  g_return_val_if_fail (req->pipe_out[2] == NULL || req->fds[2] < 0, FALSE);
  g_return_val_if_fail (req->n_fds == 0 || (req->source_fds != NULL &&
                                            req->target_fds != NULL), FALSE);
  g_return_val_if_fail ((req->child_flags & ~(SPAWN_CHILD_KILL_ON_CLOSE |
                                              SPAWN_CHILD_NEW_PROCESS_GROUP |
                                              SPAWN_CHILD_NEW_SESSION |
                                              SPAWN_CHILD_CONTROLLING_TERMINAL)) == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return TRUE;
}

/* The clone and exec of a planned spawn: the child, or NULL with @error. */
static SpawnChild *
spawn_start_child (const SpawnRequest *req, const SpawnBackendOps *ops, SpawnExecPlan *plan,
                   int by_kernel, int * const pipe_out[3], GError **error)
{
  int pipes[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
  SpawnExecReport report = { 0, 0 };
  SpawnChild *child = NULL;
  void *stack = child_stack_take ();
  int err;

  plan->report = &report;
  err = stack == NULL ? -errno : spawn_stdio_open (pipes, pipe_out);
  if (err == 0)
    {
      spawn_stdio_plan (plan, pipes, req->fds, req->flags);
      spawn_plan_fd_table (plan);
      child = _spawn_child_new (ops, req->argv[0],
                                (req->child_flags & SPAWN_CHILD_KILL_ON_CLOSE) != 0);
      child->group_leader = plan->new_process_group || plan->new_session;
      err = spawn_start_masked (child, plan, stack, child->kill_on_close && by_kernel != 0,
                                error);
    }
  if (err < 0 && (error == NULL || *error == NULL))
    g_propagate_error (error, _spawn_error_new (-err, "Failed to start “%s”", req->argv[0]));
  else if (err == 0 && report.errnum != 0)
    spawn_report_failure (child, &report, req->working_directory, req->argv[0], error);
  else if (err == 0)
    spawn_stdio_hand_out (pipes, pipe_out);
  if (err < 0 || report.errnum != 0)
    g_clear_pointer (&child, spawn_child_unref);
  spawn_stdio_close (pipes);
  child_stack_give_back (stack);
  plan->report = NULL;
  return child;
}

/* spawn_async_fd_full(), into req->job if not NULL.  A spawn into a job
 * holds a birth from _spawn_job_prepare() to _spawn_job_born(): the job
 * stays in its phase (its cgroup there) until the child is born into it. */
static SpawnChild *
spawn_start (const SpawnRequest *req, GError **error)
{
  SpawnExecPlan plan = { 0 };
  const SpawnBackendOps *ops;
  SpawnChild *child = NULL;
  SpawnChildFlags cf = req->child_flags;
  int *pipe_out[3];
  int saved_errno = errno;
  int by_kernel = -ENOSYS;

  if (!spawn_request_valid (req, error))
    return NULL;
  pipe_out[0] = spawn_pipe_out (req->pipe_out[0], req->flags & INHERITS_OR_NULL_STDIN);
  pipe_out[1] = spawn_pipe_out (req->pipe_out[1], req->flags & INHERITS_OR_NULL_STDOUT);
  pipe_out[2] = spawn_pipe_out (req->pipe_out[2], req->flags & INHERITS_OR_NULL_STDERR);

  if (!spawn_check_fd_map (req->argv[0], req->fds, req->source_fds, req->target_fds,
                           req->n_fds, error) ||
      (ops = _spawn_backend_current (error)) == NULL ||
      !spawn_probe_kill_on_close (ops, cf, req->argv[0], &by_kernel, error))
    goto out;

  spawn_plan_init (&plan, req->working_directory, req->argv, req->envp, req->flags,
                   req->child_setup, req->user_data, req->source_fds, req->target_fds,
                   req->n_fds);
  plan.kernel_kill_on_close = (cf & SPAWN_CHILD_KILL_ON_CLOSE) && by_kernel == 0;
  plan.new_process_group = (cf & SPAWN_CHILD_NEW_PROCESS_GROUP) != 0;
  plan.controlling_terminal = (cf & SPAWN_CHILD_CONTROLLING_TERMINAL) != 0;
  plan.new_session = (cf & SPAWN_CHILD_NEW_SESSION) != 0 || plan.controlling_terminal;
  plan.cgroup_fd = plan.cgroup_procs_fd = -1;
  if (req->job != NULL && !_spawn_job_prepare (req->job, req->argv[0], &plan, error))
    goto out;
  if (req->job == NULL || !(cf & SPAWN_CHILD_KILL_ON_CLOSE) ||
      spawn_start_guardian (req->job, req->argv[0], error))
    child = spawn_start_child (req, ops, &plan, by_kernel, pipe_out, error);
  if (req->job != NULL)
    _spawn_job_born (req->job, child);

out:
  spawn_plan_clear (&plan);
  errno = saved_errno;
  return child;
}

/**
 * spawn_async_fd_full: (skip)
 * @working_directory: (type filename) (nullable): as for [func@Spawn.async_fd]
 * @argv: (array zero-terminated=1) (element-type filename): as for
 *   [func@Spawn.async_fd]
 * @envp: (array zero-terminated=1) (element-type filename) (nullable): as
 *   for [func@Spawn.async_fd]
 * @flags: as for [func@Spawn.async_fd]
 * @child_setup: (scope call) (nullable): as for [func@Spawn.async_fd]
 * @user_data: (closure child_setup): data for @child_setup
 * @stdin_fd: as for [func@Spawn.async_fd]
 * @stdout_fd: as for [func@Spawn.async_fd]
 * @stderr_fd: as for [func@Spawn.async_fd]
 * @source_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @target_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @n_fds: length of @source_fds and @target_fds
 * @stdin_pipe_out: (out) (optional): as for [func@Spawn.async_fd]
 * @stdout_pipe_out: (out) (optional): as for [func@Spawn.async_fd]
 * @stderr_pipe_out: (out) (optional): as for [func@Spawn.async_fd]
 * @child_flags: #SpawnChildFlags, for what #GSpawnFlags cannot say
 * @error: return location for a #GError
 *
 * Starts a program as [func@Spawn.async_fd] does, with #SpawnChildFlags.
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
 * application.  Descendants of the child are never killed (a job is
 * what does that: [method@Spawn.Job.spawn_with_pipes]).  See [Kill on
 * close](api.html#kill-on-close-children-that-do-not-outlive-the-application)
 * in the C API overview.
 *
 * With %SPAWN_CHILD_NEW_PROCESS_GROUP the child leads a new process
 * group, with %SPAWN_CHILD_NEW_SESSION a new session (and group): what
 * GSubprocess users write a child_setup for, and QProcess 6.7 calls
 * `UnixProcessFlag::CreateNewSession`.  Both are set before
 * @child_setup runs.
 *
 * Not for bindings, as [func@Spawn.async_fd]: they pass @child_flags to
 * [func@Spawn.async_fd_with_pipes].
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
  SpawnRequest req = { NULL, working_directory, argv, envp, flags, child_setup, user_data,
                       { stdin_fd, stdout_fd, stderr_fd }, source_fds, target_fds, n_fds,
                       { stdin_pipe_out, stdout_pipe_out, stderr_pipe_out }, child_flags };

  return spawn_start (&req, error);
}

/**
 * spawn_job_spawn: (skip)
 * @job: the job the child and its descendants belong to
 * @working_directory: (type filename) (nullable): as for [func@Spawn.async_fd]
 * @argv: (array zero-terminated=1) (element-type filename): as for
 *   [func@Spawn.async_fd]
 * @envp: (array zero-terminated=1) (element-type filename) (nullable): as
 *   for [func@Spawn.async_fd]
 * @flags: as for [func@Spawn.async_fd]
 * @child_setup: (scope call) (nullable): as for [func@Spawn.async_fd]
 * @user_data: (closure child_setup): data for @child_setup
 * @stdin_fd: as for [func@Spawn.async_fd]
 * @stdout_fd: as for [func@Spawn.async_fd]
 * @stderr_fd: as for [func@Spawn.async_fd]
 * @source_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @target_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @n_fds: length of @source_fds and @target_fds
 * @stdin_pipe_out: (out) (optional): as for [func@Spawn.async_fd]
 * @stdout_pipe_out: (out) (optional): as for [func@Spawn.async_fd]
 * @stderr_pipe_out: (out) (optional): as for [func@Spawn.async_fd]
 * @child_flags: as for [func@Spawn.async_fd_full]
 * @error: return location for a #GError
 *
 * Starts a program as [func@Spawn.async_fd_full] does, in @job: the
 * lower-level equivalent of [method@Spawn.Process.set_job].  At the first
 * spawn the job makes its cgroup (or, where it cannot, chooses the
 * process-group mode: [method@Spawn.Job.get_mode]); a job with limits
 * that cannot be had fails here with a #GError that says which.  The child
 * is in the job before it runs any code of the caller's (@child_setup
 * included).
 *
 * Not for bindings, as [func@Spawn.async_fd_full]: they call
 * [method@Spawn.Job.spawn_with_pipes], which has no @child_setup and
 * makes only the pipes asked for.
 *
 * Returns: (transfer full) (nullable): the child, or %NULL with @error set
 *
 * Since: 0.3
 */
SpawnChild *
spawn_job_spawn (SpawnJob            *job,
                 const char          *working_directory,
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
  SpawnRequest req = { job, working_directory, argv, envp, flags, child_setup, user_data,
                       { stdin_fd, stdout_fd, stderr_fd }, source_fds, target_fds, n_fds,
                       { stdin_pipe_out, stdout_pipe_out, stderr_pipe_out }, child_flags };

  g_return_val_if_fail (SPAWN_IS_JOB (job), NULL);
  return spawn_start (&req, error);
}

/* The pipe outs that @pipes asks for (the others NULL in @asked), each
 * out set to -1 first; FALSE on a caller bug. */
static gboolean
spawn_pipes_asked (SpawnPipeFlags pipes, int *stdin_pipe_out, int *stdout_pipe_out,
                   int *stderr_pipe_out, int *asked[3])
{
  static const SpawnPipeFlags bits[3] = { SPAWN_PIPE_STDIN, SPAWN_PIPE_STDOUT,
                                          SPAWN_PIPE_STDERR };
  int *outs[3] = { stdin_pipe_out, stdout_pipe_out, stderr_pipe_out };
  int i;

  g_return_val_if_fail ((pipes & ~(SPAWN_PIPE_STDIN | SPAWN_PIPE_STDOUT |
                                   SPAWN_PIPE_STDERR)) == 0, FALSE);
  for (i = 0; i < 3; i++)
    {
      /* A pipe nobody can be given is a caller bug, not "no pipe". */
      g_return_val_if_fail (!(pipes & bits[i]) || outs[i] != NULL, FALSE);
      if (outs[i] != NULL)
        *outs[i] = -1;
      asked[i] = (pipes & bits[i]) ? outs[i] : NULL;
    }
  return TRUE;
}

/**
 * spawn_async_fd_with_pipes:
 * @working_directory: (type filename) (nullable): as for [func@Spawn.async_fd]
 * @argv: (array zero-terminated=1) (element-type filename): as for
 *   [func@Spawn.async_fd]
 * @envp: (array zero-terminated=1) (element-type filename) (nullable): as
 *   for [func@Spawn.async_fd]
 * @flags: as for [func@Spawn.async_fd]
 * @child_flags: as for [func@Spawn.async_fd_full]
 * @pipes: the pipes to make: %SPAWN_PIPE_STDIN, %SPAWN_PIPE_STDOUT,
 *   %SPAWN_PIPE_STDERR, any of them or none
 * @stdin_fd: fd to become the child's stdin, or -1; not with
 *   %SPAWN_PIPE_STDIN
 * @stdout_fd: fd to become the child's stdout, or -1; not with
 *   %SPAWN_PIPE_STDOUT
 * @stderr_fd: fd to become the child's stderr, or -1; not with
 *   %SPAWN_PIPE_STDERR
 * @source_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @target_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @n_fds: length of @source_fds and @target_fds
 * @stdin_pipe_out: (out) (optional): our (write) end of the stdin pipe, or
 *   -1 where none was made
 * @stdout_pipe_out: (out) (optional): our (read) end of the stdout pipe, or
 *   -1
 * @stderr_pipe_out: (out) (optional): our (read) end of the stderr pipe, or
 *   -1
 * @error: return location for a #GError
 *
 * Starts a program as [func@Spawn.async_fd_full] does, with the pipes
 * @pipes names and no others, and without a child_setup: the form of
 * [func@Spawn.async_fd] for bindings.
 *
 * A binding always passes somewhere to put an out parameter (PyGObject
 * and GJS cannot pass %NULL), so through [func@Spawn.async_fd] it would
 * always get three pipes and could never give a @stdout_fd.  Here a pipe
 * is made only when @pipes asks for it, and each out parameter is -1
 * otherwise (and on failure).  A stream without a pipe goes where @flags and the fds say:
 * with neither, stdin reads /dev/null and stdout and stderr are ours, as
 * for [func@GLib.spawn_async_with_pipes_and_fds] with %NULL pipe
 * pointers.  A pipe asked for together with a flag that sends the same
 * stream elsewhere (%G_SPAWN_STDOUT_TO_DEV_NULL...) is not made, as in
 * [func@Spawn.async_fd].  The fds returned belong to the caller, who
 * closes them (from Python, `os.close()`, or a stream that takes them:
 * `Gio.UnixInputStream.new (fd, True)`).
 *
 * From Python:
 *
 * ```python
 * child, _, out, _ = Spawn.async_fd_with_pipes (
 *     None, ["echo", "hi"], None, GLib.SpawnFlags.SEARCH_PATH,
 *     Spawn.ChildFlags.NONE, Spawn.PipeFlags.STDOUT, -1, -1, -1, None, None)
 * with os.fdopen (out, "rb") as f:
 *     print (f.read ())
 * ```
 *
 * Returns: (transfer full) (nullable): the child, or %NULL with @error set
 *
 * Since: 0.3
 */
SpawnChild *
spawn_async_fd_with_pipes (const char          *working_directory,
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
                           GError             **error)
{
  int *asked[3];

  if (!spawn_pipes_asked (pipes, stdin_pipe_out, stdout_pipe_out, stderr_pipe_out, asked))
    return NULL;
  return spawn_async_fd_full (working_directory, argv, envp, flags, NULL, NULL,
                              stdin_fd, stdout_fd, stderr_fd, source_fds,
                              target_fds, n_fds, asked[0], asked[1], asked[2],
                              child_flags, error);
}

/**
 * spawn_job_spawn_with_pipes:
 * @job: the job the child and its descendants belong to
 * @working_directory: (type filename) (nullable): as for [func@Spawn.async_fd]
 * @argv: (array zero-terminated=1) (element-type filename): as for
 *   [func@Spawn.async_fd]
 * @envp: (array zero-terminated=1) (element-type filename) (nullable): as
 *   for [func@Spawn.async_fd]
 * @flags: as for [func@Spawn.async_fd]
 * @child_flags: as for [func@Spawn.async_fd_full]
 * @pipes: the pipes to make, as for [func@Spawn.async_fd_with_pipes]
 * @stdin_fd: as for [func@Spawn.async_fd_with_pipes]
 * @stdout_fd: as for [func@Spawn.async_fd_with_pipes]
 * @stderr_fd: as for [func@Spawn.async_fd_with_pipes]
 * @source_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @target_fds: (array length=n_fds) (nullable): as for [func@Spawn.async_fd]
 * @n_fds: length of @source_fds and @target_fds
 * @stdin_pipe_out: (out) (optional): as for [func@Spawn.async_fd_with_pipes]
 * @stdout_pipe_out: (out) (optional): as for [func@Spawn.async_fd_with_pipes]
 * @stderr_pipe_out: (out) (optional): as for [func@Spawn.async_fd_with_pipes]
 * @error: return location for a #GError
 *
 * Starts a program in @job as spawn_job_spawn() does, with the
 * pipes @pipes names and no others, and without a child_setup: the form
 * of spawn_job_spawn() for bindings, as
 * [func@Spawn.async_fd_with_pipes] is [func@Spawn.async_fd]'s.  No
 * function of the caller's runs in the child between clone and exec.
 *
 * Returns: (transfer full) (nullable): the child, or %NULL with @error set
 *
 * Since: 0.3
 */
SpawnChild *
spawn_job_spawn_with_pipes (SpawnJob            *job,
                            const char          *working_directory,
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
                            GError             **error)
{
  int *asked[3];

  g_return_val_if_fail (SPAWN_IS_JOB (job), NULL);
  if (!spawn_pipes_asked (pipes, stdin_pipe_out, stdout_pipe_out, stderr_pipe_out, asked))
    return NULL;
  return spawn_job_spawn (job, working_directory, argv, envp, flags, NULL, NULL, stdin_fd,
                          stdout_fd, stderr_fd, source_fds, target_fds, n_fds, asked[0],
                          asked[1], asked[2], child_flags, error);
}
