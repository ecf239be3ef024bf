/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job.c - SpawnJob: a process tree as one unit
 *
 * The mode is chosen at the first spawn (_spawn_job_prepare()): a cgroup
 * of the job's own where we may make one (job-cgroup.c), else a process
 * group per child.  LIBSPAWN_JOB_MODE=process-group forces the second, so
 * that one machine tests both.  The cgroup lives until spawn_job_close()
 * or the job's finalization, which kill what is left, wait for it to be
 * gone and remove the directory.
 */
#include "job-private.h"
#include "job-systemd-private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* How long finalization waits for a killed tree to be gone before it gives
 * up on removing the cgroup (a process stuck in the kernel). */
#define JOB_FINALIZE_TIMEOUT_MS 5000

struct _SpawnJob {
  GObject parent_instance;

  GMutex lock;                /* everything below */
  SpawnJobLimits limits;
  SpawnJobMode mode;
  char *fallback_reason;      /* why not a cgroup, in words */
  SpawnCgroup cgroup;         /* path NULL: none (yet, or any more) */
  SpawnJobUsage usage;        /* of the cgroup, read when it was removed */
  GPtrArray *children;        /* SpawnChild *, each a reference */
  /* Kill-on-close for the tree: a shell outside the job that kills its
   * cgroup and removes it once its stdin, a pipe whose only write end is
   * @guardian_fd, reports EOF: when we close it, or when the kernel does
   * because the application died, however it died. */
  SpawnChild *guardian;
  int guardian_fd;
};

/* The guardian's script: $0 is the cgroup.  Before 5.14 (no cgroup.kill)
 * it kills what cgroup.procs lists until it lists nothing. */
static const char job_guardian_script[] =
  "cat >/dev/null\n"
  "echo 1 >\"$0/cgroup.kill\" 2>/dev/null ||\n"
  "  while [ -s \"$0/cgroup.procs\" ]; do kill -9 $(cat \"$0/cgroup.procs\") 2>/dev/null; done\n"
  "while read -r key value <\"$0/cgroup.events\"; do\n"
  "  [ \"$value\" = 0 ] && break\n"
  "  sleep 1\n"
  "done\n"
  "rmdir \"$0\" 2>/dev/null\n";

enum {
  PROP_0,
  PROP_MEMORY_MAX,
  PROP_PIDS_MAX,
  PROP_MODE,
  PROP_CGROUP_PATH,
  N_PROPS,
};

static GParamSpec *job_props[N_PROPS];
static guint job_serial;

/* G_DEFINE_FINAL_TYPE, spelt out: call-graph takes that macro for a
 * function of process.c. */
G_DEFINE_TYPE_EXTENDED (SpawnJob, spawn_job, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL, {})

/**
 * SpawnJob:
 *
 * A process tree as one unit: what [method@Spawn.Job.spawn] (or a
 * [class@Spawn.Process] given the job with [method@Spawn.Process.set_job])
 * starts, and everything that starts in turn, however it forks, double
 * forks or calls setsid().
 *
 * With a cgroup v2 hierarchy we may write to (as root, or in a subtree
 * systemd delegated to us) the job is a cgroup of its own below ours,
 * which the child is born in (CLONE_INTO_CGROUP: clone3's with the pidfd
 * backend, clone4's with clonefd; with sigchld the child moves itself
 * there before it runs any code of the caller's).  [method@Spawn.Job.kill] kills the
 * whole tree at once (cgroup.kill), [method@Spawn.Job.get_cpu_usec] is the
 * tree's CPU time, limits (memory, number of processes, CPU) apply to the
 * tree.  Where no cgroup can be made the job falls back on a process group
 * per child ([enum@Spawn.JobMode]), which a setsid() escapes;
 * [method@Spawn.Job.get_mode] says which.
 *
 * Neither GSubprocess nor QProcess has this; see docs/process.md.
 *
 * Since: 0.3
 */

/**
 * spawn_job_new:
 *
 * A new, empty job.  Its cgroup is made at the first spawn into it.
 *
 * Returns: (transfer full): the job
 *
 * Since: 0.3
 */
