/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-private.h - what job.c, job-cgroup.c and spawn.c share
 *
 * job.c is the SpawnJob object and the choice of its mode; job-cgroup.c
 * the cgroup v2 files; spawn.c puts a child into a job through
 * _spawn_job_prepare() and _spawn_job_adopt().  Calls go spawn.c ->
 * job.c -> job-cgroup.c, never back.
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
/* Closes its fds and removes the directory (EBUSY while populated). */
int  _spawn_cgroup_remove (SpawnCgroup *cg);

/* job.c */
/* Before a spawn into @job: make its cgroup if it has none (or choose the
 * process-group mode), and set @plan's cgroup or process group. */
gboolean _spawn_job_prepare (SpawnJob *job, const char *argv0, SpawnExecPlan *plan,
                             GError **error);
/* After it: @child belongs to @job. */
void     _spawn_job_adopt (SpawnJob *job, SpawnChild *child);
/* Kill-on-close for the tree: the argv of a guardian that @job's cgroup
 * needs (NULL: it has one, or is not in the cgroup mode), to be started
 * by the caller outside the job with the read end of a pipe as its stdin;
 * then _spawn_job_set_guardian() with the write end. */
char   **_spawn_job_guardian_argv (SpawnJob *job);
void     _spawn_job_set_guardian (SpawnJob *job, SpawnChild *guardian, int pipe_fd);
