/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn-helper: the programs the libspawn tests start.
 *
 *   exit N          exit with status N
 *   kill SIG        die of signal SIG (core dumps as the rlimit allows)
 *   busy MS         burn MS milliseconds of user CPU, then exit 0
 *   sleep MS        sleep, then exit 0
 *   cat             copy stdin to stdout
 *   list-fds [stderr]  print the open descriptors, one per line
 *   fd-table-size   print the slots of our descriptor table (FDSize in
 *                   /proc/self/status): exec keeps the table it was given
 *   write-fd FD S   write S to FD
 *   env NAME        print $NAME
 *   pwd             print the working directory
 *   stderr S        write S to stderr
 *   lines N         print "line 0" .. "line N-1", one a line, then "end"
 *                   without a newline
 *   interleave N    "out I\n" on stdout and "err I\n" on stderr, alternately,
 *                   for I < N, unbuffered (merged, the order is fixed)
 *   close-stdout    print "bye" without a newline, close stdout, then wait
 *                   for EOF on stdin and exit 3
 *   close-stdin-sleep MS  close stdin, print "closed\n", sleep MS, exit 0
 *   close-stdin-on-usr1 MS  print "ready\n", wait for SIGUSR1 (reading
 *                   nothing), then as close-stdin-sleep MS
 *   sleep-print MS S  sleep MS, then print S
 *   environ         print the whole environment, one variable a line
 *   as-nobody PROG ARGS  drop to uid/gid 65534 and exec PROG (stress-ng
 *                   runs its exec stressor only as non-root)
 *
 * On a terminal (SPAWN_CHANNEL_PTY, spawn_pty_spawn()):
 *   tty-check       print "isatty 0=A 1=B 2=C ctty=D leader=E fg=F\n": which
 *                   of 0-2 are terminals, whether /dev/tty opens (a
 *                   controlling terminal), whether we lead our session, and
 *                   whether our group is the terminal's foreground group
 *   tty-login       "Login: ", read a line with echo as the terminal has it,
 *                   "Password: ", read a line with echo off (restored after),
 *                   then "\nuser=NAME password-length=N\n"
 *   tty-winch       block SIGWINCH, print "size R C\n", wait (30 s at most)
 *                   for SIGWINCH, print "winch R C\n" from TIOCGWINSZ
 *   tty-wait-intr   print "ready\n", then wait for anything on stdin and
 *                   exit 0; ^C on the terminal (SIGINT) kills it first
 *   tty-flood N     write N bytes of 'x' (no newline) and exit at once
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int
write_str (int fd, const char *s)
{
  size_t len = strlen (s);

  return write (fd, s, len) == (ssize_t) len ? 0 : 1;
}

static long
cpu_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
tty_print_size (const char *what)
{
  struct winsize ws;

  if (ioctl (0, TIOCGWINSZ, &ws) < 0)
    return 1;
  printf ("%s %u %u\n", what, ws.ws_row, ws.ws_col);
  return fflush (stdout) != 0;
}

static int
tty_check (void)
{
  int ctty = open ("/dev/tty", O_RDWR | O_NOCTTY);

  printf ("isatty 0=%d 1=%d 2=%d ctty=%d leader=%d fg=%d\n", isatty (0), isatty (1),
          isatty (2), ctty >= 0, getsid (0) == getpid (), tcgetpgrp (0) == getpgrp ());
  return fflush (stdout) != 0;
}

/* A login prompt: what passwd(1) or ssh do with the terminal. */
static int
tty_login (void)
{
  char user[256], password[256];
  struct termios saved, quiet;

  printf ("Login: ");
  fflush (stdout);
  if (fgets (user, sizeof user, stdin) == NULL)
    return 1;
  user[strcspn (user, "\n")] = '\0';
  if (tcgetattr (0, &saved) < 0)
    return 1;
  quiet = saved;
  quiet.c_lflag &= ~ECHO;
  if (tcsetattr (0, TCSAFLUSH, &quiet) < 0)
    return 1;
  printf ("Password: ");
  fflush (stdout);
  if (fgets (password, sizeof password, stdin) == NULL)
    return 1;
  tcsetattr (0, TCSAFLUSH, &saved);
  password[strcspn (password, "\n")] = '\0';
  printf ("\nuser=%s password-length=%zu\n", user, strlen (password));
  return fflush (stdout) != 0;
}

static int
tty_winch (void)
{
  struct timespec limit = { 30, 0 };
  sigset_t set;

  sigemptyset (&set);
  sigaddset (&set, SIGWINCH);
  sigprocmask (SIG_BLOCK, &set, NULL);
  if (tty_print_size ("size") != 0)
    return 1;
  if (sigtimedwait (&set, NULL, &limit) != SIGWINCH)
    return 3;
  return tty_print_size ("winch");
}