SpawnJob *
spawn_job_new (void)
{
  return g_object_new (SPAWN_TYPE_JOB, NULL);
}

static void
job_check_not_started (SpawnJob *job, const char *what)
{
  if (job->mode != SPAWN_JOB_MODE_NONE)
    g_warning ("SpawnJob: %s set after the first spawn applies to the next cgroup "
               "only (after spawn_job_close())", what);
}

/**
 * spawn_job_set_memory_max:
 * @job: a job
 * @bytes: the most memory the tree may use (cgroup memory.max), or 0 for
 *   no limit
 *
 * Beyond it the kernel reclaims and then OOM-kills a process of the tree
 * ([method@Spawn.Job.get_oom_kills] counts them).  Needs the cgroup
 * mode and the memory controller: a spawn into a job with a limit that
 * cannot be had fails, it does not fall back.  Set before the first spawn.
 *
 * Since: 0.3
 */
void
spawn_job_set_memory_max (SpawnJob *job, guint64 bytes)
{
  g_return_if_fail (SPAWN_IS_JOB (job));
  g_mutex_lock (&job->lock);
  job_check_not_started (job, "memory-max");
  job->limits.memory_max = bytes;
  g_mutex_unlock (&job->lock);
  g_object_notify_by_pspec (G_OBJECT (job), job_props[PROP_MEMORY_MAX]);
}

/**
 * spawn_job_get_memory_max:
 * @job: a job
 *
 * The tree's memory limit.
 *
 * Returns: what [method@Spawn.Job.set_memory_max] set
 *
 * Since: 0.3
 */
guint64
spawn_job_get_memory_max (SpawnJob *job)
{
  g_return_val_if_fail (SPAWN_IS_JOB (job), 0);
  return job->limits.memory_max;
}

/**
 * spawn_job_set_pids_max:
 * @job: a job
 * @pids: the most processes and threads the tree may have at once
 *   (cgroup pids.max), or 0 for no limit
 *
 * A fork beyond it fails with EAGAIN.  As [method@Spawn.Job.set_memory_max],
 * with the pids controller.
 *
 * Since: 0.3
 */
void
spawn_job_set_pids_max (SpawnJob *job, guint64 pids)
{
  g_return_if_fail (SPAWN_IS_JOB (job));
  g_mutex_lock (&job->lock);
  job_check_not_started (job, "pids-max");
  job->limits.pids_max = pids;
  g_mutex_unlock (&job->lock);
  g_object_notify_by_pspec (G_OBJECT (job), job_props[PROP_PIDS_MAX]);
}

/**
 * spawn_job_get_pids_max:
 * @job: a job
 *
 * The tree's limit on processes and threads.
 *
 * Returns: what [method@Spawn.Job.set_pids_max] set
 *
 * Since: 0.3
 */
guint64
spawn_job_get_pids_max (SpawnJob *job)
{
  g_return_val_if_fail (SPAWN_IS_JOB (job), 0);
  return job->limits.pids_max;
}

/**
 * spawn_job_set_cpu_max:
 * @job: a job
 * @quota_usec: CPU time the tree may use per period, in microseconds, or 0
 *   for no limit
 * @period_usec: the period, in microseconds (0: the kernel's 100000)
 *
 * cgroup cpu.max: a quota of 50000 in a period of 100000 is half a CPU.  As
 * [method@Spawn.Job.set_memory_max], with the cpu controller.
 *
 * Since: 0.3
 */
void
spawn_job_set_cpu_max (SpawnJob *job, guint64 quota_usec, guint64 period_usec)
{
  g_return_if_fail (SPAWN_IS_JOB (job));
  g_mutex_lock (&job->lock);
  job_check_not_started (job, "cpu-max");
  job->limits.cpu_quota_usec = quota_usec;
  job->limits.cpu_period_usec = period_usec != 0 ? period_usec : 100000;
  g_mutex_unlock (&job->lock);
}

