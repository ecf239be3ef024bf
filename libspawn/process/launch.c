/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* launch.c - from a SpawnProcess's configuration to a child
 *
 * What the child gets at start: a pipe, a file, /dev/null, ours, the
 * caller's fd or stdout again for each of its stdin, stdout and stderr
 * (the channel modes); the fds passed with take_fd(); the environment
 * (ours or the one set, with setenv/unsetenv on top); the flags; the
 * caller's child_setup and, for start_detached(), a session of its own.  It reads the configuration and
 * opens what the child gets (setting our ends of its pipes in the
 * channels); it neither watches the process nor emits anything.
 */
#include "process-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <unistd.h>

typedef struct {
  int child_fds[3];        /* what the child gets, or -1 */
  GSpawnFlags flags;
  /* Read by the child before exec (it shares our memory meanwhile). */
  gboolean detached;
  GSpawnChildSetupFunc child_setup;
  gpointer child_setup_data;
  SpawnPty *pty;           /* for SPAWN_CHANNEL_PTY channels, or NULL */
} Plumbing;

static const char * const launch_channel_names[] = { "stdin", "stdout", "stderr" };

static const char *
launch_program (SpawnProcess *self)
{
  return self->argv != NULL && self->argv[0] != NULL ? self->argv[0] : "(no program)";
}

static int
launch_open_file (SpawnProcess *self, SpawnProcessChannel i, GError **error)
{
  int flags = i == SPAWN_PROCESS_STDIN
    ? O_RDONLY
    : O_WRONLY | O_CREAT | (self->appends[i] ? O_APPEND : O_TRUNC);
  int fd;

  if (self->files[i] == NULL)
    {
      g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL, "%s of “%s”: no file set",
                   launch_channel_names[i], launch_program (self));
      return -1;
    }
  fd = open (self->files[i], flags | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      g_propagate_error (error, _spawn_error_new (errno, "%s of “%s”: cannot open “%s”",
                                                  launch_channel_names[i],
                                                  launch_program (self), self->files[i]));
      return -1;
    }
  return _spawn_fd_above_stdio (fd);
}

/* A pipe for channel @i: our end in *@ours, the child's in *@theirs,
 * both close-on-exec and above stdio. */
static gboolean
launch_open_pipe (SpawnProcess *self, SpawnProcessChannel i, int *ours, int *theirs,
                  GError **error)
{
  int pair[2];
  int err = _spawn_fd_pipe (pair);

  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "%s of “%s”: cannot create a pipe",
                                                  launch_channel_names[i],
                                                  launch_program (self)));
      return FALSE;
    }
  *ours = pair[i == SPAWN_PROCESS_STDIN ? 1 : 0];
  *theirs = pair[i == SPAWN_PROCESS_STDIN ? 0 : 1];
  return TRUE;
}

/* Our end of channel @i on the terminal, a copy of its master: the
 * channel's fd, or for SPAWN_CHANNEL_PTY_STREAM its stream.  All the
 * copies share the master's open file, and so O_NONBLOCK, which the
 * streams cope with: they poll before they read or write. */
static gboolean
launch_open_master (SpawnProcess *self, SpawnProcessChannel i, SpawnChannelMode mode,
                    Plumbing *p)
{
  Channel *c = &self->channels[i];
  int fd = fcntl (spawn_pty_get_master_fd (p->pty), F_DUPFD_CLOEXEC, 3);

  if (fd < 0)
    return FALSE;
  fcntl (fd, F_SETFL, O_NONBLOCK);
  if (mode == SPAWN_CHANNEL_PTY)
    c->fd = fd;
  else if (i == SPAWN_PROCESS_STDIN)
    c->stream = G_OBJECT (g_unix_output_stream_new (fd, TRUE));
  else
    c->stream = G_OBJECT (_spawn_pty_input_stream_new (fd));
  return TRUE;
}

/* Channel @i on the terminal: the child gets a copy of the slave, and
 * the channel a copy of the master.  A terminal has one output: stderr
 * next to a stdout on it is read through stdout's channel, as
 * SPAWN_CHANNEL_MERGE is. */
