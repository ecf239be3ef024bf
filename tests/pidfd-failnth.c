/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pidfd-failnth: systematic fault injection in the 7.2 interface the
 * library's autoreap backend and kernel/patches-7.2 use.
 *
 * For each case, fail the 1st, 2nd, 3rd ... fault point (slab allocation,
 * page allocation or user copy, through /proc/thread-self/fail-nth) that
 * one call passes, until a call runs without reaching the Nth point:
 *
 * - clone3() with CLONE_PIDFD, CLONE_AUTOREAP, CLONE_PIDFD_AUTOKILL and
 *   CLONE_NNP, with and without CLONE_VM | CLONE_VFORK, and with an exit
 *   signal: a failed call gives ENOMEM, EFAULT or EAGAIN, installs no
 *   descriptor and leaves no child; one that succeeded despite the fault
 *   gives a whole child whose exit (status 7, never an AUTOKILL SIGKILL)
 *   is reported through the pidfd or waitid();
 * - ioctl(PIDFD_GET_INFO) for PIDFD_INFO_EXIT | PIDFD_INFO_EXIT_CPUTIME
 *   with the sizes VER0, VER3, VER4 and a larger one, on a live process, a
 *   zombie and a released one: a clean EFAULT or ENOMEM, or an answer the
 *   model of pidfd-util.c accepts (CPU times only with the series, only
 *   when asked, only in a struct with room for them);
 * - pidfd_send_signal() with and without a siginfo, and waitid(P_PIDFD)
 *   with a rusage: a clean errno or the signal delivered, the status
 *   reported; a zombie is never lost without its parent being able to
 *   tell (a waitid() that failed with EFAULT after the reap is allowed:
 *   that is how the kernel copies out, and then no zombie may be left).
 *
 * After every call: no descriptor beyond the case's own, no child or
 * zombie beyond its own.  At the end a kmemleak scan must find nothing;
 * KASAN, lockdep and WARNING reports in the kernel log are vm/run's to
 * catch.  Needs clone3() with CLONE_AUTOREAP (Linux 7.1) and
 * CONFIG_FAULT_INJECTION (the modern-debug variant); elsewhere it says
 * why and skips (PIDFD_FAILNTH_EXPECT=on turns that into a failnth_failure).  Root,
 * for debugfs.  x86_64.  TAP on stdout, one line per case and one for
 * kmemleak.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "failnth.h"
#include "pidfd-util.h"
#include "proc-scan.h"

#define CHILD_STATUS 7
#define WAIT_STATUS (CHILD_STATUS << 8)
#define REPORT_TIMEOUT_MS 30000
/* No case has come near this many fault points; reaching it means the
 * loop no longer converges. */
#define MAX_POINTS 2000
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
/* Set to "on" where the kernel must have all this (modern-debug). */
#define EXPECT_VAR "PIDFD_FAILNTH_EXPECT"

static int tap_n, tap_failed, cputime;

/* One case: the state it needs (made outside injection), the call that
 * runs with fail-nth armed, and what must hold after it. */
struct pf_case {
  const char *name;
  uint64_t flags;      /* clone3 cases: the flags; signal cases: 1 for a siginfo */
  unsigned exit_signal;
  unsigned size;       /* PIDFD_GET_INFO cases: the struct size */
  enum pidfd_util_state state; /* PIDFD_GET_INFO cases: of the child */
  int zombie;          /* PIDFD_GET_INFO cases: alive means exited, unreaped */
  int per_point;       /* make the state again before every point */
  void (*prepare) (struct pf_case *c);
  long (*call) (struct pf_case *c);
  void (*verify) (struct pf_case *c, long ret, int point);
  void (*finish) (struct pf_case *c);
  /* State */
  int pidfd, slot, lowest;
  pid_t pid;
  unsigned char buf[4096 + PIDFD_UTIL_CANARY_LEN];
  struct spawn_clone3_args args;
  siginfo_t si;
  struct rusage ru;
};

static int
allowed_errno (long ret)
{
  return ret == -ENOMEM || ret == -EFAULT || ret == -EAGAIN;
}

/* ---- clone3 ---- */

static void
clone3_prepare (struct pf_case *c)
{
  memset (&c->args, 0, sizeof c->args);
  c->slot = -1;
  c->args.flags = c->flags;
  c->args.exit_signal = c->exit_signal;
  if (c->flags & CLONE_PIDFD)
    c->args.pidfd = (uintptr_t) &c->slot;
  /* The number the next descriptor would get. */
  c->lowest = dup (0);
  close (c->lowest);
}

static long
clone3_call (struct pf_case *c)
{
  return pidfd_util_clone3_exiting (&c->args, sizeof c->args, CHILD_STATUS);
}

