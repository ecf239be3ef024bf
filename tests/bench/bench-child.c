/* bench-child MODE ARGS: the children the benchmark starts.
 *
 *   sleep MS      sleep MS milliseconds, then exit 0
 *   stamp FILE    write CLOCK_MONOTONIC (8 bytes of nanoseconds) at the
 *                 start of FILE as the very last thing, then _exit (0)
 *   block FIFO    read one byte from FIFO, then exit 0
 *
 * Plain libc, no GLib: the child should cost what a small program costs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
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
      int64_t ns;

      if (fd < 0)
        return 1;
      clock_gettime (CLOCK_MONOTONIC, &ts);
      ns = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
      if (pwrite (fd, &ns, sizeof (ns), 0) != sizeof (ns))
        return 1;
      _exit (0);
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