static gboolean
launch_open_pty (SpawnProcess *self, SpawnProcessChannel i, SpawnChannelMode mode,
                 Plumbing *p, GError **error)
{
  int *theirs = &p->child_fds[i];

  *theirs = fcntl (spawn_pty_get_slave_fd (p->pty), F_DUPFD_CLOEXEC, 3);
  if (*theirs >= 0 &&
      ((i == SPAWN_PROCESS_STDERR &&
        _spawn_process_mode_is_pty (self->modes[SPAWN_PROCESS_STDOUT])) ||
       launch_open_master (self, i, mode, p)))
    return TRUE;
  g_propagate_error (error, _spawn_error_new (errno, "%s of “%s”: cannot use its "
                                              "pseudo-terminal %s",
                                              launch_channel_names[i], launch_program (self),
                                              spawn_pty_get_slave_name (p->pty)));
  return FALSE;
}

/* What the child gets for channel @i in @mode: our end of a pipe (into
 * the channel, or its stream), a file, a copy of the caller's fd, stdout
 * again, or a GSpawnFlags for /dev/null or ours. */
static gboolean
launch_open_channel (SpawnProcess *self, SpawnProcessChannel i, SpawnChannelMode mode,
                     Plumbing *p, GError **error)
{
  Channel *c = &self->channels[i];
  int *theirs = &p->child_fds[i];
  int ours, from;

  switch (mode)
    {
    case SPAWN_CHANNEL_PIPE:
      if (!launch_open_pipe (self, i, &c->fd, theirs, error))
        return FALSE;
      fcntl (c->fd, F_SETFL, O_NONBLOCK);
      return TRUE;
    case SPAWN_CHANNEL_STREAM:
      /* Blocking, as GSubprocess's: the streams poll for their async
       * and pollable calls. */
      if (!launch_open_pipe (self, i, &ours, theirs, error))
        return FALSE;
      c->stream = i == SPAWN_PROCESS_STDIN ? G_OBJECT (g_unix_output_stream_new (ours, TRUE))
                                           : G_OBJECT (g_unix_input_stream_new (ours, TRUE));
      return TRUE;
    case SPAWN_CHANNEL_PTY:
    case SPAWN_CHANNEL_PTY_STREAM:
      return launch_open_pty (self, i, mode, p, error);
    case SPAWN_CHANNEL_MERGE:
      /* Only stderr can be merged (set_channel_mode checks). */
      if (p->flags & G_SPAWN_STDOUT_TO_DEV_NULL)
        {
          p->flags |= G_SPAWN_STDERR_TO_DEV_NULL;
          return TRUE;
        }
      from = p->child_fds[SPAWN_PROCESS_STDOUT];
      *theirs = fcntl (from >= 0 ? from : STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
      if (*theirs < 0)
        g_propagate_error (error, _spawn_error_new (errno, "stderr of “%s”: cannot merge "
                                                    "it into stdout",
                                                    launch_program (self)));
      return *theirs >= 0;
    case SPAWN_CHANNEL_FORWARD:
      if (i == SPAWN_PROCESS_STDIN)
        p->flags |= G_SPAWN_CHILD_INHERITS_STDIN;
      return TRUE;
    case SPAWN_CHANNEL_DISCARD:
      p->flags |= i == SPAWN_PROCESS_STDIN ? G_SPAWN_STDIN_FROM_DEV_NULL
                : i == SPAWN_PROCESS_STDOUT ? G_SPAWN_STDOUT_TO_DEV_NULL
                : G_SPAWN_STDERR_TO_DEV_NULL;
      return TRUE;
    case SPAWN_CHANNEL_FD:
      /* A copy, so that the next start has the caller's fd again. */
      *theirs = fcntl (self->channel_fds[i], F_DUPFD_CLOEXEC, 3);
      if (*theirs < 0)
        g_propagate_error (error, _spawn_error_new (errno, "%s of “%s”: cannot use fd %d",
                                                    launch_channel_names[i],
                                                    launch_program (self),
                                                    self->channel_fds[i]));
      return *theirs >= 0;
    case SPAWN_CHANNEL_FILE:
    default:
      *theirs = launch_open_file (self, i, error);
      return *theirs >= 0;
    }
}

/* The terminal of the channels in SPAWN_CHANNEL_PTY mode, if any (and
 * not @detached: nobody would read it). */
static gboolean
launch_open_terminal (SpawnProcess *self, gboolean detached, Plumbing *p, GError **error)
{
  GError *local_error = NULL;
  int i;

  p->pty = NULL;
  for (i = 0; i < 3 && !detached; i++)
    if (_spawn_process_mode_is_pty (self->modes[i]))
      {
        p->pty = spawn_pty_new (self->window_rows, self->window_columns, &local_error);
        if (p->pty != NULL)
          return TRUE;
        g_propagate_prefixed_error (error, local_error, "“%s”: ", launch_program (self));
        return FALSE;
      }
  return TRUE;
}

/* Opens pipes and files for the child.  With @detached, pipes are
 * forwarded instead (there is nobody to read them). */
static gboolean
launch_plumb (SpawnProcess *self, gboolean detached, Plumbing *p, GError **error)
{
  int i;

  /* As GSubprocess: the PATH of the program's environment alone (GLib's
   * default when it has none), or else ours. */
  p->flags = (self->flags & SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP)
               ? G_SPAWN_SEARCH_PATH_FROM_ENVP : G_SPAWN_SEARCH_PATH;
  if (self->flags & SPAWN_PROCESS_FLAGS_INHERIT_FDS)
    p->flags |= G_SPAWN_LEAVE_DESCRIPTORS_OPEN;
  p->detached = detached;
  p->child_setup = self->child_setup;
  p->child_setup_data = self->child_setup_data;
  for (i = 0; i < 3; i++)
    p->child_fds[i] = -1;
  if (!launch_open_terminal (self, detached, p, error))
    return FALSE;
  for (i = 0; i < 3; i++)
    {
      SpawnChannelMode mode = self->modes[i];

      if ((mode == SPAWN_CHANNEL_PIPE || mode == SPAWN_CHANNEL_STREAM ||
           _spawn_process_mode_is_pty (mode)) && detached)
        mode = SPAWN_CHANNEL_FORWARD;
      /* The last run's stream goes (unless the caller holds it). */
      if (!detached)
        g_clear_object (&self->channels[i].stream);
      if (!launch_open_channel (self, i, mode, p, error))
        return FALSE;
    }
  return TRUE;
}

static void
launch_close_child_fds (Plumbing *p)
{
  int i;

  for (i = 0; i < 3; i++)
    if (p->child_fds[i] >= 0)
      close (p->child_fds[i]);
}

/* In the child between clone and exec (setsid() is async-signal-safe,
 * signal-safety(7)): a detached program gets a session and process group
 * of its own, so a terminal's Ctrl-C or hangup for ours does not reach
 * it.  It cannot fail here: a fresh child is never a group leader.  Then
 * the caller's child_setup. */
static void
launch_setup_in_child (gpointer data)
{
  const Plumbing *p = data;

  if (p->detached)
    setsid ();
  if (p->child_setup != NULL)
    p->child_setup (p->child_setup_data);
}

/* What the configuration must hold before anything is opened: a program,
 * and descriptors that are still open.  A descriptor given to us that the
 * application closed since is forgotten, not closed again at finalize:
 * its number may be someone else's by then.  Checked first, or a closed
 * number would turn out to be one of the pipes we open for this start. */
static gboolean
launch_check_config (SpawnProcess *self, GError **error)
{
  const char *argv0 = self->argv != NULL ? self->argv[0] : NULL;
  guint i;

  if (argv0 == NULL)
    {
      g_set_error_literal (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                           "No program to start: the argv is empty");
      return FALSE;
    }
  for (i = 0; i < 3; i++)
    if (self->modes[i] == SPAWN_CHANNEL_FD && self->channel_fds[i] >= 0 &&
        fcntl (self->channel_fds[i], F_GETFD) < 0)
      {
        g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                     "Cannot start “%s”: the fd %d given for its %s is not open",
                     argv0, self->channel_fds[i], launch_channel_names[i]);
        self->channel_fds[i] = -1;
        return FALSE;
      }
  for (i = 0; i < self->source_fds->len; i++)
    {
      int source = g_array_index (self->source_fds, int, i);
      int target = g_array_index (self->target_fds, int, i);

      if (fcntl (source, F_GETFD) >= 0)
        continue;
      g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                   "Cannot start “%s”: the fd %d given for its fd %d is not open",
                   argv0, source, target);
      g_array_remove_index (self->source_fds, i);
      g_array_remove_index (self->target_fds, i);
      return FALSE;
    }
  return TRUE;
}

