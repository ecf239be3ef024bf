/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pidfd-util.c - see pidfd-util.h */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidfd-util.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

long
pidfd_util_clone3_exiting (const void *args, size_t size, int status)
{
  register unsigned long r8 __asm__ ("r8") = (unsigned) status;
  long ret;

  __asm__ volatile ("syscall\n\t"
                    "test %%rax, %%rax\n\t"
                    "jnz 1f\n\t"
                    "mov %%r8d, %%edi\n\t"
                    "mov $60, %%eax\n\t" /* SYS_exit */
                    "syscall\n\t"
                    "hlt\n"
                    "1:"
                    : "=a"(ret)
                    : "0"((long) SYS_clone3), "D"(args), "S"(size), "r"(r8)
                    : "rcx", "r11", "memory");
  return ret;
}

long
pidfd_util_get_info (int pidfd, void *buf, unsigned size)
{
  unsigned long cmd = _IOC (_IOC_READ | _IOC_WRITE, 0xFF, 11, size);

  return ioctl (pidfd, cmd, buf) < 0 ? -errno : 0;
}

long
pidfd_util_send_signal (int pidfd, int sig, siginfo_t *info, unsigned flags)
{
  return syscall (SYS_pidfd_send_signal, pidfd, sig, info, flags) < 0 ? -errno : 0;
}

/* A pidfd is readable (POLLIN) from the exit on, a zombie included, and
 * hangs up only once the task is gone; release_task() records the exit
 * information (pidfs_exit()) before it unhashes the task.  An autoreaped
 * child passes through that window too, so the first POLLIN is not enough. */
int
pidfd_util_wait_released (int pidfd, int timeout_ms)
{
  for (int waited = 0; waited <= timeout_ms; waited++) {
    struct pollfd p = { .fd = pidfd, .events = POLLIN };

    /* Readable comes first; sleep a millisecond between looks. */
    if (poll (&p, 1, 0) == 1 && (p.revents & POLLHUP))
      return 0;
    usleep (1000);
  }
  return -1;
}

int
pidfd_util_cputime_expected (int pidfd)
{
  const char *e = getenv ("PIDFD_EXIT_CPUTIME_EXPECT");
  struct spawn_pidfd_info info = { .mask = SPAWN_PIDFD_INFO_SUPPORTED_MASK };

  if (e && strcmp (e, "on") == 0)
    return 1;
  if (e && strcmp (e, "off") == 0)
    return 0;
  if (pidfd_util_get_info (pidfd, &info, sizeof info) < 0 ||
      !(info.mask & SPAWN_PIDFD_INFO_SUPPORTED_MASK))
    return -1;
  return (info.supported_mask & SPAWN_PIDFD_INFO_EXIT_CPUTIME) != 0;
}

static uint64_t
field64 (const unsigned char *buf, size_t off)
{
  uint64_t v;

  memcpy (&v, buf + off, sizeof v);
  return v;
}

/* The errno the call must give, or 0 (pidfd-util.h): ENOTTY below the first published
 * size (not even taken for PIDFD_GET_INFO), ESRCH for a released process
 * unless exit information was asked for -- on stock 7.2 only
 * PIDFD_INFO_EXIT counts, with the series PIDFD_INFO_EXIT_CPUTIME too. */
long
pidfd_util_info_errno (uint64_t asked, unsigned size, enum pidfd_util_state state, int cputime)
{
  uint64_t exit_bits = SPAWN_PIDFD_INFO_EXIT | (cputime == 1 ? SPAWN_PIDFD_INFO_EXIT_CPUTIME : 0);

  if (size < PIDFD_INFO_SIZE_VER0_)
    return -ENOTTY;
  if (state == PIDFD_UTIL_REAPED && !(asked & exit_bits))
    return -ESRCH;
  return 0;
}

/* The CPU times: only where asked, in a struct with room for them, on a
 * kernel with the series and for a released process; then plausible for
 * our children, which exit at once and have no children of their own. */
static int
check_cputime (const struct pidfd_util_call *c, uint64_t mask, enum pidfd_util_state state,
               int cputime, char *why, size_t whylen)
{
  int want = cputime == 1 && (c->asked & SPAWN_PIDFD_INFO_EXIT_CPUTIME) &&
             c->size >= PIDFD_INFO_SIZE_VER4_ && state == PIDFD_UTIL_REAPED;
  uint64_t off = offsetof (struct spawn_pidfd_info, exit_utime);

  if (cputime == -1)
    want = !!(mask & SPAWN_PIDFD_INFO_EXIT_CPUTIME) && want;
  if (!!(mask & SPAWN_PIDFD_INFO_EXIT_CPUTIME) != want) {
    snprintf (why, whylen, "size %u asked 0x%llx: PIDFD_INFO_EXIT_CPUTIME %s", c->size,
              (unsigned long long) c->asked, want ? "missing" : "set where it must not be");
    return -1;
  }
  if (!want || c->size < off + 32)
    return 0;
  if (field64 (c->buf, off) + field64 (c->buf, off + 8) > 60ULL * 1000000000 ||
      field64 (c->buf, off + 16) != 0 || field64 (c->buf, off + 24) != 0) {
    snprintf (why, whylen, "implausible times utime %llu stime %llu cutime %llu cstime %llu",
              (unsigned long long) field64 (c->buf, off),
              (unsigned long long) field64 (c->buf, off + 8),
              (unsigned long long) field64 (c->buf, off + 16),
              (unsigned long long) field64 (c->buf, off + 24));
    return -1;
  }
  return 0;
}