/* A released child's exit information through its pidfd. */
static void
check_released (int pidfd, int point)
{
  struct pidfd_util_call call = { .size = PIDFD_INFO_SIZE_VER4_ };
  unsigned char buf[PIDFD_INFO_SIZE_VER4_ + PIDFD_UTIL_CANARY_LEN];
  char why[256];

  memset (buf, 0xa5, sizeof buf);
  memset (buf, 0, call.size);
  call.asked = SPAWN_PIDFD_INFO_EXIT | SPAWN_PIDFD_INFO_EXIT_CPUTIME;
  memcpy (buf, &call.asked, sizeof call.asked);
  call.buf = buf;
  if (pidfd_util_wait_released (pidfd, REPORT_TIMEOUT_MS) < 0) {
    failnth_fail ("point %d: the child was not released within %d ms", point, REPORT_TIMEOUT_MS);
    return;
  }
  call.ret = pidfd_util_get_info (pidfd, buf, call.size);
  if (pidfd_util_check_info (&call, PIDFD_UTIL_REAPED, WAIT_STATUS, cputime, why, sizeof why) < 0)
    failnth_fail ("point %d: %s", point, why);
}

/* Waits up to REPORT_TIMEOUT_MS for an autoreaped child without a pidfd
 * to disappear. */
static void
wait_gone (pid_t pid, int point)
{
  for (int i = 0; i < REPORT_TIMEOUT_MS / 10; i++) {
    if (kill (pid, 0) < 0 && errno == ESRCH)
      return;
    usleep (10000);
  }
  failnth_fail ("point %d: autoreaped child %d still there", point, (int) pid);
}

/* The child of a call that succeeded: it must end with CHILD_STATUS
 * (an AUTOKILL child too: its pidfd is still open), reported. */
static void
clone3_collect (struct pf_case *c, pid_t pid, int point)
{
  if ((c->flags & CLONE_PIDFD) && (c->slot < 0 || fcntl (c->slot, F_GETFD) < 0)) {
    failnth_fail ("point %d: call succeeded but the pidfd slot holds %d, no descriptor", point, c->slot);
    return;
  }
  if (!(c->flags & CLONE_AUTOREAP)) {
    siginfo_t si = { 0 };

    if (waitid (P_PIDFD, c->slot, &si, WEXITED) < 0)
      failnth_fail ("point %d: waitid(P_PIDFD): %s", point, strerror (errno));
    else if (si.si_pid != pid || si.si_code != CLD_EXITED || si.si_status != CHILD_STATUS)
      failnth_fail ("point %d: waitid: pid %d code %d status %d", point, si.si_pid, si.si_code,
            si.si_status);
  }
  if (c->flags & CLONE_PIDFD) {
    check_released (c->slot, point);
    close (c->slot);
  } else {
    wait_gone (pid, point);
  }
}

static void
clone3_verify (struct pf_case *c, long ret, int point)
{
  if (ret > 0) {
    clone3_collect (c, ret, point);
    return;
  }
  if (!allowed_errno (ret))
    failnth_fail ("point %d: unexpected errno %ld (%s)", point, -ret, strerror ((int) -ret));
  if (c->slot != -1 && fcntl (c->slot, F_GETFD) >= 0)
    failnth_fail ("point %d: failed call left the pidfd slot at %d, an open descriptor", point, c->slot);
  if (fcntl (c->lowest, F_GETFD) >= 0)
    failnth_fail ("point %d: failed call installed descriptor %d", point, c->lowest);
}

/* ---- PIDFD_GET_INFO on a process in one state ---- */

/* A child in the state the case names, with its pidfd: a live one that
 * waits in pause(), a zombie, or a released one. */
static void
info_prepare (struct pf_case *c)
{
  struct spawn_clone3_args args = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };
  long ret;

  args.pidfd = (uintptr_t) &c->pidfd;
  c->pid = -1;
  if (c->state == PIDFD_UTIL_ALIVE && !c->zombie) {
    ret = syscall (SYS_clone3, &args, sizeof args);
    if (ret == 0) {
      for (;;)
        pause ();
    }
    ret = ret < 0 ? -errno : ret;
  } else {
    ret = pidfd_util_clone3_exiting (&args, sizeof args, CHILD_STATUS);
  }
  if (ret < 0) {
    failnth_fail ("making the case's child: %s", strerror ((int) -ret));
    c->pidfd = -1;
    return;
  }
  c->pid = ret;
  if (c->state == PIDFD_UTIL_REAPED) {
    siginfo_t si;

    if (waitid (P_PIDFD, c->pidfd, &si, WEXITED) < 0)
      failnth_fail ("reaping the case's child: %s", strerror (errno));
    c->pid = -1;
  } else if (c->zombie) {
    /* The zombie case: wait for the exit, do not reap. */
    struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

    if (poll (&p, 1, REPORT_TIMEOUT_MS) != 1)
      failnth_fail ("the case's child never exited");
  }
}

