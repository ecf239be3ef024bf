/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn-job.h - a process tree as one unit
 *
 * A SpawnJob holds what a spawn started and everything that started in
 * turn: with a writable cgroup v2 hierarchy, a cgroup of its own, which
 * the child is born in and no descendant can leave; elsewhere a process
 * group.  Killing the job kills the tree; the job tells the tree's CPU
 * time and (memory controller, 6.8+) its peak memory.
 */
#pragma once

#if !defined (LIBSPAWN_INSIDE) && !defined (LIBSPAWN_COMPILATION)
#error "Only <libspawn/libspawn.h> can be included directly."
#endif

#include <gio/gio.h>

#include <libspawn/spawn-async.h>

G_BEGIN_DECLS

/**
 * SpawnJobMode:
 * @SPAWN_JOB_MODE_NONE: nothing started in the job yet: the mode is chosen
 *   at the first spawn
 * @SPAWN_JOB_MODE_CGROUP: a cgroup v2 of its own: no descendant can leave
 *   it, killing it kills them all (cgroup.kill), and its CPU time and
 *   memory are the whole tree's
 * @SPAWN_JOB_MODE_PROCESS_GROUP: no cgroup could be made here (no cgroup2
 *   mounted, or not writable by us): each child leads a process group,
 *   which reaches the descendants that stay in it, while the child runs.
 *   A descendant that calls setsid() or setpgid() (a daemon) escapes, and
 *   the job's CPU time is that of the children it has seen end
 *
 * How a #SpawnJob holds its processes; see [Process groups, sessions and
 * jobs](process.html#process-groups-sessions-and-jobs-stopping-the-whole-tree)
 * in the SpawnProcess guide.
 *
 * Since: 0.3
 */
typedef enum {
  SPAWN_JOB_MODE_NONE,
  SPAWN_JOB_MODE_CGROUP,
  SPAWN_JOB_MODE_PROCESS_GROUP,
} SpawnJobMode;

#define SPAWN_TYPE_JOB (spawn_job_get_type ())
/* The macro's first declaration is spawn_job_get_type()'s. */
SPAWN_AVAILABLE_IN_0_3
G_DECLARE_FINAL_TYPE (SpawnJob, spawn_job, SPAWN, JOB, GObject)

SPAWN_AVAILABLE_IN_0_3
SpawnJob *spawn_job_new (void);

/* Limits: before the first spawn. */
SPAWN_AVAILABLE_IN_0_3
void     spawn_job_set_memory_max (SpawnJob *job, guint64 bytes);
SPAWN_AVAILABLE_IN_0_3
guint64  spawn_job_get_memory_max (SpawnJob *job);
SPAWN_AVAILABLE_IN_0_3
void     spawn_job_set_pids_max (SpawnJob *job, guint64 pids);
SPAWN_AVAILABLE_IN_0_3
guint64  spawn_job_get_pids_max (SpawnJob *job);
SPAWN_AVAILABLE_IN_0_3
void     spawn_job_set_cpu_max (SpawnJob *job, guint64 quota_usec, guint64 period_usec);
SPAWN_AVAILABLE_IN_0_3
guint64  spawn_job_get_cpu_max (SpawnJob *job, guint64 *period_usec);

SPAWN_AVAILABLE_IN_0_3
SpawnJobMode spawn_job_get_mode (SpawnJob *job);
SPAWN_AVAILABLE_IN_0_3
const char  *spawn_job_get_cgroup_path (SpawnJob *job);
SPAWN_AVAILABLE_IN_0_3
void         spawn_job_set_require_cgroup (SpawnJob *job, gboolean require);
SPAWN_AVAILABLE_IN_0_3
gboolean     spawn_job_get_require_cgroup (SpawnJob *job);
SPAWN_AVAILABLE_IN_0_3
GError      *spawn_job_dup_fallback_error (SpawnJob *job);

SPAWN_AVAILABLE_IN_0_3
gboolean spawn_job_send_signal (SpawnJob *job, int signum, GError **error);
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_job_kill (SpawnJob *job, GError **error);
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_job_is_empty (SpawnJob *job);
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_job_close (SpawnJob *job, int timeout_ms, GError **error);

/* What the tree used, so far or (after spawn_job_close()) in all. */
SPAWN_AVAILABLE_IN_0_3
guint64  spawn_job_get_cpu_usec (SpawnJob *job, guint64 *user_usec, guint64 *system_usec);
SPAWN_AVAILABLE_IN_0_3
gboolean spawn_job_get_memory_peak (SpawnJob *job, guint64 *bytes);
SPAWN_AVAILABLE_IN_0_3
guint64  spawn_job_get_oom_kills (SpawnJob *job);

SPAWN_AVAILABLE_IN_0_3
SpawnChild *spawn_job_spawn (SpawnJob             *job,
                             const char           *working_directory,
                             const char * const   *argv,
                             const char * const   *envp,
                             GSpawnFlags           flags,
                             GSpawnChildSetupFunc  child_setup,
                             gpointer              user_data,
                             int                   stdin_fd,
                             int                   stdout_fd,
                             int                   stderr_fd,
                             const int            *source_fds,
                             const int            *target_fds,
                             gsize                 n_fds,
                             int                  *stdin_pipe_out,
                             int                  *stdout_pipe_out,
                             int                  *stderr_pipe_out,
                             SpawnChildFlags       child_flags,
                             GError              **error);
SPAWN_AVAILABLE_IN_0_3
SpawnChild *spawn_job_spawn_with_pipes (SpawnJob            *job,
                                        const char          *working_directory,
                                        const char * const  *argv,
                                        const char * const  *envp,
                                        GSpawnFlags          flags,
                                        SpawnChildFlags      child_flags,
                                        SpawnPipeFlags       pipes,
                                        int                  stdin_fd,
                                        int                  stdout_fd,
                                        int                  stderr_fd,
                                        const int           *source_fds,
                                        const int           *target_fds,
                                        gsize                n_fds,
                                        int                 *stdin_pipe_out,
                                        int                 *stdout_pipe_out,
                                        int                 *stderr_pipe_out,
                                        GError             **error);

G_END_DECLS
