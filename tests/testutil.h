/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* testutil.h - what the test programs share (spawn-test, kill-test and the
 * process-*-test programs): the helper program, one run of every case per
 * backend, isolation in a subprocess, threads with main contexts of their
 * own, and what the system sees of our children and descriptors.
 */
#pragma once

#include <glib.h>

#include <libspawn/libspawn.h>

G_BEGIN_DECLS

/* spawn-helper, next to the test program; set by testutil_init(). */
extern const char *testutil_helper;

typedef struct {
  const char *name;         /* the path below the prefix: "case", "area/case" */
  GTestDataFunc func;       /* its data is for testutil_backend() */
} TestutilCase;

void testutil_init (int *argc, char ***argv);
void testutil_add_backend_cases (const char *prefix, const TestutilCase *cases,
                                 gsize n_cases);
SpawnBackend testutil_backend (gconstpointer data);
gboolean testutil_use_backend (gconstpointer data);
gboolean testutil_isolated (void);
gboolean testutil_isolated_output (const char *out, const char *err);
void testutil_skip_isolated (const char *reason);
/* SpawnProcess for "spawn-helper CMD ARGS..." and for "sh -c SCRIPT". */
SpawnProcess *testutil_helper_process (const char *cmd, ...) G_GNUC_NULL_TERMINATED;
SpawnProcess *testutil_sh_process (const char *script);
/* spawn_process_start(), which must succeed. */
void testutil_start_ok (SpawnProcess *proc);
void testutil_run_in_threads (guint n_threads, int (*body) (guint index));
int testutil_count_fds (void);
SpawnChild *testutil_start_helper (const char *cmd, const char *arg);
int testutil_count_epoll_fds (void);
void testutil_wait_readable (SpawnChild *child);
guint testutil_mark_source_id (GMainContext *ctx);
void testutil_print_fds (void);
void testutil_assert_no_children (void);
/* Whether the running kernel reports CPU times in PIDFD_GET_INFO's exit
 * information (kernel/patches-7.2), asked here without libspawn; and so
 * whether @backend's SpawnExitInfo has them (autoreap only there). */
gboolean testutil_kernel_has_exit_cputime (void);
gboolean testutil_backend_has_times (SpawnBackend backend);
/* Ends the process whose PID a test's shell wrote to @path (a background
 * job left holding a pipe), which must still run, and removes @path. */
void testutil_kill_pidfile (const char *path);
/* A mount namespace of our own whose mounts propagate nowhere. */
int testutil_unshare_private_mounts (void);

G_END_DECLS
