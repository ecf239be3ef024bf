/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* subprocess.c - SpawnProcess from GIO's own GSubprocessFlags
 *
 * So that a GSubprocess program ports by renaming its calls:
 * spawn_process_newv() and spawn_process_new_with_flags() start a
 * process as g_subprocess_newv() and g_subprocess_new() do, and
 * spawn_process_set_subprocess_flags() configures one as
 * g_subprocess_launcher_set_flags() does.  Each flag, and its absence,
 * means what it means to GSubprocess (stdin from /dev/null, stdout and
 * stderr inherited when none is given), mapped onto the channel modes and
 * SpawnProcessFlags; nothing here starts anything but through
 * spawn_process_start().
 */
#include "process-private.h"

#include <stdarg.h>

#define SUBPROCESS_STDIN_FLAGS (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDIN_INHERIT)
#define SUBPROCESS_STDOUT_FLAGS (G_SUBPROCESS_FLAGS_STDOUT_PIPE | \
                                 G_SUBPROCESS_FLAGS_STDOUT_SILENCE)
#define SUBPROCESS_STDERR_FLAGS (G_SUBPROCESS_FLAGS_STDERR_PIPE | \
                                 G_SUBPROCESS_FLAGS_STDERR_SILENCE | \
                                 G_SUBPROCESS_FLAGS_STDERR_MERGE)
#define SUBPROCESS_ALL_FLAGS (SUBPROCESS_STDIN_FLAGS | SUBPROCESS_STDOUT_FLAGS | \
                              SUBPROCESS_STDERR_FLAGS | G_SUBPROCESS_FLAGS_INHERIT_FDS | \
                              G_SUBPROCESS_FLAGS_SEARCH_PATH_FROM_ENVP)

/* At most one flag of @flags for the channel @name: GIO calls more a
 * programmer error, and GSubprocessLauncher refuses them with this
 * critical (g_subprocess_newv() instead lets one win silently). */
static gboolean
subprocess_check_disposition (const char *name, GSubprocessFlags flags)
{
  GFlagsClass *klass;
  GString *names;
  guint i;

  if ((flags & (flags - 1)) == 0)
    return TRUE;
  klass = g_type_class_ref (G_TYPE_SUBPROCESS_FLAGS);
  names = g_string_new (NULL);
  for (i = 0; i < klass->n_values; i++)
    if (klass->values[i].value != 0 && (flags & klass->values[i].value) != 0)
      g_string_append_printf (names, " %s", klass->values[i].value_name);
  g_critical ("You may specify at most one disposition for the %s stream, "
              "but you specified:%s.", name, names->str);
  g_string_free (names, TRUE);
  g_type_class_unref (klass);
  return FALSE;
}

static gboolean
subprocess_check_flags (GSubprocessFlags flags)
{
  return subprocess_check_disposition ("stdin", flags & SUBPROCESS_STDIN_FLAGS) &&
         subprocess_check_disposition ("stdout", flags & SUBPROCESS_STDOUT_FLAGS) &&
         subprocess_check_disposition ("stderr", flags & SUBPROCESS_STDERR_FLAGS);
}

static const GSubprocessFlags subprocess_channel_flags[3] = {
  SUBPROCESS_STDIN_FLAGS, SUBPROCESS_STDOUT_FLAGS, SUBPROCESS_STDERR_FLAGS,
};

/* Whether @channel goes to a file or a descriptor the caller gave, as a
 * launcher's _set_stdout_file_path() and _take_stdout_fd() say. */
static gboolean
subprocess_redirected (SpawnProcess *self, SpawnProcessChannel channel)
{
  return self->modes[channel] == SPAWN_CHANNEL_FILE || self->modes[channel] == SPAWN_CHANNEL_FD;
}

/* A flag for a channel that goes to a file or a descriptor is a second
 * disposition for it: refused with the critical the launcher gives. */
static gboolean
subprocess_check_redirections (SpawnProcess *self, GSubprocessFlags flags)
{
  static const char * const names[] = { "stdin", "stdout", "stderr" };
  int i;

  for (i = 0; i < 3; i++)
    if (subprocess_redirected (self, i) && (flags & subprocess_channel_flags[i]) != 0)
      {
        g_critical ("You may specify at most one disposition for the %s stream, "
                    "but you specified a flag and a %s.", names[i],
                    self->modes[i] == SPAWN_CHANNEL_FILE ? "file" : "descriptor");
        return FALSE;
      }
  return TRUE;
}

