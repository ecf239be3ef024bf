/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* config.c - what a SpawnProcess will start, and how
 *
 * The configuration: program and arguments, working directory,
 * environment (ours or a given one, with changes on top), where each
 * standard channel goes, fds to pass, a child_setup, flags, the kill
 * timeout and the dispose policy; their setters and getters, and the
 * descriptors the configuration owns.  Everything here takes effect at
 * the next start; launch.c turns it into a child.
 */
#include "process-private.h"

#include <string.h>
#include <unistd.h>

/* Sets @channel's mode, closing a descriptor spawn_process_set_channel_fd()
 * gave it unless the mode stays %SPAWN_CHANNEL_FD. */
static void
config_set_mode (SpawnProcess *self, SpawnProcessChannel channel, SpawnChannelMode mode)
{
  if (mode != SPAWN_CHANNEL_FD && self->channel_fds[channel] >= 0)
    {
      close (self->channel_fds[channel]);
      self->channel_fds[channel] = -1;
    }
  self->modes[channel] = mode;
}

/**
 * spawn_process_set_argv:
 * @self: a process
 * @argv: (array zero-terminated=1) (element-type filename) (nullable): the
 *   program (searched in PATH unless it contains a slash) and its
 *   arguments; %NULL or empty for none
 *
 * Like QProcess::setProgram() and setArguments() in one.  Without a
 * program, as QProcess without one, [method@Spawn.Process.start] fails with
 * %SPAWN_ERROR_INVAL and #SpawnProcess::error-occurred
 * (%SPAWN_PROCESS_ERROR_FAILED_TO_START): an argv set through a property
 * or a binding is input, not a programming error.  May be called while
 * the process runs: as every setter, it applies to the next start.
 */
void
spawn_process_set_argv (SpawnProcess *self, const char * const *argv)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));

  g_strfreev (self->argv);
  self->argv = argv != NULL && argv[0] != NULL ? g_strdupv ((char **) argv) : NULL;
  g_object_notify (G_OBJECT (self), "argv");
}

/**
 * spawn_process_get_argv:
 * @self: a process
 *
 * The program and its arguments, as [ctor@Spawn.Process.new] or
 * [method@Spawn.Process.set_argv] set them.
 *
 * Returns: (transfer none) (array zero-terminated=1) (element-type filename)
 *   (nullable): the argv
 */
const char * const *
spawn_process_get_argv (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return (const char * const *) self->argv;
}

/**
 * spawn_process_set_working_directory:
 * @self: a process
 * @path: (type filename) (nullable): where the program starts, or %NULL for ours
 *
 * Sets the directory the program starts in, for the following starts.
 */
void
spawn_process_set_working_directory (SpawnProcess *self, const char *path)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));

  if (g_strcmp0 (self->working_directory, path) == 0)
    return;
  g_free (self->working_directory);
  self->working_directory = g_strdup (path);
  g_object_notify (G_OBJECT (self), "working-directory");
}

/* A copy of @envp where a name given twice keeps its last value, in the
 * place of its first: QProcessEnvironment makes the later one win, while
 * execve() passes both and getenv() finds the first. */
