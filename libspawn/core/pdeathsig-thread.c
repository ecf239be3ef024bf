/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pdeathsig-thread.c - the thread that starts kill-on-close children
 *
 * Where the kernel cannot kill a child when its handle goes (no clone4
 * CLONE_FD_AUTOKILL), SPAWN_CHILD_KILL_ON_CLOSE falls back on
 * PR_SET_PDEATHSIG(SIGKILL).  That signal fires when the child's parent
 * *thread* exits, not its process: a child started from a worker thread
 * that then ends would be killed with it.  So these children are all
 * started by one thread of ours that never exits; the spawning thread hands
 * it the plan and waits.  The thread lives until the process ends (by
 * exit, a fatal signal or exec), which is exactly when the children should
 * go.
 *
 * It is born with every signal blocked, like the reaper: process-directed
 * signals must never land in it, and the child it clones inherits that
 * mask until it restores the caller's (plan->parent_mask).
 *
 * The child also inherits this thread's per-thread state, not the
 * caller's: seccomp filters, no_new_privs, capabilities, namespaces
 * (pid_for_children too), an unshared cwd/root/umask, CPU affinity,
 * nice value.  A caller that confined itself would get an unconfined
 * child.  So each job compares the caller's security-relevant state
 * with ours and refuses the spawn on any difference (ThreadState), and
 * copies what the child can set itself before exec (affinity, nice).
 */
#include "core-private.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* What /proc/thread-self says about a thread that a child of ours must
 * share with the caller.  Lines of "status" and the identity of links. */
static const char * const status_keys[] = {
  "NoNewPrivs", "Seccomp", "Seccomp_filters", "CapInh", "CapPrm", "CapEff",
  "CapBnd", "CapAmb", "Umask",
};
static const char * const link_names[] = {
  "ns/cgroup", "ns/ipc", "ns/mnt", "ns/net", "ns/pid", "ns/pid_for_children",
  "ns/time", "ns/time_for_children", "ns/user", "ns/uts", "cwd", "root",
};

typedef struct {
  char *status[G_N_ELEMENTS (status_keys)];          /* NULL: no such line */
  struct { dev_t dev; ino_t ino; int err; } link[G_N_ELEMENTS (link_names)];
  gboolean have_status;
  gboolean have_affinity;
  cpu_set_t affinity;
  gboolean have_nice;
  int nice;
} ThreadState;

static void
thread_state_capture (ThreadState *st)
{
  g_autofree char *text = NULL;
  gsize i;

  memset (st, 0, sizeof (*st));
  if (g_file_get_contents ("/proc/thread-self/status", &text, NULL, NULL))
    {
      g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
      gsize j;

      st->have_status = TRUE;
      for (j = 0; lines[j] != NULL; j++)
        for (i = 0; i < G_N_ELEMENTS (status_keys); i++)
          {
            gsize n = strlen (status_keys[i]);
            if (strncmp (lines[j], status_keys[i], n) == 0 && lines[j][n] == ':')
              st->status[i] = g_strstrip (g_strdup (lines[j] + n + 1));
          }
    }
  for (i = 0; i < G_N_ELEMENTS (link_names); i++)
    {
      g_autofree char *path = g_strconcat ("/proc/thread-self/", link_names[i], NULL);
      struct stat sb;

      /* ENOENT where the kernel lacks that namespace type, or for
       * *_for_children of a namespace that has no init yet. */
      if (stat (path, &sb) < 0)
        st->link[i].err = errno;
      else
        {
          st->link[i].dev = sb.st_dev;
          st->link[i].ino = sb.st_ino;
        }
    }
  st->have_affinity = sched_getaffinity (0, sizeof (st->affinity), &st->affinity) == 0;
  errno = 0;
  st->nice = getpriority (PRIO_PROCESS, 0); /* this thread, on Linux */
  st->have_nice = errno == 0;
}

static void
thread_state_clear (ThreadState *st)
{
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (status_keys); i++)
    g_clear_pointer (&st->status[i], g_free);
}

/* NULL if a child of @ours would be as confined as one of
 * @caller's, else the name of the first thing that differs.  Without
 * /proc (neither could read status) nothing can be compared: that is
 * allowed, as the rest of the library runs without /proc. */
static const char *
thread_state_differs (const ThreadState *caller, const ThreadState *ours)
{
  gsize i;

  if (caller->have_status != ours->have_status)
    return "/proc/thread-self/status";
  for (i = 0; i < G_N_ELEMENTS (status_keys); i++)
    if (g_strcmp0 (caller->status[i], ours->status[i]) != 0)
      return status_keys[i];
  for (i = 0; i < G_N_ELEMENTS (link_names); i++)
    if (caller->link[i].err != ours->link[i].err ||
        caller->link[i].dev != ours->link[i].dev ||
        caller->link[i].ino != ours->link[i].ino)
      return link_names[i];
  return NULL;
}

typedef struct {
  const SpawnBackendOps *ops;
  SpawnChild *child;
  SpawnExecPlan *plan;
  void *stack;
  gsize stack_size;
  const ThreadState *caller;
  const char *differs;   /* set with result -EPERM */
  int result;
  gboolean done;
} Job;

static GMutex lock;
static GCond job_cond;   /* a job was posted, or taken */
static GCond done_cond;  /* the posted job is done */
static Job *pending;     /* at most one job at a time */
/* The process the thread was started in: a fork() of the application has
 * no such thread and needs its own. */
