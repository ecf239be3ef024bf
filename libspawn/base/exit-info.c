/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* exit-info.c - SpawnExitInfo: how a child ended, with its CPU times
 *
 * Filled by the backends from what the kernel says (a wait status, a
 * siginfo code, a clone fd's report), and the public boxed type.
 */
#include "base.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

void
_spawn_exit_info_from_code (SpawnExitInfo *info, int code, int status)
{
  memset (info, 0, sizeof (*info));
  info->status = status;
  switch (code)
    {
    case CLD_KILLED:
      info->kind = SPAWN_EXIT_KILLED;
      break;
    case CLD_DUMPED:
      info->kind = SPAWN_EXIT_DUMPED;
      break;
    default:
      info->kind = SPAWN_EXIT_EXITED;
      break;
    }
}

void
_spawn_exit_info_from_wait_status (SpawnExitInfo *info, int wait_status,
                                   const struct rusage *ru)
{
  if (WIFSIGNALED (wait_status))
    _spawn_exit_info_from_code (info,
                                WCOREDUMP (wait_status) ? CLD_DUMPED : CLD_KILLED,
                                WTERMSIG (wait_status));
  else
    _spawn_exit_info_from_code (info, CLD_EXITED, WEXITSTATUS (wait_status));
  if (ru != NULL)
    _spawn_exit_info_set_rusage (info, ru);
}

void
_spawn_exit_info_set_rusage (SpawnExitInfo *info, const struct rusage *ru)
{
  info->utime_usec = ru->ru_utime.tv_sec * G_USEC_PER_SEC + ru->ru_utime.tv_usec;
  info->stime_usec = ru->ru_stime.tv_sec * G_USEC_PER_SEC + ru->ru_stime.tv_usec;
  info->have_times = TRUE;
}

G_DEFINE_BOXED_TYPE (SpawnExitInfo, spawn_exit_info, spawn_exit_info_copy, spawn_exit_info_free)

/**
 * spawn_exit_info_copy:
 * @info: how a child ended
 *
 * Copies @info, for a binding or a closure that keeps it beyond the
 * callback.
 *
 * Returns: (transfer full): a copy of @info, for [method@Spawn.ExitInfo.free]
 */
SpawnExitInfo *
spawn_exit_info_copy (const SpawnExitInfo *info)
{
  g_return_val_if_fail (info != NULL, NULL);
  return g_memdup2 (info, sizeof *info);
}

/**
 * spawn_exit_info_free:
 * @info: (transfer full): a copy from [method@Spawn.ExitInfo.copy]
 *
 * Frees a copy made by [method@Spawn.ExitInfo.copy].
 */
void
spawn_exit_info_free (SpawnExitInfo *info)
{
  g_free (info);
}

/**
 * spawn_exit_info_to_wait_status:
 * @info: how a child ended
 *
 * The status waitpid() would have given, for code that passes it on to
 * [func@GLib.spawn_check_wait_status] or tests it with WIFEXITED() and friends.
 *
 * Returns: a waitpid()-style status
 */
int
spawn_exit_info_to_wait_status (const SpawnExitInfo *info)
{
  g_return_val_if_fail (info != NULL, 0);

  switch (info->kind)
    {
    case SPAWN_EXIT_KILLED:
      return info->status & 0x7f;
    case SPAWN_EXIT_DUMPED:
      return (info->status & 0x7f) | 0x80;
    case SPAWN_EXIT_EXITED:
    default:
      return (info->status & 0xff) << 8;
    }
}