/**
 * spawn_job_get_cpu_max:
 * @job: a job
 * @period_usec: (out) (optional): the period
 *
 * The tree's CPU limit.
 *
 * Returns: the quota [method@Spawn.Job.set_cpu_max] set, 0 for none
 *
 * Since: 0.3
 */
guint64
spawn_job_get_cpu_max (SpawnJob *job, guint64 *period_usec)
{
  g_return_val_if_fail (SPAWN_IS_JOB (job), 0);
  if (period_usec != NULL)
    *period_usec = job->limits.cpu_period_usec;
  return job->limits.cpu_quota_usec;
}

/**
 * spawn_job_get_mode:
 * @job: a job
 *
 * How the job holds its processes: %SPAWN_JOB_MODE_NONE before the first
 * spawn, then %SPAWN_JOB_MODE_CGROUP or, where no cgroup could be made,
 * %SPAWN_JOB_MODE_PROCESS_GROUP (the debug log says why).
 *
 * Returns: the mode
 *
 * Since: 0.3
 */
SpawnJobMode
spawn_job_get_mode (SpawnJob *job)
{
  SpawnJobMode mode;

  g_return_val_if_fail (SPAWN_IS_JOB (job), SPAWN_JOB_MODE_NONE);
  g_mutex_lock (&job->lock);
  mode = job->mode;
  g_mutex_unlock (&job->lock);
  return mode;
}

/**
 * spawn_job_get_cgroup_path:
 * @job: a job
 *
 * Where the job's cgroup is, for a look at its other files.
 *
 * Returns: (nullable): the absolute path of the job's cgroup directory,
 *   or %NULL if it has none (not started, closed, or not in the cgroup
 *   mode)
 *
 * Since: 0.3
 */
const char *
spawn_job_get_cgroup_path (SpawnJob *job)
{
  g_return_val_if_fail (SPAWN_IS_JOB (job), NULL);
  return job->cgroup.path;
}

/* Only the forced fallback and "no cgroup here, or not ours to write"
 * fall back; anything else (EMFILE, ENOMEM, the kernel's
 * cgroup.max.descendants) is this spawn failing. */
static gboolean
job_cgroup_unavailable (int err)
{
  return err == -ENOENT || err == -EACCES || err == -EPERM || err == -EROFS ||
         err == -ENOTDIR;
}

static gboolean
job_has_limits (SpawnJob *job)
{
  return job->limits.memory_max > 0 || job->limits.pids_max > 0 ||
         job->limits.cpu_quota_usec > 0;
}

/* Called with the lock held: the job's cgroup, or its fallback. */
static gboolean
job_choose_mode (SpawnJob *job, const char *argv0, GError **error)
{
  g_autofree char *name = NULL, *failed_what = NULL;
  const char *forced = g_getenv ("LIBSPAWN_JOB_MODE");
  const char *parent = NULL;
  int err;

  if (forced != NULL && strcmp (forced, "process-group") == 0)
    err = -EPERM;
  else
    {
      name = g_strdup_printf ("libspawn-job-%d-%u", (int) getpid (),
                              g_atomic_int_add (&job_serial, 1));
      /* Under our user's systemd instance, below a scope it delegated. */
      err = _spawn_job_systemd_parent (&parent, &failed_what);
      if (err == 0)
        err = _spawn_cgroup_create (&job->cgroup, parent, name, &job->limits, &failed_what);
    }
  if (err == 0)
    {
      job->mode = SPAWN_JOB_MODE_CGROUP;
      return TRUE;
    }
  if (job_has_limits (job))
    {
      g_propagate_error (error,
                         _spawn_error_new (-err, "Cannot start “%s” with limits: cannot "
                                           "have %s%s", argv0,
                                           failed_what != NULL ? failed_what
                                                               : "a cgroup v2 of its own",
                                           err == -ENODEV ? " (not available to our "
                                           "cgroup: bound to cgroup v1, or not delegated)"
                                           : err == -EBUSY ? " (our cgroup has processes of "
                                           "its own, so it cannot enable controllers for its "
                                           "children: run the application in a leaf of a "
                                           "delegated cgroup)" : ""));
      return FALSE;
    }
  if (!job_cgroup_unavailable (err))
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot make a cgroup (%s) for “%s”",
                                                  failed_what, argv0));
      return FALSE;
    }
  g_free (job->fallback_reason);
  job->fallback_reason = forced != NULL ? g_strdup ("LIBSPAWN_JOB_MODE=process-group")
    : g_strdup_printf ("%s: %s", failed_what != NULL ? failed_what : "no cgroup2 mounted",
                       g_strerror (-err));
  g_debug ("job: process-group mode for “%s” (%s)", argv0, job->fallback_reason);
  job->mode = SPAWN_JOB_MODE_PROCESS_GROUP;
  return TRUE;
}

