/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* proc-scan.h - what clone4-failnth and clone4-fuzz read from /proc: our
 * open descriptors, and the processes (zombies included) whose parent is
 * a given one.  waitpid() cannot see autoreaped children; /proc can.
 */
#pragma once

#include <sys/types.h>

/* Open descriptors of the calling process, or -1. */
int proc_count_fds (void);
/* Processes whose parent is @parent, zombies included, or -1. */
int proc_count_children_of (pid_t parent);
