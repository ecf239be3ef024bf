/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* autoreap.c - children from clone3(CLONE_PIDFD | CLONE_AUTOREAP), Linux 7.1
 *
 * What clonefd gives, on a stock kernel: the kernel reaps the child itself
 * and, with exit_signal 0, sends no signal, also after the child execs (the
 * flag lives in its signal_struct, kernel/signal.c do_notify_parent()).
 * So there is no zombie, nothing for the application's SIGCHLD handler,
 * and nothing a waitpid(-1) elsewhere or SIGCHLD set to SIG_IGN can take:
 * the status is read from the pidfd with ioctl(PIDFD_GET_INFO) and
 * PIDFD_INFO_EXIT (6.15), which pidfs records for every pid that a pidfd
 * refers to before the task is unhashed (fs/pidfs.c pidfs_exit()).
 *
 * CPU times: stock 7.2's exit information has none, and with the child
 * reaped by the kernel there is no waitid() to give a struct rusage, so
 * SpawnExitInfo.have_times is FALSE there (docs/api.md).  A kernel with
 * kernel/patches-7.2 reports them (PIDFD_INFO_EXIT_CPUTIME, probed once):
 * we give the sum of the child's own and its waited-for descendants',
 * what wait4()'s rusage gives on the pidfd and sigchld backends.
 *
 * Kill-on-close: CLONE_PIDFD_AUTOKILL, the kernel's SIGKILL when the last
 * reference to the clone3 pidfd's file goes, whoever holds it and however
 * the holder dies; unlike PR_SET_PDEATHSIG it is not reset when the child
 * execs a setuid program.  The kernel allows it only with CLONE_NNP or
 * CAP_SYS_ADMIN in the caller's user namespace (an unprivileged parent
 * could otherwise SIGKILL a setuid program at a moment of its choosing).
 * CLONE_NNP sets no_new_privs on the child, and a setuid or file-capability
 * program it then execs runs without its privileges: sudo, ping, passwd
 * would fail in ways that name nothing of ours.  So we never impose it:
 *   - with CAP_SYS_ADMIN: CLONE_PIDFD_AUTOKILL alone;
 *   - where the caller already has no_new_privs (the child inherits it
 *     anyway, so CLONE_NNP changes nothing): CLONE_PIDFD_AUTOKILL |
 *     CLONE_NNP;
 *   - otherwise: the core's pdeathsig thread, as on the pidfd backend.
 * The probe tries the first form that applies with a real child, once.
 */
#include "backend.h"
#include "clone3.h"
#include "pidfd-info.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

/* How long the probe waits for its child's report. */
#define AUTOREAP_PROBE_TIMEOUT_MS 10000

/* The probe child: nothing but exit (it shares our memory and stack
 * space; signal-safety(7) applies, and it calls nothing at all). */
static int
autoreap_probe_child (void *data G_GNUC_UNUSED)
{
  return 0;
}

static gboolean
autoreap_caller_has_nnp (void)
{
  return prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

/* The child's exit information once its pidfd has turned readable, with
 * the @extra bits asked besides PIDFD_INFO_EXIT: 0, -EAGAIN or another
 * -errno.  The pidfd turns readable in exit_notify(),
 * and pidfs records the status a moment later, in release_task(), which
 * the exiting task runs itself right after (kernel/exit.c): ask a few
 * times; -EAGAIN if it is still not there (the fd stays readable, so the
 * watch comes back).
 *
 * ESRCH is the same moment seen from the other side: the ioctl reads the
 * exit info first (not there yet), then finds the task, and says ESRCH
 * when release_task() has unhashed it in between (fs/pidfs.c
 * pidfd_info(): "pid == 0").  The status is recorded by then: we hold a
 * pidfd, so pidfs_exit() always records it.  Ask again; it is never
 * "lost" here (tests/autoreap-test.c status-race). */
static int
autoreap_read_exit (int fd, struct spawn_pidfd_info *pi, guint64 extra)
{
  int i;

  for (i = 0; i < 100; i++)
    {
      memset (pi, 0, sizeof (*pi));
      pi->mask = SPAWN_PIDFD_INFO_EXIT | extra;
      if (ioctl (fd, SPAWN_PIDFD_GET_INFO, pi) < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno != ESRCH)
            return -errno;
          sched_yield ();
          continue;
        }
      if (pi->mask & SPAWN_PIDFD_INFO_EXIT)
        return 0;
      sched_yield ();
    }
  return -EAGAIN;
}