gboolean
_spawn_job_prepare (SpawnJob *job, const char *argv0, SpawnExecPlan *plan, GError **error)
{
  gboolean ok = TRUE;
  SpawnJobMode mode;

  g_mutex_lock (&job->lock);
  if (job->cgroup.path == NULL && job->mode != SPAWN_JOB_MODE_PROCESS_GROUP)
    ok = job_choose_mode (job, argv0, error);
  mode = job->mode;
  if (ok && mode == SPAWN_JOB_MODE_CGROUP)
    {
      plan->cgroup_fd = job->cgroup.dir_fd;
      plan->cgroup_procs_fd = job->cgroup.procs_fd;
    }
  else if (ok && !plan->new_session)
    plan->new_process_group = TRUE;
  g_mutex_unlock (&job->lock);
  if (ok)
    g_object_notify_by_pspec (G_OBJECT (job), job_props[PROP_MODE]);
  return ok;
}

char **
_spawn_job_guardian_argv (SpawnJob *job)
{
  char **argv = NULL;

  g_mutex_lock (&job->lock);
  if (job->guardian == NULL && job->cgroup.path != NULL)
    {
      argv = g_new0 (char *, 5);
      argv[0] = g_strdup ("/bin/sh");
      argv[1] = g_strdup ("-c");
      argv[2] = g_strdup (job_guardian_script);
      argv[3] = g_strdup (job->cgroup.path);
    }
  g_mutex_unlock (&job->lock);
  return argv;
}

void
_spawn_job_set_guardian (SpawnJob *job, SpawnChild *guardian, int pipe_fd)
{
  g_mutex_lock (&job->lock);
  g_assert (job->guardian == NULL);
  job->guardian = guardian;
  job->guardian_fd = pipe_fd;
  g_mutex_unlock (&job->lock);
}

/* With the lock held: EOF to the guardian, which then finds the cgroup
 * empty (or gone) and exits; the reaper takes it. */
static void
job_release_guardian (SpawnJob *job)
{
  if (job->guardian_fd >= 0)
    close (job->guardian_fd);
  job->guardian_fd = -1;
  g_clear_pointer (&job->guardian, spawn_child_unref);
}

void
_spawn_job_adopt (SpawnJob *job, SpawnChild *child)
{
  g_mutex_lock (&job->lock);
  g_ptr_array_add (job->children, spawn_child_ref (child));
  g_mutex_unlock (&job->lock);
}

/* The process-group mode: @signum to each child's group while the child
 * leads it. */
static int
job_signal_groups (SpawnJob *job, int signum)
{
  guint i;
  int err = 0;

  for (i = 0; i < job->children->len; i++)
    {
      SpawnChild *child = g_ptr_array_index (job->children, i);
      GError *local_error = NULL;

      if (!spawn_child_send_signal_to_group (child, signum, &local_error))
        {
          if (!g_error_matches (local_error, SPAWN_ERROR, SPAWN_ERROR_SRCH))
            err = -EPERM;
          g_error_free (local_error);
        }
    }
  return err;
}

/**
 * spawn_job_send_signal:
 * @job: a job
 * @signum: the signal
 * @error: return location for a #GError
 *
 * Sends @signum to every process of the job.  In the cgroup mode: each
 * process listed in the cgroup, through a pidfd checked to be in the job
 * (never a process that reused a PID); one forked during the walk may be
 * missed, which [method@Spawn.Job.kill] never does.  In the process-group
 * mode: the group of each child that still runs.
 *
 * Returns: %TRUE if sent (also to an empty job)
 *
 * Since: 0.3
 */