static long
info_call (struct pf_case *c)
{
  uint64_t mask = SPAWN_PIDFD_INFO_EXIT | SPAWN_PIDFD_INFO_EXIT_CPUTIME;

  memset (c->buf, 0xa5, sizeof c->buf);
  memset (c->buf, 0, c->size);
  memcpy (c->buf, &mask, sizeof mask);
  return pidfd_util_get_info (c->pidfd, c->buf, c->size);
}

static void
info_verify (struct pf_case *c, long ret, int point)
{
  struct pidfd_util_call call = {
    .asked = SPAWN_PIDFD_INFO_EXIT | SPAWN_PIDFD_INFO_EXIT_CPUTIME,
    .size = c->size, .ret = ret, .buf = c->buf,
  };
  char why[256];

  if (ret < 0 && allowed_errno (ret))
    return;
  if (pidfd_util_check_info (&call, c->state, WAIT_STATUS, cputime, why, sizeof why) < 0)
    failnth_fail ("point %d: %s", point, why);
}

static void
child_finish (struct pf_case *c)
{
  if (c->pid > 0) {
    pidfd_util_send_signal (c->pidfd, SIGKILL, NULL, 0);
    waitid (P_PIDFD, c->pidfd, &c->si, WEXITED);
  }
  if (c->pidfd >= 0)
    close (c->pidfd);
  c->pidfd = -1;
  c->pid = -1;
}

/* ---- pidfd_send_signal and waitid(P_PIDFD) ---- */

static void
on_usr1 (int sig)
{
  (void) sig;
}

/* A live child that takes SIGUSR1 with a handler, so that every signal
 * queues (allocates) and none ends it. */
static void
signal_prepare (struct pf_case *c)
{
  struct spawn_clone3_args args = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };
  long ret;

  args.pidfd = (uintptr_t) &c->pidfd;
  signal (SIGUSR1, on_usr1);
  ret = syscall (SYS_clone3, &args, sizeof args);
  if (ret == 0) {
    for (;;)
      pause ();
  }
  signal (SIGUSR1, SIG_DFL);
  if (ret < 0) {
    failnth_fail ("making the case's child: %s", strerror (errno));
    c->pidfd = c->pid = -1;
  } else {
    c->pid = ret;
  }
}

static long
signal_call (struct pf_case *c)
{
  if (c->flags) {
    memset (&c->si, 0, sizeof c->si);
    c->si.si_signo = SIGUSR1;
    c->si.si_code = SI_QUEUE;
    c->si.si_pid = getpid ();
    c->si.si_uid = getuid ();
  }
  return pidfd_util_send_signal (c->pidfd, SIGUSR1, c->flags ? &c->si : NULL, 0);
}

static void
signal_verify (struct pf_case *c, long ret, int point)
{
  (void) c;
  if (ret < 0 && !allowed_errno (ret))
    failnth_fail ("point %d: pidfd_send_signal: unexpected errno %ld (%s)", point, -ret,
          strerror ((int) -ret));
}

/* A zombie with its pidfd, before every point. */
static void
zombie_prepare (struct pf_case *c)
{
  struct spawn_clone3_args args = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };
  struct pollfd p;
  long ret;

  args.pidfd = (uintptr_t) &c->pidfd;
  ret = pidfd_util_clone3_exiting (&args, sizeof args, CHILD_STATUS);
  if (ret < 0) {
    failnth_fail ("making the case's child: %s", strerror ((int) -ret));
    c->pidfd = c->pid = -1;
    return;
  }
  c->pid = ret;
  p = (struct pollfd) { .fd = c->pidfd, .events = POLLIN };
  if (poll (&p, 1, REPORT_TIMEOUT_MS) != 1)
    failnth_fail ("the case's child never exited");
}

static long
waitid_call (struct pf_case *c)
{
  memset (&c->si, 0, sizeof c->si);
  return syscall (SYS_waitid, P_PIDFD, c->pidfd, &c->si, WEXITED, &c->ru) < 0 ? -errno : 0;
}

