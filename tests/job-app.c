/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-app: an application that job-test SIGKILLs with a job running.
 *
 *   job-app JOB-HELPER MODE
 *
 * Starts "JOB-HELPER MODE" in a SpawnJob with SPAWN_CHILD_KILL_ON_CLOSE,
 * copies the helper's lines (the PIDs of its tree) to stdout up to its
 * "ready", then prints "cgroup PATH" (or "cgroup -" outside the cgroup
 * mode) and "ready", and waits to be killed.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libspawn/libspawn.h>

int
main (int argc, char **argv)
{
  const char *child_argv[] = { argc > 1 ? argv[1] : "", argc > 2 ? argv[2] : "", NULL };
  SpawnJob *job = spawn_job_new ();
  GError *error = NULL;
  SpawnChild *child;
  char line[256];
  FILE *in;
  int out = -1;

  child = spawn_job_spawn (job, NULL, child_argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL,
                           NULL, 0, NULL, &out, NULL, SPAWN_CHILD_KILL_ON_CLOSE, &error);
  if (child == NULL)
    {
      fprintf (stderr, "job-app: %s\n", error->message);
      return 1;
    }
  in = fdopen (out, "r");
  setvbuf (stdout, NULL, _IONBF, 0);
  while (fgets (line, sizeof line, in) != NULL && strcmp (line, "ready\n") != 0)
    fputs (line, stdout);
  printf ("cgroup %s\n", spawn_job_get_cgroup_path (job) != NULL
                         ? spawn_job_get_cgroup_path (job) : "-");
  printf ("ready\n");
  for (;;)
    pause ();
  return 0;
}
