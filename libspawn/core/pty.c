/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pty.c - SpawnPty: a pseudo-terminal pair for a child
 *
 * The master stays with the application; the slave becomes the child's
 * stdin, stdout, stderr and controlling terminal (the child's side,
 * TIOCSCTTY after setsid(), is exec-child.c's).  Once the child has it,
 * our copy of the slave is closed: the master then reads EIO when the
 * last process holding the slave has gone, which is the terminal's end of
 * file (docs/pty.md).  The terminal's settings are the kernel's defaults
 * for a new pty (canonical mode, echo, ISIG): what a program run in a
 * terminal emulator finds.
 */
#include "core-private.h"
#include <libspawn/spawn-pty.h>

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/**
 * SpawnPty:
 *
 * A pseudo-terminal: a master that the application reads the child's
 * output from and writes its input to, and a slave that the child gets as
 * its stdin, stdout, stderr and controlling terminal, as a terminal
 * emulator's shell does.  What VTE calls `VtePty` and KDE's KPty library
 * `KPtyDevice`; GIO's #GSubprocess has no counterpart.
 *
 * [method@Spawn.Pty.spawn] starts a program on it; a #SpawnProcess makes
 * one itself for its %SPAWN_CHANNEL_PTY channels
 * ([method@Spawn.Process.get_pty]).  Reading the master once every
 * process holding the slave has gone fails with EIO: that is the end of
 * file, which [method@Spawn.Pty.read_bytes] reports as such, after what
 * was still buffered.  Unlike KPtyProcess, which keeps one terminal for
 * the object's life, a #SpawnProcess opens a new one at each start, and
 * reads it through the calls and signals it has for pipes.
 *
 * Since: 0.3
 */
struct _SpawnPty {
  gatomicrefcount ref;
  int master;
  int slave;                 /* -1 once closed */
  char *slave_name;
  GMutex lock;               /* guards the streams, made on first use */
  GInputStream *input;
  GOutputStream *output;
};

G_DEFINE_BOXED_TYPE (SpawnPty, spawn_pty, spawn_pty_ref, spawn_pty_unref)

/* The slave of @master, opened without making it our controlling
 * terminal: through the master itself (TIOCGPTPEER, Linux 4.13), which
 * finds the right one even where /dev/pts is another instance's, else
 * by its name. */
static int
pty_open_slave (int master, const char *name)
{
  int fd = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);

  if (fd < 0 && (errno == EINVAL || errno == ENOTTY))
    fd = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* Opens a pair: 0, or -errno with nothing left open. */
static int
pty_open_pair (SpawnPty *pty)
{
  char name[128];
  int fd, err;

  fd = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  pty->master = _spawn_fd_above_stdio (fd);
  if (grantpt (pty->master) < 0 || unlockpt (pty->master) < 0)
    return -errno;
  err = ptsname_r (pty->master, name, sizeof name);
  if (err != 0)
    return -err;
  fd = pty_open_slave (pty->master, name);
  if (fd < 0)
    return fd;
  pty->slave = _spawn_fd_above_stdio (fd);
  pty->slave_name = g_strdup (name);
  return 0;
}

static void
pty_close (SpawnPty *pty)
{
  if (pty->master >= 0)
    close (pty->master);
  spawn_pty_close_slave (pty);
  g_clear_object (&pty->input);
  g_clear_object (&pty->output);
  g_mutex_clear (&pty->lock);
  g_free (pty->slave_name);
  g_free (pty);
}

/**
 * spawn_pty_new:
 * @rows: the window's height in lines, or 0 for 24
 * @columns: the window's width in characters, or 0 for 80
 * @error: return location for a #GError
 *
 * Opens a new pseudo-terminal (posix_openpt(3)) of @rows × @columns, its
 * settings the kernel's defaults (canonical input, echo, ^C for SIGINT).
 * Both ends are close-on-exec: a child gets the slave only through
 * [method@Spawn.Pty.spawn] or as an fd given to [func@Spawn.async_fd_full].
 *
 * Returns: (transfer full) (nullable): the terminal, or %NULL with a
 *   %SPAWN_ERROR (%SPAWN_ERROR_NFILE, %SPAWN_ERROR_MFILE, or
 *   %SPAWN_ERROR_FAILED where no pseudo-terminal can be had)
 *
 * Since: 0.3
 */
SpawnPty *
spawn_pty_new (guint16 rows, guint16 columns, GError **error)
{
  SpawnPty *pty;
  int err;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  pty = g_new0 (SpawnPty, 1);
  g_atomic_ref_count_init (&pty->ref);
  g_mutex_init (&pty->lock);
  pty->master = pty->slave = -1;
  err = pty_open_pair (pty);
  if (err == 0 && !spawn_pty_set_size (pty, rows != 0 ? rows : 24,
                                       columns != 0 ? columns : 80, error))
    err = -EIO; /* @error is set */
  if (err < 0)
    {
      if (error != NULL && *error == NULL)
        g_propagate_error (error, _spawn_error_new (-err, "Cannot open a pseudo-terminal"));
      pty_close (pty);
      return NULL;
    }
  return pty;
}

/**
 * spawn_pty_ref:
 * @pty: a pseudo-terminal
 *
 * Takes another reference on @pty.
 *
 * Returns: (transfer full): @pty, with one more reference
 *
 * Since: 0.3
 */
SpawnPty *
spawn_pty_ref (SpawnPty *pty)
{
  g_return_val_if_fail (pty != NULL, NULL);
  g_atomic_ref_count_inc (&pty->ref);
  return pty;
}

/**
 * spawn_pty_unref:
 * @pty: (transfer full): a pseudo-terminal
 *
 * Drops a reference; the last closes both ends.  A child still holding
 * the slave then reads end of file and gets SIGHUP, as when a terminal
 * window is closed.
 *
 * Since: 0.3
 */
void
spawn_pty_unref (SpawnPty *pty)
{
  g_return_if_fail (pty != NULL);
  if (g_atomic_ref_count_dec (&pty->ref))
    pty_close (pty);
}

/**
 * spawn_pty_get_master_fd:
 * @pty: a pseudo-terminal
 *
 * The application's end: what the child writes to its terminal is read
 * here, and what is written here is the child's keyboard, through the
 * terminal's line discipline (echo, line editing, ^C).  It stays @pty's:
 * do not close it.  Reading it once the child and every process holding
 * the slave have gone fails with EIO, the terminal's end of file.
 *
 * Returns: the master's fd
 *
 * Since: 0.3
 */
int
spawn_pty_get_master_fd (SpawnPty *pty)
{
  g_return_val_if_fail (pty != NULL, -1);
  return pty->master;
}

/**
 * spawn_pty_get_slave_fd:
 * @pty: a pseudo-terminal
 *
 * The child's end, to give as stdin, stdout and stderr to
 * [func@Spawn.async_fd_full] with %SPAWN_CHILD_CONTROLLING_TERMINAL (which
 * [method@Spawn.Pty.spawn] does), then to close with
 * [method@Spawn.Pty.close_slave].  It stays @pty's: do not close it.
 *
 * Returns: the slave's fd, or -1 once closed
 *
 * Since: 0.3
 */
int
spawn_pty_get_slave_fd (SpawnPty *pty)
{
  g_return_val_if_fail (pty != NULL, -1);
  return pty->slave;
}

/**
 * spawn_pty_get_slave_name:
 * @pty: a pseudo-terminal
 *
 * The slave's device name, for messages and for a program that wants to
 * open the terminal by name.
 *
 * Returns: (type filename): the slave's device, as ptsname(3) names it
 *   (`/dev/pts/N`)
 *
 * Since: 0.3
 */
const char *
spawn_pty_get_slave_name (SpawnPty *pty)
{
  g_return_val_if_fail (pty != NULL, NULL);
  return pty->slave_name;
}

/**
 * spawn_pty_close_slave:
 * @pty: a pseudo-terminal
 *
 * Closes our copy of the slave, once the child has its own: as long as
 * we hold it, the master never reads end of file.  [method@Spawn.Pty.spawn]
 * does it for you.  Closing it twice does nothing.
 *
 * Since: 0.3
 */
void
spawn_pty_close_slave (SpawnPty *pty)
{
  g_return_if_fail (pty != NULL);
  if (pty->slave >= 0)
    close (pty->slave);
  pty->slave = -1;
}

/**
 * spawn_pty_set_size:
 * @pty: a pseudo-terminal
 * @rows: the window's height in lines
 * @columns: the window's width in characters
 * @error: return location for a #GError
 *
 * Changes the window size (TIOCSWINSZ).  When it differs from the one
 * before, the kernel sends SIGWINCH to the terminal's foreground process
 * group, as when a terminal window is resized.
 *
 * Returns: %TRUE if set; %FALSE with a %SPAWN_ERROR
 *
 * Since: 0.3
 */
gboolean
spawn_pty_set_size (SpawnPty *pty, guint16 rows, guint16 columns, GError **error)
{
  struct winsize ws = { .ws_row = rows, .ws_col = columns };

  g_return_val_if_fail (pty != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (ioctl (pty->master, TIOCSWINSZ, &ws) == 0)
    return TRUE;
  g_propagate_error (error, _spawn_error_new (errno, "Cannot set the size of %s to %u×%u",
                                              pty->slave_name, rows, columns));
  return FALSE;
}

/**
 * spawn_pty_get_size:
 * @pty: a pseudo-terminal
 * @rows: (out) (optional): the window's height in lines
 * @columns: (out) (optional): the window's width in characters
 * @error: return location for a #GError
 *
 * The window size (TIOCGWINSZ), as the child sees it.
 *
 * Returns: %TRUE if read; %FALSE with a %SPAWN_ERROR
 *
 * Since: 0.3
 */
gboolean
spawn_pty_get_size (SpawnPty *pty, guint16 *rows, guint16 *columns, GError **error)
{
  struct winsize ws = { 0 };

  g_return_val_if_fail (pty != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (ioctl (pty->master, TIOCGWINSZ, &ws) < 0)
    {
      g_propagate_error (error, _spawn_error_new (errno, "Cannot get the size of %s",
                                                  pty->slave_name));
      return FALSE;
    }
  if (rows != NULL)
    *rows = ws.ws_row;
  if (columns != NULL)
    *columns = ws.ws_col;
  return TRUE;
}

/**
 * spawn_pty_read_bytes:
 * @pty: a pseudo-terminal
 * @count: the most to read, at least 1
 * @error: return location for a #GError
 *
 * Reads what the child wrote to its terminal from the master, blocking
 * unless the master is non-blocking (O_NONBLOCK, then
 * %G_IO_ERROR_WOULD_BLOCK).  The EIO the kernel answers once every
 * process holding the slave has gone, after whatever they wrote before,
 * is returned as end of file (no bytes), not as an error.
 *
 * Returns: (transfer full) (nullable): the bytes, none at the end of
 *   file, or %NULL with a %G_IO_ERROR
 *
 * Since: 0.3
 */
GBytes *
spawn_pty_read_bytes (SpawnPty *pty, gsize count, GError **error)
{
  g_autofree guint8 *buf = NULL;
  ssize_t n;

  g_return_val_if_fail (pty != NULL, NULL);
  g_return_val_if_fail (count > 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  buf = g_malloc (count);
  do
    n = read (pty->master, buf, count);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EIO)
    n = 0;
  if (n < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot read from the pseudo-terminal %s: %s", pty->slave_name,
                   g_strerror (saved));
      return NULL;
    }
  return g_bytes_new_take (g_steal_pointer (&buf), n);
}

/* A copy of the master for a stream, above stdio; -1 if none can be had
 * (the fd table is full), which the stream then reports on its first
 * read or write (EBADF). */
static int
pty_master_copy (SpawnPty *pty)
{
  return fcntl (pty->master, F_DUPFD_CLOEXEC, 3);
}

/**
 * spawn_pty_get_input_stream:
 * @pty: a pseudo-terminal
 *
 * The master as a stream to read the child's output from, pollable and
 * asynchronous as a #GUnixInputStream, made at the first call (on a copy
 * of the master).  Where a plain #GUnixInputStream on the master would
 * fail with %G_IO_ERROR_FAILED at the end, its reads return 0 (end of
 * file) once every process holding the slave has gone and all they
 * wrote has been read.  Closing it leaves the master open.
 *
 * Returns: (transfer none): the stream
 *
 * Since: 0.3
 */
GInputStream *
spawn_pty_get_input_stream (SpawnPty *pty)
{
  GInputStream *stream;

  g_return_val_if_fail (pty != NULL, NULL);
  g_mutex_lock (&pty->lock);
  if (pty->input == NULL)
    pty->input = _spawn_pty_input_stream_new (pty_master_copy (pty));
  stream = pty->input;
  g_mutex_unlock (&pty->lock);
  return stream;
}

/**
 * spawn_pty_get_output_stream:
 * @pty: a pseudo-terminal
 *
 * The master as a stream to write the child's input to (its keyboard,
 * through the line discipline), made at the first call (on a copy of
 * the master).  Closing it does not give the child end of file, as
 * closing a pipe would: a terminal's end of file is a character, ^D at
 * the start of a line in canonical mode.
 *
 * Returns: (transfer none): the stream
 *
 * Since: 0.3
 */
GOutputStream *
spawn_pty_get_output_stream (SpawnPty *pty)
{
  GOutputStream *stream;

  g_return_val_if_fail (pty != NULL, NULL);
  g_mutex_lock (&pty->lock);
  if (pty->output == NULL)
    pty->output = g_unix_output_stream_new (pty_master_copy (pty), TRUE);
  stream = pty->output;
  g_mutex_unlock (&pty->lock);
  return stream;
}

#define PTY_STDIO_FLAGS (G_SPAWN_STDIN_FROM_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDIN | \
                         G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDOUT | \
                         G_SPAWN_STDERR_TO_DEV_NULL | G_SPAWN_CHILD_INHERITS_STDERR)

/**
 * spawn_pty_spawn:
 * @pty: a pseudo-terminal whose slave is still open
 * @working_directory: (type filename) (nullable): as for [func@Spawn.async_fd]
 * @argv: (array zero-terminated=1) (element-type filename): as for
 *   [func@Spawn.async_fd]
 * @envp: (array zero-terminated=1) (element-type filename) (nullable): as
 *   for [func@Spawn.async_fd]; set `TERM` in it: a terminal emulator knows
 *   which terminal it is, we do not
 * @flags: as for [func@Spawn.async_fd], without those that say where
 *   stdin, stdout and stderr go
 * @child_flags: as for [func@Spawn.async_fd_full];
 *   %SPAWN_CHILD_CONTROLLING_TERMINAL is added
 * @error: return location for a #GError
 *
 * Starts a program on @pty, as a terminal emulator starts its shell: the
 * slave becomes its stdin, stdout, stderr and controlling terminal, in a
 * session of its own (so that ^C written to the master interrupts its
 * foreground process group), and our copy of the slave is closed, so
 * that the master reads end of file when the program and whatever it
 * left holding the terminal have gone.  One program per #SpawnPty:
 * another one needs a new terminal.
 *
 * Returns: (transfer full) (nullable): the child, or %NULL with @error
 *   set (a %SPAWN_ERROR_INVAL if the slave was closed already)
 *
 * Since: 0.3
 */
SpawnChild *
spawn_pty_spawn (SpawnPty            *pty,
                 const char          *working_directory,
                 const char * const  *argv,
                 const char * const  *envp,
                 GSpawnFlags          flags,
                 SpawnChildFlags      child_flags,
                 GError             **error)
{
  SpawnChild *child;

  g_return_val_if_fail (pty != NULL, NULL);
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);
  g_return_val_if_fail ((flags & PTY_STDIO_FLAGS) == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (pty->slave < 0)
    {
      g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                   "Cannot start “%s” on %s: its slave was closed (one program "
                   "per pseudo-terminal)", argv[0], pty->slave_name);
      return NULL;
    }
  child = spawn_async_fd_full (working_directory, argv, envp, flags, NULL, NULL,
                               pty->slave, pty->slave, pty->slave, NULL, NULL, 0,
                               NULL, NULL, NULL,
                               child_flags | SPAWN_CHILD_CONTROLLING_TERMINAL, error);
  if (child != NULL)
    spawn_pty_close_slave (pty);
  return child;
}
