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
/* Linux 7.1 (include/uapi/linux/sched.h; values checked against Debian's
 * linux-source-7.2): the kernel reaps the child itself, exit_signal must
 * be 0; no_new_privs for the child; SIGKILL for it when the last reference
 * to the clone3 pidfd's file goes (needs CLONE_PIDFD and CLONE_AUTOREAP,
 * and CLONE_NNP or CAP_SYS_ADMIN).  Not clone4's CLONE_AUTOREAP of our
 * 6.1 series (clone4.h), which is another bit of another syscall. */
#ifndef CLONE_AUTOREAP
#define CLONE_AUTOREAP (1ULL << 34)
#endif
#ifndef CLONE_NNP
#define CLONE_NNP (1ULL << 35)
#endif
#ifndef CLONE_PIDFD_AUTOKILL
#define CLONE_PIDFD_AUTOKILL (1ULL << 36)
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
