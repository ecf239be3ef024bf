/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* clone4-failnth: systematic fault injection inside clone4().
 *
 * For each combination of CLONE_FD, CLONE_AUTOREAP and CLONE_FD_AUTOKILL
 * (and the library's sets with CLONE_VM | CLONE_VFORK; and, where the
 * kernel has struct clone4_args' cgroup field and a cgroup2 is mounted,
 * with CLONE_INTO_CGROUP into a cgroup made for the run), fail the 1st, 2nd, 3rd ... fault point that the
 * calling task passes inside clone4() -- slab allocation, page allocation
 * or user copy, through /proc/thread-self/fail-nth -- until a call runs
 * without reaching the Nth point.  After each call that failed: an errno
 * from the expected set, no descriptor installed, *clonefd not naming an
 * open descriptor, no child and no zombie.  A call that succeeded despite
 * the fault (the kernel has a fallback) must deliver a whole child whose
 * exit is reported.  A failed CLONE_FD_AUTOKILL call releases its file on
 * the error path, which must kill nothing and leave nothing.  The run's
 * cgroup must be empty at the end and removable.  At the end, a kmemleak scan must find nothing.
 *
 * Needs a kernel with clone4 and CONFIG_FAULT_INJECTION (the debug
 * variant); elsewhere it says why and skips.  Root, for debugfs.  x86_64.
 *
 * TAP on stdout, one line per combination and one for kmemleak.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "failnth.h"
#include "proc-scan.h"

#define NR_CLONE4 1000
#define CLONE_AUTOREAP_ (1ULL << 61)
#define CLONE_FD_ (1ULL << 62)
#define CLONE_FD_AUTOKILL_ (1ULL << 60)
#define CLONE_INTO_CGROUP_ 0x200000000ULL
#define CHILD_STATUS 7
/* No combination has come near this many fault points; reaching it means
 * the loop no longer converges. */
#define MAX_POINTS 2000

/* CLONE4_ARGS_SIZE_VER1: a kernel without the cgroup field takes it too,
 * as long as cgroup is 0. */
struct clone4_args {
  uint64_t ptid, ctid, stack_start, stack_size, tls, clonefd;
  uint32_t clonefd_flags, pad;
  uint64_t cgroup;
};

struct clonefd_info {
  uint32_t code, status;
  uint64_t utime, stime;
};

static int tap_n, tap_failed;
static int cgroup_fd = -1; /* the run's cgroup, for CLONE_INTO_CGROUP */

/* clone4() whose child exits at once with CHILD_STATUS, without touching
 * memory: so it is safe with CLONE_VM and without a stack of its own, and
 * a CLONE_VFORK child cannot disturb the frame the parent returns to. */
static long
clone4_exiting_child (uint64_t flags, struct clone4_args *args)
{
  register unsigned long r10 __asm__ ("r10") = (unsigned long) args;
  long ret;

  __asm__ volatile ("syscall\n\t"
                    "test %%rax, %%rax\n\t"
                    "jnz 1f\n\t"
                    "mov $60, %%eax\n\t" /* SYS_exit */
                    "mov %[status], %%edi\n\t"
                    "syscall\n\t"
                    "hlt\n"
                    "1:"
                    : "=a"(ret)
                    : "0"((long) NR_CLONE4), "D"((unsigned long) (flags >> 32)),
                      "S"((unsigned long) (uint32_t) flags),
                      "d"((unsigned long) sizeof *args), "r"(r10),
                      [status] "i"(CHILD_STATUS)
                    : "rcx", "r11", "memory");
  return ret;
}

/* Waits up to five seconds for an autoreaped child to disappear. */
static int
wait_gone (pid_t pid)
{
  for (int i = 0; i < 500; i++) {
    if (kill (pid, 0) < 0 && errno == ESRCH)
      return 0;
    usleep (10000);
  }
  return -1;
}

/* The child of a call that succeeded: it must have exited with
 * CHILD_STATUS, told through the fd when there is one, and leave nothing. */
