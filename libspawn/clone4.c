/* clone4.c - raw clone4() and a probe of what the running kernel offers */
#include "clone4.h"

#include <errno.h>
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

/* Fork-like calls return twice; a child created by a probe leaves at once.
 * Only async-signal-safe calls here (signal-safety(7)). */
static void
probe_child_exit (long ret)
{
  if (ret == 0)
    _exit (0);
}

SpawnClone4Support
_spawn_clone4_probe (void)
{
  struct spawn_clone4_args args = { 0 };
  struct spawn_clonefd_info info;
  int saved_errno = errno;
  int fd = -1;
  long ret;

  /* Every flag bit set is invalid: a kernel with clone4 says EINVAL
   * without creating anything, one without it says ENOSYS. */
  ret = _spawn_clone4 (UINT64_MAX, 0, NULL);
  probe_child_exit (ret);
  if (ret > 0)
    waitpid (ret, NULL, __WALL);
  if (ret >= 0 || errno != EINVAL)
    {
      errno = saved_errno;
      return SPAWN_CLONE4_ABSENT;
    }

  /* A child that exits at once: no zombie, no signal, one report. */
  args.clonefd = (uintptr_t) &fd;
  ret = _spawn_clone4 (SPAWN_CLONE_FD | SPAWN_CLONE_AUTOREAP,
                       sizeof (args), &args);
  probe_child_exit (ret);
  errno = saved_errno;
  if (ret < 0)
    return SPAWN_CLONE4_NO_FD;
  do
    ret = read (fd, &info, sizeof (info));
  while (ret < 0 && errno == EINTR);
  close (fd);
  errno = saved_errno;
  /* An fd that does not report a clean exit is not one to build on. */
  if (ret != sizeof (info) || info.code != CLD_EXITED || info.status != 0)
    return SPAWN_CLONE4_NO_FD;
  return SPAWN_CLONE4_WITH_FD;
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
