/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-private.h - what job.c, job-cgroup.c and spawn.c share
 *
 * job.c is the SpawnJob object and the choice of its mode; job-cgroup.c
 * the cgroup v2 files; spawn.c puts a child into a job through
 * _spawn_job_prepare() and _spawn_job_born().  Calls go spawn.c ->
 * job.c -> job-cgroup.c, never back; child.c tells a job that a child's
 * last reference went only through the hook the job set on it
 * (SpawnChild's forget).
 */
#pragma once

#include "core-private.h"

#include <libspawn/spawn-job.h>

typedef struct {
  guint64 memory_max;         /* bytes; 0: none */
  guint64 pids_max;           /* 0: none */
  guint64 cpu_quota_usec;     /* 0: none */
  guint64 cpu_period_usec;
} SpawnJobLimits;

typedef struct {
  guint64 cpu_usec;
  guint64 user_usec;
  guint64 system_usec;
  guint64 memory_peak;
  gboolean have_memory_peak;
  guint64 oom_kills;
} SpawnJobUsage;

typedef struct {
  char *path;                 /* absolute; NULL: none */
  int dir_fd;                 /* for CLONE_INTO_CGROUP */
  int procs_fd;               /* cgroup.procs, for a child to move itself */
} SpawnCgroup;

/* job-cgroup.c */
/* Our own cgroup's absolute path (cached); -ENOENT: no cgroup2 here. */
int  _spawn_cgroup_self (const char **path);
/* The absolute path of @hierarchy_path (as /proc/PID/cgroup or systemd's
 * ControlGroup name it) under our cgroup2 mount. */
int  _spawn_cgroup_from_hierarchy (const char *hierarchy_path, char **path);
/* mkdir @name below @parent (NULL: our own cgroup) with @limits; on
 * failure *@failed_what (allocated) says what could not be had. */
int  _spawn_cgroup_create (SpawnCgroup *cg, const char *parent, const char *name,
                           const SpawnJobLimits *limits, char **failed_what);
int  _spawn_cgroup_signal (SpawnCgroup *cg, int signum);
int  _spawn_cgroup_populated (SpawnCgroup *cg);
int  _spawn_cgroup_wait_empty (SpawnCgroup *cg, int timeout_ms);
void _spawn_cgroup_read_usage (SpawnCgroup *cg, SpawnJobUsage *usage);
/* Removes the directory and every cgroup a program of the job made below
 * it, deepest first; then closes the fds and forgets the path.  On
 * failure (EBUSY while populated) keeps all of it, and *@failed_path
 * (allocated, if not NULL) names the directory that could not go. */
int  _spawn_cgroup_remove (SpawnCgroup *cg, char **failed_path);
/* Closes the fds and forgets the path; the directory stays. */
void _spawn_cgroup_release (SpawnCgroup *cg);

/* job.c */
/* Before a spawn into @job: make its cgroup if it has none (or choose the
 * process-group mode, or fail if the job requires a cgroup), and set
 * @plan's cgroup or process group.  On success the spawn holds a birth:
 * until _spawn_job_born() the job stays in its phase (a close waits), so
 * that the cgroup fds in @plan stay valid and the child is born into a
 * cgroup that a close then sees. */
gboolean _spawn_job_prepare (SpawnJob *job, const char *argv0, SpawnExecPlan *plan,
                             GError **error);
/* After the spawn that _spawn_job_prepare() let in: @child (NULL if the
 * spawn failed) belongs to @job; the birth is over. */
void     _spawn_job_born (SpawnJob *job, SpawnChild *child);
/* Kill-on-close for the tree, during a birth: the argv of a guardian that
 * @job's cgroup needs, to be started by the caller outside the job with
 * the read end of a pipe as its stdin, then _spawn_job_set_guardian()
 * with the write end (or NULL and -1 if it could not be started).  NULL:
 * the cgroup has its guardian (or is not in the cgroup mode).  One caller
 * at a time is given the argv; another waits until that one has set it. */
char   **_spawn_job_guardian_claim (SpawnJob *job);
void     _spawn_job_set_guardian (SpawnJob *job, SpawnChild *guardian, int pipe_fd);