/**
 * spawn_process_set_subprocess_flags:
 * @self: a process
 * @flags: GIO's #GSubprocessFlags, with at most one flag per channel
 *
 * Configures @self as [method@Gio.SubprocessLauncher.set_flags] configures
 * a launcher, for the following starts: the channels' modes and the
 * #SpawnProcessFlags GSubprocessFlags can say, replacing what was set
 * before (%SPAWN_PROCESS_FLAGS_NEW_SESSION and
 * %SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP are kept), except that a channel
 * given a file ([method@Spawn.Process.set_channel_file]) or a descriptor
 * ([method@Spawn.Process.set_channel_fd]) keeps it, as a launcher keeps
 * its `_set_stdout_file_path()` and `_take_stdout_fd()` whatever the order
 * of the calls.  Each flag keeps GSubprocess's meaning, and so does its
 * absence:
 *
 * - stdin: `/dev/null` (%SPAWN_CHANNEL_DISCARD) without a flag;
 *   %G_SUBPROCESS_FLAGS_STDIN_PIPE a pipe handed out as a stream
 *   (%SPAWN_CHANNEL_STREAM, [method@Spawn.Process.get_stdin_pipe]),
 *   %G_SUBPROCESS_FLAGS_STDIN_INHERIT ours (%SPAWN_CHANNEL_FORWARD);
 * - stdout: ours (%SPAWN_CHANNEL_FORWARD) without a flag;
 *   %G_SUBPROCESS_FLAGS_STDOUT_PIPE a stream (%SPAWN_CHANNEL_STREAM),
 *   %G_SUBPROCESS_FLAGS_STDOUT_SILENCE `/dev/null`;
 * - stderr: ours without a flag; %G_SUBPROCESS_FLAGS_STDERR_PIPE a
 *   stream, %G_SUBPROCESS_FLAGS_STDERR_SILENCE `/dev/null`,
 *   %G_SUBPROCESS_FLAGS_STDERR_MERGE wherever stdout goes
 *   (%SPAWN_CHANNEL_MERGE);
 * - %G_SUBPROCESS_FLAGS_INHERIT_FDS and
 *   %G_SUBPROCESS_FLAGS_SEARCH_PATH_FROM_ENVP set
 *   %SPAWN_PROCESS_FLAGS_INHERIT_FDS and
 *   %SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP, and are cleared without.
 *
 * These are not SpawnProcess's own defaults, which are QProcess's (all
 * three channels %SPAWN_CHANNEL_PIPE).  [method@Spawn.Process.communicate]
 * reads and writes the stream channels as GSubprocess's does.  Two flags
 * for one channel, or a flag for a channel that has a file or a
 * descriptor, are a programmer error, refused with a critical as
 * [method@Gio.SubprocessLauncher.set_flags] refuses them (@self is left
 * as it was).  %G_SUBPROCESS_FLAGS_STDERR_MERGE with a file or descriptor
 * for stdout sends stderr there too.
 *
 * The process's dispose policy is not changed: a process started from
 * here is killed when its last reference goes (%SPAWN_DISPOSE_KILL)
 * unless [method@Spawn.Process.set_dispose_policy] says
 * %SPAWN_DISPOSE_LEAVE_RUNNING, where a GSubprocess runs on.
 *
 * Since: 0.3
 */
void
spawn_process_set_subprocess_flags (SpawnProcess *self, GSubprocessFlags flags)
{
  SpawnChannelMode modes[3] = { SPAWN_CHANNEL_DISCARD, SPAWN_CHANNEL_FORWARD,
                                SPAWN_CHANNEL_FORWARD };
  SpawnProcessFlags own = SPAWN_PROCESS_FLAGS_NONE;
  int i;

  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail ((flags & ~SUBPROCESS_ALL_FLAGS) == 0);
  if (!subprocess_check_flags (flags) || !subprocess_check_redirections (self, flags))
    return;

  if (flags & G_SUBPROCESS_FLAGS_STDIN_PIPE)
    modes[SPAWN_PROCESS_STDIN] = SPAWN_CHANNEL_STREAM;
  else if (flags & G_SUBPROCESS_FLAGS_STDIN_INHERIT)
    modes[SPAWN_PROCESS_STDIN] = SPAWN_CHANNEL_FORWARD;
  if (flags & G_SUBPROCESS_FLAGS_STDOUT_PIPE)
    modes[SPAWN_PROCESS_STDOUT] = SPAWN_CHANNEL_STREAM;
  else if (flags & G_SUBPROCESS_FLAGS_STDOUT_SILENCE)
    modes[SPAWN_PROCESS_STDOUT] = SPAWN_CHANNEL_DISCARD;
  if (flags & G_SUBPROCESS_FLAGS_STDERR_PIPE)
    modes[SPAWN_PROCESS_STDERR] = SPAWN_CHANNEL_STREAM;
  else if (flags & G_SUBPROCESS_FLAGS_STDERR_SILENCE)
    modes[SPAWN_PROCESS_STDERR] = SPAWN_CHANNEL_DISCARD;
  else if (flags & G_SUBPROCESS_FLAGS_STDERR_MERGE)
    modes[SPAWN_PROCESS_STDERR] = SPAWN_CHANNEL_MERGE;
  if (flags & G_SUBPROCESS_FLAGS_INHERIT_FDS)
    own |= SPAWN_PROCESS_FLAGS_INHERIT_FDS;
  if (flags & G_SUBPROCESS_FLAGS_SEARCH_PATH_FROM_ENVP)
    own |= SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP;

  for (i = 0; i < 3; i++)
    if (!subprocess_redirected (self, i))
      spawn_process_set_channel_mode (self, i, modes[i]);
  /* Only what GSubprocessFlags can say: NEW_SESSION and
   * NEW_PROCESS_GROUP, which they cannot, stay as they were. */
  spawn_process_set_flags (self, (spawn_process_get_flags (self) &
                                  ~(SPAWN_PROCESS_FLAGS_INHERIT_FDS |
                                    SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP)) | own);
}

