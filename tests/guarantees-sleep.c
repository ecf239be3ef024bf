/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* guarantees-sleep [root]: sleeps until killed, for tests/guarantees.c.
 *
 * With "root", a setuid-root copy first makes itself fully root
 * (setresuid(0, 0, 0)), as su and sudo do, so that its real uid is no
 * longer its parent's.  It needs nothing but libc, so that a setuid-root
 * copy of it runs: a setuid program ignores $ORIGIN in its run path, which
 * would keep it from finding a libspawn in the build tree.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "root") == 0 && setresuid (0, 0, 0) < 0)
    return 1;
  for (;;)
    pause ();
}