gboolean
spawn_job_send_signal (SpawnJob *job, int signum, GError **error)
{
  int err = 0;

  g_return_val_if_fail (SPAWN_IS_JOB (job), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&job->lock);
  if (job->cgroup.path != NULL)
    err = _spawn_cgroup_signal (&job->cgroup, signum);
  else if (job->mode == SPAWN_JOB_MODE_PROCESS_GROUP)
    err = job_signal_groups (job, signum);
  g_mutex_unlock (&job->lock);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot signal the processes of "
                                                  "job %s", job->cgroup.path != NULL
                                                  ? job->cgroup.path : "(process groups)"));
      return FALSE;
    }
  return TRUE;
}

/**
 * spawn_job_kill:
 * @job: a job
 * @error: return location for a #GError
 *
 * Kills every process of the job with SIGKILL: in the cgroup mode through
 * cgroup.kill (Linux 5.14), which also reaches what forks meanwhile.  The
 * children's ends are reported as usual.
 *
 * Returns: %TRUE if done (also for an empty job)
 *
 * Since: 0.3
 */
gboolean
spawn_job_kill (SpawnJob *job, GError **error)
{
  return spawn_job_send_signal (job, SIGKILL, error);
}

/**
 * spawn_job_is_empty:
 * @job: a job
 *
 * Whether no process of the job runs: in the cgroup mode, the cgroup is
 * not populated (cgroup.events); in the process-group mode, every child
 * has been seen to end (its descendants cannot be counted).
 *
 * Returns: %TRUE if nothing runs in it
 *
 * Since: 0.3
 */
gboolean
spawn_job_is_empty (SpawnJob *job)
{
  gboolean empty = TRUE;
  guint i;

  g_return_val_if_fail (SPAWN_IS_JOB (job), TRUE);
  g_mutex_lock (&job->lock);
  if (job->cgroup.path != NULL)
    empty = _spawn_cgroup_populated (&job->cgroup) == 0;
  else
    for (i = 0; i < job->children->len && empty; i++)
      {
        SpawnChild *child = g_ptr_array_index (job->children, i);

        empty = spawn_child_send_signal (child, 0, NULL) == FALSE;
      }
  g_mutex_unlock (&job->lock);
  return empty;
}

/* With the lock held: kill, wait up to @timeout_ms, keep the usage,
 * remove the cgroup. */
static int
job_close_cgroup (SpawnJob *job, int timeout_ms)
{
  int err = 0;

  if (job->cgroup.path == NULL)
    return 0;
  if (_spawn_cgroup_populated (&job->cgroup) != 0)
    {
      _spawn_cgroup_signal (&job->cgroup, SIGKILL);
      err = _spawn_cgroup_wait_empty (&job->cgroup, timeout_ms);
    }
  _spawn_cgroup_read_usage (&job->cgroup, &job->usage);
  if (err == 0)
    err = _spawn_cgroup_remove (&job->cgroup);
  if (err == 0)
    job_release_guardian (job);
  return err;
}

/**
 * spawn_job_close:
 * @job: a job
 * @timeout_ms: how long to wait for the killed processes to be gone, in
 *   milliseconds; -1 for as long as it takes
 * @error: return location for a #GError
 *
 * Kills whatever still runs in the job, waits for it to be gone and
 * removes the job's cgroup, keeping what the tree used
 * ([method@Spawn.Job.get_cpu_usec]).  A later spawn into the job makes a
 * new cgroup.  Finalizing a job closes it with a timeout of 5 s.
 *
 * Returns: %TRUE if the job is empty and its cgroup gone; %FALSE with
 *   %SPAWN_ERROR_FAILED if the processes were still there after
 *   @timeout_ms
 *
 * Since: 0.3
 */
