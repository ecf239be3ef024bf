/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* libspawn.h - the one header of libspawn
 *
 *     #include <libspawn/libspawn.h>   // pkg-config --cflags --libs libspawn-1
 *
 * spawn-async.h: spawn_async_fd(), SpawnChild and its watch;
 * spawn-pty.h: SpawnPty, a pseudo-terminal for a child;
 * spawn-process.h: SpawnProcess, the QProcess-style object;
 * spawn-enum-types.h (generated): the GTypes of their enums and flags.
 *
 * The headers live in a directory of their own and none is named like a
 * system header, so that <spawn.h> stays POSIX's in programs that use both.
 */
#pragma once

#define LIBSPAWN_INSIDE
#include <libspawn/spawn-version.h>
#include <libspawn/spawn-version-macros.h>
#include <libspawn/spawn-async.h>
#include <libspawn/spawn-pty.h>
#include <libspawn/spawn-process.h>
#include <libspawn/spawn-job.h>
#include <libspawn/spawn-enum-types.h>
#undef LIBSPAWN_INSIDE