static pid_t thread_pid;

/* In the pdeathsig thread: refuse a caller whose confinement we do not
 * share, give the child what it can set itself, start it. */
static int
pdeathsig_run_job (Job *job)
{
  ThreadState self;
  SpawnExecPlan *l = job->plan;

  thread_state_capture (&self);
  job->differs = thread_state_differs (job->caller, &self);
  if (job->differs == NULL)
    {
      const ThreadState *c = job->caller;

      if (c->have_affinity && self.have_affinity &&
          !CPU_EQUAL (&c->affinity, &self.affinity))
        {
          l->set_affinity = TRUE;
          l->affinity = c->affinity;
        }
      if (c->have_nice && self.have_nice && c->nice != self.nice)
        {
          l->set_nice = TRUE;
          l->nice = c->nice;
        }
    }
  thread_state_clear (&self);
  if (job->differs != NULL)
    return -EPERM;
  return job->ops->start (job->child, l, job->stack, job->stack_size);
}

static void *
pdeathsig_thread_main (void *data G_GNUC_UNUSED)
{
  Job *job;

  g_mutex_lock (&lock);
  for (;;)
    {
      while (pending == NULL)
        g_cond_wait (&job_cond, &lock);
      job = pending;
      pending = NULL;
      g_cond_broadcast (&job_cond); /* room for the next poster */
      g_mutex_unlock (&lock);

      job->result = pdeathsig_run_job (job);

      g_mutex_lock (&lock);
      job->done = TRUE;
      g_cond_broadcast (&done_cond);
    }
  return NULL;
}

/* A fork() of the application must not find @lock held by a thread it
 * does not have; its pdeathsig thread is started anew (thread_pid). */
static void
pdeathsig_before_fork (void)
{
  g_mutex_lock (&lock);
}

static void
pdeathsig_after_fork_parent (void)
{
  g_mutex_unlock (&lock);
}

/* A job posted in the parent belongs to a thread the child lacks, and
 * so does the pdeathsig thread: clear thread_pid too, or a child that
 * later has the parent's PID number (another PID namespace, or PID
 * reuse in a grandchild) would take it for its own and wait forever.
 * A fork by raw syscall runs none of this: the getpid() check in
 * pdeathsig_thread_ensure() covers that. */
static void
pdeathsig_after_fork_child (void)
{
  pending = NULL;
  thread_pid = 0;
  g_mutex_unlock (&lock);
}

/* With @lock held.  0, or -errno (EAGAIN: the thread limit). */
static int
pdeathsig_thread_ensure (void)
{
  pthread_attr_t attr;
  pthread_t thread;
  sigset_t all, saved;
  int err;

  static gboolean atfork_done;

  if (thread_pid == getpid ())
    return 0;
  if (!atfork_done)
    {
      pthread_atfork (pdeathsig_before_fork, pdeathsig_after_fork_parent, pdeathsig_after_fork_child);
      atfork_done = TRUE;
    }
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved);
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  err = pthread_create (&thread, &attr, pdeathsig_thread_main, NULL);
  pthread_attr_destroy (&attr);
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  if (err != 0)
    return -err;
  pthread_setname_np (thread, "libspawn-pdeath");
  thread_pid = getpid ();
  return 0;
}

static GError *
pdeathsig_mismatch_error (const char *argv0, const char *what)
{
  return g_error_new (SPAWN_ERROR, SPAWN_ERROR_PERM,
                      "Cannot start “%s” with kill-on-close: the spawning "
                      "thread's %s differs from that of libspawn's pdeathsig "
                      "thread.  Without CLONE_FD_AUTOKILL, kill-on-close "
                      "children are started by that thread and would not "
                      "share the spawning thread's sandbox or namespaces; "
                      "spawn from a thread that shares them (see "
                      "docs/api.md)", argv0, what);
}

int
_spawn_pdeathsig_thread_start (const SpawnBackendOps *ops, SpawnChild *child,
                       SpawnExecPlan *plan, void *stack, gsize stack_size,
                       GError **error)
{
  ThreadState caller;
  Job job = { ops, child, plan, stack, stack_size, &caller, NULL, 0, FALSE };
  int err;

  thread_state_capture (&caller);

  plan->pdeathsig = TRUE;
  plan->parent_pid = getpid ();

  g_mutex_lock (&lock);
  err = pdeathsig_thread_ensure ();
  if (err < 0)
    {
      g_mutex_unlock (&lock);
      thread_state_clear (&caller);
      /* clone(CLONE_THREAD) refuses a thread whose pid_for_children is
       * not its own PID namespace (after unshare(CLONE_NEWPID)). */
      if (err == -EINVAL)
        {
          g_propagate_error (error, pdeathsig_mismatch_error (plan->file,
                                                    "ns/pid_for_children"));
          return -EPERM;
        }
      return err;
    }
  while (pending != NULL)
    g_cond_wait (&job_cond, &lock);
  pending = &job;
  g_cond_broadcast (&job_cond);
  while (!job.done)
    g_cond_wait (&done_cond, &lock);
  g_mutex_unlock (&lock);
  thread_state_clear (&caller);
  if (job.differs != NULL)
    g_propagate_error (error, pdeathsig_mismatch_error (plan->file, job.differs));
  return job.result;
}