gboolean
spawn_job_close (SpawnJob *job, int timeout_ms, GError **error)
{
  char *path;
  int err;

  g_return_val_if_fail (SPAWN_IS_JOB (job), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&job->lock);
  path = g_strdup (job->cgroup.path);
  if (job->cgroup.path == NULL && job->mode == SPAWN_JOB_MODE_PROCESS_GROUP)
    job_signal_groups (job, SIGKILL);
  err = job_close_cgroup (job, timeout_ms);
  if (err == 0)
    job->mode = SPAWN_JOB_MODE_NONE;
  g_mutex_unlock (&job->lock);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot close job %s", path));
      g_free (path);
      return FALSE;
    }
  g_free (path);
  return TRUE;
}

/* The process-group mode: what the children that ended used (each one's
 * rusage includes the descendants it waited for). */
static void
job_children_usage (SpawnJob *job, SpawnJobUsage *usage)
{
  guint i;

  for (i = 0; i < job->children->len; i++)
    {
      SpawnChild *child = g_ptr_array_index (job->children, i);

      g_mutex_lock (&child->lock);
      if (child->collected && child->collect_error == 0)
        {
          usage->user_usec += child->info.utime_usec;
          usage->system_usec += child->info.stime_usec;
        }
      g_mutex_unlock (&child->lock);
    }
  usage->cpu_usec = usage->user_usec + usage->system_usec;
}

static void
job_usage (SpawnJob *job, SpawnJobUsage *usage)
{
  g_mutex_lock (&job->lock);
  if (job->cgroup.path != NULL)
    {
      memset (usage, 0, sizeof *usage);
      _spawn_cgroup_read_usage (&job->cgroup, usage);
    }
  else if (job->usage.cpu_usec > 0 || job->usage.have_memory_peak || job->usage.oom_kills > 0)
    *usage = job->usage;
  else
    {
      memset (usage, 0, sizeof *usage);
      job_children_usage (job, usage);
    }
  g_mutex_unlock (&job->lock);
}

/**
 * spawn_job_get_cpu_usec:
 * @job: a job
 * @user_usec: (out) (optional): of which user time
 * @system_usec: (out) (optional): of which system time
 *
 * The CPU time the job's processes have used, grandchildren and daemons
 * included: in the cgroup mode, cpu.stat's usage_usec, so far or (after
 * [method@Spawn.Job.close]) in all.  In the process-group mode only what
 * the children that have ended report (with what they waited for).
 *
 * Returns: the total, in microseconds
 *
 * Since: 0.3
 */
guint64
spawn_job_get_cpu_usec (SpawnJob *job, guint64 *user_usec, guint64 *system_usec)
{
  SpawnJobUsage usage;

  g_return_val_if_fail (SPAWN_IS_JOB (job), 0);
  job_usage (job, &usage);
  if (user_usec != NULL)
    *user_usec = usage.user_usec;
  if (system_usec != NULL)
    *system_usec = usage.system_usec;
  return usage.cpu_usec;
}

/**
 * spawn_job_get_memory_peak:
 * @job: a job
 * @bytes: (out) (optional): the most memory the tree used at once
 *
 * memory.peak of the job's cgroup: Linux 6.8 and later, with the memory
 * controller.
 *
 * Returns: %TRUE if the kernel tells it
 *
 * Since: 0.3
 */
gboolean
spawn_job_get_memory_peak (SpawnJob *job, guint64 *bytes)
{
  SpawnJobUsage usage;

  g_return_val_if_fail (SPAWN_IS_JOB (job), FALSE);
  job_usage (job, &usage);
  if (bytes != NULL)
    *bytes = usage.memory_peak;
  return usage.have_memory_peak;
}

/**
 * spawn_job_get_oom_kills:
 * @job: a job
 *
 * How many of the job's processes the OOM killer killed because the job
 * reached its memory limit (memory.events oom_kill; the memory
 * controller).  A child killed so ends with SIGKILL.
 *
 * Returns: the count
 *
 * Since: 0.3
 */
guint64
spawn_job_get_oom_kills (SpawnJob *job)
{
  SpawnJobUsage usage;

  g_return_val_if_fail (SPAWN_IS_JOB (job), 0);
  job_usage (job, &usage);
  return usage.oom_kills;
}