/* What a successful call wrote: the right bits in the mask, the exit
 * status where it says so, zeroes past what the kernel knows, nothing
 * past the size. */
static int
check_content (const struct pidfd_util_call *c, enum pidfd_util_state state, int status,
               int cputime, char *why, size_t whylen)
{
  uint64_t mask = field64 (c->buf, 0);
  int32_t code;
  unsigned known = cputime == 1 ? PIDFD_INFO_SIZE_VER4_ : PIDFD_INFO_SIZE_VER3_;

  memcpy (&code, c->buf + offsetof (struct spawn_pidfd_info, exit_code), sizeof code);
  if (!!(mask & PIDFD_INFO_PID_) != (state == PIDFD_UTIL_ALIVE))
    return snprintf (why, whylen, "PIDFD_INFO_PID %s", state == PIDFD_UTIL_ALIVE ? "missing for a live process" : "set for a released one"), -1;
  if (mask & SPAWN_PIDFD_INFO_EXIT && !(c->asked & SPAWN_PIDFD_INFO_EXIT))
    return snprintf (why, whylen, "PIDFD_INFO_EXIT set but not asked for"), -1;
  /* The exit information is recorded at release (pidfs_exit()). */
  if (!!(mask & SPAWN_PIDFD_INFO_EXIT) !=
      ((c->asked & SPAWN_PIDFD_INFO_EXIT) && state == PIDFD_UTIL_REAPED))
    return snprintf (why, whylen, "PIDFD_INFO_EXIT %s", state == PIDFD_UTIL_REAPED ? "missing after release" : "set before release"), -1;
  if ((mask & SPAWN_PIDFD_INFO_EXIT) && code != status)
    return snprintf (why, whylen, "exit_code 0x%x, the child's status is 0x%x", code, status), -1;
  if (check_cputime (c, mask, state, cputime, why, whylen) < 0)
    return -1;
  for (unsigned i = known; i < c->size; i++)
    if (c->buf[i] != 0)
      return snprintf (why, whylen, "size %u: byte %u past the kernel's struct is 0x%02x, not 0",
                       c->size, i, c->buf[i]), -1;
  for (unsigned i = 0; i < PIDFD_UTIL_CANARY_LEN; i++)
    if (c->buf[c->size + i] != 0xa5)
      return snprintf (why, whylen, "size %u: the kernel wrote byte %u past it", c->size,
                       c->size + i), -1;
  return 0;
}

int
pidfd_util_check_info (const struct pidfd_util_call *c, enum pidfd_util_state state,
                       int status, int cputime, char *why, size_t whylen)
{
  long want = pidfd_util_info_errno (c->asked, c->size, state, cputime);

  if (cputime == -1 && c->ret == -ESRCH && want == 0 && state == PIDFD_UTIL_REAPED &&
      !(c->asked & SPAWN_PIDFD_INFO_EXIT))
    want = -ESRCH; /* not told which kernel this is: both are right */
  if (c->ret != want) {
    snprintf (why, whylen, "PIDFD_GET_INFO size %u mask 0x%llx on a %s process: %s, wanted %s",
              c->size, (unsigned long long) c->asked,
              state == PIDFD_UTIL_ALIVE ? "live" : "released",
              c->ret ? strerror ((int) -c->ret) : "success", want ? strerror ((int) -want) : "success");
    return -1;
  }
  if (c->ret < 0)
    return 0;
  return check_content (c, state, status, cputime, why, whylen);
}

const char *
pidfd_util_probe (int *cputime)
{
  struct spawn_clone3_args args = { .flags = CLONE_PIDFD | CLONE_AUTOREAP };
  int pidfd = -1;
  long ret;

  args.pidfd = (uintptr_t) &pidfd;
  ret = pidfd_util_clone3_exiting (&args, sizeof args, 0);
  if (ret == -ENOSYS || ret == -EPERM)
    return "no clone3 (ENOSYS or a seccomp EPERM)";
  if (ret == -EINVAL)
    return "clone3 refuses CLONE_AUTOREAP (EINVAL): kernel older than 7.1";
  if (ret < 0)
    return "clone3 CLONE_PIDFD|CLONE_AUTOREAP failed";
  /* Released: its exit information is there to ask about. */
  pidfd_util_wait_released (pidfd, 30000);
  *cputime = pidfd_util_cputime_expected (pidfd);
  close (pidfd);
  return NULL;
}
