/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job.c - SpawnJob: a process tree as one unit
 *
 * The mode is chosen at the first spawn (_spawn_job_prepare()): a cgroup
 * of the job's own where we may make one (job-cgroup.c), else a process
 * group per child, unless the job requires a cgroup; either way the
 * reason is kept as a GError.  LIBSPAWN_JOB_MODE=process-group forces the
 * second, so that one machine tests both.  The cgroup lives until
 * spawn_job_close() or the job's finalization, which kill what is left,
 * wait for it to be gone and remove the directory (and what was made
 * below it).  The phases are one JobState under the job's lock; a spawn
 * holds its phase from prepare to born (@births), and a close waits for
 * those, so that no child is born into a cgroup being removed.
 */
#include "job-private.h"
#include "job-systemd-private.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* How long finalization waits for a killed tree to be gone before it gives
 * up on removing the cgroup (a process stuck in the kernel). */
#define JOB_FINALIZE_TIMEOUT_MS 5000

/* A job's phases.  NONE -> CGROUP or PROCESS_GROUP at the first spawn
 * (_spawn_job_prepare()), -> CLOSING while spawn_job_close() or the
 * finalization works, -> NONE once the cgroup is gone (back to the phase
 * it was in if it could not be removed: the job keeps it and its fds). */
typedef enum {
  JOB_STATE_NONE,
  JOB_STATE_CGROUP,
  JOB_STATE_PROCESS_GROUP,
  JOB_STATE_CLOSING,
} JobState;

/* The guardian of the cgroup's tree (kill-on-close): one per cgroup, made
 * by the first kill-on-close spawn; another that comes meanwhile waits. */
typedef enum {
  GUARDIAN_NONE,
  GUARDIAN_STARTING,
  GUARDIAN_RUNNING,
} GuardianState;

/* The children of the process-group mode, listed without a reference:
 * each child's last unref takes itself off (job_members_forget()), so a
 * child the caller drops goes (killed first with KILL_ON_CLOSE), its fd
 * with it.  Shared by the job and every listed child, which is why it
 * has its own reference count and lock.  Lock order: the job's lock, then
 * this one, then a child's. */
typedef struct {
  gatomicrefcount ref;
  GMutex lock;
  GPtrArray *children;        /* SpawnChild *, no reference */
  SpawnJobUsage ended;        /* of the children that went, collected */
} JobMembers;

struct _SpawnJob {
  GObject parent_instance;

  GMutex lock;                /* everything below */
  GCond cond;                 /* @state, @guardian_state or @births changed */
  JobState state;
  JobState closing_from;      /* in CLOSING: the phase being closed */
  guint births;               /* spawns between prepare and born */
  gboolean blind;             /* a process-group child was started: a
                               * descendant may have left its group */
  gboolean require_cgroup;
  SpawnJobLimits limits;
  GError *fallback_error;     /* why not a cgroup */
  SpawnCgroup cgroup;         /* path NULL: none */
  SpawnJobUsage closed_usage; /* of the cgroups closed so far, summed */
  JobMembers *members;
  /* Process-group children that run, not KILL_ON_CLOSE, each a reference
   * (so that the job can still signal a group whose leader the caller let
   * go); dropped once ended (job_prune()). */
  GPtrArray *held;
  /* Kill-on-close for the tree: a shell outside the job that kills its
   * cgroup and removes it once its stdin, a pipe whose only write end is
   * @guardian_fd, reports EOF: when we close it, or when the kernel does
   * because the application died, however it died. */
  GuardianState guardian_state;
  SpawnChild *guardian;
  int guardian_fd;
};

/* The guardian's script: $0 is the cgroup.  Before 5.14 (no cgroup.kill)
 * it kills what cgroup.procs lists until it lists nothing (of the top
 * cgroup: a nested one needs cgroup.kill).  It removes the cgroups that
 * programs of the job made below it too, deepest first. */
