/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-helper: process trees for the job and process-group tests.
 *
 * Every mode prints the PIDs of the descendants it leaves, one a line,
 * then "ready", and then (unless said otherwise) sleeps until killed, so
 * that the test can open a pidfd on each before anything can end.
 *
 *   ids              print "PID PGID SID", then "ready", then sleep
 *   tree N           N children that sleep
 *   daemon           a double fork: the grandchild sleeps, its parent exits
 *   setsid-daemon    as daemon, and the grandchild calls setsid() first
 *   all              one of each of the three above
 *   exit-after-tree N  as tree N, but exit 0 after "ready"
 *   busy-tree N MS   N children that each burn MS ms of user CPU; wait for
 *                    them, exit 0 (no "ready")
 *   busy-orphans N MS  N children that each burn MS ms of user CPU and exit;
 *                    print their PIDs and "ready" and exit 0 at once, without
 *                    waiting for them (their CPU time is in no rusage of ours)
 *   hog MIB          allocate and touch MIB MiB, 1 MiB at a time, then
 *                    sleep; "ready" once all is touched
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void
sleep_forever (void)
{
  for (;;)
    pause ();
}

/* A process of the tree lets go of our stdout, so that the test reading
 * it sees its end once we exit, whoever of the tree still runs. */
static void
leave_stdout (void)
{
  if (!freopen ("/dev/null", "w", stdout))
    _exit (5);
}

/* A child that sleeps forever; its PID.  A fork that fails is reported on
 * stdout ("fork-failed ERRNO", before "ready" would come), then we exit:
 * the pids controller of a cgroup above the job may allow fewer. */
static pid_t
start_sleeper (void)
{
  pid_t pid = fork ();

  if (pid < 0)
    {
      printf ("fork-failed %d\n", errno);
      exit (2);
    }
  if (pid == 0)
    {
      leave_stdout ();
      sleep_forever ();
    }
  return pid;
}

/* A double fork, with setsid() in the grandchild if @new_session; the
 * grandchild's PID, learnt through a pipe. */
static pid_t
start_daemon (int new_session)
{
  int p[2];
  pid_t pid, grandchild = -1;

  if (pipe (p) < 0)
    exit (2);
  pid = fork ();
  if (pid < 0)
    exit (2);
  if (pid == 0)
    {
      pid_t g = fork ();
      if (g < 0)
        _exit (2);
      if (g == 0)
        {
          leave_stdout ();
          if (new_session && setsid () < 0)
            _exit (3);
          g = getpid ();
          if (write (p[1], &g, sizeof g) != sizeof g)
            _exit (4);
          close (p[1]);
          sleep_forever ();
        }
      _exit (0);
    }
  close (p[1]);
  if (read (p[0], &grandchild, sizeof grandchild) != sizeof grandchild)
    exit (2);
  close (p[0]);
  waitpid (pid, NULL, 0);
  return grandchild;
}

static void
burn (long ms)
{
  struct timespec ts;
  double end;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  end = ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6 + ms;
  do
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  while (ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6 < end);
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  int n = argc > 2 ? atoi (argv[2]) : 0;
  int i;

  setvbuf (stdout, NULL, _IONBF, 0);
  if (strcmp (mode, "ids") == 0)
    printf ("%d %d %d\n", (int) getpid (), (int) getpgid (0), (int) getsid (0));
  else if (strcmp (mode, "tree") == 0 || strcmp (mode, "exit-after-tree") == 0)
    for (i = 0; i < n; i++)
      printf ("%d\n", (int) start_sleeper ());
  else if (strcmp (mode, "daemon") == 0)
    printf ("%d\n", (int) start_daemon (0));
  else if (strcmp (mode, "setsid-daemon") == 0)
    printf ("%d\n", (int) start_daemon (1));
  else if (strcmp (mode, "all") == 0)
    {
      printf ("%d\n", (int) start_sleeper ());
      printf ("%d\n", (int) start_daemon (0));
      printf ("%d\n", (int) start_daemon (1));
    }
  else if (strcmp (mode, "busy-tree") == 0)
    {
      long ms = argc > 3 ? atol (argv[3]) : 100;

      for (i = 0; i < n; i++)
        if (fork () == 0)
          {
            burn (ms);
            _exit (0);
          }
      while (wait (NULL) > 0)
        ;
      return 0;
    }
  else if (strcmp (mode, "busy-orphans") == 0)
    {
      long ms = argc > 3 ? atol (argv[3]) : 100;

      for (i = 0; i < n; i++)
        {
          pid_t pid = fork ();

          if (pid == 0)
            {
              burn (ms);
              _exit (0);
            }
          printf ("%d\n", (int) pid);
        }
      printf ("ready\n");
      return 0;
    }
  else if (strcmp (mode, "hog") == 0)
    {
      for (i = 0; i < n; i++)
        {
          char *p = malloc (1 << 20);
          if (p == NULL)
            return 2;
          memset (p, i + 1, 1 << 20);
        }
    }
  else
    {
      fprintf (stderr, "job-helper: unknown mode “%s”\n", mode);
      return 2;
    }
  printf ("ready\n");
  if (strcmp (mode, "exit-after-tree") == 0)
    return 0;
  sleep_forever ();
  return 0;
}
