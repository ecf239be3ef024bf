/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* clone3.h - clone3(2) with a function to run on a new stack
 *
 * For a child born in a job's cgroup (CLONE_INTO_CGROUP, Linux 5.7), which
 * clone(2) cannot ask for.  The struct is the uapi's clone_args as of 5.7
 * (CLONE_ARGS_SIZE_VER2), spelt here for older headers.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct spawn_clone3_args {
  uint64_t flags;
  uint64_t pidfd;
  uint64_t child_tid;
  uint64_t parent_tid;
  uint64_t exit_signal;
  uint64_t stack;
  uint64_t stack_size;
  uint64_t tls;
  uint64_t set_tid;
  uint64_t set_tid_size;
  uint64_t cgroup;
};

/* clone3 (@args, @size); in the child, on @args->stack, @fn (@arg) and
 * exit with its value.  The child's PID, or -errno; -ENOSYS where the
 * architecture has no trampoline here. */
long _spawn_clone3_run (struct spawn_clone3_args *args, size_t size,
                        int (*fn) (void *), void *arg);
