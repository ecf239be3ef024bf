/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* error.c - errno in, GError out, once, at the public edge
 *
 * Inside the library functions return 0 or -errno; _spawn_error_new()
 * turns an errno into the matching SpawnError code with a message that
 * says what failed.  What failed in the child between clone and exec
 * (_spawn_error_new_exec()) is reported as GLib reports it, in
 * G_SPAWN_ERROR with GLib's code, so that code ported from g_spawn_*() or
 * GSubprocess keeps matching; SPAWN_ERROR keeps what GLib has no code for.
 * One table maps an errno to both domains.
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

/* -1: GLib has no code of its own for it (G_SPAWN_ERROR_FAILED). */
static const struct {
  int errnum;
  SpawnError code;
  int g_spawn_code;
} error_codes[] = {
  { ENOENT, SPAWN_ERROR_NOENT, G_SPAWN_ERROR_NOENT },
  { EACCES, SPAWN_ERROR_ACCES, G_SPAWN_ERROR_ACCES },
  { EPERM, SPAWN_ERROR_PERM, G_SPAWN_ERROR_PERM },
  { ENOEXEC, SPAWN_ERROR_NOEXEC, G_SPAWN_ERROR_NOEXEC },
  { E2BIG, SPAWN_ERROR_TOO_BIG, G_SPAWN_ERROR_TOO_BIG },
  { ENOTDIR, SPAWN_ERROR_NOTDIR, G_SPAWN_ERROR_NOTDIR },
  { EISDIR, SPAWN_ERROR_ISDIR, G_SPAWN_ERROR_ISDIR },
  { ELOOP, SPAWN_ERROR_LOOP, G_SPAWN_ERROR_LOOP },
  { ENAMETOOLONG, SPAWN_ERROR_NAMETOOLONG, G_SPAWN_ERROR_NAMETOOLONG },
  { ETXTBSY, SPAWN_ERROR_TXTBSY, G_SPAWN_ERROR_TXTBUSY },
  { ELIBBAD, SPAWN_ERROR_LIBBAD, G_SPAWN_ERROR_LIBBAD },
  { ENOMEM, SPAWN_ERROR_NOMEM, G_SPAWN_ERROR_NOMEM },
  { EMFILE, SPAWN_ERROR_MFILE, G_SPAWN_ERROR_MFILE },
  { ENFILE, SPAWN_ERROR_NFILE, G_SPAWN_ERROR_NFILE },
  { EAGAIN, SPAWN_ERROR_AGAIN, -1 },
  { EINVAL, SPAWN_ERROR_INVAL, G_SPAWN_ERROR_INVAL },
  { EIO, SPAWN_ERROR_FAILED, G_SPAWN_ERROR_IO },
  { ESRCH, SPAWN_ERROR_SRCH, -1 },
  { ENOSYS, SPAWN_ERROR_NOSYS, -1 },
  { ECHILD, SPAWN_ERROR_STATUS_LOST, -1 },
};

/* The one errno-to-code helper: our code for @errnum, and GLib's in
 * *@g_spawn_code (G_SPAWN_ERROR_FAILED where GLib has none). */
static SpawnError
error_code (int errnum, int *g_spawn_code)
{
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (error_codes); i++)
    if (error_codes[i].errnum == errnum)
      {
        *g_spawn_code = error_codes[i].g_spawn_code >= 0 ? error_codes[i].g_spawn_code
                                                         : G_SPAWN_ERROR_FAILED;
        return error_codes[i].code;
      }
  *g_spawn_code = G_SPAWN_ERROR_FAILED;
  return SPAWN_ERROR_FAILED;
}

static const char *
error_describe (int errnum)
{
  return errnum == ECHILD ? "exit status lost: reaped by someone else" : g_strerror (errnum);
}

GError *
_spawn_error_new (int errnum, const char *format, ...)
{
  va_list ap;
  char *msg;
  GError *error;
  int unused;

  va_start (ap, format);
  msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  error = g_error_new (SPAWN_ERROR, error_code (errnum, &unused), "%s: %s", msg,
                       error_describe (errnum));
  g_free (msg);
  return error;
}

GError *
_spawn_error_new_exec (SpawnExecStep step, int errnum, const char *working_directory,
                       const char *argv0)
{
  int g_spawn_code;
  SpawnError code = error_code (errnum, &g_spawn_code);

  switch (step)
    {
    case SPAWN_EXEC_STEP_EXEC:
      return g_error_new (G_SPAWN_ERROR, g_spawn_code, "Failed to execute “%s”: %s",
                          argv0, error_describe (errnum));
    case SPAWN_EXEC_STEP_CHDIR:
      return g_error_new (G_SPAWN_ERROR, G_SPAWN_ERROR_CHDIR,
                          "Failed to change to directory “%s” to run “%s”: %s",
                          working_directory, argv0, error_describe (errnum));
    case SPAWN_EXEC_STEP_FDS:
      /* GLib's code for a dup2() that failed in the child. */
      return g_error_new (G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                          "Failed to set up the file descriptors of “%s”: %s",
                          argv0, error_describe (errnum));
    case SPAWN_EXEC_STEP_AFFINITY:
    case SPAWN_EXEC_STEP_NICE:
    case SPAWN_EXEC_STEP_KILL_ON_CLOSE:
    default:
      /* Steps GLib does not have. */
      return g_error_new (SPAWN_ERROR, code, "%s “%s”: %s", _spawn_exec_step_describe (step),
                          argv0, error_describe (errnum));
    }
}
