/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pidfd-info.h - ioctl(PIDFD_GET_INFO), spelt here for older headers
 *
 * The uapi of linux/pidfd.h as of Linux 7.2 (PIDFD_INFO_SIZE_VER3, 88
 * bytes), checked against Debian's linux-source-7.2 (7.2.13).  The kernel
 * takes any struct size (it dispatches on the ioctl's number and copies
 * what both sides know), so this layout also works on 6.13 to 7.1.  Used
 * by pidfd.c (the status after a thief reaped the child, 6.15) and by
 * autoreap.c (the only status there is).
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
};
G_STATIC_ASSERT (sizeof (struct spawn_pidfd_info) == 88);

#define SPAWN_PIDFD_INFO_EXIT           (1UL << 3)
#define SPAWN_PIDFD_INFO_SUPPORTED_MASK (1UL << 5)
#define SPAWN_PIDFD_GET_INFO _IOWR (0xFF, 11, struct spawn_pidfd_info)
