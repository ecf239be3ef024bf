/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pidfd-fuzz: random calls into the 7.2 interface the autoreap backend
 * and kernel/patches-7.2 use, checked against what the kernel documents.
 *
 *   pidfd-fuzz [--seed N] [--count N] [--seconds N]
 *
 * The calling thread makes, at random:
 * - clone3() with CLONE_PIDFD, CLONE_AUTOREAP, CLONE_PIDFD_AUTOKILL,
 *   CLONE_NNP, CLONE_VM | CLONE_VFORK and other legacy flags, unknown
 *   bits, exit signals valid and not, struct sizes below VER0, VER0 to
 *   VER2, odd ones, larger ones with a zero or a nonzero tail, above a
 *   page, and args and pidfd pointers that are valid, NULL, unmapped or
 *   read-only.  A combination the kernel must refuse fails with its
 *   errno (EINVAL, E2BIG, EFAULT); any other call fails with an errno
 *   clone3 may give or makes a child that exits at once with a random
 *   status;
 * - ioctl(PIDFD_GET_INFO) on the pidfd of a child, live, zombie or
 *   released, with random masks (PIDFD_INFO_EXIT, PIDFD_INFO_EXIT_CPUTIME,
 *   ...), every published size (VER0 to VER4), odd sizes, too small and
 *   too big, into valid, NULL, unmapped and read-only memory; and on a
 *   descriptor that is no pidfd or is closed: the answer must match
 *   pidfd-util.c's model (status right, CPU times only with the series,
 *   only when asked, only with room for them; zeroes past the kernel's
 *   struct, nothing written past the size);
 * - pidfd_send_signal() with valid and invalid signals and flags, and
 *   waitid(P_PIDFD) before and after the reap;
 * - an AUTOKILL sleeper: a CLONE_PIDFD_AUTOKILL child that would pause
 *   for ever, whose clone3 pidfd is dup'ed and closed copy by copy: it
 *   must live while a copy is open and be killed (SIGKILL, told through a
 *   pidfd_open() pidfd, which never kills) when the last one goes.
 * Meanwhile a reader thread calls PIDFD_GET_INFO on the newest child's
 * pidfd as fast as it can, so that it races the exit: whenever the
 * answer has PIDFD_INFO_EXIT it must carry the right status, and the CPU
 * times with it where the kernel has them (pidfs_exit()'s barrier).
 *
 * At the end, no descriptor beyond the program's own and no child or
 * zombie is left.  Each call's sequence follows from the seed (printed
 * first); the reader's interleaving does not.  The kernel log (KASAN,
 * lockdep, kmemleak, WARNING) is vm/run's to check.  Skips, saying why,
 * without clone3's CLONE_AUTOREAP (Linux 7.1).  x86_64.  TAP on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidfd-util.h"
#include "fuzz-rng.h"
#include "proc-scan.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#define PAGE 4096
#define CHILDREN_MAX 32
#define TIMEOUT_MS 30000
/* What clone3 knows in 7.2 besides the legacy flags (kernel/fork.c,
 * clone3_args_valid()): bit 38 is CLONE_EMPTY_MNTNS. */
#define KNOWN_HIGH (CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP | CLONE_AUTOREAP | CLONE_NNP | \
                    CLONE_PIDFD_AUTOKILL | (1ULL << 38))

/* A child the run made, until it is reaped and its pidfd closed. */
struct child {
  pid_t pid;
  int pidfd;     /* -1 without CLONE_PIDFD */
  int autoreap;
  int waited;    /* reaped through waitid(): released */
  int status;    /* the wait status it will have */
};

static struct {
  struct child children[CHILDREN_MAX];
  int n_children;
  int cputime;                /* pidfd_util_cputime_expected() */
  unsigned char *page;        /* RW, followed by a PROT_NONE guard page */
  unsigned char *guard;
  unsigned char *ro;          /* PROT_READ, zeroes */
  char failure[512];
  long calls, clone_ok, clone_refused, infos, info_ok, signals, waits, autokills;
  /* The reader thread. */
  pthread_mutex_t lock;       /* newest_fd, newest_status, failure */
  int newest_fd, newest_status;
  atomic_int stop;
  atomic_long races, race_exits, race_misses;
} run = { .lock = PTHREAD_MUTEX_INITIALIZER, .newest_fd = -1 };

