/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* core-private.h - what the files of the core share
 *
 * The core is spawn_async_fd() and SpawnChild: backend.c (which backend,
 * probed once), spawn.c (spawn_async_fd_full()), child.c (the handle, its
 * watch and the reaper), child-hub.c (one epoll set per main context),
 * child-wait.c (blocking and async waits),
 * pdeathsig-thread.c (kill-on-close without the kernel's help) and
 * error.c.  It sees the backends' contract (backends/backend.h) and base/
 * below it; the layer above sees only spawn-core.h.
 */
#pragma once

#include "backend.h"
#include "spawn-core.h"

/* backend.c */
/* The backend for the next spawn, chosen on first use (forced, or the
 * first that works here); NULL with @error if none can be had now. */
const SpawnBackendOps *_spawn_backend_current (GError **error);
/* 0: the kernel kills @ops's children when their fd goes; -ENOSYS: not
 * here, PR_SET_PDEATHSIG it is; another -errno: the probe failed this
 * time (not cached). */
int _spawn_backend_probe_kill_on_close (const SpawnBackendOps *ops);

/* error.c */
/* What failed in the child at @step, as GLib reports it where it has a
 * code (G_SPAWN_ERROR: exec, chdir, the descriptors), else a SPAWN_ERROR;
 * the message names @argv0 (and @working_directory for chdir). */
GError *_spawn_error_new_exec (SpawnExecStep step, int errnum,
                               const char *working_directory, const char *argv0);

/* child.c */
/* A new handle, one reference, not started: start() fills it. */
SpawnChild *_spawn_child_new (const SpawnBackendOps *ops, const char *program,
                              gboolean kill_on_close);

/* pdeathsig-thread.c */
/* ops->start (child, plan, stack, stack_size) run by the one thread of
 * ours that never exits, so that PR_SET_PDEATHSIG, which fires when the
 * parent *thread* exits, fires only when the process dies.  Sets
 * plan->pdeathsig and parent_pid, and the affinity and nice value to
 * copy.  -EPERM with @error set where the calling thread's confinement
 * (seccomp, no_new_privs, capabilities, namespaces, cwd, root, umask)
 * differs from that thread's. */
int _spawn_pdeathsig_thread_start (const SpawnBackendOps *ops, SpawnChild *child,
                                   SpawnExecPlan *plan, void *stack, gsize stack_size,
                                   GError **error);
