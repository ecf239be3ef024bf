/* backend-clonefd.c - children from clone4(CLONE_FD | CLONE_AUTOREAP)
 *
 * The kernel reaps the child itself and sends no signal; the fd it hands
 * back reads as a struct clonefd_info once the whole process has ended.
 * Nothing process-wide is touched: no handler, no waitpid, no zombie.
 */
#include "spawn-private.h"
#include "clone4.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* clone4's own answer: -ENOSYS, -EPERM, -EINVAL mean not here; others
 * (EMFILE...) are passing failures, not cached by spawn.c. */
static int
clonefd_probe (void)
{
  return _spawn_clone4_check ();
}

static int
clonefd_start (SpawnChild *child, SpawnLaunch *launch, void *stack,
               gsize stack_size)
{
  struct spawn_clone4_args args = { 0 };
  int fd = -1;
  long pid;

  args.stack_start = (uintptr_t) stack;
  args.stack_size = stack_size;
  args.clonefd = (uintptr_t) &fd;
  args.clonefd_flags = O_CLOEXEC | O_NONBLOCK;
  pid = _spawn_clone4_run (CLONE_VM | CLONE_VFORK | SPAWN_CLONE_FD |
                           SPAWN_CLONE_AUTOREAP,
                           &args, sizeof (args), _spawn_child_main, launch);
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

static int
clonefd_collect (SpawnChild *child, SpawnExitInfo *info)
{
  struct spawn_clonefd_info ci;
  long ticks = sysconf (_SC_CLK_TCK);
  ssize_t n;

  do
    n = read (child->fd, &ci, sizeof (ci));
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno == EAGAIN ? -EAGAIN : -errno;
  /* Later reads return 0: the first one is the only report. */
  if (n != sizeof (ci))
    return -EIO;
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
  if (syscall (SYS_pidfd_send_signal, child->fd, signum, NULL, 0) < 0)
    return -errno;
  return 0;
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
  .start = clonefd_start,
  .discard = clonefd_discard,
  .collect = clonefd_collect,
  .send_signal = clonefd_send_signal,
  .finalize = clonefd_finalize,
  .needs_reaping = FALSE,
};