static void
waitid_verify (struct pf_case *c, long ret, int point)
{
  siginfo_t si = { 0 };

  if (ret == 0) {
    if (c->si.si_pid != c->pid || c->si.si_code != CLD_EXITED || c->si.si_status != CHILD_STATUS)
      failnth_fail ("point %d: waitid: pid %d code %d status %d", point, c->si.si_pid, c->si.si_code,
            c->si.si_status);
    check_released (c->pidfd, point);
  } else if (!allowed_errno (ret)) {
    failnth_fail ("point %d: waitid: unexpected errno %ld (%s)", point, -ret, strerror ((int) -ret));
  } else if (waitid (P_PIDFD, c->pidfd, &si, WEXITED) == 0) {
    /* The fault came before the reap: the status is still there. */
    if (si.si_code != CLD_EXITED || si.si_status != CHILD_STATUS)
      failnth_fail ("point %d: waitid after the fault: code %d status %d", point, si.si_code,
            si.si_status);
  } else if (errno != ECHILD) {
    failnth_fail ("point %d: waitid after the fault: %s", point, strerror (errno));
  }
  /* Reaped one way or the other: the exit information must be there. */
  if (!failnth_failure[0] && ret != 0)
    check_released (c->pidfd, point);
  c->pid = -1;
}

/* ---- the loop ---- */

static void
print_result (const struct pf_case *c, int points, int errors, int tolerated)
{
  tap_n++;
  if (failnth_failure[0]) {
    tap_failed++;
    printf ("not ok %d %s: %s\n", tap_n, c->name, failnth_failure);
  } else if (points == 0) {
    tap_failed++;
    printf ("not ok %d %s: no fault point reached: is fail-nth honoured?\n", tap_n, c->name);
  } else {
    printf ("ok %d %s: %d fault points, each failed cleanly (%d) or succeeded whole (%d)\n",
            tap_n, c->name, points, errors, tolerated);
  }
  fflush (stdout);
}

static int
run_case (struct pf_case *c, int nth_fd)
{
  int points = 0, errors = 0, tolerated = 0, fds_before = 0, children_before = 0;

  failnth_failure[0] = '\0';
  c->pidfd = c->pid = -1;
  if (!c->per_point) {
    c->prepare (c);
    fds_before = proc_count_fds ();
    children_before = proc_count_children_of (getpid ());
  }
  for (int n = 1; n <= MAX_POINTS && !failnth_failure[0]; n++) {
    char buf[32];
    long ret;
    int remaining;

    if (c->per_point) {
      fds_before = proc_count_fds ();
      children_before = proc_count_children_of (getpid ());
      c->prepare (c);
      if (failnth_failure[0])
        break;
    }
    snprintf (buf, sizeof buf, "%d", n);
    if (pwrite (nth_fd, buf, strlen (buf), 0) < 0) {
      failnth_fail ("writing %d to fail-nth: %s", n, strerror (errno));
      break;
    }
    ret = c->call (c);
    remaining = failnth_remaining (nth_fd);
    if (remaining < 0) {
      failnth_fail ("reading fail-nth after point %d: %s", n, strerror (-remaining));
      break;
    }
    /* Fewer than n points passed: the call ran untouched, and must work. */
    if (remaining > 0 && ret < 0)
      failnth_fail ("untouched call (n = %d) failed: %s", n, strerror ((int) -ret));
    c->verify (c, ret, n);
    if (c->per_point)
      c->finish (c);
    if (proc_count_fds () != fds_before)
      failnth_fail ("point %d: %d descriptors, %d before", n, proc_count_fds (), fds_before);
    if (proc_count_children_of (getpid ()) != children_before)
      failnth_fail ("point %d: %d children or zombies, %d before", n,
            proc_count_children_of (getpid ()), children_before);
    if (remaining > 0)
      break;
    points = n;
    if (ret < 0)
      errors++;
    else
      tolerated++;
    if (n == MAX_POINTS)
      failnth_fail ("still failing at point %d: the loop does not converge", n);
  }
  c->finish (c); /* idempotent: what a failnth_failure left */
  print_result (c, points, errors, tolerated);
  return points;
}

static void
nothing_finish (struct pf_case *c)
{
  (void) c;
}

static int
skip_all (const char *why)
{
  if (failnth_expected (EXPECT_VAR))
    return printf ("not ok 1 pidfd-failnth: " EXPECT_VAR "=on, but %s\n1..1\n", why), 1;
  printf ("ok 1 pidfd-failnth # SKIP %s\n1..1\n", why);
  return 0;
}

#define CLONE3_CASE(name_, flags_, sig_) \
  { .name = "clone3 " name_, .flags = (flags_), .exit_signal = (sig_), .per_point = 1, \
    .prepare = clone3_prepare, .call = clone3_call, .verify = clone3_verify, \
    .finish = nothing_finish }
