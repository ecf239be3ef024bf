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
#include <sys/syscall.h>
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
