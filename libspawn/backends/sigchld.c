/* sigchld.c - the legacy path: ordinary children and SIGCHLD
 *
 * For kernels without pidfds.  One SIGCHLD handler for the process, which
 * chains to the handler the application had; for each of our children it
 * checks, without reaping (WNOWAIT), whether the child has ended and if so
 * wakes that child's eventfd.  Reaping happens in collect(), under the
 * child's lock, so a PID we signal is still ours.
 *
 * The application keeps what it asked for: its flags (stop notifications
 * or not, SA_RESTART), and with SIG_IGN or SA_NOCLDWAIT its own children are
 * still reaped for it, by us, since the kernel may no longer do it (it
 * would reap ours too).
 *
 * What it cannot promise: a waitpid(-1) elsewhere can reap our child
 * first, and an application that later sets SIGCHLD to SIG_IGN or installs
 * its own handler without chaining takes our wake-ups away.  The first
 * shows up as ECHILD (the watch ends with SPAWN_ERROR_STATUS_LOST) and from
 * then on the PID is never waited for or signalled again: the handler
 * remembers the ECHILD, and the start time noted at spawn tells a process
 * that reused the PID from ours; for the second, collect() is also polled
 * every recheck_interval_ms, so a watch never hangs.  See docs/design.md.
 */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
  /* > 0 watched; ENTRY_UNWATCHED in use, not watched (not started yet, or
   * reaped); ENTRY_GONE someone else reaped it; 0 free. */
  _Atomic pid_t pid;
  int efd;
  /* /proc/PID/stat's starttime at spawn (0: unknown): a PID whose start
   * time differs is not our child any more but a process that reused it. */
  guint64 start_time;
};

#define ENTRY_UNWATCHED (-1)
#define ENTRY_GONE      (-2)

static Entry *_Atomic entries;
static GMutex entries_lock;
/* The application's disposition, read before ours goes live (never
 * written again), so that the handler never sees it half-filled. */
static struct sigaction chained;
/* The application asked the kernel to reap its children (SIG_IGN or
 * SA_NOCLDWAIT), which our handler may not let the kernel do for ours. */
static gboolean emulate_autoreap;
/* Spawns between clone() and publishing the PID: a zombie we do not know
 * may be one of those, so none is reaped for the application meanwhile. */
static _Atomic int spawning;

static int
sigchld_probe (void)
{
  return 0;
}

static void
sigchld_wake (int efd)
{
  guint64 one = 1;
  ssize_t n G_GNUC_UNUSED;

  n = write (efd, &one, sizeof (one));
}

/* Async-signal-safe: atomics only. */
static gboolean
sigchld_is_ours (pid_t pid)
{
  Entry *e;

  for (e = atomic_load (&entries); e != NULL; e = e->next)
    if (atomic_load (&e->pid) == pid)
      return TRUE;
  return FALSE;
}

/* What SIG_IGN or SA_NOCLDWAIT would have done for the application: reap
 * its exited children, never ours.  waitid(P_ALL, WNOWAIT) peeks at one
 * exited child without reaping it; only if it is not ours is that one PID
 * reaped.  When the first exited child is ours we stop: the watch reaps it
 * and sweeps again (sigchld_collect), so the ones behind it follow.
 * Async-signal-safe: waitid and atomics. */
static void
sigchld_reap_foreign (void)
{
  siginfo_t si;

  for (;;)
    {
      si.si_pid = 0;
      if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
          si.si_pid == 0)
        return;
      if (atomic_load (&spawning) > 0 || sigchld_is_ours (si.si_pid))
        return;
      if (waitid (P_PID, si.si_pid, &si, WEXITED | WNOHANG) < 0)
        return;
    }
}

/* Async-signal-safe: waitid, write and the atomics only. */
static void
sigchld_handler (int signum, siginfo_t *si, void *uctx)
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
      if (waitid (P_PID, pid, &w, WEXITED | WNOHANG | WNOWAIT) == 0)
        {
          if (w.si_pid == pid)
            sigchld_wake (e->efd);
        }
      else if (errno == ECHILD)
        {
          /* Reaped by someone else: gone for good, and from now on the
           * PID may name another process, which we must never wait for
           * or signal.  (CAS: the entry may have been recycled since.) */
          atomic_compare_exchange_strong (&e->pid, &pid, ENTRY_GONE);
          sigchld_wake (e->efd);
        }
    }
  if (emulate_autoreap)
    sigchld_reap_foreign ();
  errno = saved_errno;

  /* The application's handler as it asked: no stop or continue
   * notification if it set SA_NOCLDSTOP (we keep that flag too, so this
   * only matters should the kernel send one anyway). */
  if (si != NULL && (si->si_code == CLD_STOPPED || si->si_code == CLD_CONTINUED) &&
      (chained.sa_flags & SA_NOCLDSTOP))
    return;
  if (chained.sa_flags & SA_SIGINFO)
    chained.sa_sigaction (signum, si, uctx);
  else if (chained.sa_handler != SIG_DFL && chained.sa_handler != SIG_IGN)
    chained.sa_handler (signum);
}