/* autoreap_read_exit() for the probe, which has no watch to come back:
 * a child preempted between exit_notify() and release_task() (a loaded
 * machine, a TCG guest) can outlast its hundred sched_yield()s, and a
 * probe's -EAGAIN fails the spawn that asked.  The pidfd has turned
 * readable, so the status is on its way: ask again, a millisecond apart,
 * within the probe's timeout. */
static int
autoreap_probe_read_exit (int fd, struct spawn_pidfd_info *pi)
{
  int err, waited_ms;

  for (waited_ms = 0;; waited_ms++)
    {
      err = autoreap_read_exit (fd, pi, 0);
      if (err != -EAGAIN || waited_ms >= AUTOREAP_PROBE_TIMEOUT_MS)
        return err;
      g_usleep (1000);
    }
}

/* Start a child that exits at once, with @extra flags, every signal
 * blocked (it runs on our memory until it exits); wait for its report.
 * 0 if the kernel took the flags and reported exit status 0 through the
 * pidfd; -EINVAL (a kernel before 7.1: unknown flag), -ENOSYS, -EPERM
 * (seccomp, or AUTOKILL without the right), or a passing -errno. */
static int
autoreap_probe_run (guint64 extra)
{
  struct spawn_clone3_args args = { 0 };
  struct spawn_pidfd_info pi;
  gsize page = sysconf (_SC_PAGESIZE), size = 16 * page;
  sigset_t all, old;
  char *stack;
  int fd = -1, err;
  long pid;

  stack = mmap (NULL, size, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return -errno;
  mprotect (stack, page, PROT_NONE); /* the guard page */
  args.flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_AUTOREAP | extra;
  args.pidfd = (uintptr_t) &fd;
  args.stack = (uintptr_t) (stack + page);
  args.stack_size = size - page;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  pid = _spawn_clone3_run (&args, sizeof args, autoreap_probe_child, NULL);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  /* CLONE_VFORK: the child has exited when we get here. */
  munmap (stack, size);
  if (pid < 0)
    return pid;
  {
    struct pollfd pfd = { fd, POLLIN, 0 };
    int r;

    while ((r = poll (&pfd, 1, AUTOREAP_PROBE_TIMEOUT_MS)) < 0 && errno == EINTR)
      ;
    err = r < 0 ? -errno : r == 0 ? -ETIMEDOUT : autoreap_probe_read_exit (fd, &pi);
  }
  close (fd);
  /* A status other than the child's, or an ioctl the kernel does not
   * know (ENOTTY): the backend cannot work here. */
  if ((err == 0 && pi.exit_code != 0) || err == -ENOTTY)
    err = -ENOSYS;
  return err;
}

/* 0 on 7.1 and later; -EINVAL before (clone3 refuses the unknown
 * CLONE_AUTOREAP), -ENOSYS without clone3, -EPERM under a seccomp filter:
 * not on this kernel.  The core caches the answer. */
static int
autoreap_probe (void)
{
  return autoreap_probe_run (0);
}

/* See the head of the file: CLONE_NNP only where it changes nothing. */
static int
autoreap_probe_kill_on_close (void)
{
  return autoreap_probe_run (CLONE_PIDFD_AUTOKILL |
                             (autoreap_caller_has_nnp () ? CLONE_NNP : 0));
}

/* A job's child is born in its cgroup: CLONE_INTO_CGROUP (5.7) is there
 * on every kernel that has CLONE_AUTOREAP.
 *
 * ### HAZARD: the kill-on-close probe is cached for the process, but what
 * the kernel checks is the calling thread's: CAP_SYS_ADMIN (capset is per
 * thread) and no_new_privs (per thread too).  A thread that lacks both,
 * after the probe said yes in another thread or before this one dropped
 * CAP_SYS_ADMIN, gets EPERM here for every kill-on-close child, a clear
 * error but no fallback.  Asking capget() and PR_GET_NO_NEW_PRIVS per
 * spawn, and the core taking "no" for this spawn only, would fix it. */
static int
autoreap_start (SpawnChild *child, SpawnExecPlan *plan, void *stack,
                gsize stack_size)
{
  struct spawn_clone3_args args = { 0 };
  int fd = -1;
  long pid;

  /* exit_signal stays 0, as CLONE_AUTOREAP demands: no signal at all. */
  args.flags = SPAWN_EXEC_CLONE_FLAGS (plan) | CLONE_PIDFD | CLONE_AUTOREAP;
  if (plan->kernel_kill_on_close)
    args.flags |= CLONE_PIDFD_AUTOKILL |
                  (autoreap_caller_has_nnp () ? CLONE_NNP : 0);
  args.pidfd = (uintptr_t) &fd;
  args.stack = (uintptr_t) stack;
  args.stack_size = stack_size;
  if (plan->cgroup_fd >= 0)
    {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = plan->cgroup_fd;
      plan->born_in_cgroup = TRUE;
    }
  /* The clone3 pidfd is close-on-exec: a program the application execs
   * neither keeps our children alive nor holds their AUTOKILL. */
  pid = _spawn_clone3_run (&args, sizeof args, _spawn_exec_child, plan);
  if (pid < 0)
    {
      plan->born_in_cgroup = FALSE;
      return pid;
    }
  child->pid = pid;
  child->fd = fd;
  return 0;
}

static void
autoreap_discard (SpawnChild *child)
{
  struct pollfd pfd = { child->fd, POLLIN, 0 };

  /* As clonefd_discard(): CLONE_VFORK let us go at the child's
   * mm_release(); wait until it has exited, so that it is gone (the
   * kernel reaps it) when we return. */
  while (poll (&pfd, 1, -1) < 0 && errno == EINTR)
    ;
  close (child->fd);
  child->fd = -1;
}

/* Whether this kernel's exit information carries the CPU times
 * (kernel/patches-7.2), asked once through PIDFD_INFO_SUPPORTED_MASK
 * (6.18; before it, no kernel had them either).  PIDFD_INFO_EXIT is asked
 * too, so that the child @fd refers to being reaped already is not ESRCH.
 * A failed ioctl is not an answer: asked again next time. */
static gboolean
autoreap_probe_exit_times (int fd)
{
  static gint have = -1; /* unknown, then 0 or 1 */
  struct spawn_pidfd_info pi = { 0 };

  if (g_atomic_int_get (&have) < 0)
    {
      pi.mask = SPAWN_PIDFD_INFO_SUPPORTED_MASK | SPAWN_PIDFD_INFO_EXIT;
      if (ioctl (fd, SPAWN_PIDFD_GET_INFO, &pi) < 0)
        return FALSE;
      g_atomic_int_set (&have, (pi.mask & SPAWN_PIDFD_INFO_SUPPORTED_MASK) &&
                               (pi.supported_mask & SPAWN_PIDFD_INFO_EXIT_CPUTIME));
    }
  return g_atomic_int_get (&have) == 1;
}

/* The CPU times from @pi where the kernel gave them (the bit is in the
 * returned mask): own plus waited-for descendants', as wait4() sums them,
 * rounded down to microseconds as wait4() does.  Else have_times stays
 * FALSE and the times 0. */
static void
autoreap_fill_times (SpawnExitInfo *info, const struct spawn_pidfd_info *pi)
{
  if (!(pi->mask & SPAWN_PIDFD_INFO_EXIT_CPUTIME))
    return;
  info->utime_usec = (pi->exit_utime + pi->exit_cutime) / 1000;
  info->stime_usec = (pi->exit_stime + pi->exit_cstime) / 1000;
  info->have_times = TRUE;
}

static int
autoreap_collect (SpawnChild *child, SpawnExitInfo *info)
{
  struct pollfd pfd = { child->fd, POLLIN, 0 };
  struct spawn_pidfd_info pi;
  guint64 extra;
  int r;

  /* Not readable: still running (a recheck, a spurious wake-up); no
   * reason to ask the kernel a hundred times. */
  r = poll (&pfd, 1, 0);
  if (r <= 0)
    return r == 0 || errno == EINTR ? -EAGAIN : -errno;
  extra = autoreap_probe_exit_times (child->fd) ? SPAWN_PIDFD_INFO_EXIT_CPUTIME : 0;
  r = autoreap_read_exit (child->fd, &pi, extra);
  if (r < 0)
    return r;
  _spawn_exit_info_from_wait_status (info, pi.exit_code, NULL);
  autoreap_fill_times (info, &pi);
  return 0;
}

static int
autoreap_send_signal (SpawnChild *child, int signum)
{
  return _spawn_fd_send_signal (child->fd, signum);
}

static void
autoreap_finalize (SpawnChild *child)
{
  if (child->fd >= 0)
    close (child->fd);
}

const SpawnBackendOps _spawn_backend_autoreap = {
  .kind = SPAWN_BACKEND_AUTOREAP,
  .name = "autoreap",
  .probe = autoreap_probe,
  .probe_kill_on_close = autoreap_probe_kill_on_close,
  .start = autoreap_start,
  .discard = autoreap_discard,
  .collect = autoreap_collect,
  .send_signal = autoreap_send_signal,
  .finalize = autoreap_finalize,
  .needs_reaping = FALSE,
};
