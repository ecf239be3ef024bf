/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* fd.c - descriptor helpers for every layer
 *
 * Our descriptors never sit in 0-2 (a later child would get them as its
 * stdio when the application closed its own) and are always
 * close-on-exec.
 */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

int
_spawn_fd_pipe (int p[2])
{
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      p[0] = p[1] = -1;
      return -errno;
    }
  p[0] = _spawn_fd_above_stdio (p[0]);
  p[1] = _spawn_fd_above_stdio (p[1]);
  return 0;
}

void
_spawn_fd_close_pair (int p[2])
{
  if (p[0] >= 0)
    close (p[0]);
  if (p[1] >= 0)
    close (p[1]);
  p[0] = p[1] = -1;
}

int
_spawn_fd_send_signal (int pidfd, int signum)
{
  if (syscall (SYS_pidfd_send_signal, pidfd, signum, NULL, 0) < 0)
    return -errno;
  return 0;
}

/* Whether a child cloned sharing our descriptor table (CLONE_FILES) can
 * make one of its own holding only our 0-2 (close_range's
 * CLOSE_RANGE_UNSHARE: Linux 5.9, and a seccomp filter may refuse it),
 * asked of a child that does only that, on @stack (@stack_size bytes,
 * unused).  Not asked of ourselves: our table may be shared on purpose
 * (io_uring's workers share it), and the answer would unshare it.  0,
 * or -errno: what the child or the clone got. */
int
_spawn_fd_table_probe (void *stack, gsize stack_size)
{
  int saved_errno = errno;
  int err = -ENOSYS;
  sigset_t all, old;
  int cancel_state;
  pid_t pid;

  /* Our memory and our handlers: no signal may run one in the child. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  /* Exit signal 0: no SIGCHLD, and only __WALL waits for it, so no
   * waitpid (-1) of the application's takes it. */
  pid = clone (_spawn_exec_fd_table_probe_child, (char *) stack + stack_size,
               CLONE_VM | CLONE_VFORK | CLONE_FILES, &err);
  if (pid < 0)
    err = -errno;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  /* CLONE_VFORK: it has exited.  waitpid() is a cancellation point: a
   * cancel there would leave a zombie. */
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &cancel_state);
  if (pid > 0)
    while (waitpid (pid, NULL, __WALL) < 0 && errno == EINTR)
      ;
  pthread_setcancelstate (cancel_state, NULL);
  errno = saved_errno;
  return err;
}