static char **
config_dedupe_environment (const char * const *envp)
{
  g_autoptr (GHashTable) last = NULL;
  GPtrArray *out;
  gsize i;

  if (envp == NULL)
    return NULL;
  /* name → index of its last entry */
  last = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (i = 0; envp[i] != NULL; i++)
    {
      const char *eq = strchr (envp[i], '=');
      char *name = eq ? g_strndup (envp[i], eq - envp[i]) : g_strdup (envp[i]);

      g_hash_table_insert (last, name, GSIZE_TO_POINTER (i));
    }
  out = g_ptr_array_new ();
  for (i = 0; envp[i] != NULL; i++)
    {
      const char *eq = strchr (envp[i], '=');
      g_autofree char *name = eq ? g_strndup (envp[i], eq - envp[i]) : g_strdup (envp[i]);
      gpointer found;

      /* At the first entry of a name, the last one's value; skip the rest. */
      if (!g_hash_table_lookup_extended (last, name, NULL, &found))
        continue;
      g_ptr_array_add (out, g_strdup (envp[GPOINTER_TO_SIZE (found)]));
      g_hash_table_remove (last, name);
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/**
 * spawn_process_set_environment:
 * @self: a process
 * @envp: (array zero-terminated=1) (element-type filename) (nullable): the
 *   whole environment, or %NULL for ours as it is at start time
 *
 * Replaces the environment, and forgets earlier [method@Spawn.Process.setenv]
 * and [method@Spawn.Process.unsetenv] calls.  A name given twice gets its later
 * value, as with QProcessEnvironment.  Takes effect at the next start.
 */
void
spawn_process_set_environment (SpawnProcess *self, const char * const *envp)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));

  g_strfreev (self->environment);
  self->environment = config_dedupe_environment (envp);
  g_hash_table_remove_all (self->env_changes);
}

/**
 * spawn_process_setenv:
 * @self: a process
 * @name: (type filename): a variable name, without '='
 * @value: (type filename): its value
 *
 * Sets a variable on top of the environment (ours, or the one set with
 * [method@Spawn.Process.set_environment]).
 */
void
spawn_process_setenv (SpawnProcess *self, const char *name, const char *value)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (name != NULL && *name != '\0' && strchr (name, '=') == NULL);
  g_return_if_fail (value != NULL);

  g_hash_table_insert (self->env_changes, g_strdup (name), g_strdup (value));
}

/**
 * spawn_process_unsetenv:
 * @self: a process
 * @name: (type filename): a variable name, without '='
 *
 * Removes a variable from the environment the program gets.
 */
void
spawn_process_unsetenv (SpawnProcess *self, const char *name)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (name != NULL && *name != '\0' && strchr (name, '=') == NULL);

  g_hash_table_insert (self->env_changes, g_strdup (name), NULL);
}

/**
 * spawn_process_set_channel_mode:
 * @self: a process
 * @channel: which one
 * @mode: where it goes; %SPAWN_CHANNEL_MERGE only for stderr,
 *   %SPAWN_CHANNEL_FILE through [method@Spawn.Process.set_channel_file] and
 *   %SPAWN_CHANNEL_FD through [method@Spawn.Process.set_channel_fd] (choosing
 *   another mode closes the fd given there); %SPAWN_CHANNEL_STREAM hands
 *   the pipe out as a stream at each start ([method@Spawn.Process.get_stdout_pipe]);
 *   %SPAWN_CHANNEL_PTY puts the channel on a pseudo-terminal, one for all
 *   the channels in that mode and %SPAWN_CHANNEL_PTY_STREAM
 *   ([method@Spawn.Process.get_pty])
 *
 * Chooses where one of the standard channels of the program goes, for the
 * following starts.
 */
void
spawn_process_set_channel_mode (SpawnProcess *self, SpawnProcessChannel channel,
                                SpawnChannelMode mode)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (channel <= SPAWN_PROCESS_STDERR);
  g_return_if_fail (mode <= SPAWN_CHANNEL_PTY_STREAM);
  g_return_if_fail (mode != SPAWN_CHANNEL_MERGE || channel == SPAWN_PROCESS_STDERR);
  g_return_if_fail (mode != SPAWN_CHANNEL_FILE || self->files[channel] != NULL);
  g_return_if_fail (mode != SPAWN_CHANNEL_FD || self->channel_fds[channel] >= 0);

  config_set_mode (self, channel, mode);
}

/**
 * spawn_process_get_channel_mode:
 * @self: a process
 * @channel: which one
 *
 * Where @channel goes, as [method@Spawn.Process.set_channel_mode] (or the file and
 * fd setters) set it.
 *
 * Returns: where @channel goes
 */