/* GObject */

static void
spawn_job_init (SpawnJob *job)
{
  g_mutex_init (&job->lock);
  job->cgroup.dir_fd = job->cgroup.procs_fd = -1;
  job->limits.cpu_period_usec = 100000;
  job->guardian_fd = -1;
  job->children = g_ptr_array_new_with_free_func ((GDestroyNotify) spawn_child_unref);
}

static void
spawn_job_finalize (GObject *object)
{
  SpawnJob *job = SPAWN_JOB (object);
  char *path = g_strdup (job->cgroup.path);

  if (job->cgroup.path == NULL && job->mode == SPAWN_JOB_MODE_PROCESS_GROUP)
    job_signal_groups (job, SIGKILL);
  if (job_close_cgroup (job, JOB_FINALIZE_TIMEOUT_MS) < 0)
    g_warning ("SpawnJob: cgroup %s left behind: its processes did not end", path);
  g_free (path);
  job_release_guardian (job);
  g_ptr_array_unref (job->children);
  g_free (job->fallback_reason);
  g_mutex_clear (&job->lock);
  G_OBJECT_CLASS (spawn_job_parent_class)->finalize (object);
}

static void
spawn_job_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SpawnJob *job = SPAWN_JOB (object);

  switch (prop_id)
    {
    case PROP_MEMORY_MAX:
      g_value_set_uint64 (value, spawn_job_get_memory_max (job));
      break;
    case PROP_PIDS_MAX:
      g_value_set_uint64 (value, spawn_job_get_pids_max (job));
      break;
    case PROP_MODE:
      g_value_set_enum (value, spawn_job_get_mode (job));
      break;
    case PROP_CGROUP_PATH:
      g_value_set_string (value, spawn_job_get_cgroup_path (job));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
spawn_job_set_property (GObject *object, guint prop_id, const GValue *value,
                        GParamSpec *pspec)
{
  SpawnJob *job = SPAWN_JOB (object);

  switch (prop_id)
    {
    case PROP_MEMORY_MAX:
      spawn_job_set_memory_max (job, g_value_get_uint64 (value));
      break;
    case PROP_PIDS_MAX:
      spawn_job_set_pids_max (job, g_value_get_uint64 (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
spawn_job_class_init (SpawnJobClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = spawn_job_finalize;
  object_class->get_property = spawn_job_get_property;
  object_class->set_property = spawn_job_set_property;

  /**
   * SpawnJob:memory-max: (setter set_memory_max) (getter get_memory_max)
   *
   * The tree's memory limit in bytes (cgroup memory.max), 0 for none.
   *
   * Since: 0.3
   */
  job_props[PROP_MEMORY_MAX] = g_param_spec_uint64 ("memory-max", NULL, NULL, 0, G_MAXUINT64, 0,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                G_PARAM_STATIC_STRINGS);
  /**
   * SpawnJob:pids-max: (setter set_pids_max) (getter get_pids_max)
   *
   * The most processes and threads the tree may have (cgroup pids.max),
   * 0 for no limit.
   *
   * Since: 0.3
   */
  job_props[PROP_PIDS_MAX] = g_param_spec_uint64 ("pids-max", NULL, NULL, 0, G_MAXUINT64, 0,
                                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                              G_PARAM_STATIC_STRINGS);
  /**
   * SpawnJob:mode: (getter get_mode)
   *
   * How the job holds its processes.
   *
   * Since: 0.3
   */
  job_props[PROP_MODE] = g_param_spec_enum ("mode", NULL, NULL, SPAWN_TYPE_JOB_MODE,
                                        SPAWN_JOB_MODE_NONE,
                                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * SpawnJob:cgroup-path: (getter get_cgroup_path)
   *
   * The job's cgroup directory, or %NULL.
   *
   * Since: 0.3
   */
  job_props[PROP_CGROUP_PATH] = g_param_spec_string ("cgroup-path", NULL, NULL, NULL,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, job_props);
}