static void fail (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static void
fail (const char *fmt, ...)
{
  va_list ap;

  pthread_mutex_lock (&run.lock);
  if (!run.failure[0]) {
    va_start (ap, fmt);
    vsnprintf (run.failure, sizeof run.failure, fmt, ap);
    va_end (ap);
  }
  pthread_mutex_unlock (&run.lock);
  atomic_store (&run.stop, 1);
}

/* ---- clone3 ---- */

enum ptr_kind { PTR_VALID, PTR_NULL, PTR_UNMAPPED, PTR_RO, PTR_KINDS };

static uint64_t
wild_flags (struct rng *r)
{
  static const uint64_t legacy[] = {
    CLONE_FILES, CLONE_FS, CLONE_CLEAR_SIGHAND, CLONE_UNTRACED, CLONE_IO, CLONE_SYSVSEM,
  };
  unsigned mode = below (r, 100);
  uint64_t f = 0;

  if (mode < 5)
    return rnd (r) | (1ULL << 63); /* an unknown bit at least */
  if (mode < 40) {
    /* What the autoreap backend asks for. */
    f = CLONE_PIDFD | CLONE_AUTOREAP;
    if (chance (r, 50))
      f |= CLONE_VM | CLONE_VFORK;
    if (chance (r, 40))
      f |= CLONE_PIDFD_AUTOKILL;
    if (chance (r, 50))
      f |= CLONE_NNP;
    return f;
  }
  f |= chance (r, 60) ? CLONE_PIDFD : 0;
  f |= chance (r, 50) ? CLONE_AUTOREAP : 0;
  f |= chance (r, 20) ? CLONE_PIDFD_AUTOKILL : 0;
  f |= chance (r, 20) ? CLONE_NNP : 0;
  f |= chance (r, 25) ? CLONE_VM | CLONE_VFORK : 0;
  f |= chance (r, 10) ? CLONE_VM | CLONE_SIGHAND : 0;
  for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++)
    f |= chance (r, 8) ? legacy[i] : 0;
  /* CLONE_THREAD and CLONE_PARENT only where 7.1 must refuse them:
   * a thread or a sibling would not be this run's child to check. */
  if (chance (r, 8) && (f & (CLONE_AUTOREAP | CLONE_NNP | CLONE_PIDFD_AUTOKILL)))
    f |= CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;
  if (chance (r, 5) && (f & CLONE_AUTOREAP))
    f |= CLONE_PARENT;
  f |= chance (r, 3) ? CLONE_DETACHED : 0;
  f |= chance (r, 3) ? (1ULL << (39 + below (r, 25))) : 0;
  f |= chance (r, 3) ? (1 + below (r, 0xff)) : 0; /* CSIGNAL bits: not in clone3 */
  return f;
}

/* The errno a call must fail with, or 0 if it may succeed; in the order
 * clone3() checks (copy_clone_args_from_user(), clone3_args_valid(),
 * copy_process()). */
static long
clone3_model (uint64_t f, uint64_t sig, unsigned size, int tail, enum ptr_kind args,
              enum ptr_kind pidfd)
{
  if (size > PAGE)
    return -E2BIG;
  if (size < 64)
    return -EINVAL;
  if (args == PTR_NULL || args == PTR_UNMAPPED)
    return -EFAULT;
  if (size > sizeof (struct spawn_clone3_args) && tail)
    return -E2BIG;
  if ((sig & ~0xffULL) || sig > 64)
    return -EINVAL;
  if (f & ~(0xffffffffULL | KNOWN_HIGH))
    return -EINVAL;
  if (f & (CLONE_DETACHED | 0xff))
    return -EINVAL;
  if ((f & (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND)) == (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND))
    return -EINVAL;
  if ((f & (CLONE_THREAD | CLONE_PARENT)) && sig)
    return -EINVAL;
  if ((f & CLONE_THREAD) && !(f & CLONE_SIGHAND))
    return -EINVAL;
  if ((f & CLONE_SIGHAND) && !(f & CLONE_VM))
    return -EINVAL;
  if ((f & CLONE_AUTOREAP) && ((f & (CLONE_THREAD | CLONE_PARENT)) || sig))
    return -EINVAL;
  if ((f & CLONE_NNP) && (f & CLONE_THREAD))
    return -EINVAL;
  if ((f & CLONE_PIDFD_AUTOKILL) &&
      (!(f & CLONE_PIDFD) || !(f & CLONE_AUTOREAP) || (f & CLONE_THREAD)))
    return -EINVAL;
  if ((f & CLONE_PIDFD) && pidfd != PTR_VALID)
    return -EFAULT;
  return 0;
}