SpawnChannelMode
spawn_process_get_channel_mode (SpawnProcess *self, SpawnProcessChannel channel)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_CHANNEL_PIPE);
  g_return_val_if_fail (channel <= SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_PIPE);
  return self->modes[channel];
}

/**
 * spawn_process_set_channel_file:
 * @self: a process
 * @channel: which one
 * @path: (type filename): the file: read for stdin; created if need be for
 *   stdout and stderr
 * @append: for stdout and stderr: append instead of truncating
 *
 * Redirects @channel to a file (mode %SPAWN_CHANNEL_FILE), opened at
 * start; a file that cannot be opened makes the start fail.  Takes
 * effect at the next start.
 */
void
spawn_process_set_channel_file (SpawnProcess *self, SpawnProcessChannel channel,
                                const char *path, gboolean append)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (channel <= SPAWN_PROCESS_STDERR);
  g_return_if_fail (path != NULL);

  g_free (self->files[channel]);
  self->files[channel] = g_strdup (path);
  self->appends[channel] = append;
  config_set_mode (self, channel, SPAWN_CHANNEL_FILE);
}

/**
 * spawn_process_set_channel_fd:
 * @self: a process
 * @channel: which one
 * @fd: a descriptor of ours; the process takes it
 *
 * The program gets (a copy of) @fd as @channel, at every start (mode
 * %SPAWN_CHANNEL_FD), like [method@Gio.SubprocessLauncher.take_stdout_fd] and its
 * siblings.  @fd is closed when the process is finalized or another mode
 * is chosen for @channel; close-on-exec on it does not matter.  Takes
 * effect at the next start (a running program keeps its copy).
 */
void
spawn_process_set_channel_fd (SpawnProcess *self, SpawnProcessChannel channel, int fd)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (channel <= SPAWN_PROCESS_STDERR);
  g_return_if_fail (fd >= 0);

  if (self->channel_fds[channel] != fd)
    {
      config_set_mode (self, channel, SPAWN_CHANNEL_PIPE); /* closes the old one */
      self->channel_fds[channel] = fd;
    }
  self->modes[channel] = SPAWN_CHANNEL_FD;
}

/**
 * spawn_process_take_fd:
 * @self: a process
 * @source_fd: a descriptor of ours; the process takes it
 * @target_fd: the number the program gets it as
 *
 * Passes @source_fd to the program as @target_fd at every start, like
 * [method@Gio.SubprocessLauncher.take_fd].  A @target_fd given before is replaced
 * (its old source is closed); GSubprocessLauncher instead fails the spawn.
 * A @target_fd below 3 makes the start fail with %SPAWN_ERROR_INVAL (use
 * [method@Spawn.Process.set_channel_fd] for those), as does a @source_fd that is
 * not open by then.  The descriptors are closed when the process is
 * finalized.
 */
void
spawn_process_take_fd (SpawnProcess *self, int source_fd, int target_fd)
{
  guint i;

  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (source_fd >= 0);
  g_return_if_fail (target_fd >= 0);

  for (i = 0; i < self->target_fds->len; i++)
    if (g_array_index (self->target_fds, int, i) == target_fd)
      {
        int *old = &g_array_index (self->source_fds, int, i);

        if (*old != source_fd)
          close (*old);
        *old = source_fd;
        return;
      }
  g_array_append_val (self->source_fds, source_fd);
  g_array_append_val (self->target_fds, target_fd);
}

/**
 * spawn_process_set_child_setup: (skip)
 * @self: a process
 * @child_setup: (scope notified) (closure user_data) (destroy destroy) (nullable):
 *   called in the child just before exec, or %NULL for none
 * @user_data: data for @child_setup
 * @destroy: (nullable): frees @user_data when it is replaced or the process
 *   is finalized
 *
 * What [func@Spawn.async_fd]'s child_setup is, at every start: it shares our
 * memory and runs while the starting thread waits, so it must be
 * async-signal-safe (no malloc, no locks, no stdio) — stricter than
 * [method@Gio.SubprocessLauncher.set_child_setup], whose child runs after fork()
 * in a copy of our memory.  With [method@Spawn.Process.start_detached] it runs
 * after the child's setsid().
 *
 * Not for bindings (skipped in the introspection data): no function of an
 * interpreted language is async-signal-safe.  Do what a child_setup would
 * do in a wrapper program the process runs instead.
 */
