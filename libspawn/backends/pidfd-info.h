/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pidfd-info.h - ioctl(PIDFD_GET_INFO), spelt here for older headers
 *
 * The uapi of linux/pidfd.h as of Linux 7.2 (PIDFD_INFO_SIZE_VER3, 88
 * bytes), checked against Debian's linux-source-7.2 (7.2.13), plus the CPU
 * times that kernel/patches-7.2 adds (PIDFD_INFO_EXIT_CPUTIME,
 * PIDFD_INFO_SIZE_VER4, 120 bytes; no mainline kernel has them).  The
 * kernel takes any struct size (it dispatches on the ioctl's number,
 * copies what both sides know and zeroes the rest of a larger struct), so
 * this layout also works on 6.13 to 7.2.  Used by pidfd.c (the status
 * after a thief reaped the child, 6.15) and by autoreap.c (the only status
 * there is).
 */
#pragma once

#include <glib.h>
#include <sys/ioctl.h>

struct spawn_pidfd_info {
  guint64 mask;
  guint64 cgroupid;
  guint32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  gint32 exit_code;          /* a wait status, as waitpid() gives it */
  guint32 coredump_mask, coredump_signal, coredump_code, coredump_pad;
  guint64 supported_mask;    /* with SPAWN_PIDFD_INFO_SUPPORTED_MASK, 6.18 */
  /* With SPAWN_PIDFD_INFO_EXIT_CPUTIME, in ns: the process's own times,
   * and those of the descendants it waited for (wait4() gives the sum). */
  guint64 exit_utime, exit_stime, exit_cutime, exit_cstime;
};
G_STATIC_ASSERT (sizeof (struct spawn_pidfd_info) == 120);

#define SPAWN_PIDFD_INFO_EXIT           (1UL << 3)
#define SPAWN_PIDFD_INFO_SUPPORTED_MASK (1UL << 5)
#define SPAWN_PIDFD_INFO_EXIT_CPUTIME   (1UL << 8) /* kernel/patches-7.2 */
#define SPAWN_PIDFD_GET_INFO _IOWR (0xFF, 11, struct spawn_pidfd_info)
