/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* clone3.c - clone3(2) for a CLONE_VM child on a stack of its own */
#include "clone3.h"

#include <errno.h>
#include <sys/syscall.h>

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_ (x)

#if defined (__x86_64__)
/* As _spawn_clone4_run (clone4.c): the child starts on the new stack with
 * nothing to return to, so it calls fn(arg) from there and exits with its
 * value.  The syscall keeps every register but rax, rcx and r11.
 *
 *   rdi args, rsi size, rdx fn, rcx arg
 *   clone3 (rdi args, rsi size) */
__asm__ (".text\n"
         ".globl _spawn_clone3_run\n"
         ".hidden _spawn_clone3_run\n"
         ".type _spawn_clone3_run, @function\n"
         "_spawn_clone3_run:\n"
         "  mov %rdx, %r9\n"
         "  mov %rcx, %r8\n"
         "  mov $" STRINGIFY (__NR_clone3) ", %eax\n"
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
         ".size _spawn_clone3_run, .-_spawn_clone3_run\n");

#else
long
_spawn_clone3_run (struct spawn_clone3_args *args, size_t size,
                   int (*fn) (void *), void *arg)
{
  (void) args;
  (void) size;
  (void) fn;
  (void) arg;
  return -ENOSYS;
}
#endif