void
spawn_process_set_child_setup (SpawnProcess *self, GSpawnChildSetupFunc child_setup,
                               gpointer user_data, GDestroyNotify destroy)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));

  if (self->child_setup_destroy != NULL)
    self->child_setup_destroy (self->child_setup_data);
  self->child_setup = child_setup;
  self->child_setup_data = user_data;
  self->child_setup_destroy = destroy;
}

/**
 * spawn_process_set_flags:
 * @self: a process
 * @flags: #SpawnProcessFlags
 *
 * %SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP looks the program up in the
 * PATH of the environment the program gets, as
 * %G_SUBPROCESS_FLAGS_SEARCH_PATH_FROM_ENVP does (GLib's `/bin:/usr/bin:.`
 * if that environment has no PATH; ours is not looked at); %SPAWN_PROCESS_FLAGS_INHERIT_FDS
 * leaves our descriptors without close-on-exec open in the program, as
 * %G_SUBPROCESS_FLAGS_INHERIT_FDS.
 *
 * %SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP and
 * %SPAWN_PROCESS_FLAGS_NEW_SESSION start the program in a process group
 * (or session) of its own, and every signal this object sends
 * (terminate, kill, send_signal, the kill timeout, the dispose policy) then
 * goes to the group, while the program, its leader, runs: what a
 * GSubprocess user writes a child_setup and a kill(-pid) for.  QProcess
 * 6.7's `UnixProcessFlag::CreateNewSession` starts the session but still
 * signals the program alone.  A descendant that leaves the group (a
 * daemon's setsid()) is reached only by a job
 * ([method@Spawn.Process.set_job]).
 */
void
spawn_process_set_flags (SpawnProcess *self, SpawnProcessFlags flags)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail ((flags & ~(SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP |
                               SPAWN_PROCESS_FLAGS_INHERIT_FDS |
                               SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP |
                               SPAWN_PROCESS_FLAGS_NEW_SESSION)) == 0);
  if (self->flags == flags)
    return;
  self->flags = flags;
  g_object_notify (G_OBJECT (self), "flags");
}

/**
 * spawn_process_get_flags:
 * @self: a process
 *
 * The flags that apply at every start.
 *
 * Returns: what [method@Spawn.Process.set_flags] set
 */
SpawnProcessFlags
spawn_process_get_flags (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_PROCESS_FLAGS_NONE);
  return self->flags;
}

/**
 * spawn_process_set_kill_timeout:
 * @self: a process
 * @timeout_ms: how long after its start the process is killed if it still
 *   runs, or 0 (the default) for never
 *
 * When it expires the process gets SIGKILL and
 * #SpawnProcess::error-occurred says %SPAWN_PROCESS_ERROR_TIMED_OUT; its
 * end is then reported with no %SPAWN_PROCESS_ERROR_CRASHED after it:
 * #SpawnProcess::finished with %SPAWN_PROCESS_EXIT_CRASH and signal 9,
 * and [method@Spawn.Process.get_error] keeps saying
 * %SPAWN_PROCESS_ERROR_TIMED_OUT, so that code that only waits can tell
 * the timeout from a SIGKILL sent by someone else (which is CRASHED).
 * Applies from the next start.
 */
void
spawn_process_set_kill_timeout (SpawnProcess *self, int timeout_ms)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  if (self->kill_timeout_ms == MAX (timeout_ms, 0))
    return;
  self->kill_timeout_ms = MAX (timeout_ms, 0);
  g_object_notify (G_OBJECT (self), "kill-timeout");
}