static const char job_guardian_script[] =
  "cat >/dev/null\n"
  "echo 1 >\"$0/cgroup.kill\" 2>/dev/null ||\n"
  "  while [ -s \"$0/cgroup.procs\" ]; do kill -9 $(cat \"$0/cgroup.procs\") 2>/dev/null; done\n"
  "while read -r key value <\"$0/cgroup.events\"; do\n"
  "  [ \"$value\" = 0 ] && break\n"
  "  sleep 1\n"
  "done\n"
  "find \"$0\" -depth -type d -exec rmdir {} \\; 2>/dev/null\n";

enum {
  PROP_0,
  PROP_MEMORY_MAX,
  PROP_PIDS_MAX,
  PROP_MODE,
  PROP_CGROUP_PATH,
  PROP_REQUIRE_CGROUP,
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
 * A process tree as one unit: what [method@Spawn.Job.spawn_with_pipes] (or a
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
 * Neither GSubprocess nor QProcess has this; see [Process groups, sessions
 * and jobs](process.html#process-groups-sessions-and-jobs-stopping-the-whole-tree)
 * in the SpawnProcess guide.
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
  if (job->state != JOB_STATE_NONE)
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

static SpawnJobMode
job_mode_of (JobState state)
{
  switch (state)
    {
    case JOB_STATE_CGROUP:
    case JOB_STATE_CLOSING:     /* only a cgroup takes a while to close */
      return SPAWN_JOB_MODE_CGROUP;
    case JOB_STATE_PROCESS_GROUP:
      return SPAWN_JOB_MODE_PROCESS_GROUP;
    case JOB_STATE_NONE:
    default:
      return SPAWN_JOB_MODE_NONE;
    }
}

/* With the lock held: whether the job's cgroup is there to ask or signal
 * (also while a close waits for the spawns under way). */
static gboolean
job_in_cgroup (SpawnJob *job)
{
  return job->state == JOB_STATE_CGROUP ||
         (job->state == JOB_STATE_CLOSING && job->closing_from == JOB_STATE_CGROUP);
}

/**
 * spawn_job_get_mode:
 * @job: a job
 *
 * How the job holds its processes: %SPAWN_JOB_MODE_NONE before the first
 * spawn (and after [method@Spawn.Job.close]), then %SPAWN_JOB_MODE_CGROUP
 * or, where no cgroup could be made, %SPAWN_JOB_MODE_PROCESS_GROUP
 * ([method@Spawn.Job.dup_fallback_error] says why).
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
  mode = job_mode_of (job->state);
  g_mutex_unlock (&job->lock);
  return mode;
}

/**
 * spawn_job_set_require_cgroup:
 * @job: a job
 * @require: whether the job must be a cgroup
 *
 * With @require, a spawn into the job that cannot have a cgroup of its
 * own fails with the reason ([method@Spawn.Job.dup_fallback_error]'s
 * error) instead of falling back on process groups, which a setsid()
 * daemon escapes and whose end the job cannot see.  A job with limits
 * requires a cgroup anyway.  Set before the first spawn.  Should a later
 * release hold jobs in other kinds of cgroups (a systemd scope), each of
 * them satisfies this.
 *
 * Since: 0.3
 */
void
spawn_job_set_require_cgroup (SpawnJob *job, gboolean require)
{
  g_return_if_fail (SPAWN_IS_JOB (job));
  g_mutex_lock (&job->lock);
  job_check_not_started (job, "require-cgroup");
  job->require_cgroup = require != FALSE;
  g_mutex_unlock (&job->lock);
  g_object_notify_by_pspec (G_OBJECT (job), job_props[PROP_REQUIRE_CGROUP]);
}

/**
 * spawn_job_get_require_cgroup:
 * @job: a job
 *
 * Whether a spawn into @job fails rather than fall back on process groups.
 *
 * Returns: what [method@Spawn.Job.set_require_cgroup] set
 *
 * Since: 0.3
 */
gboolean
spawn_job_get_require_cgroup (SpawnJob *job)
{
  g_return_val_if_fail (SPAWN_IS_JOB (job), FALSE);
  return job->require_cgroup;
}

/**
 * spawn_job_dup_fallback_error:
 * @job: a job
 *
 * Why the job has no cgroup of its own: set once a spawn has tried to
 * make one and could not, whether the job then fell back on process
 * groups or (required, or with limits) refused the spawn.  The message
 * says what was missing: no cgroup v2 hierarchy mounted, which directory
 * or file we may not write (our cgroup not delegated to us), a controller
 * bound to cgroup v1 (a hybrid host), or LIBSPAWN_JOB_MODE.  The code is
 * the errno's ([error@Spawn.Error]).
 *
 * Returns: (transfer full) (nullable): a copy of the reason, or %NULL if
 *   nothing has failed (not started yet, or in the cgroup mode)
 *
 * Since: 0.3
 */
GError *
spawn_job_dup_fallback_error (SpawnJob *job)
{
  GError *copy = NULL;

  g_return_val_if_fail (SPAWN_IS_JOB (job), NULL);
  g_mutex_lock (&job->lock);
  if (job->fallback_error != NULL)
    copy = g_error_copy (job->fallback_error);
  g_mutex_unlock (&job->lock);
  return copy;
}

/**
 * spawn_job_get_cgroup_path:
 * @job: a job
 *
 * Where the job's cgroup is, for a look at its other files.  Valid until
 * the job is closed.
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

/* Why no cgroup: @err on @failed_what (NULL: our own cgroup). */
static GError *
job_fallback_error_new (int err, const char *failed_what)
{
  const char *self = NULL;

  if (err == -ENOENT && failed_what == NULL)
    return _spawn_error_new (-err, "No cgroup v2 hierarchy is mounted here (cgroup v1 "
                             "alone, or none)");
  _spawn_cgroup_self (&self);
  if (err == -EACCES || err == -EPERM || err == -EROFS)
    return _spawn_error_new (-err, "Cannot make a cgroup for the job: %s is not ours to "
                             "write (our cgroup %s is not delegated to us)",
                             failed_what != NULL ? failed_what : self, self);
  if (err == -ENODEV)
    return _spawn_error_new (-err, "Cannot have %s (not available to our cgroup: bound "
                             "to cgroup v1 on a hybrid host, or not delegated)", failed_what);
  if (err == -EBUSY)
    return _spawn_error_new (-err, "Cannot have %s (our cgroup has processes of its own, "
                             "so it cannot enable controllers for its children: run the "
                             "application in a leaf of a delegated cgroup)", failed_what);
  return _spawn_error_new (-err, "Cannot make a cgroup for the job (%s)",
                           failed_what != NULL ? failed_what : self);
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
      job->state = JOB_STATE_CGROUP;
      return TRUE;
    }
  g_clear_error (&job->fallback_error);
  job->fallback_error = forced != NULL
    ? g_error_new_literal (SPAWN_ERROR, SPAWN_ERROR_PERM,
                           "LIBSPAWN_JOB_MODE=process-group forces the process-group mode")
    : job_fallback_error_new (err, failed_what);
  if (job_has_limits (job) || job->require_cgroup || !job_cgroup_unavailable (err))
    {
      g_set_error (error, SPAWN_ERROR, job->fallback_error->code,
                   "Cannot start “%s” in its job%s: %s", argv0,
                   job_has_limits (job) ? " with limits" : "", job->fallback_error->message);
      return FALSE;
    }
  g_debug ("job: process-group mode for “%s” (%s)", argv0, job->fallback_error->message);
  job->state = JOB_STATE_PROCESS_GROUP;
  return TRUE;
}

gboolean
_spawn_job_prepare (SpawnJob *job, const char *argv0, SpawnExecPlan *plan, GError **error)
{
  gboolean ok = TRUE, chose = FALSE;

  g_mutex_lock (&job->lock);
  /* A close at work: the child goes into what the job is after it. */
  while (job->state == JOB_STATE_CLOSING)
    g_cond_wait (&job->cond, &job->lock);
  if (job->state == JOB_STATE_NONE)
    {
      ok = job_choose_mode (job, argv0, error);
      chose = ok;
    }
  if (ok && job->state == JOB_STATE_CGROUP)
    {
      plan->cgroup_fd = job->cgroup.dir_fd;
      plan->cgroup_procs_fd = job->cgroup.procs_fd;
    }
  else if (ok && !plan->new_session)
    plan->new_process_group = TRUE;
  if (ok)
    job->births++;
  g_mutex_unlock (&job->lock);
  if (chose)
    g_object_notify_by_pspec (G_OBJECT (job), job_props[PROP_MODE]);
  return ok;
}

char **
_spawn_job_guardian_claim (SpawnJob *job)
{
  char **argv = NULL;

  g_mutex_lock (&job->lock);
  g_assert (job->births > 0);
  while (job->guardian_state == GUARDIAN_STARTING)
    g_cond_wait (&job->cond, &job->lock);
  if (job->guardian_state == GUARDIAN_NONE && job->state == JOB_STATE_CGROUP)
    {
      argv = g_new0 (char *, 5);
      argv[0] = g_strdup ("/bin/sh");
      argv[1] = g_strdup ("-c");
      argv[2] = g_strdup (job_guardian_script);
      argv[3] = g_strdup (job->cgroup.path);
      job->guardian_state = GUARDIAN_STARTING;
    }
  g_mutex_unlock (&job->lock);
  return argv;
}

void
_spawn_job_set_guardian (SpawnJob *job, SpawnChild *guardian, int pipe_fd)
{
  g_mutex_lock (&job->lock);
  g_assert (job->guardian_state == GUARDIAN_STARTING);
  job->guardian = guardian;
  job->guardian_fd = pipe_fd;
  job->guardian_state = guardian != NULL ? GUARDIAN_RUNNING : GUARDIAN_NONE;
  g_cond_broadcast (&job->cond);
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
  job->guardian_state = GUARDIAN_NONE;
}

static void
job_usage_add (SpawnJobUsage *sum, const SpawnJobUsage *more)
{
  sum->cpu_usec += more->cpu_usec;
  sum->user_usec += more->user_usec;
  sum->system_usec += more->system_usec;
  sum->memory_peak = MAX (sum->memory_peak, more->memory_peak);
  sum->have_memory_peak |= more->have_memory_peak;
  sum->oom_kills += more->oom_kills;
}

/* What a collected child reports (with what it waited for). */
static void
job_child_usage (SpawnChild *child, SpawnJobUsage *usage)
{
  if (g_atomic_int_get (&child->collected) && child->collect_error == 0)
    {
      usage->user_usec += child->info.utime_usec;
      usage->system_usec += child->info.stime_usec;
      usage->cpu_usec += child->info.utime_usec + child->info.stime_usec;
    }
}

static JobMembers *
job_members_ref (JobMembers *m)
{
  g_atomic_ref_count_inc (&m->ref);
  return m;
}

static void
job_members_unref (JobMembers *m)
{
  if (!g_atomic_ref_count_dec (&m->ref))
    return;
  g_ptr_array_unref (m->children);
  g_mutex_clear (&m->lock);
  g_free (m);
}

/* A listed child's last reference went: off the list, keeping what it
 * used.  It is intact until this returns. */
static void
job_members_forget (gpointer data, SpawnChild *child)
{
  JobMembers *m = data;

  g_mutex_lock (&m->lock);
  if (g_ptr_array_remove_fast (m->children, child))
    job_child_usage (child, &m->ended);
  g_mutex_unlock (&m->lock);
  job_members_unref (m);
}

/* With the lock held: let the held children that have ended go.  One
 * only we hold is collected here (nobody else can watch it), so that what
 * it used is kept. */
static void
job_prune (SpawnJob *job)
{
  guint i = 0;

  while (i < job->held->len)
    {
      SpawnChild *child = g_ptr_array_index (job->held, i);
      SpawnExitInfo info;

      struct pollfd pfd = { child->fd, POLLIN, 0 };

      /* Readable once the child has ended (every backend's fd). */
      if (poll (&pfd, 1, 0) != 1)
        {
          i++;
          continue;
        }
      if (g_atomic_int_get (&child->ref_count) == 1)
        _spawn_child_collect (child, &info);
      g_ptr_array_remove_index_fast (job->held, i);
    }
}

void
_spawn_job_born (SpawnJob *job, SpawnChild *child)
{
  g_mutex_lock (&job->lock);
  g_assert (job->births > 0);
  if (child != NULL && job->state == JOB_STATE_PROCESS_GROUP)
    {
      JobMembers *m = job->members;

      job->blind = TRUE;
      g_mutex_lock (&m->lock);
      g_ptr_array_add (m->children, child);
      child->forget_data = job_members_ref (m);
      child->forget = job_members_forget;
      g_mutex_unlock (&m->lock);
      job_prune (job);
      if (!child->kill_on_close)
        g_ptr_array_add (job->held, spawn_child_ref (child));
    }
  if (--job->births == 0)
    g_cond_broadcast (&job->cond);
  g_mutex_unlock (&job->lock);
}

/* The process-group mode: @signum to each child's group while the child
 * leads it. */
static int
job_signal_groups (SpawnJob *job, int signum)
{
  JobMembers *m = job->members;
  guint i;
  int err = 0;

  g_mutex_lock (&m->lock);
  for (i = 0; i < m->children->len; i++)
    {
      SpawnChild *child = g_ptr_array_index (m->children, i);
      GError *local_error = NULL;

      if (!spawn_child_send_signal_to_group (child, signum, &local_error))
        {
          if (!g_error_matches (local_error, SPAWN_ERROR, SPAWN_ERROR_SRCH))
            err = -EPERM;
          g_error_free (local_error);
        }
    }
  g_mutex_unlock (&m->lock);
  return err;
}

/**
 * spawn_job_send_signal:
 * @job: a job
 * @signum: the signal
 * @error: return location for a #GError
 *
 * Sends @signum to every process of the job.  In the cgroup mode: each
 * process listed in the cgroup or in a cgroup a program of the job made
 * below it, through a pidfd checked to be in the job (never a process
 * that reused a PID); one forked during the walk may be missed, which
 * [method@Spawn.Job.kill] never does.  In the process-group mode: the
 * group of each child that still runs.
 *
 * Returns: %TRUE if sent (also to an empty job)
 *
 * Since: 0.3
 */
gboolean
spawn_job_send_signal (SpawnJob *job, int signum, GError **error)
{
  g_autofree char *path = NULL;
  int err = 0;

  g_return_val_if_fail (SPAWN_IS_JOB (job), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&job->lock);
  if (job_in_cgroup (job))
    {
      err = _spawn_cgroup_signal (&job->cgroup, signum);
      path = g_strdup (job->cgroup.path);
    }
  else if (job->state == JOB_STATE_PROCESS_GROUP ||
           (job->state == JOB_STATE_CLOSING && job->closing_from == JOB_STATE_PROCESS_GROUP))
    err = job_signal_groups (job, signum);
  g_mutex_unlock (&job->lock);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot signal the processes of "
                                                  "job %s", path != NULL ? path
                                                  : "(process groups)"));
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
 * cgroup.kill (Linux 5.14), which also reaches what forks meanwhile and
 * the cgroups programs of the job made below its own.  The children's
 * ends are reported as usual.
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
 * Whether no process of the job runs.  In the cgroup mode: the cgroup,
 * with what programs of the job made below it, is not populated
 * (cgroup.events).
 *
 * In the process-group mode the job cannot see a descendant that left its
 * child's group (a setsid() daemon), so it never says that a tree it
 * started is empty: %FALSE once anything was started in that mode, even
 * after [method@Spawn.Job.close].  GSubprocess and QProcess have no such
 * call; [method@Spawn.Process.get_state] tells whether the program itself
 * runs.
 *
 * Returns: %TRUE if nothing runs in it (in the cgroup mode, or if nothing
 *   was ever started)
 *
 * Since: 0.3
 */
gboolean
spawn_job_is_empty (SpawnJob *job)
{
  gboolean empty;

  g_return_val_if_fail (SPAWN_IS_JOB (job), FALSE);
  g_mutex_lock (&job->lock);
  if (job_in_cgroup (job))
    /* Unreadable: not seen empty. */
    empty = _spawn_cgroup_populated (&job->cgroup) == 0;
  else
    empty = !job->blind;
  g_mutex_unlock (&job->lock);
  return empty;
}

/* With the lock held, in the cgroup phase: kill, wait up to @timeout_ms,
 * add the cgroup's last usage to the job's, remove the cgroup.  On
 * failure *@failed_path names what is left (the job keeps it). */
static int
job_close_cgroup (SpawnJob *job, int timeout_ms, char **failed_path)
{
  SpawnJobUsage last = { 0 };
  int err = 0;

  if (_spawn_cgroup_populated (&job->cgroup) != 0)
    {
      _spawn_cgroup_signal (&job->cgroup, SIGKILL);
      err = _spawn_cgroup_wait_empty (&job->cgroup, timeout_ms);
    }
  if (err == 0)
    {
      _spawn_cgroup_read_usage (&job->cgroup, &last);
      err = _spawn_cgroup_remove (&job->cgroup, failed_path);
    }
  else
    *failed_path = g_strdup (job->cgroup.path);
  if (err < 0)
    return err;
  job_usage_add (&job->closed_usage, &last);
  job_release_guardian (job);
  return 0;
}

/* With the lock held, in the process-group phase, after the kill: wait up
 * to @timeout_ms (-1: no limit) for each listed child to end (its fd is
 * readable then, with every backend).  Listed children cannot go meanwhile
 * (their forget takes the members' lock), nor new ones come (a birth needs
 * the job's lock). */
static void
job_wait_groups (SpawnJob *job, int timeout_ms)
{
  JobMembers *m = job->members;
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  guint i;

  g_mutex_lock (&m->lock);
  for (i = 0; i < m->children->len; i++)
    {
      SpawnChild *child = g_ptr_array_index (m->children, i);
      struct pollfd pfd = { child->fd, POLLIN, 0 };
      int wait_ms = -1;

      if (timeout_ms >= 0)
        wait_ms = (int) MAX (0, (deadline - g_get_monotonic_time ()) / 1000);
      if (poll (&pfd, 1, wait_ms) < 0 && errno == EINTR)
        i--;
    }
  g_mutex_unlock (&m->lock);
}

/* With the lock held: the close of spawn_job_close() and finalization.
 * No spawn is being born meanwhile, and none starts until it is done. */
static int
job_close_locked (SpawnJob *job, int timeout_ms, char **failed_path)
{
  JobState was;
  int err = 0;

  while (job->state == JOB_STATE_CLOSING)
    g_cond_wait (&job->cond, &job->lock);
  was = job->state;
  job->state = JOB_STATE_CLOSING;
  job->closing_from = was;
  while (job->births > 0)
    g_cond_wait (&job->cond, &job->lock);
  if (was == JOB_STATE_CGROUP)
    err = job_close_cgroup (job, timeout_ms, failed_path);
  else if (was == JOB_STATE_PROCESS_GROUP)
    {
      /* Killed, waited for, and let go: a close keeps no child's fd. */
      job_signal_groups (job, SIGKILL);
      job_wait_groups (job, timeout_ms);
      job_prune (job);
    }
  job->state = err == 0 ? JOB_STATE_NONE : was;
  g_cond_broadcast (&job->cond);
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
 * removes the job's cgroup (and those programs of the job made below it),
 * keeping what the tree used ([method@Spawn.Job.get_cpu_usec]).  A spawn
 * into the job from another thread meanwhile waits, and goes into a new
 * cgroup.  If the cgroup cannot be removed the job keeps it: later
 * children are still born in it, and a later close tries again.
 * Finalizing a job closes it with a timeout of 5 s.
 *
 * In the process-group mode it kills each child's group, but a descendant
 * that left it (a setsid() daemon) may still run, and the job cannot see
 * it: it returns %FALSE with the reason the job has no cgroup.
 *
 * Returns: %TRUE if the job's tree is gone and its cgroup removed (or it
 *   had started nothing); %FALSE with @error set if the processes were
 *   still there after @timeout_ms, if the cgroup could not be removed (the
 *   message names the directory), or in the process-group mode
 *   (%SPAWN_ERROR_FAILED)
 *
 * Since: 0.3
 */
gboolean
spawn_job_close (SpawnJob *job, int timeout_ms, GError **error)
{
  g_autofree char *failed_path = NULL;
  JobState was;
  int err;

  g_return_val_if_fail (SPAWN_IS_JOB (job), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&job->lock);
  was = job->state;
  err = job_close_locked (job, timeout_ms, &failed_path);
  if (err == 0 && was == JOB_STATE_PROCESS_GROUP)
    g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_FAILED,
                 "Job closed as far as it can see: its children's process groups were "
                 "killed, but a process that left them cannot be seen (no cgroup: %s)",
                 job->fallback_error != NULL ? job->fallback_error->message : "unknown");
  g_mutex_unlock (&job->lock);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot close job %s%s", failed_path,
                                                  err == -ETIMEDOUT ? " (its processes did "
                                                  "not end in time)" : ""));
      return FALSE;
    }
  return was != JOB_STATE_PROCESS_GROUP;
}

