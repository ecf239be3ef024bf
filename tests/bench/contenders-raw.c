/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* contenders-raw.c - the floor: what a hand-written program gets
 *
 * "posix_spawn+pidfd": glibc's posix_spawn (clone(CLONE_VM|CLONE_VFORK)
 * underneath), pidfd_open() on the PID, one epoll set for all pidfds and
 * waitid(P_PIDFD) on each that turns readable.  No file actions, no fd
 * hygiene, no status decoding: the least a correct program can do.
 *
 * "fork+exec": fork(), execv() in the child, a blocking waitpid(-1) loop.
 */
#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

static int epfd = -1;

static void
floor_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
             BenchSlot *slot)
{
  struct epoll_event ev = { .events = EPOLLIN };
  pid_t pid;
  int err;

  err = posix_spawn (&pid, argv[0], NULL, NULL, (char * const *) argv, environ);
  if (err != 0)
    bench_die ("posix_spawn %s: %s", argv[0], g_strerror (err));
  slot->pid = pid;
  slot->fd = syscall (SYS_pidfd_open, pid, 0);
  if (slot->fd < 0)
    bench_die ("pidfd_open: %s", g_strerror (errno));
  ev.data.ptr = slot;
  if (epoll_ctl (epfd, EPOLL_CTL_ADD, slot->fd, &ev) < 0)
    bench_die ("epoll_ctl: %s", g_strerror (errno));
  bench_pending++;
}

static void
floor_wait (BenchContender *c G_GNUC_UNUSED)
{
  struct epoll_event evs[64];
  int i, n;

  while (bench_pending > 0)
    {
      n = epoll_wait (epfd, evs, G_N_ELEMENTS (evs), -1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        bench_die ("epoll_wait: %s", g_strerror (errno));
      for (i = 0; i < n; i++)
        {
          BenchSlot *slot = evs[i].data.ptr;
          siginfo_t si;

          while (waitid ((idtype_t) P_PIDFD, slot->fd, &si, WEXITED) < 0)
            if (errno != EINTR)
              bench_die ("waitid: %s", g_strerror (errno));
          /* Not just close(): a child between vfork wake-up and exec's
           * close-on-exec still shares the pidfd, and the registration
           * would outlive our close. */
          epoll_ctl (epfd, EPOLL_CTL_DEL, slot->fd, NULL);
          close (slot->fd);
          slot->fd = -1;
          bench_exited (slot);
        }
    }
}

static GHashTable *forked; /* pid -> BenchSlot */

static void
fork_start (BenchContender *c G_GNUC_UNUSED, const char * const *argv,
            BenchSlot *slot)
{
  pid_t pid = fork ();

  if (pid < 0)
    bench_die ("fork: %s", g_strerror (errno));
  if (pid == 0)
    {
      execv (argv[0], (char * const *) argv);
      _exit (127);
    }
  slot->pid = pid;
  g_hash_table_insert (forked, GINT_TO_POINTER (pid), slot);
  bench_pending++;
}

static void
fork_wait (BenchContender *c G_GNUC_UNUSED)
{
  while (bench_pending > 0)
    {
      BenchSlot *slot;
      int status;
      pid_t pid = waitpid (-1, &status, 0);

      if (pid < 0 && errno == EINTR)
        continue;
      if (pid < 0)
        bench_die ("waitpid: %s", g_strerror (errno));
      slot = g_hash_table_lookup (forked, GINT_TO_POINTER (pid));
      if (slot == NULL)
        continue; /* not ours: nothing else should have children now */
      g_hash_table_remove (forked, GINT_TO_POINTER (pid));
      bench_exited (slot);
    }
}

gsize
bench_raw_contenders (BenchContender *out, gsize max)
{
  g_assert (max >= 2);
  epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (epfd < 0)
    bench_die ("epoll_create1: %s", g_strerror (errno));
  forked = g_hash_table_new (NULL, NULL);
  out[0] = (BenchContender) { .name = "posix_spawn+pidfd", .family = "raw",
                              .backend = -1, .start = floor_start,
                              .wait = floor_wait };
  out[1] = (BenchContender) { .name = "fork+exec+waitpid", .family = "raw",
                              .backend = -1, .start = fork_start,
                              .wait = fork_wait };
  return 2;
}
