/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pidfd-util.h - what pidfd-failnth and pidfd-fuzz share: clone3() with a
 * child that exits at once, PIDFD_GET_INFO with any struct size, and the
 * one model of what PIDFD_GET_INFO must answer (stock 7.2, or 7.2 with
 * kernel/patches-7.2's PIDFD_INFO_EXIT_CPUTIME).  x86_64.
 */
#pragma once

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../libspawn/backends/clone3.h"
#include "../libspawn/backends/pidfd-info.h"

#define PIDFD_INFO_PID_ (1ULL << 0)
#define PIDFD_INFO_COREDUMP_ (1ULL << 4)
#define PIDFD_INFO_SIZE_VER0_ 64u
#define PIDFD_INFO_SIZE_VER3_ 88u
#define PIDFD_INFO_SIZE_VER4_ 120u

/* Whether clone3() has 7.1's CLONE_AUTOREAP: NULL, or why not.  Sets
 * *@cputime to pidfd_util_cputime_expected()'s answer for this kernel. */
const char *pidfd_util_probe (int *cputime);

/* clone3 (@args, @size) whose child exits at once with @status, touching
 * no memory: safe with CLONE_VM, CLONE_VFORK and no stack of its own.
 * The child's PID, or -errno. */
long pidfd_util_clone3_exiting (const void *args, size_t size, int status);

/* ioctl (PIDFD_GET_INFO) with the struct size @size in the command (the
 * kernel's extensible-ioctl size): 0 or -errno. */
long pidfd_util_get_info (int pidfd, void *buf, unsigned size);

/* pidfd_send_signal(2): 0 or -errno. */
long pidfd_util_send_signal (int pidfd, int sig, siginfo_t *info, unsigned flags);

/* Waits until the process behind @pidfd is released (POLLHUP: gone,
 * its exit information recorded), up to @timeout_ms; 0 or -1. */
int pidfd_util_wait_released (int pidfd, int timeout_ms);

/* Whether the kernel reports PIDFD_INFO_EXIT_CPUTIME: PIDFD_EXIT_CPUTIME_EXPECT
 * (on/off, tests/run-guest) where set, else what PIDFD_INFO_SUPPORTED_MASK
 * says about @pidfd's kernel (-1 if it cannot say). */
int pidfd_util_cputime_expected (int pidfd);

/* Where the process behind a pidfd is when PIDFD_GET_INFO runs. */
enum pidfd_util_state {
  PIDFD_UTIL_ALIVE,  /* running, or a zombie: the task is still there */
  PIDFD_UTIL_REAPED, /* released: only the exit information is left */
};

/* What one PIDFD_GET_INFO call asked and got. */
struct pidfd_util_call {
  uint64_t asked;      /* the mask written in */
  unsigned size;       /* the struct size in the command */
  long ret;            /* 0 or -errno */
  const unsigned char *buf; /* size bytes, then PIDFD_UTIL_CANARY_LEN of 0xa5 */
};
#define PIDFD_UTIL_CANARY_LEN 16

/* The errno PIDFD_GET_INFO must give for mask @asked and struct size
 * @size into good memory, or 0. */
long pidfd_util_info_errno (uint64_t asked, unsigned size, enum pidfd_util_state state,
                            int cputime);

/* Checks @c against the model for a process in @state whose wait status
 * is (or will be) @status, on a kernel that reports the CPU times when
 * @cputime is 1; 0, or -1 with the reason in @why. */
int pidfd_util_check_info (const struct pidfd_util_call *c, enum pidfd_util_state state,
                           int status, int cputime, char *why, size_t whylen);