static int
clone3_errno_allowed (long err)
{
  return err == -EINVAL || err == -E2BIG || err == -EFAULT || err == -ENOMEM || err == -EAGAIN;
}

static uint64_t
pointer (enum ptr_kind kind, unsigned char *valid)
{
  switch (kind) {
  case PTR_VALID: return (uintptr_t) valid;
  case PTR_NULL: return 0;
  case PTR_UNMAPPED: return (uintptr_t) run.guard + 64;
  case PTR_RO: return (uintptr_t) run.ro;
  default: return 0;
  }
}

static void child_add (pid_t pid, int pidfd, int autoreap, int status);

/* One random clone3() call, checked against clone3_model(). */
static void
op_clone3 (struct rng *r)
{
  static const unsigned sizes[] = { 0, 8, 63, 64, 72, 80, 81, 88, 96, 128, 256, PAGE, PAGE + 1 };
  static const uint64_t sigs[] = { 0, 0, SIGCHLD, SIGCHLD, 65, 200, 0x100 | SIGCHLD };
  unsigned size = sizes[below (r, sizeof sizes / sizeof sizes[0])];
  enum ptr_kind pargs = chance (r, 90) ? PTR_VALID : below (r, PTR_KINDS);
  enum ptr_kind ppidfd = chance (r, 90) ? PTR_VALID : below (r, PTR_KINDS);
  struct spawn_clone3_args *args;
  int tail = 0, status = below (r, 256);
  /* Past the largest struct clone3 reads (a page). */
  int *slot = (int *) (run.page + 2 * PAGE);
  long want, ret;

  if (pargs == PTR_RO)
    pargs = PTR_VALID; /* clone3 only reads the args: read-only is valid */
  args = (struct spawn_clone3_args *) (pargs == PTR_VALID ? run.page : NULL);
  if (args) {
    memset (run.page, 0, size < PAGE ? size : PAGE);
    args->flags = wild_flags (r);
    args->exit_signal = sigs[below (r, sizeof sigs / sizeof sigs[0])];
    args->pidfd = pointer (ppidfd, (unsigned char *) slot);
    if (size > sizeof *args && size <= PAGE && chance (r, 30)) {
      run.page[sizeof *args + below (r, size - sizeof *args)] = 1;
      tail = 1;
    }
  }
  *slot = -1;
  want = args ? clone3_model (args->flags, args->exit_signal, size, tail, pargs, ppidfd)
              : clone3_model (0, 0, size, 0, pargs, ppidfd);
  ret = pidfd_util_clone3_exiting (args ? (void *) args : (void *) pointer (pargs, NULL), size,
                                   status);
  run.calls++;
  if (ret > 0 && want)
    fail ("clone3 flags 0x%llx exit_signal %llu size %u made child %ld; wanted %s",
          (unsigned long long) args->flags, (unsigned long long) args->exit_signal, size, ret,
          strerror ((int) -want));
  else if (ret < 0 && want && ret != want && ret != -ENOMEM && ret != -EAGAIN)
    fail ("clone3 flags 0x%llx exit_signal %llu size %u: %s, wanted %s",
          args ? (unsigned long long) args->flags : 0ULL,
          args ? (unsigned long long) args->exit_signal : 0ULL, size, strerror ((int) -ret),
          strerror ((int) -want));
  else if (ret < 0 && !clone3_errno_allowed (ret))
    fail ("clone3 flags 0x%llx: errno %ld (%s) is none clone3 gives",
          args ? (unsigned long long) args->flags : 0ULL, -ret, strerror ((int) -ret));
  if (ret <= 0) {
    run.clone_refused++;
    if (*slot != -1 && fcntl (*slot, F_GETFD) >= 0)
      fail ("failed clone3 left the pidfd slot at %d, an open descriptor", *slot);
    return;
  }
  run.clone_ok++;
  child_add (ret, (args->flags & CLONE_PIDFD) ? *slot : -1,
             !!(args->flags & CLONE_AUTOREAP), status << 8);
}

/* ---- the children ---- */

