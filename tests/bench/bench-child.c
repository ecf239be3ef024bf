/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* bench-child MODE ARGS: the children the benchmark starts.
 *
 *   sleep MS      sleep MS milliseconds, then exit 0
 *   stamp FILE    as the very last thing before _exit (0), write at the
 *                 start of FILE two 64-bit numbers: CLOCK_MONOTONIC in
 *                 nanoseconds and the TSC (0 where there is none), for
 *                 guests whose CLOCK_MONOTONIC only moves once a tick
 *   block FIFO    read one byte from FIFO, then exit 0
 *   gate FILE MS  wait for a shared lock on FILE (the parent holds an
 *                 exclusive one until every child of the batch has
 *                 started), then sleep MS milliseconds, then exit 0
 *
 * Plain libc, no GLib, linked statically: the child should cost what a
 * small program costs, not what the dynamic loader costs under TCG.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "sleep") == 0)
    {
      long ms = strtol (argv[2], NULL, 10);
      struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

      while (nanosleep (&ts, &ts) < 0)
        ;
      return 0;
    }
  if (argc == 3 && strcmp (argv[1], "stamp") == 0)
    {
      int fd = open (argv[2], O_WRONLY | O_CLOEXEC);
      struct timespec ts;
      int64_t stamp[2] = { 0, 0 };

      if (fd < 0)
        return 1;
      clock_gettime (CLOCK_MONOTONIC, &ts);
#if defined(__x86_64__) || defined(__i386__)
      stamp[1] = (int64_t) __builtin_ia32_rdtsc ();
#endif
      stamp[0] = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
      if (pwrite (fd, stamp, sizeof (stamp), 0) != sizeof (stamp))
        return 1;
      _exit (0);
    }
  if (argc == 4 && strcmp (argv[1], "gate") == 0)
    {
      int fd = open (argv[2], O_RDONLY | O_CLOEXEC);
      long ms = strtol (argv[3], NULL, 10);
      struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

      if (fd < 0)
        return 1;
      while (flock (fd, LOCK_SH) < 0)
        ;
      close (fd);
      while (nanosleep (&ts, &ts) < 0)
        ;
      return 0;
    }
  if (argc == 3 && strcmp (argv[1], "block") == 0)
    {
      int fd = open (argv[2], O_RDONLY | O_CLOEXEC);
      char c;

      if (fd < 0)
        return 1;
      while (read (fd, &c, 1) < 0)
        ;
      return 0;
    }
  return 2;
}
