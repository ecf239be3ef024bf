/* spawn-helper: the programs the libspawn tests start.
 *
 *   exit N          exit with status N
 *   kill SIG        die of signal SIG (core dumps as the rlimit allows)
 *   busy MS         burn MS milliseconds of user CPU, then exit 0
 *   sleep MS        sleep, then exit 0
 *   cat             copy stdin to stdout
 *   list-fds [stderr]  print the open descriptors, one per line
 *   write-fd FD S   write S to FD
 *   env NAME        print $NAME
 *   pwd             print the working directory
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long
cpu_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
main (int argc, char **argv)
{
  const char *cmd = argc > 1 ? argv[1] : "";
  char buf[65536];
  ssize_t n;

  if (strcmp (cmd, "exit") == 0 && argc == 3)
    return atoi (argv[2]);
  if (strcmp (cmd, "kill") == 0 && argc == 3)
    {
      struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
      setrlimit (RLIMIT_CORE, &rl);
      signal (atoi (argv[2]), SIG_DFL);
      raise (atoi (argv[2]));
      return 99;
    }
  if (strcmp (cmd, "busy") == 0 && argc == 3)
    {
      volatile unsigned long x = 0;
      long until = cpu_ms () + atol (argv[2]);
      unsigned long i;
      /* Mostly user time: look at the clock (a syscall where the vDSO
       * cannot answer) only now and then. */
      while (cpu_ms () < until)
        for (i = 0; i < 1000000; i++)
          x++;
      return 0;
    }
  if (strcmp (cmd, "sleep") == 0 && argc == 3)
    {
      usleep (atol (argv[2]) * 1000);
      return 0;
    }
  if (strcmp (cmd, "cat") == 0)
    {
      while ((n = read (0, buf, sizeof (buf))) > 0)
        if (write (1, buf, n) != n)
          return 1;
      return n < 0;
    }
  if (strcmp (cmd, "list-fds") == 0)
    {
      FILE *out = argc == 3 && strcmp (argv[2], "stderr") == 0 ? stderr : stdout;
      int fd;
      for (fd = 0; fd < 4096; fd++)
        if (fcntl (fd, F_GETFD) >= 0)
          fprintf (out, "%d\n", fd);
      return 0;
    }
  if (strcmp (cmd, "write-fd") == 0 && argc == 4)
    {
      size_t len = strlen (argv[3]);
      return write (atoi (argv[2]), argv[3], len) != (ssize_t) len;
    }
  if (strcmp (cmd, "env") == 0 && argc == 3)
    {
      const char *v = getenv (argv[2]);
      printf ("%s\n", v ? v : "(unset)");
      return 0;
    }
  if (strcmp (cmd, "pwd") == 0)
    {
      if (!getcwd (buf, sizeof (buf)))
        return 1;
      printf ("%s\n", buf);
      return 0;
    }
  fprintf (stderr, "spawn-helper: bad arguments\n");
  return 2;
}