/**
 * spawn_process_set_dispose_policy:
 * @self: a process
 * @policy: what the last reference does to a running process
 *
 * Chooses what happens to a running process when the last reference to
 * @self goes: killed (the default) or left running.  Unlike the rest of
 * the configuration, it is read when the last reference goes, so it
 * applies to the running process too.
 */
void
spawn_process_set_dispose_policy (SpawnProcess *self, SpawnDisposePolicy policy)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  if (self->dispose_policy == policy)
    return;
  self->dispose_policy = policy;
  g_object_notify (G_OBJECT (self), "dispose-policy");
}

/**
 * spawn_process_get_kill_timeout:
 * @self: a process
 *
 * The kill timeout that [method@Spawn.Process.set_kill_timeout] set.
 *
 * Returns: what [method@Spawn.Process.set_kill_timeout] set, in ms (0: none)
 */
int
spawn_process_get_kill_timeout (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), 0);
  return self->kill_timeout_ms;
}

/**
 * spawn_process_get_dispose_policy:
 * @self: a process
 *
 * What happens to a running process when the last reference to @self goes.
 *
 * Returns: what [method@Spawn.Process.set_dispose_policy] set
 */
SpawnDisposePolicy
spawn_process_get_dispose_policy (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), SPAWN_DISPOSE_KILL);
  return self->dispose_policy;
}

/**
 * spawn_process_set_kill_on_close:
 * @self: a process
 * @kill_on_close: whether the process must not outlive the application
 *
 * Starts the process with %SPAWN_CHILD_KILL_ON_CLOSE (not a detached one):
 * it is killed when the application dies, however it dies (see
 * [func@Spawn.async_fd_full] for what each backend guarantees).  With
 * %SPAWN_DISPOSE_KILL it is also killed when @self goes, as without;
 * with %SPAWN_DISPOSE_LEAVE_RUNNING it runs on after @self goes, still
 * only as long as the application.  Takes effect at the next start.
 */
void
spawn_process_set_kill_on_close (SpawnProcess *self, gboolean kill_on_close)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  kill_on_close = !!kill_on_close;
  if (self->kill_on_close == kill_on_close)
    return;
  self->kill_on_close = kill_on_close;
  g_object_notify (G_OBJECT (self), "kill-on-close");
}

/**
 * spawn_process_get_kill_on_close:
 * @self: a process
 *
 * Whether the next start asks for %SPAWN_CHILD_KILL_ON_CLOSE (the
 * #SpawnProcess:kill-on-close property).
 *
 * Returns: what [method@Spawn.Process.set_kill_on_close] set
 */
gboolean
spawn_process_get_kill_on_close (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  return self->kill_on_close;
}

/**
 * spawn_process_set_read_buffer_size:
 * @self: a process
 * @size: the most bytes buffered per output channel before reading
 *   stops, or 0 (the default) for no limit
 *
 * QAbstractSocket::setReadBufferSize()'s meaning (QProcess has no such
 * limit): once a %SPAWN_CHANNEL_PIPE stdout or stderr holds @size unread
 * bytes, its pipe is not read any more, so that a program that writes faster than the application reads
 * blocks in write() instead of our memory growing; reading goes on when
 * the application takes output ([method@Spawn.Process.read_all],
 * [method@Spawn.Process.read_line]).  Applies at once, also to a running
 * process.
 *
 * Two exceptions, so that nothing is lost and no call waits for ever:
 * while a [method@Spawn.Process.communicate] runs it collects everything
 * (as QProcess's readAll() returns all), and when the process ends what
 * is left in its pipes is read (the buffer then holds at most @size plus
 * a pipe's capacity).  A [method@Spawn.Process.wait_for_finished] on a
 * process blocked by a full buffer waits until output is taken, as from
 * a #SpawnProcess::ready-read-stdout handler, which it runs.
 *
 * Since: 0.3
 */