/**
 * spawn_process_newv:
 * @argv: (array zero-terminated=1) (element-type filename): the program (searched in PATH unless
 *   it contains a slash) and its arguments
 * @flags: GIO's #GSubprocessFlags, with GSubprocess's meaning: see
 *   [method@Spawn.Process.set_subprocess_flags]
 * @error: return location for a #GError
 *
 * Starts @argv as [ctor@Gio.Subprocess.newv] does, so that a port is a
 * rename: with %G_SUBPROCESS_FLAGS_NONE its stdin is `/dev/null` and its
 * stdout and stderr are ours, a `*_PIPE` flag hands the pipe out as a
 * stream ([method@Spawn.Process.get_stdout_pipe] and friends), and
 * [method@Spawn.Process.communicate] reads and writes those streams.
 * Like a GSubprocess, the process is left running when the last
 * reference goes (%SPAWN_DISPOSE_LEAVE_RUNNING: set it back to
 * %SPAWN_DISPOSE_KILL for SpawnProcess's own behaviour), and it is
 * watched from the thread-default main context of the caller, as
 * [method@Spawn.Process.start] says.
 *
 * Where it differs: two flags for one channel are refused with a
 * critical (%NULL, @error not set), as [ctor@Gio.SubprocessLauncher.new]
 * refuses them, where g_subprocess_newv() lets one of them win silently.
 * A failure is what [method@Spawn.Process.start] reports: exec failures
 * are %G_SPAWN_ERROR with GLib's codes, as g_subprocess_newv()'s.  The
 * object can be started again with [method@Spawn.Process.start] once it
 * has ended.
 *
 * Returns: (transfer full) (nullable): a running process, or %NULL with
 *   @error set if it could not be started
 *
 * Since: 0.3
 */
SpawnProcess *
spawn_process_newv (const char * const *argv, GSubprocessFlags flags, GError **error)
{
  SpawnProcess *self;

  g_return_val_if_fail (argv != NULL && argv[0] != NULL && argv[0][0] != '\0', NULL);
  g_return_val_if_fail ((flags & ~SUBPROCESS_ALL_FLAGS) == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  if (!subprocess_check_flags (flags))
    return NULL;

  self = spawn_process_new (argv);
  spawn_process_set_subprocess_flags (self, flags);
  spawn_process_set_dispose_policy (self, SPAWN_DISPOSE_LEAVE_RUNNING);
  if (!spawn_process_start (self, error))
    g_clear_object (&self);
  return self;
}

/**
 * spawn_process_new_with_flags: (skip)
 * @flags: GIO's #GSubprocessFlags, as for [ctor@Spawn.Process.newv]
 * @error: return location for a #GError
 * @argv0: the program
 * @...: its arguments, then %NULL
 *
 * Starts a process as [ctor@Spawn.Process.newv] does, with the arguments
 * in a list, as g_subprocess_new() is g_subprocess_newv() with a list;
 * for C (bindings call [ctor@Spawn.Process.newv]).
 *
 * Returns: (transfer full) (nullable): a running process, or %NULL with
 *   @error set
 *
 * Since: 0.3
 */
SpawnProcess *
spawn_process_new_with_flags (GSubprocessFlags flags, GError **error, const char *argv0, ...)
{
  g_autoptr (GPtrArray) args = NULL;
  const char *arg;
  va_list ap;

  g_return_val_if_fail (argv0 != NULL && argv0[0] != '\0', NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  args = g_ptr_array_new ();
  g_ptr_array_add (args, (char *) argv0);
  va_start (ap, argv0);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, (char *) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  return spawn_process_newv ((const char * const *) args->pdata, flags, error);
}