static void
collect (uint64_t flags, pid_t pid, int fd, int point)
{
  if (flags & CLONE_FD_) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    struct clonefd_info info;

    if (fd < 0 || fcntl (fd, F_GETFD) < 0) {
      failnth_fail ("point %d: call succeeded but *clonefd = %d is no descriptor", point, fd);
      return;
    }
    if (poll (&p, 1, 10000) != 1)
      failnth_fail ("point %d: clone fd never became readable", point);
    else if (read (fd, &info, sizeof info) != (ssize_t) sizeof info)
      failnth_fail ("point %d: read of the clone fd: %s", point, strerror (errno));
    else if (info.code != CLD_EXITED || info.status != CHILD_STATUS)
      failnth_fail ("point %d: report code %u status %u, wanted CLD_EXITED %d", point,
            info.code, info.status, CHILD_STATUS);
    close (fd);
  }
  if (flags & CLONE_AUTOREAP_) {
    if (wait_gone (pid) < 0)
      failnth_fail ("point %d: autoreaped child %d still there after 5 s", point, pid);
  } else {
    int status;

    if (waitpid (pid, &status, __WALL) != pid)
      failnth_fail ("point %d: waitpid(%d): %s", point, pid, strerror (errno));
    else if (!WIFEXITED (status) || WEXITSTATUS (status) != CHILD_STATUS)
      failnth_fail ("point %d: child status 0x%x", point, status);
  }
}

struct combination {
  const char *name;
  uint64_t flags;
};

/* Runs one combination; returns its number of fault points. */
static int
run_combination (const struct combination *c, int nth_fd, int *passed, int *failed)
{
  int enomem = 0, efault = 0, eagain = 0, tolerated = 0, points = 0;
  int fds_before = proc_count_fds (), children_before = proc_count_children_of (getpid ());

  for (int n = 1; n <= MAX_POINTS; n++) {
    struct clone4_args args = { 0 };
    int slot = -1, lowest, remaining;
    char buf[32];
    long ret;

    /* The number the next descriptor would get. */
    lowest = dup (0);
    close (lowest);
    if (c->flags & CLONE_FD_) {
      args.clonefd = (uintptr_t) &slot;
      args.clonefd_flags = O_CLOEXEC;
    }
    if (c->flags & CLONE_INTO_CGROUP_)
      args.cgroup = (uint64_t) cgroup_fd;

    snprintf (buf, sizeof buf, "%d", n);
    if (pwrite (nth_fd, buf, strlen (buf), 0) < 0) {
      failnth_fail ("writing %d to fail-nth: %s", n, strerror (errno));
      break;
    }
    ret = clone4_exiting_child (c->flags, &args);
    remaining = failnth_remaining (nth_fd);
    if (remaining < 0) {
      failnth_fail ("reading fail-nth after point %d: %s", n, strerror (-remaining));
      if (ret > 0)
        collect (c->flags, ret, slot, n);
      break;
    }

    if (remaining > 0) {
      /* The call passed fewer than n points: it ran untouched, and must
       * have worked. */
      if (ret < 0)
        failnth_fail ("untouched call (n = %d) failed: %s", n, strerror ((int) -ret));
      else
        collect (c->flags, ret, slot, n);
      break;
    }
    points = n;
    if (ret > 0) {
      tolerated++;
      collect (c->flags, ret, slot, n);
    } else {
      switch (-ret) {
      case ENOMEM: enomem++; break;
      case EFAULT: efault++; break;
      case EAGAIN: eagain++; break;
      default:
        failnth_fail ("point %d: unexpected errno %ld (%s)", n, -ret, strerror ((int) -ret));
      }
      if (slot != -1 && fcntl (slot, F_GETFD) >= 0)
        failnth_fail ("point %d: failed call left *clonefd = %d, an open descriptor", n, slot);
      if (fcntl (lowest, F_GETFD) >= 0)
        failnth_fail ("point %d: failed call installed descriptor %d", n, lowest);
    }
    if (proc_count_fds () != fds_before)
      failnth_fail ("point %d: %d descriptors, %d before", n, proc_count_fds (), fds_before);
    if (proc_count_children_of (getpid ()) != children_before)
      failnth_fail ("point %d: %d children or zombies, %d before", n, proc_count_children_of (getpid ()),
            children_before);
    if (failnth_failure[0])
      (*failed)++;
    else
      (*passed)++;
    if (n == MAX_POINTS)
      failnth_fail ("still failing at point %d: the loop does not converge", n);
  }

  tap_n++;
  if (failnth_failure[0]) {
    tap_failed++;
    printf ("not ok %d %s: %s\n", tap_n, c->name, failnth_failure);
  } else if (points == 0) {
    tap_failed++;
    printf ("not ok %d %s: no fault point reached: is fail-nth honoured?\n", tap_n, c->name);
  } else {
    printf ("ok %d %s: %d fault points, each failed cleanly (ENOMEM %d, EFAULT %d, "
            "EAGAIN %d) or succeeded whole (%d)\n",
            tap_n, c->name, points, enomem, efault, eagain, tolerated);
  }
  fflush (stdout);
  return points;
}