static int
tty_command (int argc, char **argv)
{
  char c;

  if (strcmp (argv[1], "tty-check") == 0)
    return tty_check ();
  if (strcmp (argv[1], "tty-login") == 0)
    return tty_login ();
  if (strcmp (argv[1], "tty-winch") == 0)
    return tty_winch ();
  if (strcmp (argv[1], "tty-wait-intr") == 0)
    {
      if (write_str (1, "ready\n") != 0)
        return 1;
      return read (0, &c, 1) == 1 ? 0 : 1;
    }
  if (strcmp (argv[1], "tty-flood") == 0 && argc == 3)
    {
      static char xs[4096];
      long left = atol (argv[2]);

      memset (xs, 'x', sizeof xs);
      while (left > 0)
        {
          ssize_t n = write (1, xs, left < (long) sizeof xs ? (size_t) left : sizeof xs);
          if (n <= 0)
            return 1;
          left -= n;
        }
      return 0;
    }
  fprintf (stderr, "spawn-helper: bad arguments\n");
  return 2;
}

int
main (int argc, char **argv)
{
  const char *cmd = argc > 1 ? argv[1] : "";
  char buf[65536];
  ssize_t n;

  if (strncmp (cmd, "tty-", 4) == 0)
    return tty_command (argc, argv);

  if (strcmp (cmd, "exit") == 0 && argc == 3)
    return atoi (argv[2]);
  if (strcmp (cmd, "as-nobody") == 0 && argc >= 3)
    {
      if (setgroups (0, NULL) < 0 || setgid (65534) < 0 || setuid (65534) < 0)
        {
          perror ("spawn-helper as-nobody");
          return 126;
        }
      execvp (argv[2], argv + 2);
      perror (argv[2]);
      return 127;
    }
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
  if (strcmp (cmd, "fd-table-size") == 0)
    {
      FILE *f = fopen ("/proc/self/status", "r");
      char line[256];
      int found = 0;

      while (f != NULL && !found && fgets (line, sizeof (line), f) != NULL)
        if (strncmp (line, "FDSize:", 7) == 0)
          found = printf ("%d\n", atoi (line + 7)) > 0;
      return found ? 0 : 1;
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
  if (strcmp (cmd, "stderr") == 0 && argc == 3)
    return write_str (2, argv[2]);
  if (strcmp (cmd, "lines") == 0 && argc == 3)
    {
      int i;
      for (i = 0; i < atoi (argv[2]); i++)
        printf ("line %d\n", i);
      printf ("end");
      return 0;
    }
  if (strcmp (cmd, "interleave") == 0 && argc == 3)
    {
      int i;
      for (i = 0; i < atoi (argv[2]); i++)
        {
          snprintf (buf, sizeof (buf), "out %d\n", i);
          if (write_str (1, buf) != 0)
            return 1;
          snprintf (buf, sizeof (buf), "err %d\n", i);
          if (write_str (2, buf) != 0)
            return 1;
        }
      return 0;
    }
  if (strcmp (cmd, "close-stdout") == 0)
    {
      if (write_str (1, "bye") != 0)
        return 1;
      close (1);
      while ((n = read (0, buf, sizeof (buf))) > 0)
        ;
      return 3;
    }
  if (strcmp (cmd, "close-stdin-on-usr1") == 0 && argc == 3)
    {
      sigset_t set;
      int sig;
      /* Blocked before "ready": from then on SIGUSR1 cannot kill us. */
      sigemptyset (&set);
      sigaddset (&set, SIGUSR1);
      sigprocmask (SIG_BLOCK, &set, NULL);
      if (write_str (1, "ready\n") != 0 || sigwait (&set, &sig) != 0)
        return 1;
      cmd = "close-stdin-sleep";
    }
  if (strcmp (cmd, "close-stdin-sleep") == 0 && argc == 3)
    {
      close (0);
      if (write_str (1, "closed\n") != 0)
        return 1;
      usleep (atol (argv[2]) * 1000);
      return 0;
    }
  if (strcmp (cmd, "sleep-print") == 0 && argc == 4)
    {
      usleep (atol (argv[2]) * 1000);
      return write_str (1, argv[3]);
    }
  if (strcmp (cmd, "environ") == 0)
    {
      char **e;
      for (e = environ; *e != NULL; e++)
        printf ("%s\n", *e);
      return 0;
    }
  fprintf (stderr, "spawn-helper: bad arguments\n");
  return 2;
}
