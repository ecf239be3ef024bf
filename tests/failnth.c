/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* failnth.c - see failnth.h */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "failnth.h"

char failnth_failure[512];

void
failnth_fail (const char *fmt, ...)
{
  va_list ap;

  if (failnth_failure[0])
    return;
  va_start (ap, fmt);
  vsnprintf (failnth_failure, sizeof failnth_failure, fmt, ap);
  va_end (ap);
}

int
failnth_write_file (const char *path, const char *value)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  ssize_t n;
  int err;

  if (fd < 0)
    return -errno;
  n = write (fd, value, strlen (value));
  err = n < 0 ? -errno : 0;
  close (fd);
  return err;
}

/* By default failslab and fail_page_alloc skip the allocations that may
 * sleep (nearly all of a syscall's), and every injected fault prints a
 * stack trace. */
int
failnth_configure (void)
{
  static const struct { const char *path, *value; } knobs[] = {
    { "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
    { "/sys/kernel/debug/failslab/verbose", "0" },
    { "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
    { "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
    { "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
    { "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
    { "/sys/kernel/debug/fail_usercopy/verbose", "0" },
  };

  for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
    int err = failnth_write_file (knobs[i].path, knobs[i].value);

    if (err) {
      printf ("# %s: %s\n", knobs[i].path, strerror (-err));
      return err;
    }
  }
  return 0;
}

const char *
failnth_unavailable (void)
{
  if (access ("/proc/thread-self/fail-nth", W_OK) < 0)
    return "no /proc/thread-self/fail-nth: kernel without CONFIG_FAULT_INJECTION";
  if (geteuid () != 0)
    return "not root: fault injection is configured through debugfs";
  if (failnth_configure () < 0)
    return "debugfs fault-injection knobs not writable (CONFIG_FAULT_INJECTION_DEBUG_FS, "
           "FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_USERCOPY)";
  return NULL;
}

/* Every fault point passed counts down, and so do the user copies of this
 * very read and write -- which is why a read that fails with EFAULT means
 * "1 left" (its own copy took it), and a failed reset still leaves the
 * counter at 0 (its copy was the last point). */
int
failnth_remaining (int nth_fd)
{
  char buf[32];
  ssize_t len = pread (nth_fd, buf, sizeof buf - 1, 0);
  int saved_errno = errno;

  if (pwrite (nth_fd, "0", 1, 0) < 0 && errno != EFAULT)
    return -errno;
  if (pwrite (nth_fd, "0", 1, 0) < 0)
    return -errno;
  if (len < 0)
    return saved_errno == EFAULT ? 1 : -saved_errno;
  buf[len] = '\0';
  return atoi (buf);
}

int
failnth_expected (const char *name)
{
  const char *e = getenv (name);

  return e && strcmp (e, "on") == 0;
}

int
failnth_check_kmemleak (int tap_n, int expected)
{
  const char *path = "/sys/kernel/debug/kmemleak";
  char buf[4096];
  ssize_t len;
  int fd;

  if ((fd = failnth_write_file (path, "scan")) < 0) {
    /* Only a missing file means "no kmemleak": any other error (EPERM once
     * it has turned itself off) hides leaks, and so does a skip where the
     * run expects a debug kernel. */
    if (fd != -ENOENT || expected) {
      printf ("not ok %d kmemleak: first scan: %s\n", tap_n, strerror (-fd));
      return 1;
    }
    printf ("ok %d kmemleak # SKIP no %s: kernel without CONFIG_DEBUG_KMEMLEAK\n", tap_n, path);
    return 0;
  }
  sleep (6);
  /* kmemleak turns itself off when it runs out of metadata (an injected
   * fault may do that): then it would report nothing, silently. */
  if ((fd = failnth_write_file (path, "scan")) < 0) {
    printf ("not ok %d kmemleak: second scan: %s (disabled meanwhile?)\n", tap_n, strerror (-fd));
    return 1;
  }
  fd = open (path, O_RDONLY | O_CLOEXEC);
  len = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (fd >= 0)
    close (fd);
  if (len < 0) {
    printf ("not ok %d kmemleak: reading %s: %s\n", tap_n, path, strerror (errno));
    return 1;
  }
  if (len > 0) {
    buf[len] = '\0';
    printf ("not ok %d kmemleak: it reports a leak:\n", tap_n);
    for (char *line = strtok (buf, "\n"); line; line = strtok (NULL, "\n"))
      printf ("#   %s\n", line);
    return 1;
  }
  printf ("ok %d kmemleak: no report after the runs\n", tap_n);
  return 0;
}
