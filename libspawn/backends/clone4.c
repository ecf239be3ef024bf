/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* clone4.c - raw clone4() and a probe of what the running kernel offers */
#include "clone4.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_ (x)

long
_spawn_clone4 (uint64_t flags, size_t size, struct spawn_clone4_args *args)
{
  return syscall (SPAWN_NR_CLONE4, (unsigned int) (flags >> 32),
                  (unsigned int) flags, (unsigned long) size, args);
}

/* The probe's child: it only exits.  It shares our memory and stack
 * (CLONE_VM) with every signal blocked; nothing async-signal-unsafe here
 * (signal-safety(7)), nothing at all in fact. */
static int
probe_child (void *arg __attribute__ ((unused)))
{
  return 0;
}

/* Fork-like calls return twice; a child created by the first probe (a
 * kernel that should have refused) leaves at once.  Async-signal-safe. */
static void
probe_child_exit (long ret)
{
  if (ret == 0)
    _exit (0);
}

static int
clone4_check_flags (uint64_t extra_flags)
{
  /* The child runs on this while we are suspended (CLONE_VFORK), so a
   * frame of ours is as good as any stack; it only makes one call. */
  _Alignas (16) char stack[16 * 1024];
  struct spawn_clone4_args args = { 0 };
  struct spawn_clonefd_info info;
  sigset_t all, saved;
  int saved_errno = errno;
  int fd = -1, err = 0;
  long ret;

  /* Every flag bit set is invalid: a kernel with clone4 says EINVAL
   * without creating anything, one without it says ENOSYS (or EPERM, from
   * a seccomp filter). */
  ret = _spawn_clone4 (UINT64_MAX, 0, NULL);
  probe_child_exit (ret);
  if (ret > 0)
    waitpid (ret, NULL, __WALL);
  if (ret >= 0 || errno != EINVAL)
    {
      err = ret >= 0 || errno != EPERM ? -ENOSYS : -EPERM;
      goto out;
    }

  /* A child started as a real spawn starts one (CLONE_VM | CLONE_VFORK:
   * no copy of our page tables) that exits at once: no zombie, no signal,
   * one report.  EINVAL: CLONE_FD is not there.  Anything else (EMFILE,
   * ENFILE, EAGAIN, ENOMEM) is a failure of this attempt, not an answer
   * about the kernel: the caller must not cache it. */
  args.stack_start = (uintptr_t) stack;
  args.stack_size = sizeof (stack);
  args.clonefd = (uintptr_t) &fd;
  args.clonefd_flags = O_CLOEXEC;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved);
  ret = _spawn_clone4_run (CLONE_VM | CLONE_VFORK | SPAWN_CLONE_FD |
                           SPAWN_CLONE_AUTOREAP | extra_flags,
                           &args, sizeof (args), probe_child, NULL);
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  if (ret < 0)
    {
      err = (int) ret;
      goto out;
    }
  do
    ret = read (fd, &info, sizeof (info));
  while (ret < 0 && errno == EINTR);
  close (fd);
  /* An fd that does not report a clean exit is not one to build on. */
  if (ret != sizeof (info) || info.code != CLD_EXITED || info.status != 0)
    err = -EINVAL;

out:
  errno = saved_errno;
  return err;
}

int
_spawn_clone4_check (void)
{
  return clone4_check_flags (0);
}

/* The probe child has exited before we close its fd: nothing is killed. */
int
_spawn_clone4_check_autokill (void)
{
  return clone4_check_flags (SPAWN_CLONE_FD_AUTOKILL);
}

SpawnClone4Support
_spawn_clone4_probe (void)
{
  switch (_spawn_clone4_check ())
    {
    case 0:
      return SPAWN_CLONE4_WITH_FD;
    case -EINVAL:
      return SPAWN_CLONE4_NO_FD;
    default:
      return SPAWN_CLONE4_ABSENT;
    }
}

const char *
_spawn_clone4_support_to_string (SpawnClone4Support support)
{
  switch (support)
    {
    case SPAWN_CLONE4_ABSENT:
      return "absent";
    case SPAWN_CLONE4_NO_FD:
      return "clone4 without CLONE_FD";
    case SPAWN_CLONE4_WITH_FD:
      return "clone4 with CLONE_FD";
    }
  return "unknown";
}

/* The child of a CLONE_VM clone4 starts on a fresh stack with nothing to
 * return to, so the call cannot be made from C: like clone(2)'s wrapper,
 * call fn(arg) from the new stack and exit with its result.  The syscall
 * preserves every register but rax, rcx and r11, in both parent and child.
 *
 *   rdi flags, rsi args, rdx size, rcx fn, r8 arg
 *   clone4 (rdi flags_high, rsi flags_low, rdx size, r10 args)
 */
__asm__ (".text\n"
         ".globl _spawn_clone4_run\n"
         ".hidden _spawn_clone4_run\n"
         ".type _spawn_clone4_run, @function\n"
         "_spawn_clone4_run:\n"
         "  mov %rsi, %r10\n"
         "  mov %rcx, %r9\n"
         "  mov %edi, %esi\n"
         "  shr $32, %rdi\n"
         "  mov $" STRINGIFY (SPAWN_NR_CLONE4) ", %eax\n"
         "  syscall\n"
         "  test %rax, %rax\n"
         "  jnz 1f\n"
         /* child: outermost frame */
         "  xor %ebp, %ebp\n"
         "  mov %r8, %rdi\n"
         "  call *%r9\n"
         "  mov %eax, %edi\n"
         "  mov $60, %eax\n" /* SYS_exit */
         "  syscall\n"
         "  hlt\n"
         "1:\n"
         "  ret\n"
         ".size _spawn_clone4_run, .-_spawn_clone4_run\n");
