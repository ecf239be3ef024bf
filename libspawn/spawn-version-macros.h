/* spawn-version-macros.h - availability and deprecation macros, as GLib's
 * gversionmacros.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 *
 * Every public function is declared with the macro of the release that
 * added it (SPAWN_AVAILABLE_IN_0_2), or, once deprecated, of the release
 * that deprecated it (SPAWN_DEPRECATED_IN_0_4_FOR (spawn_new_thing)).  A
 * program states the range of libspawn it supports before it includes
 * <libspawn/libspawn.h>:
 *
 *     #define SPAWN_VERSION_MIN_REQUIRED SPAWN_VERSION_0_2
 *     #define SPAWN_VERSION_MAX_ALLOWED  SPAWN_VERSION_0_2
 *
 * and the compiler then warns about a function added after MAX_ALLOWED
 * (-Wdeprecated-declarations: "Not available before 0.4"), or deprecated
 * in MIN_REQUIRED or earlier.  Both default to the version of the headers.
 * SPAWN_DISABLE_DEPRECATION_WARNINGS silences both.
 *
 * Each macro also exports the symbol (visibility "default"): the library
 * is built with -fvisibility=hidden, so a function without one of these
 * macros is not part of the ABI.  tests/abi-check makes sure that every
 * public declaration has one.
 *
 * A new release X.Y adds SPAWN_VERSION_X_Y and the SPAWN_AVAILABLE_IN_X_Y,
 * SPAWN_DEPRECATED_IN_X_Y and SPAWN_DEPRECATED_IN_X_Y_FOR block below,
 * copied from 0.2's.
 */
#pragma once

#if !defined (LIBSPAWN_INSIDE) && !defined (LIBSPAWN_COMPILATION)
#error "Only <libspawn/libspawn.h> can be included directly."
#endif

#include <glib.h>

#include <libspawn/spawn-version.h>

/* A version as a number the preprocessor can compare. */
#define SPAWN_ENCODE_VERSION(major,minor) ((major) << 16 | (minor) << 8)

/* The first release with these macros and with the soname libspawn-1.so.1. */
#define SPAWN_VERSION_0_2 (SPAWN_ENCODE_VERSION (0, 2))
/* Additions to 0.2's API; the soname stays libspawn-1.so.1. */
#define SPAWN_VERSION_0_3 (SPAWN_ENCODE_VERSION (0, 3))

/* The version of the headers being compiled against. */
#define SPAWN_VERSION_CUR_STABLE \
  (SPAWN_ENCODE_VERSION (SPAWN_MAJOR_VERSION, SPAWN_MINOR_VERSION))

/* The oldest libspawn the program must compile against: functions
 * deprecated in it or earlier warn.  (A SPAWN_VERSION_X_Y these headers do
 * not know is 0 to the preprocessor: taken as "the newest".) */
#ifndef SPAWN_VERSION_MIN_REQUIRED
# define SPAWN_VERSION_MIN_REQUIRED (SPAWN_VERSION_CUR_STABLE)
#elif SPAWN_VERSION_MIN_REQUIRED == 0
# undef  SPAWN_VERSION_MIN_REQUIRED
# define SPAWN_VERSION_MIN_REQUIRED (SPAWN_VERSION_CUR_STABLE)
#endif

/* The newest libspawn API the program may use: later functions warn. */
#if !defined (SPAWN_VERSION_MAX_ALLOWED) || (SPAWN_VERSION_MAX_ALLOWED == 0)
# undef  SPAWN_VERSION_MAX_ALLOWED
# if SPAWN_VERSION_MIN_REQUIRED > SPAWN_VERSION_CUR_STABLE
#  define SPAWN_VERSION_MAX_ALLOWED (SPAWN_VERSION_MIN_REQUIRED)
# else
#  define SPAWN_VERSION_MAX_ALLOWED (SPAWN_VERSION_CUR_STABLE)
# endif
#endif

#if SPAWN_VERSION_MAX_ALLOWED < SPAWN_VERSION_MIN_REQUIRED
#error "SPAWN_VERSION_MAX_ALLOWED must be >= SPAWN_VERSION_MIN_REQUIRED"
#endif
#if SPAWN_VERSION_MIN_REQUIRED < SPAWN_VERSION_0_2
#error "SPAWN_VERSION_MIN_REQUIRED must be >= SPAWN_VERSION_0_2: 0.1 had another header and soname"
#endif

/* What every macro below ends in: an exported declaration.  GLib's
 * _GLIB_EXTERN; the attribute is harmless outside the library. */
#define _SPAWN_EXTERN __attribute__ ((visibility ("default"))) extern

#ifdef SPAWN_DISABLE_DEPRECATION_WARNINGS
# define SPAWN_DEPRECATED _SPAWN_EXTERN
# define SPAWN_DEPRECATED_FOR(f) _SPAWN_EXTERN
# define SPAWN_UNAVAILABLE(maj,min) _SPAWN_EXTERN
#else
# define SPAWN_DEPRECATED G_DEPRECATED _SPAWN_EXTERN
# define SPAWN_DEPRECATED_FOR(f) G_DEPRECATED_FOR (f) _SPAWN_EXTERN
# define SPAWN_UNAVAILABLE(maj,min) G_UNAVAILABLE (maj, min) _SPAWN_EXTERN
#endif

/* For declarations whose release the writer cannot know: the GType
 * functions glib-mkenums generates (GLib's GLIB_AVAILABLE_IN_ALL). */
#define SPAWN_AVAILABLE_IN_ALL _SPAWN_EXTERN

/* 0.2 */
#if SPAWN_VERSION_MIN_REQUIRED >= SPAWN_VERSION_0_2
# define SPAWN_DEPRECATED_IN_0_2 SPAWN_DEPRECATED
# define SPAWN_DEPRECATED_IN_0_2_FOR(f) SPAWN_DEPRECATED_FOR (f)
#else
# define SPAWN_DEPRECATED_IN_0_2 _SPAWN_EXTERN
# define SPAWN_DEPRECATED_IN_0_2_FOR(f) _SPAWN_EXTERN
#endif
#if SPAWN_VERSION_MAX_ALLOWED < SPAWN_VERSION_0_2
# define SPAWN_AVAILABLE_IN_0_2 SPAWN_UNAVAILABLE (0, 2)
#else
# define SPAWN_AVAILABLE_IN_0_2 _SPAWN_EXTERN
#endif

/* 0.3 */
#if SPAWN_VERSION_MIN_REQUIRED >= SPAWN_VERSION_0_3
# define SPAWN_DEPRECATED_IN_0_3 SPAWN_DEPRECATED
# define SPAWN_DEPRECATED_IN_0_3_FOR(f) SPAWN_DEPRECATED_FOR (f)
#else
# define SPAWN_DEPRECATED_IN_0_3 _SPAWN_EXTERN
# define SPAWN_DEPRECATED_IN_0_3_FOR(f) _SPAWN_EXTERN
#endif
#if SPAWN_VERSION_MAX_ALLOWED < SPAWN_VERSION_0_3
# define SPAWN_AVAILABLE_IN_0_3 SPAWN_UNAVAILABLE (0, 3)
#else
# define SPAWN_AVAILABLE_IN_0_3 _SPAWN_EXTERN
#endif