/* Reaps (or waits out) child @i and forgets it. */
static void
child_remove (int i)
{
  struct child *c = &run.children[i];

  pthread_mutex_lock (&run.lock);
  if (run.newest_fd == c->pidfd)
    run.newest_fd = -1;
  pthread_mutex_unlock (&run.lock);
  if (!c->autoreap && !c->waited) {
    siginfo_t si = { 0 };

    if (waitid (P_PID, c->pid, &si, WEXITED | __WALL) < 0)
      fail ("reaping child %d: %s", (int) c->pid, strerror (errno));
    else if (si.si_code != CLD_EXITED || si.si_status != c->status >> 8)
      fail ("child %d: code %d status %d, wanted exit %d", (int) c->pid, si.si_code,
            si.si_status, c->status >> 8);
  }
  if (c->pidfd >= 0)
    close (c->pidfd);
  run.children[i] = run.children[--run.n_children];
}

static void
child_add (pid_t pid, int pidfd, int autoreap, int status)
{
  if (pidfd >= 0 && fcntl (pidfd, F_GETFD) < 0)
    fail ("clone3 succeeded but its pidfd %d is no descriptor", pidfd);
  if (run.n_children == CHILDREN_MAX)
    child_remove (0);
  run.children[run.n_children++] = (struct child) {
    .pid = pid, .pidfd = pidfd, .autoreap = autoreap, .status = status,
  };
  if (pidfd >= 0 && autoreap) {
    pthread_mutex_lock (&run.lock);
    run.newest_fd = pidfd;
    run.newest_status = status;
    pthread_mutex_unlock (&run.lock);
  }
}

/* A child with a pidfd, or NULL. */
static struct child *
child_pick (struct rng *r)
{
  for (int tries = 0; tries < 8 && run.n_children; tries++) {
    struct child *c = &run.children[below (r, run.n_children)];

    if (c->pidfd >= 0)
      return c;
  }
  return NULL;
}

