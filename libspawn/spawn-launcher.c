/* spawn-launcher.c - the thread that starts kill-on-close children
 *
 * Where the kernel cannot kill a child when its handle goes (no clone4
 * CLONE_FD_AUTOKILL), SPAWN_CHILD_KILL_ON_CLOSE falls back on
 * PR_SET_PDEATHSIG(SIGKILL).  That signal fires when the child's parent
 * *thread* exits, not its process: a child started from a worker thread
 * that then ends would be killed with it.  So these children are all
 * started by one thread of ours that never exits; the spawning thread hands
 * it the launch and waits.  The thread lives until the process ends (by
 * exit, a fatal signal or exec), which is exactly when the children should
 * go.
 *
 * It is born with every signal blocked, like the reaper: process-directed
 * signals must never land in it, and the child it clones inherits that
 * mask until it restores the caller's (launch->parent_mask).
 */
#include "spawn-private.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

typedef struct {
  const SpawnBackendOps *ops;
  SpawnChild *child;
  SpawnLaunch *launch;
  void *stack;
  gsize stack_size;
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

static void *
launcher_thread (void *data G_GNUC_UNUSED)
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

      job->result = job->ops->start (job->child, job->launch, job->stack,
                                     job->stack_size);

      g_mutex_lock (&lock);
      job->done = TRUE;
      g_cond_broadcast (&done_cond);
    }
  return NULL;
}

/* A fork() of the application must not find @lock held by a thread it
 * does not have; its launcher thread is started anew (thread_pid). */
static void
before_fork (void)
{
  g_mutex_lock (&lock);
}

static void
after_fork_parent (void)
{
  g_mutex_unlock (&lock);
}

/* A job posted in the parent belongs to a thread the child lacks, and
 * so does the launcher thread: clear thread_pid too, or a child that
 * later has the parent's PID number (another PID namespace, or PID
 * reuse in a grandchild) would take it for its own and wait forever.
 * A fork by raw syscall runs none of this: the getpid() check in
 * ensure_thread() covers that. */
static void
after_fork_child (void)
{
  pending = NULL;
  thread_pid = 0;
  g_mutex_unlock (&lock);
}

/* With @lock held.  0, or -errno (EAGAIN: the thread limit). */
static int
ensure_thread (void)
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
      pthread_atfork (before_fork, after_fork_parent, after_fork_child);
      atfork_done = TRUE;
    }
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved);
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  err = pthread_create (&thread, &attr, launcher_thread, NULL);
  pthread_attr_destroy (&attr);
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  if (err != 0)
    return -err;
  pthread_setname_np (thread, "libspawn-launch");
  thread_pid = getpid ();
  return 0;
}

int
_spawn_launcher_start (const SpawnBackendOps *ops, SpawnChild *child,
                       SpawnLaunch *launch, void *stack, gsize stack_size)
{
  Job job = { ops, child, launch, stack, stack_size, 0, FALSE };
  int err;

  launch->pdeathsig = TRUE;
  launch->parent_pid = getpid ();

  g_mutex_lock (&lock);
  err = ensure_thread ();
  if (err < 0)
    {
      g_mutex_unlock (&lock);
      return err;
    }
  while (pending != NULL)
    g_cond_wait (&job_cond, &lock);
  pending = &job;
  g_cond_broadcast (&job_cond);
  while (!job.done)
    g_cond_wait (&done_cond, &lock);
  g_mutex_unlock (&lock);
  return job.result;
}
