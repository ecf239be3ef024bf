/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* clonefd.c - children from clone4(CLONE_FD | CLONE_AUTOREAP)
 *
 * The kernel reaps the child itself and sends no signal; the fd it hands
 * back reports a struct clonefd_info once the whole process has ended
 * (ioctl CLONEFD_GET_INFO, or read() on an older series).
 * Nothing process-wide is touched: no handler, no waitpid, no zombie.
 *
 * Kill-on-close is CLONE_FD_AUTOKILL: the kernel kills the child when the
 * last reference to the fd's open file description goes, whoever holds it
 * and however the holder dies.  A series without the flag answers EINVAL,
 * and the core falls back on PR_SET_PDEATHSIG (core/pdeathsig-thread.c).
 * A system call still using the file (a poll() of a main loop in another
 * thread, a read()) holds a reference too and delays the kill until it
 * returns (clone4.2).  So the library never relies on its own close to
 * kill: spawn_child_unref() sends SIGKILL first; the flag is for the death
 * of the application, when no thread is left waiting.
 */
#include "backend.h"
#include "clone4.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* clone4's own answer: -ENOSYS, -EPERM, -EINVAL mean not here; others
 * (EMFILE...) are passing failures, not cached by the core. */
static int
clonefd_probe (void)
{
  return _spawn_clone4_check ();
}

/* -EINVAL: a series from before CLONE_FD_AUTOKILL. */
static int
clonefd_probe_kill_on_close (void)
{
  return _spawn_clone4_check_autokill ();
}

/* The child of a job born in its cgroup through clone4's cgroup field
 * (kernel patch 10), as pidfd_start_in_cgroup() does with clone3's.  A
 * series without the field answers EINVAL (the flag) or E2BIG (the
 * field): remembered, and -ENOSYS tells the caller to start the child
 * without it, to move itself (plan->cgroup_procs_fd, exec-child.c). */
static long
clonefd_run_in_cgroup (uint64_t flags, const struct spawn_clone4_args *args,
                       SpawnExecPlan *plan)
{
  static int unsupported;
  struct spawn_clone4_args_ver1 args1 = { *args, 0 };
  long pid;

  if (g_atomic_int_get (&unsupported))
    return -ENOSYS;
  args1.cgroup = plan->cgroup_fd;
  plan->born_in_cgroup = TRUE;
  pid = _spawn_clone4_run (flags | SPAWN_CLONE_INTO_CGROUP, &args1.ver0,
                           sizeof (args1), _spawn_exec_child, plan);
  if (pid >= 0)
    return pid;
  plan->born_in_cgroup = FALSE;
  if (pid == -EINVAL || pid == -E2BIG)
    {
      g_atomic_int_set (&unsupported, 1);
      return -ENOSYS;
    }
  return pid;
}

static int
clonefd_start (SpawnChild *child, SpawnExecPlan *plan, void *stack,
               gsize stack_size)
{
  struct spawn_clone4_args args = { 0 };
  uint64_t flags;
  int fd = -1;
  long pid = -ENOSYS;

  args.stack_start = (uintptr_t) stack;
  args.stack_size = stack_size;
  args.clonefd = (uintptr_t) &fd;
  /* O_CLOEXEC matters twice with AUTOKILL: a program the application
   * execs does not keep our children alive, nor does one of theirs. */
  args.clonefd_flags = O_CLOEXEC | O_NONBLOCK;
  flags = SPAWN_EXEC_CLONE_FLAGS (plan) | SPAWN_CLONE_FD | SPAWN_CLONE_AUTOREAP |
          (plan->kernel_kill_on_close ? SPAWN_CLONE_FD_AUTOKILL : 0);
  if (plan->cgroup_fd >= 0)
    pid = clonefd_run_in_cgroup (flags, &args, plan);
  /* No job, or a series without the cgroup field: the child moves itself
   * into the job's cgroup first thing, a window in which it counts in
   * ours (docs/process.md). */
  if (pid == -ENOSYS)
    pid = _spawn_clone4_run (flags, &args, sizeof (args), _spawn_exec_child,
                             plan);
  if (pid < 0)
    return pid;
  child->pid = pid;
  child->fd = fd;
  return 0;
}

static void
clonefd_discard (SpawnChild *child)
{
  struct pollfd pfd = { child->fd, POLLIN, 0 };

  /* The child has called _exit() but, CLONE_VFORK having let us go at its
   * mm_release(), may still be on its way out: wait for its report, so
   * that it is gone (the kernel reaps it) when we return. */
  while (poll (&pfd, 1, -1) < 0 && errno == EINTR)
    ;
  close (child->fd);
  child->fd = -1;
}

/* The report through the non-consuming ioctl, so that a process that
 * shares our open file description (a fork() of the application before
 * exec, a descriptor passed over SCM_RIGHTS) and read() it first has not
 * taken it from us; read() only on a series that predates the ioctl. */
static int
clonefd_fetch (int fd, struct spawn_clonefd_info *ci)
{
  static int have_get_info = -1; /* unknown, then 0 or 1 */
  ssize_t n;

  if (g_atomic_int_get (&have_get_info) != 0)
    {
      if (ioctl (fd, SPAWN_CLONEFD_GET_INFO, ci) == 0)
        {
          g_atomic_int_set (&have_get_info, 1);
          return 0;
        }
      if (errno != ENOTTY)
        return -errno;
      g_atomic_int_set (&have_get_info, 0);
    }
  do
    n = read (fd, ci, sizeof (*ci));
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  /* Later reads return 0: the first one is the only report. */
  return n == sizeof (*ci) ? 0 : -EIO;
}

static int
clonefd_collect (SpawnChild *child, SpawnExitInfo *info)
{
  struct spawn_clonefd_info ci;
  long ticks = sysconf (_SC_CLK_TCK);
  int r;

  r = clonefd_fetch (child->fd, &ci);
  if (r < 0)
    return r;
  _spawn_exit_info_from_code (info, ci.code, ci.status);
  info->utime_usec = ci.utime * G_USEC_PER_SEC / ticks;
  info->stime_usec = ci.stime * G_USEC_PER_SEC / ticks;
  info->have_times = TRUE;
  return 0;
}

static int
clonefd_send_signal (SpawnChild *child, int signum)
{
  /* The kernel takes the clone fd where it takes a pidfd: the signal goes
   * to this process or nowhere (ESRCH), never to a recycled PID. */
  return _spawn_fd_send_signal (child->fd, signum);
}

static void
clonefd_finalize (SpawnChild *child)
{
  if (child->fd >= 0)
    close (child->fd);
}

const SpawnBackendOps _spawn_backend_clonefd = {
  .kind = SPAWN_BACKEND_CLONEFD,
  .name = "clonefd",
  .probe = clonefd_probe,
  .probe_kill_on_close = clonefd_probe_kill_on_close,
  .start = clonefd_start,
  .discard = clonefd_discard,
  .collect = clonefd_collect,
  .send_signal = clonefd_send_signal,
  .finalize = clonefd_finalize,
  .needs_reaping = FALSE,
};
