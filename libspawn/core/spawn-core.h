/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn-core.h - what the core offers the layer above it (process/)
 *
 * The public API (spawn_async_fd_full(), SpawnChild, its watch) plus the
 * few private calls SpawnProcess needs.  SpawnChild stays opaque here:
 * the backend table and the child's fields are the core's business
 * (core-private.h, which process/ cannot include: its include path has
 * neither backends/ nor base/).
 */
#pragma once

#include <libspawn/spawn-async.h>
#include <libspawn/spawn-enum-types.h>

/* error.c: a SPAWN_ERROR for @errnum ("FORMAT: strerror"); the one
 * errno-to-GError helper of the library. */
GError *_spawn_error_new (int errnum, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* child.c */
/* Collects @child (once, under its lock) and copies how it ended into
 * @info: 0; -EAGAIN while it runs; -ECHILD when its status was lost. */
int _spawn_child_collect (SpawnChild *child, SpawnExitInfo *info);
/* How often @child must be looked at even without its fd turning
 * readable, in ms; 0: never (see SpawnBackendOps.recheck_interval_ms). */
guint _spawn_child_get_recheck_interval (SpawnChild *child);
/* Takes a reference on @child and keeps it watched from a private thread
 * until it ends, so that it is reaped and not killed on close. */
void _spawn_child_keep_alive (SpawnChild *child);
GMainContext *_spawn_child_reaper_context (void);

/* pty-stream.c: a GUnixInputStream on a pseudo-terminal's master @fd
 * (which it takes and closes) whose reads give the master's EIO as end
 * of file. */
GInputStream *_spawn_pty_input_stream_new (int fd);

/* child-hub.c: one epoll set per GMainContext (docs/design.md,
 * "Thousands of children").  A link puts @fd in @context's set; when it
 * turns readable, @target's ready time is set to 0 (once: rearm asks
 * again).  Free it, at the latest, from @target's dispose function. */
typedef struct _SpawnReadyLink SpawnReadyLink;
SpawnReadyLink *_spawn_ready_link_new (GSource *target, int fd, GMainContext *context,
                                       int *err);
gboolean _spawn_ready_link_take_fired (SpawnReadyLink *link);
void _spawn_ready_link_rearm (SpawnReadyLink *link);
void _spawn_ready_link_free (SpawnReadyLink *link);
/* Or, with no GSource: the hub of (@context, @priority) calls @func. */
typedef void (*SpawnReadyFunc) (gpointer data);
SpawnReadyLink *_spawn_ready_link_new_func (int fd, GMainContext *context, int priority,
                                            SpawnReadyFunc func, gpointer data,
                                            gpointer (*data_ref) (gpointer data),
                                            GDestroyNotify data_unref, int *err);

/* Defined in base/fd.c; offered here so that process/ needs no view of
 * base/. */
int _spawn_fd_above_stdio (int fd);
int _spawn_fd_pipe (int p[2]);
