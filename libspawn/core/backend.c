/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* backend.c - which backend starts the next child
 *
 * The registry of backends, best first, and the one cache of what their
 * probes said.  The backend is chosen at first use and kept: forced
 * through spawn_set_backend() or LIBSPAWN_BACKEND, else the first of
 * clonefd, autoreap, pidfd, sigchld whose probe says it works on this kernel.
 */
#include "core-private.h"

#include <errno.h>

static const SpawnBackendOps * const backends[] = {
  &_spawn_backend_clonefd,
  &_spawn_backend_autoreap,
  &_spawn_backend_pidfd,
  &_spawn_backend_sigchld,
};

/* Probe results, cached only when they are answers about the kernel. */
enum { PROBE_UNKNOWN, PROBE_YES, PROBE_NO };
static gint probed[G_N_ELEMENTS (backends)];
/* Whether each backend's kernel kill-on-close works here, same states. */
static gint probed_kill_on_close[G_N_ELEMENTS (backends)];
/* The backend in use, as a SpawnBackend; AUTO until decided. */
static gint chosen = SPAWN_BACKEND_AUTO;
static GMutex choose_lock;

/* Asks @probe (NULL: "no") until there is an answer and keeps it in
 * *@state: 0 yes, -ENOSYS no (also for -EINVAL and -EPERM, which say
 * the same of the kernel).  Any other -errno (EMFILE, ENFILE, EAGAIN,
 * ENOMEM: a full fd table, the process limit, memory pressure) is this
 * probe failing, not an answer: returned, not cached, asked again next
 * time. */
static int
backend_probe_cached (gint *state, int (*probe) (void), const char *name,
                      const char *what)
{
  int s = g_atomic_int_get (state);
  int err;

  if (s == PROBE_UNKNOWN)
    {
      err = probe != NULL ? probe () : -ENOSYS;
      if (err != 0 && err != -ENOSYS && err != -EINVAL && err != -EPERM)
        {
          g_debug ("backend %s: %s: probe failed, will retry: %s", name, what,
                   g_strerror (-err));
          return err;
        }
      s = err == 0 ? PROBE_YES : PROBE_NO;
      g_debug ("backend %s: %s: %s", name, what, err == 0 ? "yes" : g_strerror (-err));
      g_atomic_int_set (state, s);
    }
  return s == PROBE_YES ? 0 : -ENOSYS;
}

/**
 * spawn_backend_to_string:
 * @backend: a backend
 *
 * The backend's name, as the `LIBSPAWN_BACKEND` environment variable takes
 * it, for messages and logs.
 *
 * Returns: (nullable): "clonefd", "autoreap", "pidfd", "sigchld" or "auto"; %NULL for a
 *   value that is no backend
 */
const char *
spawn_backend_to_string (SpawnBackend backend)
{
  gsize i;

  if (backend == SPAWN_BACKEND_AUTO)
    return "auto";
  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    if (backends[i]->kind == backend)
      return backends[i]->name;
  return NULL;
}

static gsize
backend_index (SpawnBackend backend)
{
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    if (backends[i]->kind == backend)
      return i;
  g_assert_not_reached ();
}

/* 0: available; -ENOSYS: not on this kernel; another -errno: the probe
 * could not run this time. */
static int
backend_probe (gsize i)
{
  return backend_probe_cached (&probed[i], backends[i]->probe, backends[i]->name,
                               "available");
}

int
_spawn_backend_probe_kill_on_close (const SpawnBackendOps *ops)
{
  /* LIBSPAWN_KILL_ON_CLOSE=pdeathsig forbids the kernel's way, for tests. */
  gboolean forbidden = g_strcmp0 (g_getenv ("LIBSPAWN_KILL_ON_CLOSE"), "pdeathsig") == 0;

  return backend_probe_cached (&probed_kill_on_close[backend_index (ops->kind)],
                               forbidden ? NULL : ops->probe_kill_on_close, ops->name,
                               "kill-on-close by the kernel");
}

/**
 * spawn_backend_is_available:
 * @backend: a backend other than %SPAWN_BACKEND_AUTO
 *
 * Whether @backend works on the running kernel.  The answer is probed once
 * and cached; a probe that could not run (fd table full, process limit,
 * out of memory) gives %FALSE this time and is tried again next time.
 *
 * Returns: %TRUE if [func@Spawn.set_backend] would accept @backend
 */
