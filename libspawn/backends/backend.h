/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* backend.h - the contract between the core and each kernel mechanism
 *
 * One SpawnBackendOps per mechanism, each in its own file: clonefd.c
 * (clone4 with CLONE_FD, kernel/patches), autoreap.c (clone3 with
 * CLONE_PIDFD | CLONE_AUTOREAP, stock kernels since 7.1), pidfd.c (clone
 * with CLONE_PIDFD, stock kernels since 5.4) and sigchld.c (ordinary children and a SIGCHLD
 * handler, any kernel).  The core (core/backend.c) picks one at run time,
 * probing each once.  A backend sees base/ below it and nothing above;
 * every slot returns 0 or -errno, never a GError.
 */
#pragma once

#include "base.h"

typedef struct _SpawnBackendOps SpawnBackendOps;

/* The handle behind the public SpawnChild.  A backend's start() fills
 * @pid, @fd and its own @backend_data; everything else is the core's. */
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
  gboolean group_leader;     /* its PID is its process group's ID */
  char *program;             /* argv[0], for messages */
  /* ops->recheck_interval_ms, unless start() knows this child's fd
   * always turns readable at its end (sigchld with a pidfd): 0. */
  guint recheck_interval_ms;
  gpointer backend_data;
  /* Told when the last reference goes, before anything is released: the
   * job whose list has the child without a reference (job.c).  Set once,
   * before the child is handed out. */
  void (*forget) (gpointer data, SpawnChild *child);
  gpointer forget_data;
};

struct _SpawnBackendOps {
  SpawnBackend kind;
  const char *name;
  /* 0 if usable here; -ENOSYS/-EINVAL/-EPERM: not on this kernel; any
   * other -errno: this probe failed, ask again (the core caches only
   * answers about the kernel). */
  int (*probe) (void);
  /* Start the child with SPAWN_EXEC_CLONE_FLAGS (plan): CLONE_VM |
   * CLONE_VFORK, and CLONE_FILES when the plan asks (the child runs
   * _spawn_exec_child (plan) on the @stack_size bytes at @stack); fill
   * child->pid and child->fd.  Returns 0 or -errno; on error nothing is
   * left behind. */
  int (*start) (SpawnChild *child, SpawnExecPlan *plan, void *stack,
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
   * last reference to child->fd goes (plan->kernel_kill_on_close);
   * -EINVAL/-ENOSYS/-EPERM: not on this kernel (the core then uses
   * PR_SET_PDEATHSIG from its pdeathsig thread); another -errno: this
   * probe failed, ask again.  Cached by the core. */
  int (*probe_kill_on_close) (void);
  /* How often to call collect() even without the fd becoming readable,
   * in ms; 0: never.  For backends that cannot always be woken; the
   * core copies it into child->recheck_interval_ms before start(). */
  guint recheck_interval_ms;
  /* The child must be reaped even if nobody watches it any more. */
  gboolean needs_reaping;
};

extern const SpawnBackendOps _spawn_backend_clonefd;
extern const SpawnBackendOps _spawn_backend_autoreap;
extern const SpawnBackendOps _spawn_backend_pidfd;
extern const SpawnBackendOps _spawn_backend_sigchld;
/* How many times the sigchld handler (or a thread) swept with
 * waitid(P_ALL): for the tests. */
unsigned _spawn_sigchld_sweeps (void);