/* The cgroup v2 mount point, from /proc/self/mountinfo; 0 if none. */
static int
cgroup2_dir (char *dir, size_t len)
{
  char line[1024], mpoint[512], fstype[64];
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  int found = 0;

  if (!f)
    return 0;
  while (!found && fgets (line, sizeof line, f)) {
    char *sep = strstr (line, " - ");

    if (sep && sscanf (line, "%*d %*d %*s %*s %511s", mpoint) == 1 &&
        sscanf (sep + 3, "%63s", fstype) == 1 && strcmp (fstype, "cgroup2") == 0) {
      snprintf (dir, len, "%s", mpoint);
      found = 1;
    }
  }
  fclose (f);
  return found;
}

/* Sets cgroup_fd to a new cgroup for the CLONE_INTO_CGROUP combinations,
 * or returns why they cannot run. */
static const char *
make_run_cgroup (char *path, size_t len)
{
  struct clone4_args args = { .cgroup = 1 };
  char mnt[512];
  long ret;

  /* A nonzero cgroup without the flag: EINVAL where the field exists,
   * E2BIG where the kernel does not know it. */
  ret = clone4_exiting_child (SIGCHLD, &args);
  if (ret > 0) {
    collect (SIGCHLD, ret, -1, 0);
    return "the kernel made a child for a cgroup without CLONE_INTO_CGROUP";
  }
  if (ret == -E2BIG)
    return "no cgroup field in struct clone4_args (E2BIG): kernel without it";
  if (ret != -EINVAL)
    return "probing the cgroup field: unexpected errno";
  if (!cgroup2_dir (mnt, sizeof mnt))
    return "no cgroup2 file system mounted";
  if (snprintf (path, len, "%s/clone4-failnth.%d", mnt, (int) getpid ()) >= (int) len)
    return "cgroup2 mount path too long";
  if (mkdir (path, 0755) < 0) {
    path[0] = '\0';
    return "cannot create a cgroup";
  }
  cgroup_fd = open (path, O_DIRECTORY | O_CLOEXEC);
  if (cgroup_fd < 0)
    return "cannot open the new cgroup";
  return NULL;
}

/* The run's cgroup: nobody may be left in it, and it must go. */
static void
remove_run_cgroup (const char *path)
{
  char procs[600], buf[64];
  ssize_t len = -1;
  int fd;

  if (!path[0])
    return;
  tap_n++;
  snprintf (procs, sizeof procs, "%s/cgroup.procs", path);
  fd = open (procs, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    len = read (fd, buf, sizeof buf - 1);
    close (fd);
  }
  close (cgroup_fd);
  if (len != 0) {
    tap_failed++;
    printf ("not ok %d cgroup: %s not empty at the end (%zd bytes)\n", tap_n, procs, len);
  } else if (rmdir (path) < 0) {
    tap_failed++;
    printf ("not ok %d cgroup: rmdir %s: %s\n", tap_n, path, strerror (errno));
  } else {
    printf ("ok %d cgroup: empty at the end, removed\n", tap_n);
  }
}

static int
skip_all (const char *why)
{
  if (failnth_expected ("FAILNTH_EXPECT"))
    return printf ("not ok 1 clone4-failnth: FAILNTH_EXPECT=on, but %s\n1..1\n", why), 1;
  printf ("ok 1 clone4-failnth # SKIP %s\n1..1\n", why);
  return 0;
}

