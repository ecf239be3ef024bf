/* backend-sigchld.c - the legacy path: ordinary children and SIGCHLD
 *
 * For kernels without pidfds.  One SIGCHLD handler for the process, which
 * chains to the handler the application had; for each of our children it
 * checks, without reaping (WNOWAIT), whether the child has ended and if so
 * wakes that child's eventfd.  Reaping happens in collect(), under the
 * child's lock, so a PID we signal is still ours.
 *
 * What it cannot promise: a waitpid(-1) elsewhere can reap our child
 * first, and an application that later sets SIGCHLD to SIG_IGN or installs
 * its own handler without chaining takes our wake-ups away.  The first
 * shows up as ECHILD (the watch ends with SPAWN_ERROR_STATUS_LOST); for the
 * second, collect() is also polled every recheck_interval_ms, so a watch
 * never hangs.  Installing our handler over SIG_IGN ends the application's
 * automatic reaping of its own children: that is documented, not hidden.
 */
#include "spawn-private.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The handler walks this list with atomic loads only.  Entries are never
 * freed, only recycled (pid 0 = free), and each keeps its eventfd for
 * good, so the handler can never write to a descriptor that was closed and
 * reused: at worst it wakes the next child of the entry for nothing.  The
 * cost is one eventfd per child ever watched at once. */
typedef struct _Entry Entry;
struct _Entry {
  Entry *next;
  _Atomic pid_t pid;  /* > 0 watched; -1 in use, not watched; 0 free */
  int efd;
};

static Entry *_Atomic entries;
static GMutex entries_lock;
static struct sigaction chained;

static int
sigchld_probe (void)
{
  return 0;
}

static void
wake (int efd)
{
  guint64 one = 1;
  ssize_t n G_GNUC_UNUSED;

  n = write (efd, &one, sizeof (one));
}

/* Async-signal-safe: waitid, write and the atomics only. */
static void
on_sigchld (int signum, siginfo_t *si, void *uctx)
{
  int saved_errno = errno;
  Entry *e;

  for (e = atomic_load (&entries); e != NULL; e = e->next)
    {
      pid_t pid = atomic_load (&e->pid);
      siginfo_t w;

      if (pid <= 0)
        continue;
      w.si_pid = 0;
      if (waitid (P_PID, pid, &w, WEXITED | WNOHANG | WNOWAIT) == 0
          ? w.si_pid == pid
          : errno == ECHILD)
        wake (e->efd);
    }
  errno = saved_errno;

  if (chained.sa_flags & SA_SIGINFO)
    chained.sa_sigaction (signum, si, uctx);
  else if (chained.sa_handler != SIG_DFL && chained.sa_handler != SIG_IGN)
    chained.sa_handler (signum);
}

static void
install_handler (void)
{
  static gsize installed;
  struct sigaction sa;

  if (!g_once_init_enter (&installed))
    return;
  memset (&sa, 0, sizeof (sa));
  sa.sa_sigaction = on_sigchld;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
  sigfillset (&sa.sa_mask);
  sigaction (SIGCHLD, &sa, &chained);
  g_once_init_leave (&installed, 1);
}

static int
entry_acquire (Entry **out)
{
  guint64 count;
  ssize_t n G_GNUC_UNUSED;
  pid_t free_pid = 0;
  Entry *e;
  int efd;

  g_mutex_lock (&entries_lock);
  for (e = atomic_load (&entries); e != NULL; e = e->next)
    if (atomic_compare_exchange_strong (&e->pid, &free_pid, -1))
      break;
    else
      free_pid = 0;
  if (e != NULL)
    {
      /* Wake-ups meant for its previous child. */
      n = read (e->efd, &count, sizeof (count));
    }
  else
    {
      efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      efd = efd < 0 ? -errno : _spawn_fd_above_stdio (efd);
      if (efd < 0)
        {
          g_mutex_unlock (&entries_lock);
          return efd;
        }
      e = g_new0 (Entry, 1);
      e->efd = efd;
      atomic_store (&e->pid, -1);
      e->next = atomic_load (&entries);
      atomic_store (&entries, e);
    }
  g_mutex_unlock (&entries_lock);
  *out = e;
  return 0;
}

static void
entry_release (Entry *e)
{
  atomic_store (&e->pid, 0);
}

static gboolean
has_ended (pid_t pid)
{
  siginfo_t w;

  w.si_pid = 0;
  if (waitid (P_PID, pid, &w, WEXITED | WNOHANG | WNOWAIT) == 0)
    return w.si_pid == pid;
  return errno == ECHILD;
}

static int
sigchld_start (SpawnChild *child, SpawnLaunch *launch, void *stack,
               gsize stack_size)
{
  Entry *e = NULL;
  pid_t pid;
  int err;

  err = entry_acquire (&e);
  if (err < 0)
    return err;
  install_handler ();

  pid = clone (_spawn_child_main, (char *) stack + stack_size,
               CLONE_VM | CLONE_VFORK | SIGCHLD, launch);
  if (pid < 0)
    {
      err = -errno;
      entry_release (e);
      return err;
    }
  /* A SIGCHLD that came before the PID was published woke nobody. */
  atomic_store (&e->pid, pid);
  if (has_ended (pid))
    wake (e->efd);

  child->pid = pid;
  child->fd = e->efd;
  child->backend_data = e;
  return 0;
}

static void
sigchld_discard (SpawnChild *child)
{
  while (waitpid (child->pid, NULL, 0) < 0 && errno == EINTR)
    ;
  entry_release (child->backend_data);
  child->backend_data = NULL;
  child->fd = -1;
}

static int
sigchld_collect (SpawnChild *child, SpawnExitInfo *info)
{
  struct rusage ru;
  guint64 count;
  ssize_t n G_GNUC_UNUSED;
  int status;
  pid_t r;

  n = read (child->fd, &count, sizeof (count));
  r = wait4 (child->pid, &status, WNOHANG, &ru);
  if (r == 0)
    return -EAGAIN;
  if (r < 0 && errno == EINTR)
    return -EAGAIN;

  /* Reaped (or lost): stop watching, but keep the entry and its eventfd
   * until the SpawnChild goes, and keep it readable for other watches. */
  atomic_store (&((Entry *) child->backend_data)->pid, -1);
  wake (child->fd);
  if (r < 0)
    return -errno;
  _spawn_exit_info_from_wait_status (info, status, &ru);
  return 0;
}

static int
sigchld_send_signal (SpawnChild *child, int signum)
{
  /* The caller holds child->lock and we have not reaped: unless someone
   * else did, the PID is still our zombie or our child.
   * ### RACE: after a waitpid(-1) elsewhere the PID may be recycled;
   * only pidfds (or clone fds) close that hole. */
  if (kill (child->pid, signum) < 0)
    return -errno;
  return 0;
}

static void
sigchld_finalize (SpawnChild *child)
{
  /* The eventfd belongs to the entry, which the next child reuses. */
  if (child->backend_data != NULL)
    entry_release (child->backend_data);
}

const SpawnBackendOps _spawn_backend_sigchld = {
  .kind = SPAWN_BACKEND_SIGCHLD,
  .name = "sigchld",
  .probe = sigchld_probe,
  .start = sigchld_start,
  .discard = sigchld_discard,
  .collect = sigchld_collect,
  .send_signal = sigchld_send_signal,
  .finalize = sigchld_finalize,
  .recheck_interval_ms = 500,
  .needs_reaping = TRUE,
};
