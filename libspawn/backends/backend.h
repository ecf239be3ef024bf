/* spawn-private.h - what spawn.c and the backends share
 *
 * Inside the library functions return 0 or -errno; spawn.c turns that into
 * a GError once, at the public edge.
 */
#pragma once

#include <sched.h>
#include <signal.h>

#include <libspawn/spawn-async.h>
#include <libspawn/spawn-enum-types.h> /* generated: the GTypes of the public enums */

/* What a child that fails before exec leaves for its parent. */
typedef struct {
  int step;                  /* a SpawnChildStep */
  int errnum;                /* 0: it exec'd (or died in exec) */
} SpawnChildReport;

/* Everything the child needs between clone and exec, prepared by the parent
 * so that the child only makes async-signal-safe calls (signal-safety(7)):
 * no malloc, no locks, no stdio.  It shares the parent's memory
 * (CLONE_VM | CLONE_VFORK) while the parent waits. */
typedef struct {
  const char *working_directory;
  const char *file;          /* what to exec, before any PATH search */
  char * const *argv;
  char * const *envp;
  const char *search_path;   /* NULL: exec file as given */
  char *path_buffer;         /* room for the longest PATH candidate */
  char **shell_argv;         /* preallocated /bin/sh argv for the fallback */
  gboolean close_descriptors;
  int fds[3];                /* what becomes 0, 1, 2, or a SPAWN_FD_ value */
  const int *source_fds;
  const int *target_fds;
  int *lifted_fds;           /* scratch, n_fds long, for the child */
  gsize n_fds;
  int max_target_fd;
  GSpawnChildSetupFunc child_setup;
  gpointer child_setup_data;
  sigset_t parent_mask;      /* restored in the child before exec */
  /* SPAWN_CHILD_KILL_ON_CLOSE, by the kernel: start() asks for it (only
   * where the backend's probe_kill_on_close() said yes). */
  gboolean kernel_kill_on_close;
  /* SPAWN_CHILD_KILL_ON_CLOSE, by PR_SET_PDEATHSIG: the child sets it
   * and reports ESRCH if getppid() is no longer @parent_pid (we died
   * before the prctl).  Only from the launcher thread (spawn-launcher.c),
   * which sets both.  The launcher's children are always in its own PID
   * namespace: clone(CLONE_THREAD) refuses to create a thread whose
   * pid_for_children differs, so getppid() cannot be 0 here. */
  gboolean pdeathsig;
  pid_t parent_pid;
  /* The caller's CPU affinity and nice value, where they differ from the
   * launcher thread's (which the child inherits): set in the child. */
  gboolean set_affinity;
  cpu_set_t affinity;
  gboolean set_nice;
  int nice;
  /* In the parent's memory, which the child shares (CLONE_VM); read
   * when CLONE_VFORK lets the parent go, that is once the child has
   * exec'd or exited.  No pipe: the parent would resume at the exec's
   * mm switch and then sleep until the exec closes a CLOEXEC write end. */
  SpawnChildReport *report;
} SpawnLaunch;

#define SPAWN_FD_NULL    (-1) /* /dev/null */
#define SPAWN_FD_INHERIT (-2) /* the parent's own 0, 1 or 2 */

/* Error report from the child: which step failed and its errno. */
typedef enum {
  SPAWN_CHILD_STEP_EXEC,
  SPAWN_CHILD_STEP_CHDIR,
  SPAWN_CHILD_STEP_FDS,
  SPAWN_CHILD_STEP_KILL_ON_CLOSE,
} SpawnChildStep;

/* The child's side of every backend: set up and exec, or report. */
int _spawn_child_main (void *data);

typedef struct _SpawnBackendOps SpawnBackendOps;

struct _SpawnChild {
  gint ref_count;
  const SpawnBackendOps *ops;
  GPid pid;
  int fd;                    /* readable once the child has ended */
  GMutex lock;               /* guards everything below */
  gint collected;            /* atomic reads allowed without the lock */
  SpawnExitInfo info;
  int collect_error;         /* -errno when the status could not be had */
  gboolean kill_on_close;    /* SIGKILL on the last unref while it runs */
  gpointer backend_data;
};

