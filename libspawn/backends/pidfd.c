/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pidfd.c - children from clone(CLONE_PIDFD), stock kernels >= 5.4
 *
 * The pidfd turns readable when the child ends and waitid(P_PIDFD) reaps
 * exactly that child, so a pidfd never names a recycled PID.  What it
 * cannot do is keep the exit signal away: exec resets a child's exit
 * signal to SIGCHLD (fs/exec.c), so the application's SIGCHLD handler sees
 * our children, and a waitpid(-1) elsewhere or SIGCHLD set to SIG_IGN can
 * take the status first.  Since 6.15, PIDFD_GET_INFO still tells the exit
 * status then (not the CPU times); before, the watch ends with
 * SPAWN_ERROR_STATUS_LOST.
 *
 * Kill-on-close: PR_SET_PDEATHSIG from the core's pdeathsig thread.  Linux
 * 7.1's CLONE_PIDFD_AUTOKILL needs CLONE_AUTOREAP, which would take
 * waitid(P_PIDFD) and with it the CPU times away from this backend: on
 * such a kernel the autoreap backend (autoreap.c), which comes first, uses
 * it.
 *
 * A job's child is born in the job's cgroup through clone3's
 * CLONE_INTO_CGROUP (5.7), so neither it nor a fast grandchild ever runs
 * outside; before 5.7 it moves itself there first thing (exec-child.c).
 */
#include "backend.h"
#include "clone3.h"
#include "pidfd-info.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int
sys_waitid (int fd, siginfo_t *si, int options, struct rusage *ru)
{
  return syscall (SYS_waitid, P_PIDFD, fd, si, options, ru);
}

/* -ENOSYS (no pidfd_open), -EPERM (seccomp) or -EINVAL (no P_PIDFD):
 * not on this kernel.  Anything else (EMFILE, ENFILE, ENOMEM) is this
 * attempt failing, which the core reports and does not cache. */
static int
pidfd_probe (void)
{
  siginfo_t si;
  int fd, err = 0;

  fd = syscall (SYS_pidfd_open, getpid (), 0);
  if (fd < 0)
    return -errno;
  /* We are not our own child: ECHILD where P_PIDFD exists (5.4), EINVAL
   * before. */
  if (sys_waitid (fd, &si, WEXITED | WNOHANG, NULL) == 0)
    err = -EINVAL;
  else if (errno != ECHILD)
    err = -errno;
  close (fd);
  return err;
}

/* A job's child born in its cgroup: clone3 (CLONE_INTO_CGROUP), 5.7.
 * -ENOSYS (no clone3, or no trampoline for this architecture), -E2BIG (a
 * clone3 that predates the cgroup field) or -EINVAL (no CLONE_INTO_CGROUP)
 * say the kernel cannot: remembered, and the child moves itself
 * (exec-child.c).  An -EINVAL from a bad cgroup fd cannot happen: the job
 * opened it as a directory of the cgroup2 hierarchy. */
static int
pidfd_start_in_cgroup (SpawnChild *child, SpawnExecPlan *plan, void *stack,
                       gsize stack_size)
{
  static int unsupported;
  struct spawn_clone3_args args = { 0 };
  int fd = -1;
  long pid;

  if (g_atomic_int_get (&unsupported))
    return -ENOSYS;
  args.flags = SPAWN_EXEC_CLONE_FLAGS (plan) | CLONE_PIDFD | CLONE_INTO_CGROUP;
  args.pidfd = (uintptr_t) &fd;
  args.exit_signal = SIGCHLD;
  args.stack = (uintptr_t) stack;
  args.stack_size = stack_size;
  args.cgroup = plan->cgroup_fd;
  plan->born_in_cgroup = TRUE;
  pid = _spawn_clone3_run (&args, sizeof args, _spawn_exec_child, plan);
  if (pid < 0)
    {
      plan->born_in_cgroup = FALSE;
      if (pid == -ENOSYS || pid == -E2BIG || pid == -EINVAL)
        {
          g_atomic_int_set (&unsupported, 1);
          return -ENOSYS;
        }
      return pid;
    }
  child->pid = pid;
  child->fd = fd;
  return 0;
}

