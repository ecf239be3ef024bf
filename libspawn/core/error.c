/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* error.c - SPAWN_ERROR: errno in, GError out, once, at the public edge
 *
 * Inside the library functions return 0 or -errno; _spawn_error_new()
 * turns an errno into the matching SpawnError code with a message that
 * says what failed.
 */
#include "core-private.h"

#include <errno.h>
#include <stdarg.h>

/**
 * spawn_error_quark:
 *
 * The error domain of #SpawnError, %SPAWN_ERROR.
 *
 * Returns: the #GQuark of the domain
 */
G_DEFINE_QUARK (spawn-error-quark, spawn_error)

static int
error_code (int errnum)
{
  switch (errnum)
    {
    case ENOENT: return SPAWN_ERROR_NOENT;
    case EACCES: return SPAWN_ERROR_ACCES;
    case EPERM: return SPAWN_ERROR_PERM;
    case ENOEXEC: return SPAWN_ERROR_NOEXEC;
    case E2BIG: return SPAWN_ERROR_TOO_BIG;
    case ENOTDIR: return SPAWN_ERROR_NOTDIR;
    case EISDIR: return SPAWN_ERROR_ISDIR;
    case ELOOP: return SPAWN_ERROR_LOOP;
    case ENAMETOOLONG: return SPAWN_ERROR_NAMETOOLONG;
    case ETXTBSY: return SPAWN_ERROR_TXTBSY;
    case ELIBBAD: return SPAWN_ERROR_LIBBAD;
    case ENOMEM: return SPAWN_ERROR_NOMEM;
    case EMFILE: return SPAWN_ERROR_MFILE;
    case ENFILE: return SPAWN_ERROR_NFILE;
    case EAGAIN: return SPAWN_ERROR_AGAIN;
    case EINVAL: return SPAWN_ERROR_INVAL;
    case ESRCH: return SPAWN_ERROR_SRCH;
    case ENOSYS: return SPAWN_ERROR_NOSYS;
    case ECHILD: return SPAWN_ERROR_STATUS_LOST;
    default: return SPAWN_ERROR_FAILED;
    }
}

GError *
_spawn_error_new (int errnum, const char *format, ...)
{
  va_list ap;
  char *msg;
  GError *error;

  va_start (ap, format);
  msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  error = g_error_new (SPAWN_ERROR, error_code (errnum), "%s: %s", msg,
                       errnum == ECHILD
                         ? "exit status lost: reaped by someone else"
                         : g_strerror (errnum));
  g_free (msg);
  return error;
}