gboolean
spawn_backend_is_available (SpawnBackend backend)
{
  g_return_val_if_fail (backend != SPAWN_BACKEND_AUTO, FALSE);
  g_return_val_if_fail (spawn_backend_to_string (backend) != NULL, FALSE);

  return backend_probe (backend_index (backend)) == 0;
}

/* A probe that failed for a passing reason is an error for this call,
 * never a fallback: nothing is chosen, and the next call probes again. */
static gboolean
backend_choose (SpawnBackend want, const char *why, GError **error)
{
  gsize i;
  int err;

  for (i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      if (want != SPAWN_BACKEND_AUTO && backends[i]->kind != want)
        continue;
      err = backend_probe (i);
      if (err == 0)
        {
          g_atomic_int_set (&chosen, backends[i]->kind);
          return TRUE;
        }
      if (err != -ENOSYS)
        {
          g_propagate_error (error,
                             _spawn_error_new (-err, "Cannot probe backend %s",
                                               backends[i]->name));
          return FALSE;
        }
      if (want != SPAWN_BACKEND_AUTO)
        {
          g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_NOSYS,
                       "Backend %s (%s) is not available on this kernel",
                       spawn_backend_to_string (want), why);
          return FALSE;
        }
    }
  g_assert_not_reached (); /* sigchld is always there */
}

const SpawnBackendOps *
_spawn_backend_current (GError **error)
{
  const char *env;
  SpawnBackend want = SPAWN_BACKEND_AUTO;
  gboolean ok = TRUE;
  gsize i;

  if (g_atomic_int_get (&chosen) == SPAWN_BACKEND_AUTO)
    {
      g_mutex_lock (&choose_lock);
      if (g_atomic_int_get (&chosen) == SPAWN_BACKEND_AUTO)
        {
          env = g_getenv ("LIBSPAWN_BACKEND");
          if (env != NULL && *env != '\0' && g_strcmp0 (env, "auto") != 0)
            {
              for (i = 0; i < G_N_ELEMENTS (backends); i++)
                if (g_str_equal (env, backends[i]->name))
                  want = backends[i]->kind;
              if (want == SPAWN_BACKEND_AUTO)
                {
                  g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                               "LIBSPAWN_BACKEND=%s: not one of clonefd, "
                               "autoreap, pidfd, sigchld, auto", env);
                  ok = FALSE;
                }
            }
          if (ok)
            ok = backend_choose (want, "forced by LIBSPAWN_BACKEND", error);
        }
      g_mutex_unlock (&choose_lock);
      if (!ok)
        return NULL;
    }
  return backends[backend_index (g_atomic_int_get (&chosen))];
}

/**
 * spawn_get_backend:
 *
 * The backend new children are started with, chosen now if it has not been
 * yet.  If `LIBSPAWN_BACKEND` names a backend that is not available, or
 * a probe could not run (fd table full, process limit), this returns
 * %SPAWN_BACKEND_AUTO and [func@Spawn.async_fd] fails with the reason.
 *
 * Returns: the backend in use
 */
SpawnBackend
spawn_get_backend (void)
{
  if (_spawn_backend_current (NULL) == NULL)
    return SPAWN_BACKEND_AUTO;
  return g_atomic_int_get (&chosen);
}

/**
 * spawn_set_backend:
 * @backend: the backend to use from now on, or %SPAWN_BACKEND_AUTO for the
 *   best one available
 * @error: return location for a #GError
 *
 * Forces a backend for the children started from now on (those already
 * running keep theirs).  Overrides `LIBSPAWN_BACKEND`.  A backend that is not
 * available on this kernel is refused with %SPAWN_ERROR_NOSYS; nothing falls
 * back silently.  A probe that could not run fails with its own error
 * (%SPAWN_ERROR_MFILE, %SPAWN_ERROR_AGAIN, %SPAWN_ERROR_NOMEM...) and is
 * tried again by the next call.
 *
 * Returns: %TRUE if @backend is now in use
 */
gboolean
spawn_set_backend (SpawnBackend backend, GError **error)
{
  gboolean ok;

  g_return_val_if_fail (spawn_backend_to_string (backend) != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&choose_lock);
  ok = backend_choose (backend, "forced by spawn_set_backend()", error);
  g_mutex_unlock (&choose_lock);
  return ok;
}