static void
sigchld_install_handler (void)
{
  static gsize installed;
  struct sigaction sa;
  sigset_t block, saved;
  gboolean app_handler;

  if (!g_once_init_enter (&installed))
    return;
  /* Read the application's disposition first, then go live: filled in by
   * the same sigaction() that installed us, chained would be written
   * after the handler could already run in another thread, and a SIGCHLD
   * in between would not be passed on.  SIGCHLD blocked here meanwhile. */
  sigemptyset (&block);
  sigaddset (&block, SIGCHLD);
  pthread_sigmask (SIG_BLOCK, &block, &saved);
  sigaction (SIGCHLD, NULL, &chained);
  app_handler = (chained.sa_flags & SA_SIGINFO) ||
                (chained.sa_handler != SIG_DFL && chained.sa_handler != SIG_IGN);
  emulate_autoreap = (!(chained.sa_flags & SA_SIGINFO) && chained.sa_handler == SIG_IGN) ||
                     (chained.sa_flags & SA_NOCLDWAIT);

  memset (&sa, 0, sizeof (sa));
  sa.sa_sigaction = sigchld_handler;
  sigfillset (&sa.sa_mask);
  /* The application's flags where they mean something for it: stop
   * notifications only if its handler wants them, its SA_RESTART and
   * SA_ONSTACK choices.  Never SA_NOCLDWAIT: the kernel would reap ours
   * too (we emulate it, as SIG_IGN); never SA_RESETHAND. */
  sa.sa_flags = SA_SIGINFO;
  if (app_handler)
    sa.sa_flags |= chained.sa_flags & (SA_NOCLDSTOP | SA_RESTART | SA_ONSTACK);
  else
    sa.sa_flags |= SA_NOCLDSTOP | SA_RESTART;
  atomic_signal_fence (memory_order_seq_cst);
  sigaction (SIGCHLD, &sa, NULL);
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  g_once_init_leave (&installed, 1);
}

/* Field 22 of /proc/PID/stat, the start time in clock ticks since boot;
 * 0 if it cannot be read. */
static guint64
sigchld_read_start_time (pid_t pid)
{
  char path[64], buf[1024];
  const char *p;
  ssize_t n;
  int fd, field;

  g_snprintf (path, sizeof (path), "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof (buf) - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: count from the last ')'. */
  p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  /* ") S ppid ...": field 3 is the state; 22 is 19 spaces further. */
  for (field = 2; field < 22 && p != NULL; field++)
    p = strchr (p + 1, ' ');
  return p != NULL ? g_ascii_strtoull (p + 1, NULL, 10) : 0;
}

/* Whether @e's PID still names the child we started (or its zombie).  If
 * its start time cannot be read now (no /proc, or no such PID: reaped),
 * it is not ours any more unless we never knew it. */
static gboolean
sigchld_still_ours (Entry *e, pid_t pid)
{
  if (atomic_load (&e->pid) == ENTRY_GONE)
    return FALSE;
  if (e->start_time == 0)
    return TRUE;
  return sigchld_read_start_time (pid) == e->start_time;
}

static int
sigchld_entry_acquire (Entry **out)
{
  guint64 count;
  ssize_t n G_GNUC_UNUSED;
  pid_t free_pid = 0;
  Entry *e;
  int efd;

  g_mutex_lock (&entries_lock);
  for (e = atomic_load (&entries); e != NULL; e = e->next)
    if (atomic_compare_exchange_strong (&e->pid, &free_pid, ENTRY_UNWATCHED))
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
      atomic_store (&e->pid, ENTRY_UNWATCHED);
      e->next = atomic_load (&entries);
      atomic_store (&entries, e);
    }
  g_mutex_unlock (&entries_lock);
  *out = e;
  return 0;
}