void
spawn_process_set_read_buffer_size (SpawnProcess *self, gsize size)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  if (self->read_buffer_size == size)
    return;
  self->read_buffer_size = size;
  _spawn_process_watch_output (self, SPAWN_PROCESS_STDOUT);
  _spawn_process_watch_output (self, SPAWN_PROCESS_STDERR);
  g_object_notify (G_OBJECT (self), "read-buffer-size");
}

/**
 * spawn_process_get_read_buffer_size:
 * @self: a process
 *
 * The most bytes buffered per output channel before reading stops.
 *
 * Returns: what [method@Spawn.Process.set_read_buffer_size] set; 0 for
 *   no limit
 *
 * Since: 0.3
 */
gsize
spawn_process_get_read_buffer_size (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), 0);
  return self->read_buffer_size;
}

char **
_spawn_process_build_environment (SpawnProcess *self)
{
  GHashTableIter iter;
  gpointer name, value;
  char **env;

  if (self->environment == NULL && g_hash_table_size (self->env_changes) == 0)
    return NULL;
  env = self->environment ? g_strdupv (self->environment) : g_get_environ ();
  g_hash_table_iter_init (&iter, self->env_changes);
  while (g_hash_table_iter_next (&iter, &name, &value))
    env = value != NULL ? g_environ_setenv (env, name, value, TRUE)
                        : g_environ_unsetenv (env, name);
  return env;
}

/**
 * spawn_process_get_environment:
 * @self: a process
 *
 * The environment the program would get if started now: ours or the one
 * set with [method@Spawn.Process.set_environment], with the [method@Spawn.Process.setenv]
 * and [method@Spawn.Process.unsetenv] changes applied, as
 * QProcess::processEnvironment() (GSubprocessLauncher has no getter).
 *
 * Returns: (transfer full) (array zero-terminated=1) (element-type filename):
 *   a new array
 */
char **
spawn_process_get_environment (SpawnProcess *self)
{
  char **env;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  env = _spawn_process_build_environment (self);
  return env != NULL ? env : g_get_environ ();
}

/**
 * spawn_process_getenv:
 * @self: a process
 * @name: (type filename): a variable name
 *
 * Like [method@Gio.SubprocessLauncher.getenv]: one variable of
 * [method@Spawn.Process.get_environment].
 *
 * Returns: (transfer full) (nullable) (type filename): its value, or %NULL
 *   if unset
 */
char *
spawn_process_getenv (SpawnProcess *self, const char *name)
{
  g_auto (GStrv) env = NULL;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  env = spawn_process_get_environment (self);
  return g_strdup (g_environ_getenv (env, name));
}

/**
 * spawn_process_get_working_directory:
 * @self: a process
 *
 * The directory the program starts in.
 *
 * Returns: (nullable) (type filename): what
 *   [method@Spawn.Process.set_working_directory] set; %NULL means ours
 */
const char *
spawn_process_get_working_directory (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return self->working_directory;
}

void
_spawn_process_init_config (SpawnProcess *self)
{
  int i;

  self->env_changes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->source_fds = g_array_new (FALSE, FALSE, sizeof (int));
  self->target_fds = g_array_new (FALSE, FALSE, sizeof (int));
  for (i = 0; i < 3; i++)
    self->channel_fds[i] = -1;
}

/**
 * spawn_process_set_job:
 * @self: a process
 * @job: (nullable): the job its program and every descendant belong to,
 *   or %NULL for none
 *
 * Starts the program in @job ([method@Spawn.Job.spawn_with_pipes]): the whole tree it
 * starts is then one unit.  terminate, kill and send_signal signal every
 * process of the job, the kill timeout and the dispose policy
 * %SPAWN_DISPOSE_KILL kill it all (also what is left once the program has
 * ended), and the job tells the tree's CPU time and memory.  Several
 * processes may share a job; the job's cgroup is removed when the job is
 * closed or finalized (the process holds a reference while set).  A
 * job's finalization kills what is left in it: with
 * %SPAWN_DISPOSE_LEAVE_RUNNING keep a reference to the job for as long
 * as the tree should run.
 * Neither GSubprocess nor QProcess has this: see [Process groups, sessions
 * and jobs](process.html#process-groups-sessions-and-jobs-stopping-the-whole-tree)
 * in the SpawnProcess guide.
 *
 * Since: 0.3
 */
