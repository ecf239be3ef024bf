/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* kill-app: an application that starts children through libspawn and
 * waits to be killed, for tests/kill-test.c.
 *
 *   kill-app HELPER BACKEND SPEC...
 *
 * BACKEND is clonefd, pidfd or sigchld; each SPEC is KIND:N and starts N
 * children running "HELPER sleep 600000":
 *   kill:N     spawn_async_fd_full() with SPAWN_CHILD_KILL_ON_CLOSE
 *   keep:N     spawn_async_fd_full() without it
 *   thread:N   with it, each from a worker thread that has exited (and
 *              is gone from /proc/self/task) before the line is printed
 *   process:N  SpawnProcess with the kill-on-close property
 *   dropuid:N  with it, and a child_setup that drops to uid and gid 65534
 *              (needs root)
 * For each child one line "KIND PID STARTTIME" (STARTTIME: field 22 of
 * /proc/PID/stat, so that the test can tell the child from a process that
 * reused its PID), then "ready", then it sleeps until killed; every handle
 * is kept.  Errors go to stderr with exit status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libspawn/libspawn.h>

static const char *helper;

static G_GNUC_NORETURN void
die (const char *what, const GError *error)
{
  fprintf (stderr, "kill-app: %s: %s\n", what,
           error != NULL ? error->message : g_strerror (errno));
  exit (2);
}

static char *
start_time (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  char **fields;
  const char *p;
  char *t;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    die ("read /proc/PID/stat", NULL);
  p = strrchr (stat, ')');
  if (p == NULL)
    die ("parse /proc/PID/stat", NULL);
  /* ") S ppid ...": after ") ", field 3 is the first; 22 is the 20th. */
  fields = g_strsplit (p + 2, " ", 21);
  if (g_strv_length (fields) < 20)
    die ("parse /proc/PID/stat", NULL);
  t = g_strdup (fields[19]);
  g_strfreev (fields);
  return t;
}

static void
report (const char *kind, GPid pid)
{
  g_autofree char *t = start_time (pid);

  printf ("%s %d %s\n", kind, (int) pid, t);
  fflush (stdout);
}

/* In the child, between clone and exec: raw syscalls only (glibc's
 * setresuid would try to signal the parent's threads). */
static void
drop_privileges (gpointer data G_GNUC_UNUSED)
{
  if (syscall (SYS_setgroups, 0, NULL) < 0 ||
      syscall (SYS_setresgid, 65534, 65534, 65534) < 0 ||
      syscall (SYS_setresuid, 65534, 65534, 65534) < 0)
    _exit (3);
}

static SpawnChild *
spawn_sleeper_full (SpawnChildFlags child_flags, GSpawnChildSetupFunc setup)
{
  const char *argv[] = { helper, "sleep", "600000", NULL };
  GError *error = NULL;
  SpawnChild *child;

  child = spawn_async_fd_full (NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                               setup, NULL, -1, -1, -1, NULL, NULL, 0,
                               NULL, NULL, NULL, child_flags, &error);
  if (child == NULL)
    die ("spawn", error);
  return child;
}

static SpawnChild *
spawn_sleeper (SpawnChildFlags child_flags)
{
  return spawn_sleeper_full (child_flags, NULL);
}

typedef struct {
  SpawnChild *child;
  pid_t tid;
} ThreadJob;

static gpointer
spawn_in_thread (gpointer data)
{
  ThreadJob *job = data;

  job->tid = gettid ();
  job->child = spawn_sleeper (SPAWN_CHILD_KILL_ON_CLOSE);
  return NULL;
}

/* Until the thread has left the kernel's thread list: by then it has been
 * through exit_notify(), where a parent-death signal would have been sent
 * to the children it started. */
static void
wait_thread_gone (pid_t tid)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/task/%d", (int) tid);
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  while (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      if (g_get_monotonic_time () > deadline)
        {
          errno = ETIMEDOUT;
          die ("worker thread still there", NULL);
        }
      g_usleep (1000);
    }
}

int
main (int argc, char **argv)
{
  GError *error = NULL;
  SpawnBackend backend = SPAWN_BACKEND_AUTO;
  int i, j;

  if (argc < 3)
    {
      fprintf (stderr, "usage: kill-app HELPER BACKEND KIND:N...\n");
      return 2;
    }
  /* Not left behind by a test that fails before it kills us. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  helper = argv[1];
  for (i = SPAWN_BACKEND_CLONEFD; spawn_backend_to_string (i) != NULL; i++)
    if (g_strcmp0 (argv[2], spawn_backend_to_string (i)) == 0)
      backend = i;
  if (backend == SPAWN_BACKEND_AUTO)
    {
      fprintf (stderr, "kill-app: unknown backend %s\n", argv[2]);
      return 2;
    }
  if (!spawn_set_backend (backend, &error))
    die ("spawn_set_backend", error);

  for (i = 3; i < argc; i++)
    {
      char *colon = strchr (argv[i], ':');
      int n = colon != NULL ? atoi (colon + 1) : 0;

      if (colon == NULL || n <= 0)
        {
          fprintf (stderr, "kill-app: bad spec %s\n", argv[i]);
          return 2;
        }
      *colon = '\0';
      for (j = 0; j < n; j++)
        {
          if (strcmp (argv[i], "kill") == 0 || strcmp (argv[i], "keep") == 0)
            {
              SpawnChild *child =
                spawn_sleeper (strcmp (argv[i], "kill") == 0
                                 ? SPAWN_CHILD_KILL_ON_CLOSE
                                 : SPAWN_CHILD_FLAGS_NONE);
              report (argv[i], spawn_child_get_pid (child));
            }
          else if (strcmp (argv[i], "thread") == 0)
            {
              ThreadJob job = { NULL, 0 };

              g_thread_join (g_thread_new ("kill-app-worker", spawn_in_thread, &job));
              wait_thread_gone (job.tid);
              report (argv[i], spawn_child_get_pid (job.child));
            }
          else if (strcmp (argv[i], "dropuid") == 0)
            {
              SpawnChild *child = spawn_sleeper_full (SPAWN_CHILD_KILL_ON_CLOSE,
                                                      drop_privileges);
              report (argv[i], spawn_child_get_pid (child));
            }
          else if (strcmp (argv[i], "process") == 0)
            {
              const char *pargv[] = { helper, "sleep", "600000", NULL };
              SpawnProcess *proc = spawn_process_new (pargv);

              spawn_process_set_kill_on_close (proc, TRUE);
              if (!spawn_process_start (proc, &error))
                die ("spawn_process_start", error);
              report (argv[i], spawn_process_get_pid (proc));
            }
          else
            {
              fprintf (stderr, "kill-app: bad spec %s\n", argv[i]);
              return 2;
            }
        }
    }
  printf ("ready\n");
  fflush (stdout);
  for (;;)
    pause ();
}
