/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* What the running kernel offers, checked against what it should offer.
 *
 * tests/run-guest tells the guest which variant it booted
 * (LIBSPAWN_VM_KERNEL) and whether kernel/patches/ holds a series
 * (LIBSPAWN_SERIES); on the host neither is set.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <libspawn/libspawn.h>

#include "clone4.h"

static const char *
kernel_variant (void)
{
  const char *v = g_getenv ("LIBSPAWN_VM_KERNEL");

  return v ? v : "host";
}

/* modern, modern-patched and modern-debug boot Debian's 7.2, without or
 * with kernel/patches-7.2. */
static gboolean
kernel_is_modern (void)
{
  return g_str_has_prefix (kernel_variant (), "modern");
}

static SpawnClone4Support
expected_support (void)
{
  const char *v = kernel_variant ();

  if (g_strcmp0 (g_getenv ("LIBSPAWN_SERIES"), "yes") != 0)
    return SPAWN_CLONE4_ABSENT;
  if (g_str_equal (v, "patched") || g_str_equal (v, "debug"))
    return SPAWN_CLONE4_WITH_FD;
  if (g_str_equal (v, "noclonefd"))
    return SPAWN_CLONE4_NO_FD;
  return SPAWN_CLONE4_ABSENT;
}

static void
test_clone4_support (void)
{
  SpawnClone4Support want = expected_support ();
  SpawnClone4Support got = _spawn_clone4_probe ();

  g_test_summary ("clone4/CLONE_FD are there exactly on the kernels built "
                  "with the series, and stock kernels answer ENOSYS");
  g_test_message ("kernel %s: want %s, got %s", kernel_variant (),
                  _spawn_clone4_support_to_string (want),
                  _spawn_clone4_support_to_string (got));
  g_assert_cmpint (got, ==, want);
  /* The probe answers the same every time. */
  g_assert_cmpint (_spawn_clone4_probe (), ==, got);
}

static void
test_release (void)
{
  struct utsname u;
  const char *want;

  g_test_summary ("every guest variant boots a 6.1 kernel, but modern, "
                  "modern-patched and modern-debug, which boot 7.2, and "
                  "lts612, which boots 6.12");
  if (g_str_equal (kernel_variant (), "host"))
    {
      g_test_skip ("on the host kernel, not in a guest");
      return;
    }
  want = kernel_is_modern () ? "7.2." :
         g_str_equal (kernel_variant (), "lts612") ? "6.12." : "6.1.";
  g_assert_cmpint (uname (&u), ==, 0);
  g_test_message ("release %s, want %s*", u.release, want);
  g_assert_true (g_str_has_prefix (u.release, want));
}

/* Whether the running kernel's release is at least 7.1. */
static gboolean
release_has_autoreap (void)
{
  struct utsname u;
  int major = 0, minor = 0;

  g_assert_cmpint (uname (&u), ==, 0);
  if (sscanf (u.release, "%d.%d", &major, &minor) != 2)
    return FALSE;
  return major > 7 || (major == 7 && minor >= 1);
}

static void
test_autoreap_support (void)
{
  gboolean want = release_has_autoreap ();
  gboolean got = spawn_backend_is_available (SPAWN_BACKEND_AUTOREAP);

  g_test_summary ("the autoreap backend (clone3 CLONE_AUTOREAP) is there "
                  "exactly on kernels from 7.1 on: the modern guest, not "
                  "the 6.1 ones");
  g_test_message ("kernel %s: want %s, got %s", kernel_variant (),
                  want ? "yes" : "no", got ? "yes" : "no");
  if (kernel_is_modern ())
    g_assert_true (want);
  g_assert_cmpint (got, ==, want);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/spawn/kernel/clone4-support", test_clone4_support);
  g_test_add_func ("/spawn/kernel/release", test_release);
  g_test_add_func ("/spawn/kernel/autoreap-support", test_autoreap_support);
  return g_test_run ();
}