int
main (void)
{
  static const struct combination combinations[] = {
    { "CLONE_FD", CLONE_FD_ | SIGCHLD },
    { "CLONE_AUTOREAP", CLONE_AUTOREAP_ },
    { "CLONE_FD|CLONE_AUTOREAP", CLONE_FD_ | CLONE_AUTOREAP_ },
    { "CLONE_FD|CLONE_AUTOREAP|CLONE_VM|CLONE_VFORK",
      CLONE_FD_ | CLONE_AUTOREAP_ | CLONE_VM | CLONE_VFORK },
    { "CLONE_FD|CLONE_AUTOREAP|CLONE_FD_AUTOKILL",
      CLONE_FD_ | CLONE_AUTOREAP_ | CLONE_FD_AUTOKILL_ },
    { "CLONE_FD|CLONE_AUTOREAP|CLONE_FD_AUTOKILL|CLONE_VM|CLONE_VFORK",
      CLONE_FD_ | CLONE_AUTOREAP_ | CLONE_FD_AUTOKILL_ | CLONE_VM | CLONE_VFORK },
    { "CLONE_INTO_CGROUP", CLONE_INTO_CGROUP_ | SIGCHLD },
    { "CLONE_FD|CLONE_AUTOREAP|CLONE_INTO_CGROUP",
      CLONE_FD_ | CLONE_AUTOREAP_ | CLONE_INTO_CGROUP_ },
    { "CLONE_FD|CLONE_AUTOREAP|CLONE_FD_AUTOKILL|CLONE_INTO_CGROUP|CLONE_VM|CLONE_VFORK",
      CLONE_FD_ | CLONE_AUTOREAP_ | CLONE_FD_AUTOKILL_ | CLONE_INTO_CGROUP_ | CLONE_VM |
          CLONE_VFORK },
  };
  char cgroup_path[512] = "";
  const char *no_cgroup, *why;
  int nth_fd, passed = 0, failed = 0, total = 0;
  long ret;

  setvbuf (stdout, NULL, _IOLBF, 0);
  /* Every bit set: EINVAL from a kernel with clone4, creating nothing. */
  ret = syscall (NR_CLONE4, ~0u, ~0u, 0UL, NULL);
  if (ret == 0)
    _exit (0);
  if (ret > 0)
    return printf ("Bail out! clone4 with every flag created process %ld\n", ret), 1;
  if (errno == ENOSYS || errno == EPERM)
    return skip_all ("no clone4 in this kernel (ENOSYS or a seccomp EPERM)");
  if ((why = failnth_unavailable ()))
    return skip_all (why);
  nth_fd = open ("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
  if (nth_fd < 0)
    return printf ("Bail out! /proc/thread-self/fail-nth: %s\n", strerror (errno)), 1;
  no_cgroup = make_run_cgroup (cgroup_path, sizeof cgroup_path);

  for (size_t i = 0; i < sizeof combinations / sizeof combinations[0]; i++) {
    uint64_t f = combinations[i].flags;
    struct clone4_args args = { 0 };
    int slot = -1;

    failnth_failure[0] = '\0';
    if ((f & CLONE_INTO_CGROUP_) && no_cgroup) {
      printf ("ok %d %s # SKIP %s\n", ++tap_n, combinations[i].name, no_cgroup);
      continue;
    }
    /* A kernel built without CONFIG_CLONEFD refuses CLONE_FD with EINVAL. */
    if (f & CLONE_FD_) {
      args.clonefd = (uintptr_t) &slot;
      args.clonefd_flags = O_CLOEXEC;
    }
    if (f & CLONE_INTO_CGROUP_)
      args.cgroup = (uint64_t) cgroup_fd;
    ret = clone4_exiting_child (f, &args);
    if (ret == -EINVAL && (f & CLONE_FD_)) {
      printf ("ok %d %s # SKIP clone4 refuses CLONE_FD (EINVAL): CONFIG_CLONEFD is off\n",
              ++tap_n, combinations[i].name);
      continue;
    }
    if (ret > 0)
      collect (f, ret, slot, 0);
    total += run_combination (&combinations[i], nth_fd, &passed, &failed);
  }
  close (nth_fd);
  remove_run_cgroup (cgroup_path);
  printf ("# %d fault points: %d passed, %d failed\n", total, passed, failed);
  tap_failed += failnth_check_kmemleak (++tap_n, failnth_expected ("FAILNTH_EXPECT"));
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