/* One per kernel mechanism; each lives in its own backend-*.c file. */
struct _SpawnBackendOps {
  SpawnBackend kind;
  const char *name;
  /* 0 if usable here; -ENOSYS/-EINVAL/-EPERM: not on this kernel. */
  int (*probe) (void);
  /* Start the child with CLONE_VM | CLONE_VFORK (the child runs
   * _spawn_child_main (launch) on the @stack_size bytes at @stack); fill
   * child->pid and child->fd.  Returns 0 or -errno; on error nothing is
   * left behind. */
  int (*start) (SpawnChild *child, SpawnLaunch *launch, void *stack,
                gsize stack_size);
  /* After a failed exec: the child has exited; reap it, close its fd. */
  void (*discard) (SpawnChild *child);
  /* child->fd is readable: fill @info, or return -EAGAIN (not yet),
   * or -ECHILD (the status was lost).  Called with child->lock held. */
  int (*collect) (SpawnChild *child, SpawnExitInfo *info);
  int (*send_signal) (SpawnChild *child, int signum);
  /* Last reference gone: release what start() set up. */
  void (*finalize) (SpawnChild *child);
  /* NULL, or 0 if start() can have the kernel kill the child when the
   * last reference to child->fd goes (launch->kernel_kill_on_close);
   * -EINVAL/-ENOSYS/-EPERM: not on this kernel (spawn.c then uses
   * PR_SET_PDEATHSIG from its launcher thread); another -errno: this
   * probe failed, ask again.  Cached by spawn.c. */
  int (*probe_kill_on_close) (void);
  /* How often to call collect() even without the fd becoming readable,
   * in ms; 0: never.  For backends that cannot always be woken. */
  guint recheck_interval_ms;
  /* The child must be reaped even if nobody watches it any more. */
  gboolean needs_reaping;
};

extern const SpawnBackendOps _spawn_backend_clonefd;
extern const SpawnBackendOps _spawn_backend_pidfd;
extern const SpawnBackendOps _spawn_backend_sigchld;

/* ops->start (child, launch, stack, stack_size) run by the one thread of
 * ours that never exits, so that PR_SET_PDEATHSIG, which fires when the
 * parent *thread* exits, fires only when the process dies
 * (spawn-launcher.c).  Sets launch->pdeathsig and parent_pid, and the
 * affinity and nice value to copy.  -EPERM with @error set where the
 * calling thread's confinement (seccomp, no_new_privs, capabilities,
 * namespaces, cwd, root, umask) differs from the launcher's. */
int _spawn_launcher_start (const SpawnBackendOps *ops, SpawnChild *child,
                           SpawnLaunch *launch, void *stack, gsize stack_size,
                           GError **error);

/* Fills @info from a waitpid-style status and a struct rusage. */
struct rusage;
void _spawn_exit_info_from_wait_status (SpawnExitInfo *info, int wait_status,
                                        const struct rusage *ru);
/* The CPU times of a struct rusage, in microseconds. */
void _spawn_exit_info_set_rusage (SpawnExitInfo *info, const struct rusage *ru);
/* CLD_* code and status (siginfo_t style) to SpawnExitInfo. */
void _spawn_exit_info_from_code (SpawnExitInfo *info, int code, int status);
/* Moves @fd (CLOEXEC) above 2, where an fd of ours would otherwise
 * become a child's stdio when the application has closed its own.
 * Returns the fd to use: @fd itself if it cannot be moved (fd table
 * full), as losing it would be worse. */
int _spawn_fd_above_stdio (int fd);
/* Keeps @child (one reference, taken over) watched until it ends. */
void _spawn_reaper_adopt (SpawnChild *child);
/* Collects (once) under the child's lock; 0, -EAGAIN or -ECHILD. */
int _spawn_child_collect (SpawnChild *child);
/* The errno for a GError; also the one helper for messages. */
GError *_spawn_error_new (int errnum, const char *format, ...) G_GNUC_PRINTF (2, 3);
