/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* clone4.h - userspace view of the clone4() ABI added by kernel/patches/
 *
 * Stock kernels do not have clone4(); everything here is probed at run
 * time.  The values are chosen so that a stock kernel answers ENOSYS and
 * never runs another system call by mistake: see docs/kernel-port.md.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

/* x86_64 only: far above upstream's numbers (~471 in 7.0) and the x32
 * window (512-547). */
#define SPAWN_NR_CLONE4 1000

/* clone4-only flag bits, far above those clone3 uses (32-37 in 7.1). */
#define SPAWN_CLONE_FD       (1ULL << 62)
#define SPAWN_CLONE_AUTOREAP (1ULL << 61)
/* With CLONE_FD and CLONE_AUTOREAP: SIGKILL for the child when the last
 * reference to the clone fd's open file description goes while it runs
 * (and our credentials still allow the kill).  EINVAL where absent. */
#define SPAWN_CLONE_FD_AUTOKILL (1ULL << 60)
/* clone3's flag, the same bit in clone4 (kernel patch 10): the child is
 * born in the cgroup v2 whose directory @cgroup is a descriptor of.  An
 * older series refuses the flag (EINVAL) and a nonzero @cgroup (E2BIG). */
#define SPAWN_CLONE_INTO_CGROUP (1ULL << 33)

/* Mirrors struct clone4_args: every pointer travels as a u64. */
struct spawn_clone4_args {
  uint64_t ptid;
  uint64_t ctid;
  uint64_t stack_start;
  uint64_t stack_size;
  uint64_t tls;
  uint64_t clonefd;       /* int *: where the kernel stores the fd */
  uint32_t clonefd_flags; /* O_CLOEXEC | O_NONBLOCK */
  uint32_t pad;
};

/* The structure's second version (kernel patch 10), for the one call that
 * needs it: a job's child born in its cgroup.  Every other call passes the
 * first version, which every series reads the same way. */
struct spawn_clone4_args_ver1 {
  struct spawn_clone4_args ver0;
  uint64_t cgroup; /* with SPAWN_CLONE_INTO_CGROUP: a cgroup v2 directory fd */
};

/* What read() on a clone fd yields once the process has ended. */
struct spawn_clonefd_info {
  uint32_t code;   /* CLD_EXITED, CLD_KILLED or CLD_DUMPED */
  uint32_t status; /* exit status or signal number */
  uint64_t utime;  /* user CPU time, clock ticks */
  uint64_t stime;  /* system CPU time, clock ticks */
};

/* ioctl(fd, SPAWN_CLONEFD_GET_INFO, &info): the same report without
 * consuming it (EAGAIN while the process runs; ENOTTY on a series from
 * before the ioctl, where read() is the only way). */
#define SPAWN_CLONEFD_GET_INFO _IOR (0xC4, 1, struct spawn_clonefd_info)

typedef enum {
  SPAWN_CLONE4_ABSENT,  /* ENOSYS, or EPERM from a seccomp filter */
  SPAWN_CLONE4_NO_FD,   /* clone4 works, CLONE_FD is configured out */
  SPAWN_CLONE4_WITH_FD, /* clone4 with CLONE_FD | CLONE_AUTOREAP works */
} SpawnClone4Support;

long _spawn_clone4 (uint64_t flags, size_t size, struct spawn_clone4_args *args);
/* 0: clone4 with CLONE_FD | CLONE_AUTOREAP works (a CLONE_VM | CLONE_VFORK
 * child was started and reported its exit); -ENOSYS or -EPERM: no clone4
 * here; -EINVAL: clone4 without CLONE_FD; any other -errno (EMFILE,
 * ENFILE, EAGAIN, ENOMEM): this attempt failed, ask again later. */
int _spawn_clone4_check (void);
/* The same check with CLONE_FD_AUTOKILL added: 0 if the kernel has it;
 * -EINVAL if not (a series without the flag); -ENOSYS/-EPERM: no
 * clone4; any other -errno: ask again later. */
int _spawn_clone4_check_autokill (void);
/* _spawn_clone4_check() for diagnostics: a failed attempt reads ABSENT. */
SpawnClone4Support _spawn_clone4_probe (void);
const char *_spawn_clone4_support_to_string (SpawnClone4Support support);

/* clone4(flags, args) whose child runs fn(arg) on the stack in @args and
 * exits with its return value; returns the child's PID or -errno.  For
 * CLONE_VM children, like clone(2)'s glibc wrapper.  x86_64 only. */
long _spawn_clone4_run (uint64_t flags, struct spawn_clone4_args *args,
                        size_t size, int (*fn) (void *), void *arg);