static int
released (int pidfd)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };

  return poll (&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* ---- PIDFD_GET_INFO ---- */

static uint64_t
info_mask (struct rng *r)
{
  uint64_t m = 0;

  m |= chance (r, 60) ? SPAWN_PIDFD_INFO_EXIT : 0;
  m |= chance (r, 60) ? SPAWN_PIDFD_INFO_EXIT_CPUTIME : 0;
  m |= chance (r, 20) ? SPAWN_PIDFD_INFO_SUPPORTED_MASK : 0;
  m |= chance (r, 10) ? PIDFD_INFO_COREDUMP_ : 0;
  m |= chance (r, 10) ? 1ULL << (9 + below (r, 55)) : 0; /* unknown: ignored */
  return m;
}

/* The call with a valid buffer: the whole model.  @state is -1 where the
 * process may have been released during the call. */
static void
info_check_valid (struct child *c, uint64_t mask, unsigned size, long ret, int state)
{
  struct pidfd_util_call call = { .asked = mask, .size = size, .ret = ret, .buf = run.page };
  char why[256];
  int32_t code;

  if (state >= 0) {
    if (pidfd_util_check_info (&call, state, c->status, run.cputime, why, sizeof why) < 0)
      fail ("child %d: %s", (int) c->pid, why);
    return;
  }
  memcpy (&code, run.page + offsetof (struct spawn_pidfd_info, exit_code), sizeof code);
  if (ret != 0 && ret != -ESRCH && !(size < PIDFD_INFO_SIZE_VER0_ && ret == -ENOTTY))
    fail ("child %d, released meanwhile: PIDFD_GET_INFO: %s", (int) c->pid, strerror ((int) -ret));
  else if (ret == 0 && (*(uint64_t *) run.page & SPAWN_PIDFD_INFO_EXIT) && code != c->status)
    fail ("child %d: exit_code 0x%x, wanted 0x%x", (int) c->pid, code, c->status);
}

/* The errno for a bad buffer or descriptor, given what a valid buffer
 * would get (@model). */
static long
info_bad_errno (enum ptr_kind kind, unsigned size, long model)
{
  if (size < PIDFD_INFO_SIZE_VER0_)
    return -ENOTTY;
  if (kind == PTR_NULL)
    return -EINVAL;
  if (kind == PTR_UNMAPPED)
    return -EFAULT;
  return model ? model : -EFAULT; /* PTR_RO: the mask reads as 0 */
}

static void
op_info (struct rng *r)
{
  static const unsigned sizes[] = { 0, 8, 63, 64, 65, 71, 72, 80, 87, 88, 96, 112, 119, 120,
                                    121, 128, 256, PAGE, 16383 };
  unsigned size = sizes[below (r, sizeof sizes / sizeof sizes[0])];
  enum ptr_kind kind = chance (r, 85) ? PTR_VALID : below (r, PTR_KINDS);
  struct child *c = child_pick (r);
  uint64_t mask = info_mask (r);
  int state, before, fd;
  long ret;

  if (!c)
    return;
  run.infos++;
  fd = c->pidfd;
  before = c->waited || (c->autoreap && released (fd));
  if (kind == PTR_VALID) {
    memset (run.page, 0xa5, size + PIDFD_UTIL_CANARY_LEN);
    memset (run.page, 0, size);
    if (size >= 8)
      memcpy (run.page, &mask, sizeof mask);
  }
  ret = pidfd_util_get_info (fd, (void *) pointer (kind, run.page), size);
  /* A live autoreaped child may be released during the call. */
  state = before ? PIDFD_UTIL_REAPED : c->autoreap && released (fd) ? -1 : PIDFD_UTIL_ALIVE;
  if (kind == PTR_VALID) {
    info_check_valid (c, mask, size, ret, state);
    run.info_ok += ret == 0;
  } else if (state >= 0) {
    /* What the same call into good memory gives comes first. */
    long want = info_bad_errno (kind, size,
                                pidfd_util_info_errno (kind == PTR_RO ? 0 : mask, size, state,
                                                       run.cputime));

    if (ret != want)
      fail ("PIDFD_GET_INFO size %u into %s memory: %s, wanted %s", size,
            kind == PTR_NULL ? "NULL" : kind == PTR_RO ? "read-only" : "unmapped",
            ret ? strerror ((int) -ret) : "success", strerror ((int) -want));
  }
}

/* ---- pidfd_send_signal and waitid(P_PIDFD) ---- */

/* Signals that cannot hurt an exited child or us: 0, SIGCHLD, and 65
 * (invalid); flags valid (one of PIDFD_SIGNAL_*) or not. */
static void
op_signal (struct rng *r)
{
  static const int sigs[] = { 0, 0, SIGCHLD, 65 };
  static const unsigned flags[] = { 0, 0, 0, 1, 2, 4, 3, 8, 0x80000000u };
  struct child *c = child_pick (r);
  int sig = sigs[below (r, sizeof sigs / sizeof sigs[0])];
  unsigned fl = flags[below (r, sizeof flags / sizeof flags[0])];
  int gone_before, gone_after;
  long ret;

  if (!c)
    return;
  run.signals++;
  gone_before = c->waited || (c->autoreap && released (c->pidfd));
  ret = pidfd_util_send_signal (c->pidfd, sig, NULL, fl);
  gone_after = c->waited || (c->autoreap && released (c->pidfd));
  if (fl & ~7u || fl == 3) {
    if (ret != -EINVAL)
      fail ("pidfd_send_signal flags 0x%x: %s, wanted EINVAL", fl,
            ret ? strerror ((int) -ret) : "success");
  } else if (gone_before || fl == 4) {
    /* PIDFD_SIGNAL_PROCESS_GROUP: our children lead no process group. */
    if (ret != -ESRCH)
      fail ("pidfd_send_signal(%d) to released child %d: %s, wanted ESRCH", sig, (int) c->pid,
            ret ? strerror ((int) -ret) : "success");
  } else if (!gone_after && ret != (sig == 65 ? -EINVAL : 0)) {
    fail ("pidfd_send_signal(%d, flags 0x%x) to child %d: %s", sig, fl, (int) c->pid,
          ret ? strerror ((int) -ret) : "success");
  } else if (ret != 0 && ret != -EINVAL && ret != -ESRCH) {
    fail ("pidfd_send_signal(%d) to a child released meanwhile: %s", sig, strerror ((int) -ret));
  }
}

/* waitid(P_PIDFD): the status once, for a child that is ours to reap;
 * ECHILD for one that is not (autoreaped) or no longer. */
static void
op_waitid (struct rng *r)
{
  struct child *c = child_pick (r);
  int nohang = chance (r, 30) ? WNOHANG : 0;
  siginfo_t si = { 0 };
  struct rusage ru;
  long ret;

  if (!c)
    return;
  run.waits++;
  ret = syscall (SYS_waitid, P_PIDFD, c->pidfd, &si, WEXITED | __WALL | nohang, &ru) < 0
            ? -errno : 0;
  if (c->autoreap || c->waited) {
    /* Never a status.  An autoreaped child is still ours to wait for
     * until it is released, so WNOHANG may say "none ready" (0, no
     * PID); a blocking call returns ECHILD once it is gone. */
    if (ret == 0 && c->autoreap && nohang && si.si_pid == 0)
      return;
    if (ret != -ECHILD)
      fail ("waitid(P_PIDFD%s) on %s child %d: %s, wanted ECHILD", nohang ? ", WNOHANG" : "",
            c->autoreap ? "an autoreaped" : "a reaped", (int) c->pid,
            ret ? strerror ((int) -ret) : "success");
    return;
  }
  if (ret < 0) {
    fail ("waitid(P_PIDFD) on child %d: %s", (int) c->pid, strerror ((int) -ret));
  } else if (si.si_pid == 0 && nohang) {
    return; /* not exited yet */
  } else if (si.si_pid != c->pid || si.si_code != CLD_EXITED ||
             si.si_status != c->status >> 8) {
    fail ("waitid(P_PIDFD): pid %d code %d status %d, wanted %d exited %d", si.si_pid,
          si.si_code, si.si_status, (int) c->pid, c->status >> 8);
  }
  c->waited = 1;
}

/* ---- CLONE_PIDFD_AUTOKILL ---- */

/* The exit information of the sleeper behind @watch (a pidfd_open()
 * pidfd): it must have been killed by SIGKILL, within the timeout. */
static void
autokill_check_killed (pid_t pid, int watch)
{
  struct spawn_pidfd_info info = { .mask = SPAWN_PIDFD_INFO_EXIT | SPAWN_PIDFD_INFO_EXIT_CPUTIME };
  long ret;

  if (pidfd_util_wait_released (watch, TIMEOUT_MS) < 0) {
    fail ("AUTOKILL child %d still there %d ms after its last pidfd went", (int) pid, TIMEOUT_MS);
    kill (pid, SIGKILL);
    pidfd_util_wait_released (watch, TIMEOUT_MS);
    return;
  }
  ret = pidfd_util_get_info (watch, &info, sizeof info);
  if (ret < 0 || !(info.mask & SPAWN_PIDFD_INFO_EXIT))
    fail ("AUTOKILL child %d: no exit information (%s)", (int) pid,
          ret ? strerror ((int) -ret) : "mask without PIDFD_INFO_EXIT");
  else if (info.exit_code != SIGKILL)
    fail ("AUTOKILL child %d: wait status 0x%x, wanted SIGKILL", (int) pid, info.exit_code);
  else if (run.cputime == 1 && !(info.mask & SPAWN_PIDFD_INFO_EXIT_CPUTIME))
    fail ("AUTOKILL child %d: no CPU times with the exit information", (int) pid);
}

/* A sleeper that only the close of its clone3 pidfd's last copy ends. */
static void
op_autokill (struct rng *r)
{
  struct spawn_clone3_args args = {
    .flags = CLONE_PIDFD | CLONE_AUTOREAP | CLONE_PIDFD_AUTOKILL | (chance (r, 50) ? CLONE_NNP : 0),
  };
  int pidfd = -1, copies[4], n = 1 + below (r, 4), watch;
  long pid;

  args.pidfd = (uintptr_t) &pidfd;
  pid = syscall (SYS_clone3, &args, sizeof args);
  if (pid == 0) {
    for (;;)
      pause ();
  }
  if (pid < 0) {
    fail ("clone3 CLONE_PIDFD_AUTOKILL sleeper: %s", strerror (errno));
    return;
  }
  run.autokills++;
  watch = syscall (SYS_pidfd_open, (pid_t) pid, 0);
  copies[0] = pidfd;
  for (int i = 1; i < n; i++)
    copies[i] = chance (r, 50) ? dup (pidfd) : fcntl (pidfd, F_DUPFD_CLOEXEC, 0);
  for (int i = 0; i < n - 1; i++) {
    close (copies[i]);
    if (pidfd_util_send_signal (watch, 0, NULL, 0) != 0 || released (watch))
      fail ("AUTOKILL child %ld ended with %d of %d copies of its pidfd still open", pid,
            n - 1 - i, n);
  }
  /* A pidfd_open() pidfd never kills: closing it first would change
   * nothing, so it is the watcher. */
  close (copies[n - 1]);
  autokill_check_killed (pid, watch);
  close (watch);
}

/* ---- the reader: PIDFD_GET_INFO racing the exit ---- */

/* A call that raced the release can miss both the task and its exit
 * information: ESRCH (the task went between the lookup and the copy of
 * its PIDs: pidfd_info() says so rather than answer half) or an answer
 * with neither PIDFD_INFO_PID nor PIDFD_INFO_EXIT (the exit bit read just
 * before pidfs_exit() set it).  Both are stock 7.2's; then the release is
 * over, so the next call must have the exit information. */
static int
reader_raced (const struct spawn_pidfd_info *info, long ret)
{
  return ret == -ESRCH ||
         (ret == 0 && !(info->mask & (PIDFD_INFO_PID_ | SPAWN_PIDFD_INFO_EXIT)));
}

static void
reader_check (int fd, struct spawn_pidfd_info *info, long ret, int status)
{
  if (reader_raced (info, ret)) {
    atomic_fetch_add (&run.race_misses, 1);
    memset (info, 0, sizeof *info);
    info->mask = SPAWN_PIDFD_INFO_EXIT | SPAWN_PIDFD_INFO_EXIT_CPUTIME;
    ret = pidfd_util_get_info (fd, info, sizeof *info);
    if (ret == 0 && !(info->mask & SPAWN_PIDFD_INFO_EXIT))
      ret = -ENODATA;
  }
  if (ret < 0) {
    fail ("reader: PIDFD_GET_INFO(EXIT) on a child's pidfd: %s",
          ret == -ENODATA ? "released, but no exit information" : strerror ((int) -ret));
    return;
  }
  if (!(info->mask & SPAWN_PIDFD_INFO_EXIT))
    return;
  atomic_fetch_add (&run.race_exits, 1);
  if (info->exit_code != status)
    fail ("reader: exit_code 0x%x, wanted 0x%x", info->exit_code, status);
  /* pidfs_exit() records the times before the exit bit (smp_wmb()). */
  if (run.cputime >= 0 && !!(info->mask & SPAWN_PIDFD_INFO_EXIT_CPUTIME) != run.cputime)
    fail ("reader: PIDFD_INFO_EXIT %s", run.cputime ? "without the CPU times" : "with CPU times on a stock kernel");
}

static void *
reader_main (void *data)
{
  (void) data;
  while (!atomic_load (&run.stop)) {
    struct spawn_pidfd_info info;
    int fd = -1, status = 0;
    long ret;

    pthread_mutex_lock (&run.lock);
    if (run.newest_fd >= 0) {
      fd = fcntl (run.newest_fd, F_DUPFD_CLOEXEC, 0);
      status = run.newest_status;
    }
    pthread_mutex_unlock (&run.lock);
    if (fd < 0) {
      usleep (100);
      continue;
    }
    memset (&info, 0, sizeof info);
    info.mask = SPAWN_PIDFD_INFO_EXIT | SPAWN_PIDFD_INFO_EXIT_CPUTIME;
    ret = pidfd_util_get_info (fd, &info, sizeof info);
    atomic_fetch_add (&run.races, 1);
    reader_check (fd, &info, ret, status);
    close (fd);
  }
  return NULL;
}

/* ---- the run ---- */

static void
map_memory (void)
{
  unsigned char *m = mmap (NULL, 7 * PAGE, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (m == MAP_FAILED) {
    perror ("mmap");
    exit (1);
  }
  /* 5 pages for any struct size (16383 and the canary), a guard, a
   * read-only page. */
  run.page = m;
  run.guard = m + 5 * PAGE;
  run.ro = m + 6 * PAGE;
  mprotect (run.guard, PAGE, PROT_NONE);
  mprotect (run.ro, PAGE, PROT_READ);
}

/* Reaps and closes what is left; then no child, zombie or descriptor of
 * the run's may remain. */
static void
finish (int fds_before)
{
  int left = -1;

  while (run.n_children)
    child_remove (run.n_children - 1);
  /* Autoreaped children without a pidfd go on their own. */
  for (int i = 0; i < TIMEOUT_MS / 10 && (left = proc_count_children_of (getpid ())) != 0; i++)
    usleep (10000);
  if (left != 0)
    fail ("%d children or zombies left at the end", left);
  if (proc_count_fds () != fds_before)
    fail ("%d descriptors at the end, %d at the start", proc_count_fds (), fds_before);
}

static void
run_ops (struct rng *r, long count, double deadline)
{
  int pipefd[2];

  if (pipe2 (pipefd, O_CLOEXEC) < 0) {
    fail ("pipe2: %s", strerror (errno));
    return;
  }
  for (long i = 0; i < count && now () < deadline && !atomic_load (&run.stop); i++) {
    unsigned op = below (r, 100);

    if (op < 40)
      op_clone3 (r);
    else if (op < 65)
      op_info (r);
    else if (op < 78)
      op_signal (r);
    else if (op < 90)
      op_waitid (r);
    else if (op < 95)
      op_autokill (r);
    else if (op < 98) {
      if (run.n_children)
        child_remove (below (r, run.n_children));
    } else {
      /* Not a pidfd, and no descriptor at all. */
      long a = pidfd_util_get_info (pipefd[0], run.page, PIDFD_INFO_SIZE_VER4_);
      long b = pidfd_util_get_info (pipefd[1] + 100, run.page, PIDFD_INFO_SIZE_VER4_);

      if (a != -ENOTTY || b != -EBADF)
        fail ("PIDFD_GET_INFO on a pipe: %s (wanted ENOTTY); on a closed fd: %s (wanted EBADF)",
              strerror ((int) -a), strerror ((int) -b));
    }
  }
  close (pipefd[0]);
  close (pipefd[1]);
}

static void
parse_args (int argc, char **argv, uint64_t *seed, long *count, long *seconds)
{
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp (argv[i], "--seed") == 0)
      *seed = strtoull (argv[i + 1], NULL, 0);
    else if (strcmp (argv[i], "--count") == 0)
      *count = strtol (argv[i + 1], NULL, 0);
    else if (strcmp (argv[i], "--seconds") == 0)
      *seconds = strtol (argv[i + 1], NULL, 0);
    else
      i = argc; /* unknown: stop, below */
  }
  if (argc % 2 == 0 || *count <= 0 || *seconds <= 0) {
    fprintf (stderr, "usage: pidfd-fuzz [--seed N] [--count N] [--seconds N]\n");
    exit (2);
  }
}

