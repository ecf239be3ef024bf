/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* status.c - what a SpawnProcess can say of its run: state, PID, end
 *
 * Reads only: the state, the backend, the PID and child of the running
 * process, the last error, and how the last run ended, both QProcess's
 * way (exit code and status) and GSubprocess's (g_subprocess_get_if_exited()
 * and friends, for code and bindings that come from GSubprocess).
 * GSubprocess makes "the process has finished" a precondition of each;
 * these answer FALSE, 0 or -1 instead, as spawn_process_get_exit_code()
 * always did, so a binding cannot crash the program by asking too early
 * (docs/process.md).
 */
#include "process-private.h"

/**
 * spawn_process_get_error:
 * @self: a process
 *
 * The error of the last #SpawnProcess::error-occurred, like QProcess::error()
 * and errorString() in one; it stays until the next one.
 *
 * Returns: (transfer none) (nullable): that error, or %NULL if there was none
 */
const GError *
spawn_process_get_error (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return self->last_error;
}


/**
 * spawn_process_get_state:
 * @self: a process
 *
 * Where the process is in its life (also the #SpawnProcess:state property).
 *
 * Returns: where @self is in its life
 */
SpawnProcessState
spawn_process_get_state (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_PROCESS_NOT_RUNNING);
  return self->state;
}

/**
 * spawn_process_get_backend:
 * @self: a process
 *
 * Which backend (clonefd, pidfd or sigchld) watches the process.
 *
 * Returns: the backend watching the running or last run's child;
 *   %SPAWN_BACKEND_AUTO before the first start
 */
SpawnBackend
spawn_process_get_backend (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_BACKEND_AUTO);
  return self->backend;
}

/**
 * spawn_process_get_pid:
 * @self: a process
 *
 * The process ID of the running process, for display and logs: act on the
 * process through @self, never through its PID.
 *
 * Returns: the PID while running, else 0; 0 too once the child has
 *   ended while a communicate() still reads what a descendant writes (its
 *   PID may be another process's by then; GSubprocess's identifier is
 *   %NULL there too)
 */
GPid
spawn_process_get_pid (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), 0);
  return self->child != NULL && !self->end_held ? spawn_child_get_pid (self->child) : 0;
}

/**
 * spawn_process_get_pty:
 * @self: a process
 *
 * The pseudo-terminal of the running (or last) run's %SPAWN_CHANNEL_PTY
 * channels: for its size and name, or for a terminal emulator that
 * wants the master for itself.  Its master is non-blocking while @self
 * reads it (the channels share it); reading it behind @self's back takes
 * output from the channels.  When @self goes, the terminal goes with it
 * (a program still running on it gets SIGHUP), unless you hold a
 * reference.
 *
 * Returns: (transfer none) (nullable): the terminal, or %NULL if no run
 *   had a %SPAWN_CHANNEL_PTY channel
 *
 * Since: 0.3
 */
SpawnPty *
spawn_process_get_pty (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return self->pty;
}

/**
 * spawn_process_get_child:
 * @self: a process
 *
 * The #SpawnChild of the running process, for the lower-level calls
 * ([method@Spawn.Child.get_fd], [method@Spawn.Child.send_signal]).
 *
 * Returns: (transfer none) (nullable): the running child, else %NULL
 */
SpawnChild *
spawn_process_get_child (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return self->child;
}

/**
 * spawn_process_get_exit_info:
 * @self: a process
 * @info: (out caller-allocates): how it ended, with its CPU times
 *
 * How the last run ended, with its CPU times, as #SpawnProcess::finished
 * reported it.
 *
 * Returns: %TRUE after #SpawnProcess::finished with a known status
 */
gboolean
spawn_process_get_exit_info (SpawnProcess *self, SpawnExitInfo *info)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (info != NULL, FALSE);

  if (!self->have_exit)
    return FALSE;
  *info = self->exit_info;
  return TRUE;
}

/**
 * spawn_process_get_exit_code:
 * @self: a process
 *
 * The exit status of the last run, or the signal number that ended it, as
 * QProcess::exitCode().
 *
 * Returns: the exit status, or the signal number after a crash; -1 before
 *   the process has finished or when its status was lost
 */
int
spawn_process_get_exit_code (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), -1);
  return self->have_exit ? self->exit_info.status : -1;
}

/**
 * spawn_process_get_exit_status:
 * @self: a process
 *
 * Whether the last run exited or crashed, as QProcess::exitStatus().
 *
 * Returns: %SPAWN_PROCESS_EXIT_CRASH if a signal ended the process (or its
 *   status was lost), else %SPAWN_PROCESS_EXIT_NORMAL (also before the
 *   process has finished)
 */
SpawnProcessExitStatus
spawn_process_get_exit_status (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_PROCESS_EXIT_NORMAL);
  return self->exit_info.kind == SPAWN_EXIT_EXITED ? SPAWN_PROCESS_EXIT_NORMAL
                                                   : SPAWN_PROCESS_EXIT_CRASH;
}

/**
 * spawn_process_get_if_exited:
 * @self: a process
 *
 * Whether the last run ended by calling exit() (or returning from main),
 * as [method@Gio.Subprocess.get_if_exited] and WIFEXITED() say.
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
 * Whether a signal ended the last run, as [method@Gio.Subprocess.get_if_signaled]
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
 * The signal that ended the last run, as [method@Gio.Subprocess.get_term_sig] and
 * WTERMSIG() give it.
 *
 * Returns: the signal number if [method@Spawn.Process.get_if_signaled] is
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
 * [method@Gio.Subprocess.get_successful] says.
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
 * The waitpid()-style status of the last run, as [method@Gio.Subprocess.get_status]
 * gives it: for [func@GLib.spawn_check_wait_status] or WIFEXITED() and friends
 * ([method@Spawn.ExitInfo.to_wait_status] of [method@Spawn.Process.get_exit_info]).
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