#define INFO_CASE(name_, state_, zombie_, size_) \
  { .name = "PIDFD_GET_INFO " name_, .state = (state_), .zombie = (zombie_), .size = (size_), \
    .prepare = info_prepare, .call = info_call, .verify = info_verify, .finish = child_finish }
#define AR_ CLONE_PIDFD | CLONE_AUTOREAP
#define VF_ CLONE_VM | CLONE_VFORK

static struct pf_case cases[] = {
  CLONE3_CASE ("CLONE_PIDFD, exit_signal SIGCHLD", CLONE_PIDFD, SIGCHLD),
  CLONE3_CASE ("CLONE_PIDFD|CLONE_VM|CLONE_VFORK, exit_signal SIGCHLD", CLONE_PIDFD | VF_, SIGCHLD),
  CLONE3_CASE ("CLONE_AUTOREAP", CLONE_AUTOREAP, 0),
  CLONE3_CASE ("CLONE_PIDFD|CLONE_AUTOREAP", AR_, 0),
  CLONE3_CASE ("CLONE_PIDFD|CLONE_AUTOREAP|CLONE_VM|CLONE_VFORK", AR_ | VF_, 0),
  CLONE3_CASE ("CLONE_PIDFD|CLONE_AUTOREAP|CLONE_NNP", AR_ | CLONE_NNP, 0),
  CLONE3_CASE ("CLONE_PIDFD|CLONE_AUTOREAP|CLONE_PIDFD_AUTOKILL", AR_ | CLONE_PIDFD_AUTOKILL, 0),
  CLONE3_CASE ("CLONE_PIDFD|CLONE_AUTOREAP|CLONE_PIDFD_AUTOKILL|CLONE_NNP",
               AR_ | CLONE_PIDFD_AUTOKILL | CLONE_NNP, 0),
  CLONE3_CASE ("CLONE_PIDFD|CLONE_AUTOREAP|CLONE_PIDFD_AUTOKILL|CLONE_NNP|CLONE_VM|CLONE_VFORK",
               AR_ | CLONE_PIDFD_AUTOKILL | CLONE_NNP | VF_, 0),
  INFO_CASE ("VER0 (64), live", PIDFD_UTIL_ALIVE, 0, PIDFD_INFO_SIZE_VER0_),
  INFO_CASE ("VER4 (120), live", PIDFD_UTIL_ALIVE, 0, PIDFD_INFO_SIZE_VER4_),
  INFO_CASE ("VER4 (120), zombie", PIDFD_UTIL_ALIVE, 1, PIDFD_INFO_SIZE_VER4_),
  INFO_CASE ("VER0 (64), released", PIDFD_UTIL_REAPED, 0, PIDFD_INFO_SIZE_VER0_),
  INFO_CASE ("VER3 (88), released", PIDFD_UTIL_REAPED, 0, PIDFD_INFO_SIZE_VER3_),
  INFO_CASE ("VER4 (120), released", PIDFD_UTIL_REAPED, 0, PIDFD_INFO_SIZE_VER4_),
  INFO_CASE ("4096 bytes, released", PIDFD_UTIL_REAPED, 0, 4096),
  { .name = "pidfd_send_signal SIGUSR1", .flags = 0, .prepare = signal_prepare,
    .call = signal_call, .verify = signal_verify, .finish = child_finish },
  { .name = "pidfd_send_signal SIGUSR1 with a siginfo", .flags = 1, .prepare = signal_prepare,
    .call = signal_call, .verify = signal_verify, .finish = child_finish },
  { .name = "waitid(P_PIDFD) with a rusage", .per_point = 1, .prepare = zombie_prepare,
    .call = waitid_call, .verify = waitid_verify, .finish = child_finish },
};

int
main (void)
{
  const char *why;
  int nth_fd, total = 0;

  setvbuf (stdout, NULL, _IOLBF, 0);
  if ((why = pidfd_util_probe (&cputime)))
    return skip_all (why);
  if ((why = failnth_unavailable ()))
    return skip_all (why);
  nth_fd = open ("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
  if (nth_fd < 0)
    return printf ("Bail out! /proc/thread-self/fail-nth: %s\n", strerror (errno)), 1;
  printf ("# PIDFD_INFO_EXIT_CPUTIME: %s\n",
          cputime == 1 ? "expected (the 7.2 series)" : cputime == 0 ? "not expected (stock)" : "unknown");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    total += run_case (&cases[i], nth_fd);
  close (nth_fd);
  printf ("# %d fault points in %zu cases\n", total, sizeof cases / sizeof cases[0]);
  tap_failed += failnth_check_kmemleak (++tap_n, failnth_expected (EXPECT_VAR));
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
