/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* kernel-info: which kernel is this, and what can it do for libspawn?
 *
 * Prints the kernel release and whether clone4(), CLONE_FD and pidfd_open()
 * are there.  vm/demo runs it in the guest on the patched kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "clone4.h"

int
main (void)
{
  struct utsname u;
  long fd;

  if (uname (&u) < 0)
    {
      perror ("uname");
      return 1;
    }
  printf ("kernel:     %s %s %s\n", u.sysname, u.release, u.version);
  printf ("clone4:     %s\n",
          _spawn_clone4_support_to_string (_spawn_clone4_probe ()));

  fd = syscall (SYS_pidfd_open, getpid (), 0);
  printf ("pidfd_open: %s\n", fd >= 0 ? "yes" : strerror (errno));
  if (fd >= 0)
    close (fd);
  return 0;
}
