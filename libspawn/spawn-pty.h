/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* spawn-pty.h - a pseudo-terminal for a child
 *
 * SpawnPty holds the two ends of a pseudo-terminal: the master, which the
 * application reads and writes, and the slave, which the child gets as
 * its stdin, stdout and stderr and as its controlling terminal
 * (SPAWN_CHILD_CONTROLLING_TERMINAL).  SpawnProcess uses it for its
 * SPAWN_CHANNEL_PTY channels; spawn_async_fd() users make one themselves.
 */
#pragma once

#if !defined (LIBSPAWN_INSIDE) && !defined (LIBSPAWN_COMPILATION)
#error "Only <libspawn/libspawn.h> can be included directly."
#endif

#include <gio/gio.h>

#include <libspawn/spawn-async.h>

G_BEGIN_DECLS

typedef struct _SpawnPty SpawnPty;

#define SPAWN_TYPE_PTY (spawn_pty_get_type ())
SPAWN_AVAILABLE_IN_0_3
GType spawn_pty_get_type (void);

SPAWN_AVAILABLE_IN_0_3
SpawnPty   *spawn_pty_new (guint16 rows, guint16 columns, GError **error);
SPAWN_AVAILABLE_IN_0_3
SpawnPty   *spawn_pty_ref (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
void        spawn_pty_unref (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
int         spawn_pty_get_master_fd (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
int         spawn_pty_get_slave_fd (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
const char *spawn_pty_get_slave_name (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
void        spawn_pty_close_slave (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
gboolean    spawn_pty_set_size (SpawnPty *pty, guint16 rows, guint16 columns,
                                GError **error);
SPAWN_AVAILABLE_IN_0_3
gboolean    spawn_pty_get_size (SpawnPty *pty, guint16 *rows, guint16 *columns,
                                GError **error);
SPAWN_AVAILABLE_IN_0_3
GBytes     *spawn_pty_read_bytes (SpawnPty *pty, gsize count, GError **error);
SPAWN_AVAILABLE_IN_0_3
GInputStream  *spawn_pty_get_input_stream (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
GOutputStream *spawn_pty_get_output_stream (SpawnPty *pty);
SPAWN_AVAILABLE_IN_0_3
SpawnChild *spawn_pty_spawn (SpawnPty            *pty,
                             const char          *working_directory,
                             const char * const  *argv,
                             const char * const  *envp,
                             GSpawnFlags          flags,
                             SpawnChildFlags      child_flags,
                             GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SpawnPty, spawn_pty_unref)

G_END_DECLS
