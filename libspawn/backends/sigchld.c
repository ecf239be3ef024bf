/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* sigchld.c - the legacy path: ordinary children and SIGCHLD
 *
 * For kernels without pidfds.  One SIGCHLD handler for the process, which
 * chains to the handler the application had.  While some watched child
 * has no pidfd (none on this kernel) or the application asked for
 * autoreaping, on each SIGCHLD it sweeps:
 * waitid(P_ALL, WNOWAIT) names one exited child without reaping it; if
 * that child is ours (a PID table, no system call) it is reaped there and
 * then, its status kept in its entry, its eventfd woken, and the next one
 * is asked for.  So an exit costs a few system calls, however many
 * children we watch (but the last waitid(P_ALL) walks all of them in the
 * kernel: with pidfds the handler only deals with the child si_pid names,
 * and collect() reaps through the pidfd an exit whose signal merged).  Only when the child named is not ours (the
 * application's zombie, which we must not reap and which hides the ones
 * behind it) does the sweep fall back to asking each of ours in turn.
 * collect() then only reads what the sweep kept; it reaps by itself only
 * when no handler ran (SIGCHLD blocked, or our handler replaced).  Where
 * the kernel has pidfds the child's fd is the pidfd opened at spawn,
 * which the kernel makes readable at its end whatever our handler does;
 * without them it is the entry's eventfd, which the handler wakes, and
 * collect() is also called every recheck_interval_ms.
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
 * then on the PID is never waited for or signalled again: where the kernel
 * has pidfd_open() and waitid(P_PIDFD) (5.4), a pidfd opened at spawn is
 * what we reap and signal through, so a reused PID is never touched;
 * before that, the handler remembers the ECHILD, and the start time noted
 * at spawn, checked on the very zombie about to be reaped, tells a
 * process that reused the PID from ours (to the clock tick); for the second, collect() is also polled
 * every recheck_interval_ms, so a watch never hangs.  See docs/design.md.
 *
 * Why not a realtime exit signal per child (clone's exit_signal), which
 * would queue one siginfo per exit: exec resets it to SIGCHLD
 * (de_thread() in fs/exec.c), and our children always exec.
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

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The handler walks this list with atomic loads only.  Entries are never
 * freed, only recycled (pid 0 = free), and each keeps its eventfd for
 * good, so the handler can never write to a descriptor that was closed and
 * reused: at worst it wakes the next child of the entry for nothing.  The
 * cost is one eventfd per child ever watched at once, where there are no
 * pidfds; where there are, an entry gets none (-1: its child's fd is the
 * pidfd, closed when the entry is released, and the handler never writes
 * to a pidfd). */
typedef struct _Entry Entry;
struct _Entry {
  Entry *next;
  Entry *next_free;          /* on free_entries; under entries_lock */
  /* > 0 watched, not reaped; ENTRY_CLAIMED being reaped right now (by a
   * sweep or collect(), whoever won the compare-and-swap); ENTRY_REAPED
   * reaped by a sweep, status below; ENTRY_UNWATCHED in use, not watched
   * (not started yet, or collected); ENTRY_GONE someone else reaped it;
   * 0 free. */
  _Atomic pid_t pid;
  /* Counted in entries_without_pidfd; under entries_lock. */
  gboolean counted;
  /* The child's PID from publication until the entry is released: the
   * key of the PID table, also while pid says CLAIMED or REAPED. */
  _Atomic pid_t key;
  /* send_signal() is between its check and its kill(): no sweep may reap
   * the child (and free its PID) meanwhile. */
  _Atomic int pinned;
  int efd;
  /* A pidfd opened at spawn, while the PID was certainly the child's
   * (-1: no pidfd_open() or P_PIDFD here, or none could be had): the
   * proof of identity that a PID and a start time are not.  Reaping
   * through it (waitid P_PIDFD) can only ever take our child.  Set before
   * the entry is published, closed when it is released. */
  int pidfd;
  /* /proc/PID/stat's starttime at spawn (0: unknown): a PID whose start
   * time differs is not our child any more but a process that reused it. */
  guint64 start_time;
  /* Written by the sweep that reaped it, before pid becomes ENTRY_REAPED. */
  int wait_status;
  struct rusage rusage;
};

#define ENTRY_UNWATCHED (-1)
#define ENTRY_GONE      (-2)
#define ENTRY_CLAIMED   (-3)
#define ENTRY_REAPED    (-4)

static Entry *_Atomic entries;
/* Guards the list's growth, the PID table and entry reuse; never taken
 * by the handler. */
static GMutex entries_lock;
/* The entries with pid 0, so that a spawn with thousands of children
 * watched takes one without walking them (issue 37). */
static Entry *free_entries;

/* PID -> entry, open addressing with linear probing, so that the handler
 * finds the child a zombie belongs to without a walk.  Written only under
 * entries_lock; read by the handler with atomic loads.  A reader that
 * meets the table mid-change (a backward shift on removal, a grown table)
 * may miss an entry, never find a wrong one (it checks the entry's key
 * and state): a miss costs the exact walk of the list, nothing else.
 * Grown tables are never freed (a handler may still be reading one), only
 * kept on a list (so that leak checkers see them held); as they double,
 * all of them together are at most twice the last. */
typedef struct _EntryTable EntryTable;
struct _EntryTable {
  EntryTable *retired;
  guint mask;
  guint count;
  Entry *_Atomic slots[];
};

static EntryTable *_Atomic table;

/* The application's disposition, read before ours goes live (never
 * written again), so that the handler never sees it half-filled. */
static struct sigaction chained;
/* The application asked the kernel to reap its children (SIG_IGN or
 * SA_NOCLDWAIT), which our handler may not let the kernel do for ours. */
static gboolean emulate_autoreap;
/* The application has a SIGCHLD handler of its own, which ours chains
 * to: one that reaps with waitpid(-1) would take every exit of ours
 * still a zombie, so the handler sweeps them first. */
static gboolean chains_app_handler;
/* Spawns between clone() and publishing the PID: a zombie we do not know
 * may be one of those, so none is reaped for the application meanwhile. */
static _Atomic int spawning;
/* Sweeps asked for and not yet done: the first asker sweeps, and sweeps
 * again as long as others asked meanwhile (from a handler in another
 * thread, or one that interrupted it), so that two sweeps never race to
 * reap the same foreign PID. */
static _Atomic int sweep_requests;
/* Watched children without a pidfd: only while there are some does a
 * SIGCHLD make the handler sweep (issue 37: the sweep's last
 * waitid(P_ALL), which finds no more zombies, walks every child of the
 * process in the kernel, so with N children alive each exit cost O(N)).
 * A child with a pidfd needs no sweep: its pidfd turns readable at its
 * end, also when its signal merged into another one, and collect()
 * reaps it through the pidfd. */
static _Atomic int entries_without_pidfd;
/* How many sweeps ran: for the tests (_spawn_sigchld_sweeps()). */
static _Atomic unsigned sweeps_run;
/* Whether pidfd_open() and waitid(P_PIDFD) exist here: 0 not known yet,
 * 1 yes, -1 no (or LIBSPAWN_SIGCHLD_NO_PIDFD=1: the path of kernels
 * before 5.3, so that the tests can run it on any kernel). */
static gint pidfd_state;

static int
sigchld_probe (void)
{
  return 0;
}

/* -1: the entry has no eventfd (its child's fd is a pidfd). */
static void
sigchld_wake (int efd)
{
  guint64 one = 1;
  ssize_t n G_GNUC_UNUSED;

  if (efd >= 0)
    n = write (efd, &one, sizeof (one));
}

/* Whether @e is ours and its child @pid not yet reaped by us.
 * Async-signal-safe. */
static gboolean
sigchld_entry_holds (Entry *e, pid_t pid)
{
  pid_t state;

  if (atomic_load (&e->key) != pid)
    return FALSE;
  state = atomic_load (&e->pid);
  return state == pid || state == ENTRY_CLAIMED;
}

/* The entry of our unreaped child @pid, from the table: NULL if it is
 * not ours, or (rarely: the table was changing) if the table missed it.
 * Async-signal-safe. */
static Entry *
sigchld_table_find (pid_t pid)
{
  EntryTable *t = atomic_load (&table);
  Entry *e;
  guint i, n;

  if (t == NULL)
    return NULL;
  for (i = (guint) pid & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++)
    {
      e = atomic_load (&t->slots[i]);
      if (e == NULL)
        break;
      if (sigchld_entry_holds (e, pid))
        return e;
    }
  return NULL;
}

/* The same from the whole list, exact: before a PID is taken for the
 * application's.  Async-signal-safe. */
static Entry *
sigchld_list_find (pid_t pid)
{
  Entry *e;

  for (e = atomic_load (&entries); e != NULL; e = e->next)
    if (sigchld_entry_holds (e, pid))
      return e;
  return NULL;
}

static void
sigchld_table_put (EntryTable *t, Entry *e)
{
  guint i = (guint) atomic_load (&e->key) & t->mask;

  while (atomic_load (&t->slots[i]) != NULL)
    i = (i + 1) & t->mask;
  atomic_store (&t->slots[i], e);
  t->count++;
}

/* Under entries_lock. */
static void
sigchld_table_insert (Entry *e)
{
  EntryTable *t = atomic_load (&table), *bigger;
  guint i, size;

  if (t == NULL || (t->count + 1) * 2 > t->mask + 1)
    {
      size = t != NULL ? (t->mask + 1) * 2 : 64;
      bigger = g_malloc0 (sizeof (EntryTable) + size * sizeof (Entry *));
      bigger->mask = size - 1;
      bigger->retired = t;
      for (i = 0; t != NULL && i <= t->mask; i++)
        if (atomic_load (&t->slots[i]) != NULL)
          sigchld_table_put (bigger, atomic_load (&t->slots[i]));
      atomic_store (&table, bigger);
      t = bigger;
    }
  sigchld_table_put (t, e);
}

/* Under entries_lock.  Backward shift, no tombstones: every entry after
 * the hole that may move into it does, so probes stay short. */
static void
sigchld_table_remove (Entry *e)
{
  EntryTable *t = atomic_load (&table);
  guint hole, j, home;
  Entry *f;

  if (t == NULL)
    return;
  for (hole = (guint) atomic_load (&e->key) & t->mask;
       atomic_load (&t->slots[hole]) != e; hole = (hole + 1) & t->mask)
    if (atomic_load (&t->slots[hole]) == NULL)
      return;
  for (j = (hole + 1) & t->mask; (f = atomic_load (&t->slots[j])) != NULL;
       j = (j + 1) & t->mask)
    {
      home = (guint) atomic_load (&f->key) & t->mask;
      /* f may fill the hole unless its home lies cyclically in (hole, j]. */
      if (((j - home) & t->mask) >= ((j - hole) & t->mask))
        {
          atomic_store (&t->slots[hole], f);
          hole = j;
        }
    }
  atomic_store (&t->slots[hole], NULL);
  t->count--;
}

/* What sigchld_read_start_time() says of a PID that names no process. */
#define START_TIME_GONE G_MAXUINT64

/* Field 22 of /proc/PID/stat, the start time in clock ticks since boot;
 * START_TIME_GONE if no process has @pid; 0 if it cannot be told: a full
 * fd table (EMFILE, ENFILE), no /proc, a /proc that hides the process
 * (hidepid), a line cut short.  Async-signal-safe (the sweep checks it
 * before reaping): open, read, close, kill and plain C; errno is the
 * caller's to save. */
static guint64
sigchld_read_start_time (pid_t pid)
{
  /* Field 22 comes within some 300 bytes (comm is at most 16, numbers
   * at most 20 digits): keep the signal handler's stack small. */
  char path[32] = "/proc/", digits[12], buf[512];
  const char *p;
  guint64 v = 0;
  ssize_t n;
  int fd, field, i = 0, k = 6;
  pid_t q = pid;

  do
    digits[i++] = '0' + q % 10;
  while ((q /= 10) > 0);
  while (i > 0)
    path[k++] = digits[--i];
  memcpy (path + k, "/stat", sizeof ("/stat"));
  fd = open (path, O_RDONLY | O_CLOEXEC);
  n = fd < 0 ? -1 : read (fd, buf, sizeof (buf) - 1);
  if (n < 0 && (errno == ENOENT || errno == ESRCH))
    {
      /* Gone, or hidden from us (hidepid): kill() tells which. */
      if (fd >= 0)
        close (fd);
      return kill (pid, 0) < 0 && errno == ESRCH ? START_TIME_GONE : 0;
    }
  if (fd >= 0)
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
  if (p == NULL)
    return 0;
  for (p++; *p >= '0' && *p <= '9'; p++)
    v = v * 10 + (guint64) (*p - '0');
  /* A number the buffer cut short is no answer. */
  return *p == ' ' || *p == '\n' ? v : 0;
}

/* Whether @pid, under @e's claim, may still name the child we started
 * (or its zombie): FALSE only when we know it does not — the PID is
 * free, or names a process with another start time.  When the start
 * time cannot be read (a full fd table, hidepid, no /proc) the caller's
 * own evidence stands (waitid() has just named the zombie, or wait4()
 * will say ECHILD): a failed read must not turn our child into a
 * stranger, or its status is lost and its zombie left behind. */
static gboolean
sigchld_same_start (Entry *e, pid_t pid)
{
  guint64 now;

  if (e->start_time == 0)
    return TRUE;
  now = sigchld_read_start_time (pid);
  return now == 0 || now == e->start_time;
}

/* Takes @e's child @pid for reaping: FALSE if someone else holds it (a
 * sweep or collect() that claimed it first, or send_signal() that
 * pinned it).  The claim is a compare-and-swap, then a look at the pin,
 * which send_signal() sets before it looks at the state: one of the two
 * always sees the other.  Async-signal-safe. */
static gboolean
sigchld_entry_claim (Entry *e, pid_t pid)
{
  pid_t expected = pid;

  if (!atomic_compare_exchange_strong (&e->pid, &expected, ENTRY_CLAIMED))
    return FALSE;
  if (atomic_load (&e->pinned))
    {
      atomic_store (&e->pid, pid);
      return FALSE;
    }
  return TRUE;
}

/* A wait status from what waitid() reports. */
static int
sigchld_wait_status (const siginfo_t *si)
{
  switch (si->si_code)
    {
    case CLD_EXITED:
      return (si->si_status & 0xff) << 8;
    case CLD_DUMPED:
      return (si->si_status & 0x7f) | 0x80;
    default:
      return si->si_status & 0x7f;
    }
}

/* Reaps @e's child @pid, under @e's claim, only if what would be reaped
 * is provably that child.  @pid if reaped (@status and @ru filled); 0 if
 * it has not ended, or (without a pidfd) if the zombie's start time
 * cannot be read and @trust_unknown is FALSE: asked again later; -1 with
 * errno ECHILD if it is not ours any more (reaped by someone else; the PID
 * may name another process, even a zombie we must leave alone).
 *
 * With a pidfd (opened at spawn) the reap goes through it: exact.
 * Without one (before Linux 5.3/5.4): first waitid(WNOWAIT) finds a
 * zombie at @pid, then its start time is checked against the child's, on
 * that zombie, then it is reaped.
 * ### RACE: without a pidfd, a thief that reaps our zombie between the
 * start-time read and wait4(), and a fork that reuses the PID and exits
 * in that window, would still let us reap the newcomer; so does a
 * newcomer in the same clock tick (start times are 10 ms ticks).  A pidfd
 * is what closes both.  Async-signal-safe. */
static pid_t
sigchld_reap (Entry *e, pid_t pid, gboolean trust_unknown, int *status, struct rusage *ru)
{
  guint64 now;
  siginfo_t si;

  memset (&si, 0, sizeof (si));
  if (e->pidfd >= 0)
    {
      if (syscall (SYS_waitid, P_PIDFD, e->pidfd, &si, WEXITED | WNOHANG, ru) < 0)
        return -1;
      if (si.si_pid == 0)
        return 0;
      *status = sigchld_wait_status (&si);
      return pid;
    }
  if (waitid (P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
    return -1;
  if (si.si_pid != pid)
    {
      /* Running: ours, or a newcomer that took the PID of our stolen
       * child; its start time tells (0: cannot tell, ask again). */
      now = e->start_time != 0 ? sigchld_read_start_time (pid) : 0;
      if (now != 0 && now != e->start_time)
        {
          errno = ECHILD;
          return -1;
        }
      return 0;
    }
  if (e->start_time != 0)
    {
      now = sigchld_read_start_time (pid);
      if (now == START_TIME_GONE || (now != 0 && now != e->start_time))
        {
          errno = ECHILD;
          return -1;
        }
      if (now == 0 && !trust_unknown)
        return 0;
    }
  return wait4 (pid, status, WNOHANG, ru);
}

/* The sweep's reap of our child @pid, which waitid() reported ended.
 * TRUE if the zombie it saw is dealt with (reaped: status kept; or
 * found to be someone else's: the entry is gone), FALSE if it is still
 * there, held by someone else.  Either way the watch is woken, which
 * then reads the state.  Async-signal-safe. */
static gboolean
sigchld_sweep_reap (Entry *e, pid_t pid)
{
  struct rusage ru;
  int status = 0;
  pid_t r;

  if (!sigchld_entry_claim (e, pid))
    {
      sigchld_wake (e->efd);
      return FALSE;
    }
  /* waitid() has just named this zombie: a start time that cannot be
   * read (a full fd table) does not make it a stranger. */
  r = sigchld_reap (e, pid, TRUE, &status, &ru);
  if (r == pid)
    {
      e->wait_status = status;
      e->rusage = ru;
      atomic_store (&e->pid, ENTRY_REAPED);
    }
  else if (r < 0)
    atomic_store (&e->pid, ENTRY_GONE);
  else
    {
      /* Not a zombie after all: stolen and the PID reused in our tick
       * by a process still running.  Left to collect(). */
      atomic_store (&e->pid, pid);
      sigchld_wake (e->efd);
      return FALSE;
    }
  sigchld_wake (e->efd);
  return TRUE;
}

/* @e's child @pid, asked directly: reaped if it has ended, marked gone
 * if someone else reaped it.  Async-signal-safe. */
static void
sigchld_sweep_one (Entry *e, pid_t pid)
{
  siginfo_t w;

  w.si_pid = 0;
  if (waitid (P_PID, pid, &w, WEXITED | WNOHANG | WNOWAIT) == 0)
    {
      if (w.si_pid == pid)
        sigchld_sweep_reap (e, pid);
    }
  else if (errno == ECHILD)
    {
      /* Reaped by someone else: gone for good, and from now on the PID
       * may name another process, which we must never wait for or
       * signal.  (CAS: the entry may have been recycled since.) */
      if (atomic_compare_exchange_strong (&e->pid, &pid, ENTRY_GONE))
        sigchld_wake (e->efd);
    }
}

/* The slow way, when the kernel's first zombie is not one we may reap:
 * each watched child in turn, as the handler always did before. */
static void
sigchld_sweep_each (void)
{
  Entry *e;

  for (e = atomic_load (&entries); e != NULL; e = e->next)
    {
      pid_t pid = atomic_load (&e->pid);

      if (pid > 0)
        sigchld_sweep_one (e, pid);
    }
}

/* Ask the kernel for an exited child, deal with it, repeat until none is
 * left; a few system calls per exit.  A zombie that is not ours stops
 * it: reaped for the application if it asked for autoreaping (unless a
 * spawn of ours is between clone and publishing its PID: it may be
 * that one), else it hides the ones behind it, and we fall back to
 * asking each of ours.  Async-signal-safe: waitid, wait4, open, read,
 * write and atomics. */
static void
sigchld_sweep_once (void)
{
  siginfo_t si;
  Entry *e;

  atomic_fetch_add (&sweeps_run, 1);
  for (;;)
    {
      si.si_pid = 0;
      if (waitid (P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
          si.si_pid == 0)
        return;
      e = sigchld_table_find (si.si_pid);
      if (e == NULL && emulate_autoreap)
        {
          /* spawning first: once it reads 0, every PID is published. */
          if (atomic_load (&spawning) > 0)
            break;
          e = sigchld_list_find (si.si_pid);
          if (e == NULL)
            {
              if (waitid (P_PID, si.si_pid, &si, WEXITED | WNOHANG) < 0)
                break;
              continue;
            }
        }
      if (e == NULL || !sigchld_sweep_reap (e, si.si_pid))
        break;
    }
  sigchld_sweep_each ();
}

/* Async-signal-safe. */
static void
sigchld_sweep (void)
{
  int seen;

  if (atomic_fetch_add (&sweep_requests, 1) > 0)
    return;
  do
    {
      seen = atomic_load (&sweep_requests);
      sigchld_sweep_once ();
    }
  while (!atomic_compare_exchange_strong (&sweep_requests, &seen, 0));
}

/* From thread context (start, collect, discard): a sweep that cannot be
 * cancelled half-way (waitid is a cancellation point), which would leave
 * sweep_requests set for good. */
static void
sigchld_sweep_from_thread (void)
{
  int state;

  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &state);
  sigchld_sweep ();
  pthread_setcancelstate (state, NULL);
}

/* Async-signal-safe: waitid, wait4, open, read, write and atomics. */
static void
sigchld_handler (int signum, siginfo_t *si, void *uctx)
{
  int saved_errno = errno;
  Entry *e;

  /* Without a child that lacks a pidfd, with no autoreaping to do for
   * the application and no handler of its own to pass the signal to,
   * the child this signal names is all there is to do here: O(1) per
   * exit however many children are alive. */
  if (si == NULL || emulate_autoreap || chains_app_handler ||
      atomic_load (&entries_without_pidfd) > 0)
    sigchld_sweep ();
  /* The child this signal names, if ours and still not reaped: a sweep
   * elsewhere may still have it, or a thief took it (no zombie left for
   * the sweep to see), which only this look tells before the PID can be
   * reused.  Exits whose signals merged into this one are asked about by
   * the recheck (collect()), or by the next sweep that falls back; with
   * pidfds, by collect() when the pidfd turns readable. */
  if (si != NULL && si->si_code != CLD_STOPPED && si->si_code != CLD_CONTINUED &&
      si->si_pid > 0 && (e = sigchld_table_find (si->si_pid)) != NULL &&
      atomic_load (&e->pid) == si->si_pid)
    sigchld_sweep_one (e, si->si_pid);
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

/* fork() while another thread sweeps, spawns or holds entries_lock: the
 * child process has none of those threads, so what they had begun never
 * ends there, and its next sweep would return at once and its next spawn
 * wait for ever.  Hold the lock across fork() (as pdeathsig-thread.c does
 * with its own) and start the child's copy with nothing in flight. */
static void
sigchld_before_fork (void)
{
  g_mutex_lock (&entries_lock);
}

static void
sigchld_after_fork_parent (void)
{
  g_mutex_unlock (&entries_lock);
}

static void
sigchld_after_fork_child (void)
{
  atomic_store (&sweep_requests, 0);
  atomic_store (&spawning, 0);
  g_mutex_unlock (&entries_lock);
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
  pthread_atfork (sigchld_before_fork, sigchld_after_fork_parent,
                  sigchld_after_fork_child);
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
  chains_app_handler = app_handler;
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

static int
sigchld_entry_acquire (Entry **out)
{
  guint64 count;
  ssize_t n G_GNUC_UNUSED;
  Entry *e;
  int efd;

  g_mutex_lock (&entries_lock);
  e = free_entries;
  if (e != NULL)
    {
      free_entries = e->next_free;
      e->next_free = NULL;
      atomic_store (&e->pid, ENTRY_UNWATCHED);
      /* Wake-ups meant for its previous child. */
      if (e->efd >= 0)
        n = read (e->efd, &count, sizeof (count));
    }
  else
    {
      /* Where pidfds work the child's fd is its pidfd: no eventfd. */
      efd = -1;
      if (g_atomic_int_get (&pidfd_state) <= 0)
        {
          efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
          efd = efd < 0 ? -errno : _spawn_fd_above_stdio (efd);
          if (efd < 0)
            {
              g_mutex_unlock (&entries_lock);
              return efd;
            }
        }
      e = g_new0 (Entry, 1);
      e->efd = efd;
      e->pidfd = -1;
      atomic_store (&e->pid, ENTRY_UNWATCHED);
      e->next = atomic_load (&entries);
      atomic_store (&entries, e);
    }
  g_mutex_unlock (&entries_lock);
  *out = e;
  return 0;
}

/* Publishes @e as the entry of @pid: in the table, then watched;
 * counted first if it has no pidfd, so that a handler that sees it
 * watched sweeps for it. */
static void
sigchld_entry_publish (Entry *e, pid_t pid, gboolean needs_sweep)
{
  g_mutex_lock (&entries_lock);
  if (needs_sweep)
    {
      e->counted = TRUE;
      atomic_fetch_add (&entries_without_pidfd, 1);
    }
  atomic_store (&e->key, pid);
  sigchld_table_insert (e);
  atomic_store (&e->pid, pid);
  g_mutex_unlock (&entries_lock);
}

static void
sigchld_entry_release (Entry *e)
{
  g_mutex_lock (&entries_lock);
  if (atomic_load (&e->key) != 0)
    {
      sigchld_table_remove (e);
      atomic_store (&e->key, 0);
    }
  /* No sweep holds it: a claim needs the state to be the PID, and the
   * child was collected or discarded before its entry goes. */
  if (e->pidfd >= 0)
    close (e->pidfd);
  e->pidfd = -1;
  if (e->counted)
    atomic_fetch_sub (&entries_without_pidfd, 1);
  e->counted = FALSE;
  atomic_store (&e->pid, 0);
  e->next_free = free_entries;
  free_entries = e;
  g_mutex_unlock (&entries_lock);
}

/* A pidfd for @pid, our child not yet reaped, or -1: none on this kernel
 * (ENOSYS, or P_PIDFD missing), or none to be had now (EMFILE...): that
 * child then has only its start time to prove who it is. */
static int
sigchld_open_pidfd (pid_t pid)
{
  siginfo_t si;
  int fd;

  if (g_atomic_int_get (&pidfd_state) == 0 &&
      g_strcmp0 (g_getenv ("LIBSPAWN_SIGCHLD_NO_PIDFD"), "1") == 0)
    g_atomic_int_set (&pidfd_state, -1);
  if (g_atomic_int_get (&pidfd_state) < 0)
    return -1;
  fd = syscall (SYS_pidfd_open, pid, 0);
  if (fd < 0)
    {
      if (errno == ENOSYS || errno == EPERM)
        g_atomic_int_set (&pidfd_state, -1);
      else
        g_debug ("sigchld: no pidfd for PID %d (%s): its start time must prove it",
                 (int) pid, g_strerror (errno));
      return -1;
    }
  fd = _spawn_fd_above_stdio (fd);
  if (fd >= 0 && g_atomic_int_get (&pidfd_state) == 0)
    {
      /* EINVAL: P_PIDFD unknown (5.3); anything else answers yes. */
      memset (&si, 0, sizeof (si));
      if (waitid ((idtype_t) P_PIDFD, fd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
          errno == EINVAL)
        {
          close (fd);
          g_atomic_int_set (&pidfd_state, -1);
          return -1;
        }
      g_atomic_int_set (&pidfd_state, 1);
    }
  return fd < 0 ? -1 : fd;
}

/* @e's wake-up for a child that has no pidfd (none on this kernel, or
 * none could be had): an eventfd the handler writes, made now if the
 * entry had none (entries made while pidfds worked have none, which
 * keeps 16000 watched children at one fd each).  0 or -errno. */
static int
sigchld_entry_need_efd (Entry *e)
{
  int efd;

  if (e->efd >= 0)
    return 0;
  efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  efd = efd < 0 ? -errno : _spawn_fd_above_stdio (efd);
  if (efd < 0)
    return efd;
  e->efd = efd;
  return 0;
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
               SPAWN_EXEC_CLONE_FLAGS (plan) | SIGCHLD, plan);
  if (pid < 0)
    {
      err = -errno;
      atomic_fetch_sub (&spawning, 1);
      sigchld_entry_release (e);
      return err;
    }
  /* Unreaped, so the PID is still this child's: a pidfd opened now is
   * its proof of identity; without one, its start time (0, not known,
   * if it cannot be read). */
  e->pidfd = sigchld_open_pidfd (pid);
  e->start_time = e->pidfd < 0 ? sigchld_read_start_time (pid) : 0;
  if (e->start_time == START_TIME_GONE)
    e->start_time = 0;
  if (e->pidfd < 0 && (err = sigchld_entry_need_efd (e)) < 0)
    {
      /* No way to learn of its end: not started after all.  Unpublished,
       * so no sweep of ours takes it; ours to reap. */
      kill (pid, SIGKILL);
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      atomic_fetch_sub (&spawning, 1);
      sigchld_entry_release (e);
      return err;
    }
  /* A SIGCHLD that came before the PID was published woke nobody, and
   * reaped nothing for the application: look again.  (A pidfd needs no
   * waking: the kernel makes it readable.) */
  sigchld_entry_publish (e, pid, e->pidfd < 0);
  atomic_fetch_sub (&spawning, 1);
  if (e->pidfd < 0 && sigchld_has_ended (pid))
    sigchld_wake (e->efd);
  if (emulate_autoreap)
    sigchld_sweep_from_thread ();

  child->pid = pid;
  child->backend_data = e;
  if (e->pidfd >= 0)
    {
      /* The kernel makes the pidfd readable at the child's end, whoever
       * reaps it and whether our handler runs or not: no recheck. */
      child->fd = e->pidfd;
      child->recheck_interval_ms = 0;
    }
  else
    child->fd = e->efd;
  return 0;
}

static void
sigchld_discard (SpawnChild *child)
{
  Entry *e = child->backend_data;

  /* Ours to reap unless a sweep has it: then wait until it is done (a
   * few instructions, in a handler on another thread).  Look and claim
   * in one loop: a sweep may claim between our look and our claim, and
   * releasing the entry under its feet would let the next child's
   * spawn reuse an entry the sweep is still writing. */
  for (;;)
    {
      pid_t state = atomic_load (&e->pid);

      if (state == ENTRY_CLAIMED)
        sched_yield ();
      else if (state != child->pid)
        break;  /* reaped by a sweep, or by someone else */
      else if (sigchld_entry_claim (e, child->pid))
        {
          while (waitpid (child->pid, NULL, 0) < 0 && errno == EINTR)
            ;
          break;
        }
    }
  sigchld_entry_release (e);
  child->backend_data = NULL;
  child->fd = -1;
  if (emulate_autoreap)
    sigchld_sweep_from_thread ();
}

static int
sigchld_collect (SpawnChild *child, SpawnExitInfo *info)
{
  Entry *e = child->backend_data;
  struct rusage ru;
  guint64 count;
  ssize_t n G_GNUC_UNUSED;
  int status;
  pid_t r, state;

  /* The eventfd's wake-ups (a pidfd stays readable, and is not read). */
  if (child->fd == e->efd)
    n = read (child->fd, &count, sizeof (count));
  state = atomic_load (&e->pid);
  if (state == ENTRY_REAPED)
    {
      /* The usual way: a sweep reaped it and kept the status. */
      status = e->wait_status;
      ru = e->rusage;
      r = child->pid;
    }
  else if (state == ENTRY_CLAIMED)
    {
      /* A sweep is reaping it; it wakes the fd when done. */
      return -EAGAIN;
    }
  else if (state != child->pid)
    {
      /* Someone else reaped it (ENTRY_GONE): never wait for that PID. */
      r = -1, errno = ECHILD;
    }
  else if (!sigchld_entry_claim (e, child->pid))
    return -EAGAIN;
  else
    {
      /* No sweep saw it end (SIGCHLD blocked or taken from us: the
       * recheck brought us here).  Its PID may now name another process,
       * even another zombie, which we must never reap: only what is
       * proven ours is (sigchld_reap()), and an unreadable start time
       * is no proof here. */
      r = sigchld_reap (e, child->pid, FALSE, &status, &ru);
      if (r == 0)
        {
          atomic_store (&e->pid, child->pid);
          return -EAGAIN;
        }
    }

  /* Reaped (or lost): stop watching, but keep the entry and its eventfd
   * until the SpawnChild goes, and keep it readable for other watches.
   * ECHILD once is gone for good: the caller caches it and never asks
   * again. */
  atomic_store (&e->pid, r < 0 ? ENTRY_GONE : ENTRY_UNWATCHED);
  if (child->fd == e->efd)
    sigchld_wake (child->fd);
  if (r < 0)
    return -ECHILD;
  if (emulate_autoreap)
    sigchld_sweep_from_thread ();
  _spawn_exit_info_from_wait_status (info, status, &ru);
  return 0;
}

static int
sigchld_send_signal (SpawnChild *child, int signum)
{
  Entry *e = child->backend_data;
  int fd, err = 0;

  /* The caller holds child->lock, so collect() cannot reap it; the pin
   * keeps sweeps from reaping it until we are done.  Unless someone
   * else did, or a sweep before the pin, the PID is still our child or
   * our zombie: the state and the start time tell. */
  atomic_store (&e->pinned, 1);
  /* The pidfd of the spawn is the child's for sure; one opened now is
   * only if the check below says so. */
  if (e->pidfd >= 0)
    {
      err = atomic_load (&e->pid) == child->pid ? _spawn_fd_send_signal (e->pidfd, signum)
                                                : -ESRCH;
      atomic_store (&e->pinned, 0);
      return err;
    }
  fd = syscall (SYS_pidfd_open, child->pid, 0);
  if (atomic_load (&e->pid) != child->pid || !sigchld_same_start (e, child->pid))
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
  atomic_store (&e->pinned, 0);
  if (fd >= 0)
    close (fd);
  /* A sweep that met the pin left the zombie, woke the watch and asked
   * each child in turn; collect() reaps this one. */
  return err;
}

static void
sigchld_finalize (SpawnChild *child)
{
  /* The eventfd belongs to the entry, which the next child reuses. */
  if (child->backend_data != NULL)
    sigchld_entry_release (child->backend_data);
}

/* For the tests: how many sweeps the process has run. */
unsigned
_spawn_sigchld_sweeps (void)
{
  return atomic_load (&sweeps_run);
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
