/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* version.c - which libspawn is running, for programs that ask
 *
 * SPAWN_CHECK_VERSION() tells a program which headers it was compiled
 * against; spawn_check_version() tells it whether the library it runs with
 * will do, as glib_check_version() does for GLib.  The numbers are those
 * of the build (libspawn/meson.build passes them): the running library's,
 * not the caller's headers'.
 */
#include "core-private.h"

/* <0, 0 or >0 as @a is before, the same as or after @b. */
static int
version_compare (guint a_major, guint a_minor, guint a_micro,
                 guint b_major, guint b_minor, guint b_micro)
{
  if (a_major != b_major)
    return a_major < b_major ? -1 : 1;
  if (a_minor != b_minor)
    return a_minor < b_minor ? -1 : 1;
  if (a_micro != b_micro)
    return a_micro < b_micro ? -1 : 1;
  return 0;
}

/**
 * spawn_check_version:
 * @required_major: the major version the program needs
 * @required_minor: the minor version the program needs
 * @required_micro: the micro version the program needs
 *
 * Whether the libspawn the program runs with is compatible with the
 * version it requires, as [func@GLib.check_version] answers for GLib:
 * it is if it is that version or a later one with the same ABI (the same
 * soname, `libspawn-1.so.1` since 0.2.0; see docs/versions.md).  A program
 * usually passes the version of the headers it was built with:
 *
 *     const char *why = spawn_check_version (SPAWN_MAJOR_VERSION,
 *                                            SPAWN_MINOR_VERSION,
 *                                            SPAWN_MICRO_VERSION);
 *
 * The macros (%SPAWN_MAJOR_VERSION, [func@Spawn.CHECK_VERSION]) say which
 * headers a program is compiled against; this says which library it runs
 * with, which may be newer.
 *
 * Returns: (transfer none) (nullable): %NULL if the running libspawn is
 *   compatible; else why not, naming its version ("libspawn version too
 *   old (this is 0.3.0)" when it is older than required, "libspawn
 *   version too new ..." when the required version predates its ABI): a
 *   static string, owned by libspawn
 *
 * Since: 0.3
 */
const char *
spawn_check_version (guint required_major, guint required_minor, guint required_micro)
{
  if (version_compare (required_major, required_minor, required_micro,
                       SPAWN_MAJOR_VERSION, SPAWN_MINOR_VERSION, SPAWN_MICRO_VERSION) > 0)
    return "libspawn version too old (this is " SPAWN_VERSION_STRING ")";
  if (version_compare (required_major, required_minor, required_micro,
                       SPAWN_ABI_SINCE_MAJOR, SPAWN_ABI_SINCE_MINOR, SPAWN_ABI_SINCE_MICRO) < 0)
    return "libspawn version too new (this is " SPAWN_VERSION_STRING ", whose ABI, "
           SPAWN_SONAME ", began with " SPAWN_ABI_SINCE_STRING ")";
  return NULL;
}