static void
job_usage (SpawnJob *job, SpawnJobUsage *usage)
{
  JobMembers *m = job->members;
  guint i;

  g_mutex_lock (&job->lock);
  *usage = job->closed_usage;
  if (job_in_cgroup (job))
    {
      SpawnJobUsage now = { 0 };

      _spawn_cgroup_read_usage (&job->cgroup, &now);
      job_usage_add (usage, &now);
    }
  /* The process-group mode: what the children that ended report. */
  g_mutex_lock (&m->lock);
  job_usage_add (usage, &m->ended);
  for (i = 0; i < m->children->len; i++)
    job_child_usage (g_ptr_array_index (m->children, i), usage);
  g_mutex_unlock (&m->lock);
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
  g_cond_init (&job->cond);
  job->cgroup.dir_fd = job->cgroup.procs_fd = -1;
  job->limits.cpu_period_usec = 100000;
  job->guardian_fd = -1;
  job->members = g_new0 (JobMembers, 1);
  g_atomic_ref_count_init (&job->members->ref);
  g_mutex_init (&job->members->lock);
  job->members->children = g_ptr_array_new ();
  job->held = g_ptr_array_new_with_free_func ((GDestroyNotify) spawn_child_unref);
}

static void
spawn_job_finalize (GObject *object)
{
  SpawnJob *job = SPAWN_JOB (object);
  g_autofree char *failed_path = NULL;

  /* Nobody else has the job: no spawn is being born into it. */
  g_mutex_lock (&job->lock);
  if (job_close_locked (job, JOB_FINALIZE_TIMEOUT_MS, &failed_path) < 0)
    {
      /* The guardian, if there is one, removes it once it is empty. */
      g_warning ("SpawnJob: cgroup %s left behind: %s could not be removed%s",
                 job->cgroup.path, failed_path,
                 job->guardian != NULL ? " (its guardian removes it once it is empty)" : "");
      _spawn_cgroup_release (&job->cgroup);
    }
  job_release_guardian (job);
  g_mutex_unlock (&job->lock);
  /* Children still listed take themselves off a list nobody reads. */
  job_members_unref (job->members);
  g_ptr_array_unref (job->held);
  g_clear_error (&job->fallback_error);
  g_cond_clear (&job->cond);
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
    case PROP_REQUIRE_CGROUP:
      g_value_set_boolean (value, spawn_job_get_require_cgroup (job));
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
    case PROP_REQUIRE_CGROUP:
      spawn_job_set_require_cgroup (job, g_value_get_boolean (value));
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
  /**
   * SpawnJob:require-cgroup: (setter set_require_cgroup) (getter get_require_cgroup)
   *
   * Whether a spawn fails rather than fall back on process groups.
   *
   * Since: 0.3
   */
  job_props[PROP_REQUIRE_CGROUP] = g_param_spec_boolean ("require-cgroup", NULL, NULL, FALSE,
                                                     G_PARAM_READWRITE |
                                                     G_PARAM_EXPLICIT_NOTIFY |
                                                     G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, job_props);
}