void
spawn_process_set_job (SpawnProcess *self, SpawnJob *job)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  g_return_if_fail (job == NULL || SPAWN_IS_JOB (job));
  if (g_set_object (&self->job, job))
    g_object_notify (G_OBJECT (self), "job");
}

/**
 * spawn_process_get_job:
 * @self: a process
 *
 * The job the next start puts the program in.
 *
 * Returns: (transfer none) (nullable): what [method@Spawn.Process.set_job] set
 *
 * Since: 0.3
 */
SpawnJob *
spawn_process_get_job (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return self->job;
}

/**
 * spawn_process_set_window_size:
 * @self: a process
 * @rows: the terminal's height in lines, or 0 for 24
 * @columns: its width in characters, or 0 for 80
 * @error: return location for a #GError
 *
 * The window size of the pseudo-terminal of %SPAWN_CHANNEL_PTY channels:
 * the size it has at the next start and, while the process runs on one,
 * its size from now on ([method@Spawn.Pty.set_size]): the kernel then
 * sends SIGWINCH to the terminal's foreground process group, as a
 * terminal emulator's window does when it is resized.
 *
 * Returns: %TRUE; %FALSE with a %SPAWN_ERROR if the running terminal
 *   could not be resized (the next start gets the size all the same)
 *
 * Since: 0.3
 */
gboolean
spawn_process_set_window_size (SpawnProcess *self, guint16 rows, guint16 columns,
                               GError **error)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  self->window_rows = rows;
  self->window_columns = columns;
  if (self->pty == NULL || self->state != SPAWN_PROCESS_RUNNING)
    return TRUE;
  return spawn_pty_set_size (self->pty, rows != 0 ? rows : 24, columns != 0 ? columns : 80,
                             error);
}

/**
 * spawn_process_get_window_size:
 * @self: a process
 * @rows: (out) (optional): the height in lines, 0 for the default (24)
 * @columns: (out) (optional): the width in characters, 0 for the
 *   default (80)
 *
 * What [method@Spawn.Process.set_window_size] set.  The running
 * terminal's own size (which the program may change itself) is
 * [method@Spawn.Pty.get_size]'s.
 *
 * Since: 0.3
 */
void
spawn_process_get_window_size (SpawnProcess *self, guint16 *rows, guint16 *columns)
{
  g_return_if_fail (SPAWN_IS_PROCESS (self));
  if (rows != NULL)
    *rows = self->window_rows;
  if (columns != NULL)
    *columns = self->window_columns;
}

void
_spawn_process_clear_config (SpawnProcess *self)
{
  guint i;

  g_clear_pointer (&self->argv, g_strfreev);
  g_clear_object (&self->job);
  g_clear_pointer (&self->working_directory, g_free);
  g_clear_pointer (&self->environment, g_strfreev);
  g_clear_pointer (&self->env_changes, g_hash_table_unref);
  for (i = 0; i < 3; i++)
    {
      config_set_mode (self, i, SPAWN_CHANNEL_PIPE);
      g_clear_pointer (&self->files[i], g_free);
    }
  for (i = 0; self->source_fds != NULL && i < self->source_fds->len; i++)
    close (g_array_index (self->source_fds, int, i));
  g_clear_pointer (&self->source_fds, g_array_unref);
  g_clear_pointer (&self->target_fds, g_array_unref);
  spawn_process_set_child_setup (self, NULL, NULL, NULL);
}