/* After the start: our copy of the slave goes (the master then reads
 * EIO once every holder of the slave has gone), and the terminal is the
 * run's if the child started. */
static void
launch_keep_terminal (SpawnProcess *self, Plumbing *p, SpawnChild *child)
{
  if (p->pty == NULL)
    return;
  spawn_pty_close_slave (p->pty);
  if (child != NULL)
    {
      g_clear_pointer (&self->pty, spawn_pty_unref);
      self->pty = g_steal_pointer (&p->pty);
    }
  else
    g_clear_pointer (&p->pty, spawn_pty_unref);
}

/* spawn_async_fd() with the configuration; NULL and @error on failure,
 * with nothing left open. */
SpawnChild *
_spawn_process_launch (SpawnProcess *self, gboolean detached, GError **error)
{
  g_auto (GStrv) env = NULL;
  SpawnChild *child = NULL;
  Plumbing p;

  SpawnChildFlags child_flags = SPAWN_CHILD_FLAGS_NONE;

  if (!launch_check_config (self, error))
    return NULL;
  /* A detached process is meant to outlive us: never killed. */
  if (self->kill_on_close && !detached)
    child_flags |= SPAWN_CHILD_KILL_ON_CLOSE;
  if (self->flags & SPAWN_PROCESS_FLAGS_NEW_SESSION)
    child_flags |= SPAWN_CHILD_NEW_SESSION;
  else if (self->flags & SPAWN_PROCESS_FLAGS_NEW_PROCESS_GROUP)
    child_flags |= SPAWN_CHILD_NEW_PROCESS_GROUP;
  if (launch_plumb (self, detached, &p, error))
    {
      if (p.pty != NULL)
        child_flags |= SPAWN_CHILD_CONTROLLING_TERMINAL;
      env = _spawn_process_build_environment (self);
      /* A detached process leaves its job behind too. */
      if (self->started.job != NULL && !detached)
        child = spawn_job_spawn (self->started.job, self->working_directory,
                                 (const char * const *) self->argv,
                                 (const char * const *) env, p.flags,
                                 p.child_setup != NULL ? launch_setup_in_child : NULL, &p,
                                 p.child_fds[0], p.child_fds[1], p.child_fds[2],
                                 (const int *) self->source_fds->data,
                                 (const int *) self->target_fds->data,
                                 self->source_fds->len, NULL, NULL, NULL,
                                 child_flags, error);
      else
        child = spawn_async_fd_full (self->working_directory,
                              (const char * const *) self->argv,
                              (const char * const *) env, p.flags,
                              detached || p.child_setup != NULL ? launch_setup_in_child : NULL, &p,
                              p.child_fds[0], p.child_fds[1], p.child_fds[2],
                              (const int *) self->source_fds->data,
                              (const int *) self->target_fds->data,
                              self->source_fds->len, NULL, NULL, NULL,
                              child_flags, error);
    }
  launch_close_child_fds (&p);
  launch_keep_terminal (self, &p, child);
  if (!detached)
    self->signal_group = (child_flags & (SPAWN_CHILD_NEW_SESSION |
                                         SPAWN_CHILD_NEW_PROCESS_GROUP |
                                         SPAWN_CHILD_CONTROLLING_TERMINAL)) != 0;
  if (child == NULL)
    {
      int i;

      for (i = 0; i < 3; i++)
        {
          _spawn_process_close_channel (self, i);
          if (!detached)
            g_clear_object (&self->channels[i].stream);
        }
    }
  return child;
}

gboolean
_spawn_process_signal_child (SpawnProcess *self, int signum, GError **error)
{
  /* The job this run was started in, whatever set_job() said since. */
  if (self->started.job != NULL)
    return spawn_job_send_signal (self->started.job, signum, error);
  if (self->signal_group)
    return spawn_child_send_signal_to_group (self->child, signum, error);
  return spawn_child_send_signal (self->child, signum, error);
}