static int
pidfd_start (SpawnChild *child, SpawnExecPlan *plan, void *stack,
             gsize stack_size)
{
  int fd = -1;
  pid_t pid;

  if (plan->cgroup_fd >= 0)
    {
      int err = pidfd_start_in_cgroup (child, plan, stack, stack_size);

      if (err != -ENOSYS)
        return err;
    }
  /* CLONE_PIDFD's fd is close-on-exec. */
  pid = clone (_spawn_exec_child, (char *) stack + stack_size,
               SPAWN_EXEC_CLONE_FLAGS (plan) | CLONE_PIDFD | SIGCHLD, plan, &fd);
  if (pid < 0)
    return -errno;
  child->pid = pid;
  child->fd = fd;
  return 0;
}

static void
pidfd_discard (SpawnChild *child)
{
  siginfo_t si;

  while (sys_waitid (child->fd, &si, WEXITED, NULL) < 0 && errno == EINTR)
    ;
  close (child->fd);
  child->fd = -1;
}

/* Someone else reaped the child: ask the pidfd what the status was.
 *
 * waitid() says ECHILD as soon as the thief's wait has marked the child
 * EXIT_DEAD, but the kernel records the exit info for PIDFD_GET_INFO
 * (6.15) only later in that same reap, in release_task(), just before it
 * detaches the task from its pid.  Caught in between, the ioctl succeeds
 * (the task is still attached) without PIDFD_INFO_EXIT: "not yet", not
 * "lost".  And the ioctl reads the exit info before it looks for the task,
 * so a reap finishing between the two makes it say ESRCH once although the
 * info is there now: ask again.  A second ESRCH is final (6.13 and 6.14
 * have the ioctl but no exit info; before 6.13 there is no ioctl).  On a
 * stock 6.18 a waitpid(-1) thief made about 1 in 1000 watches report
 * STATUS_LOST this way. */
static int
recover_status (SpawnChild *child, SpawnExitInfo *info)
{
  struct spawn_pidfd_info pi;
  int i, esrch = 0;

  for (i = 0; i < 100; i++)
    {
      memset (&pi, 0, sizeof (pi));
      pi.mask = SPAWN_PIDFD_INFO_EXIT;
      if (ioctl (child->fd, SPAWN_PIDFD_GET_INFO, &pi) < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno == ESRCH && esrch++ == 0)
            continue;
          return -ECHILD;
        }
      if (pi.mask & SPAWN_PIDFD_INFO_EXIT)
        {
          _spawn_exit_info_from_wait_status (info, pi.exit_code, NULL);
          return 0;
        }
      /* Mid-reap in another thread: it finishes in microseconds. */
      sched_yield ();
    }
  /* Still mid-reap: the fd stays readable, so the watch comes back. */
  return -EAGAIN;
}

static int
pidfd_collect (SpawnChild *child, SpawnExitInfo *info)
{
  struct rusage ru;
  siginfo_t si;

  memset (&si, 0, sizeof (si));
  if (sys_waitid (child->fd, &si, WEXITED | WNOHANG, &ru) < 0)
    {
      if (errno == ECHILD)
        return recover_status (child, info);
      return errno == EINTR ? -EAGAIN : -errno;
    }
  if (si.si_pid == 0)
    return -EAGAIN;
  _spawn_exit_info_from_code (info, si.si_code, si.si_status);
  _spawn_exit_info_set_rusage (info, &ru);
  return 0;
}

static int
pidfd_send_signal (SpawnChild *child, int signum)
{
  return _spawn_fd_send_signal (child->fd, signum);
}

static void
pidfd_finalize (SpawnChild *child)
{
  if (child->fd >= 0)
    close (child->fd);
}

const SpawnBackendOps _spawn_backend_pidfd = {
  .kind = SPAWN_BACKEND_PIDFD,
  .name = "pidfd",
  .probe = pidfd_probe,
  .start = pidfd_start,
  .discard = pidfd_discard,
  .collect = pidfd_collect,
  .send_signal = pidfd_send_signal,
  .finalize = pidfd_finalize,
  .needs_reaping = TRUE,
};