static void
sigchld_entry_release (Entry *e)
{
  atomic_store (&e->pid, 0);
}

static gboolean
sigchld_has_ended (pid_t pid)
{
  siginfo_t w;

  w.si_pid = 0;
  if (waitid (P_PID, pid, &w, WEXITED | WNOHANG | WNOWAIT) == 0)
    return w.si_pid == pid;
  return errno == ECHILD;
}

static int
sigchld_start (SpawnChild *child, SpawnExecPlan *plan, void *stack,
               gsize stack_size)
{
  Entry *e = NULL;
  pid_t pid;
  int err;

  err = sigchld_entry_acquire (&e);
  if (err < 0)
    return err;
  sigchld_install_handler ();

  atomic_fetch_add (&spawning, 1);
  pid = clone (_spawn_exec_child, (char *) stack + stack_size,
               CLONE_VM | CLONE_VFORK | SIGCHLD, plan);
  if (pid < 0)
    {
      err = -errno;
      atomic_fetch_sub (&spawning, 1);
      sigchld_entry_release (e);
      return err;
    }
  /* Unreaped, so the PID is still this child's: note its start time. */
  e->start_time = sigchld_read_start_time (pid);
  /* A SIGCHLD that came before the PID was published woke nobody, and
   * reaped nothing for the application: look again. */
  atomic_store (&e->pid, pid);
  atomic_fetch_sub (&spawning, 1);
  if (sigchld_has_ended (pid))
    sigchld_wake (e->efd);
  if (emulate_autoreap)
    sigchld_reap_foreign ();

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
  sigchld_entry_release (child->backend_data);
  child->backend_data = NULL;
  child->fd = -1;
  if (emulate_autoreap)
    sigchld_reap_foreign ();
}

static int
sigchld_collect (SpawnChild *child, SpawnExitInfo *info)
{
  Entry *e = child->backend_data;
  struct rusage ru;
  guint64 count;
  ssize_t n G_GNUC_UNUSED;
  int status;
  pid_t r;

  n = read (child->fd, &count, sizeof (count));
  /* Someone else reaped it (the handler saw ECHILD), or its PID now
   * names another process: never wait for that one, it is not ours.
   * ### RACE: a thief that reaps our child after this check, and a fork
   * that reuses the PID before the wait4() below, would still let us reap
   * the newcomer; pidfds (the pidfd backend) close that window. */
  if (!sigchld_still_ours (e, child->pid))
    r = -1, errno = ECHILD;
  else
    r = wait4 (child->pid, &status, WNOHANG, &ru);
  if (r == 0)
    return -EAGAIN;
  if (r < 0 && errno == EINTR)
    return -EAGAIN;

  /* Reaped (or lost): stop watching, but keep the entry and its eventfd
   * until the SpawnChild goes, and keep it readable for other watches.
   * ECHILD once is gone for good: the caller caches it and never asks
   * again. */
  atomic_store (&e->pid, r < 0 ? ENTRY_GONE : ENTRY_UNWATCHED);
  sigchld_wake (child->fd);
  if (r < 0)
    return -ECHILD;
  if (emulate_autoreap)
    sigchld_reap_foreign ();
  _spawn_exit_info_from_wait_status (info, status, &ru);
  return 0;
}

static int
sigchld_send_signal (SpawnChild *child, int signum)
{
  Entry *e = child->backend_data;
  int fd, err = 0;

  /* The caller holds child->lock and we have not reaped, so unless
   * someone else did, the PID is still our child or our zombie.  If
   * someone did, the handler or the start time tells. */
  fd = syscall (SYS_pidfd_open, child->pid, 0);
  if (!sigchld_still_ours (e, child->pid))
    err = -ESRCH;
  /* The pidfd was opened before the check that its PID is still ours,
   * so it is ours: a recycled PID cannot be handed back. */
  else if (fd >= 0)
    err = _spawn_fd_send_signal (fd, signum);
  /* ### RACE: without pidfd_open (before 5.3), a thief reaping our child
   * and a fork reusing its PID between the check and kill() would let the
   * signal reach the newcomer. */
  else if (kill (child->pid, signum) < 0)
    err = -errno;
  if (fd >= 0)
    close (fd);
  return err;
}

static void
sigchld_finalize (SpawnChild *child)
{
  /* The eventfd belongs to the entry, which the next child reuses. */
  if (child->backend_data != NULL)
    sigchld_entry_release (child->backend_data);
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
