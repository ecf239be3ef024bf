/* spawn-process-status.c - GSubprocess's status accessors on SpawnProcess
 *
 * g_subprocess_get_if_exited() and friends, for code (and bindings) that
 * come from GSubprocess: thin reads of the SpawnExitInfo the process kept,
 * on top of the public getters only.  GSubprocess makes "the process has
 * finished" a precondition of each; these answer FALSE, 0 or -1 instead,
 * as spawn_process_get_exit_code() always did, so a binding cannot crash
 * the program by asking too early (docs/process.md).
 */
#include "process-private.h"

/**
 * spawn_process_get_if_exited:
 * @self: a process
 *
 * Whether the last run ended by calling exit() (or returning from main),
 * as g_subprocess_get_if_exited() and WIFEXITED() say.
 *
 * Returns: %TRUE if it exited; %FALSE if a signal ended it, before it
 *   has finished, or when its status was lost
 */
gboolean
spawn_process_get_if_exited (SpawnProcess *self)
{
  SpawnExitInfo info;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  return spawn_process_get_exit_info (self, &info) && info.kind == SPAWN_EXIT_EXITED;
}

/**
 * spawn_process_get_if_signaled:
 * @self: a process
 *
 * Whether a signal ended the last run, as g_subprocess_get_if_signaled()
 * and WIFSIGNALED() say.
 *
 * Returns: %TRUE if a signal ended it (with or without a core dump);
 *   %FALSE if it exited, before it has finished, or when its status was
 *   lost
 */
gboolean
spawn_process_get_if_signaled (SpawnProcess *self)
{
  SpawnExitInfo info;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  return spawn_process_get_exit_info (self, &info) && info.kind != SPAWN_EXIT_EXITED;
}

/**
 * spawn_process_get_term_sig:
 * @self: a process
 *
 * The signal that ended the last run, as g_subprocess_get_term_sig() and
 * WTERMSIG() give it.
 *
 * Returns: the signal number if spawn_process_get_if_signaled() is
 *   %TRUE, else 0
 */
int
spawn_process_get_term_sig (SpawnProcess *self)
{
  SpawnExitInfo info;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), 0);
  if (!spawn_process_get_exit_info (self, &info) || info.kind == SPAWN_EXIT_EXITED)
    return 0;
  return info.status;
}

/**
 * spawn_process_get_successful:
 * @self: a process
 *
 * Whether the last run exited with status 0, as
 * g_subprocess_get_successful() says.
 *
 * Returns: %TRUE if it exited with status 0; %FALSE otherwise, also
 *   before it has finished and when its status was lost
 */
gboolean
spawn_process_get_successful (SpawnProcess *self)
{
  SpawnExitInfo info;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  return spawn_process_get_exit_info (self, &info) && info.kind == SPAWN_EXIT_EXITED &&
         info.status == 0;
}

/**
 * spawn_process_get_status:
 * @self: a process
 *
 * The waitpid()-style status of the last run, as g_subprocess_get_status()
 * gives it: for g_spawn_check_wait_status() or WIFEXITED() and friends
 * (spawn_exit_info_to_wait_status() of spawn_process_get_exit_info()).
 *
 * Returns: the wait status; -1 before the process has finished or when its
 *   status was lost (no wait status is -1)
 */
int
spawn_process_get_status (SpawnProcess *self)
{
  SpawnExitInfo info;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), -1);
  if (!spawn_process_get_exit_info (self, &info))
    return -1;
  return spawn_exit_info_to_wait_status (&info);
}