int
main (int argc, char **argv)
{
  uint64_t seed = (uint64_t) time (NULL) ^ ((uint64_t) getpid () << 32);
  long count = 2000, seconds = 30;
  struct rng r;
  pthread_t reader;
  const char *why;
  double t0;
  int fds_before;

  parse_args (argc, argv, &seed, &count, &seconds);
  setvbuf (stdout, NULL, _IOLBF, 0);
  printf ("# seed %llu (--seed to repeat the calls), --count %ld --seconds %ld\n",
          (unsigned long long) seed, count, seconds);
  if ((why = pidfd_util_probe (&run.cputime)))
    return printf ("ok 1 pidfd-fuzz # SKIP %s\n1..1\n", why), 0;
  printf ("# PIDFD_INFO_EXIT_CPUTIME: %s\n", run.cputime == 1 ? "expected (the 7.2 series)"
                                              : run.cputime == 0 ? "not expected (stock)" : "unknown");
  r.s = seed ? seed : 1;
  map_memory ();
  fds_before = proc_count_fds ();
  t0 = now ();
  pthread_create (&reader, NULL, reader_main, NULL);
  run_ops (&r, count, t0 + seconds);
  atomic_store (&run.stop, 1);
  pthread_join (reader, NULL);
  finish (fds_before);
  printf ("# %.1f s: %ld clone3 calls (%ld children, %ld refused), %ld PIDFD_GET_INFO (%ld "
          "answered), %ld signals, %ld waitid, %ld AUTOKILL sleepers; the reader: %ld calls, "
          "%ld saw the exit, %ld raced the release (retried)\n", now () - t0, run.calls, run.clone_ok, run.clone_refused,
          run.infos, run.info_ok, run.signals, run.waits, run.autokills,
          atomic_load (&run.races), atomic_load (&run.race_exits), atomic_load (&run.race_misses));
  if (run.failure[0])
    printf ("not ok 1 pidfd-fuzz: %s\n", run.failure);
  else if (run.clone_ok == 0 || run.info_ok == 0 || run.autokills == 0)
    printf ("not ok 1 pidfd-fuzz: the run made no child, got no answer or killed no sleeper\n");
  else
    printf ("ok 1 pidfd-fuzz: every call as documented, nothing left behind\n");
  printf ("1..1\n");
  return run.failure[0] || run.clone_ok == 0 ? 1 : 0;
}
