/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* channel.c - a SpawnProcess's pipes and their buffers
 *
 * Our ends of the child's stdin, stdout and stderr pipes and the buffer
 * behind each: writing what spawn_process_write() buffered as far as the
 * pipe takes it (without SIGPIPE), reading what the child wrote in bounded
 * rounds, the public calls that read lines or bytes from the buffers, and
 * the getters of the GIO streams that SPAWN_CHANNEL_STREAM hands out
 * instead.  Nothing here emits a signal: these functions return what
 * happened (bytes, errno) and run.c, which calls them when a descriptor
 * is ready, announces it.
 */
#include "process-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define READ_CHUNK 65536
/* Reads per channel and dispatch, so one chatty child cannot starve the
 * rest of the main context. */
#define READS_PER_DISPATCH 16
/* After the end: whatever is left, but not for ever if a grandchild keeps
 * the pipe open and writing. */
#define READS_AFTER_END 1024

/* Buffers */

/* Where the pending bytes start.  A GByteArray that never held a byte
 * has no storage at all: NULL, which memchr() and friends must not get
 * even with a length of 0, and on which no offset may be added. */
static const guint8 *
channel_pending_data (const Channel *c)
{
  static const guint8 nothing[1];

  return c->data->data != NULL ? c->data->data + c->pos : nothing;
}

static void
channel_consume (Channel *c, gsize n)
{
  c->pos += n;
  if (c->pos == c->data->len)
    {
      g_byte_array_set_size (c->data, 0);
      c->pos = 0;
    }
  else if (c->pos > READ_CHUNK && c->pos > c->data->len / 2)
    {
      /* Compact now and then, not per consume: keeps lines O(n). */
      g_byte_array_remove_range (c->data, 0, c->pos);
      c->pos = 0;
    }
}

void
_spawn_process_reset_channel (Channel *c)
{
  g_byte_array_set_size (c->data, 0);
  c->pos = 0;
  c->eof = FALSE;
  c->adopted = FALSE;
  c->at_line_start = TRUE;
}

void
_spawn_process_close_channel (SpawnProcess *self, SpawnProcessChannel i)
{
  Channel *c = &self->channels[i];

  if (c->tag != NULL)
    {
      g_source_remove_unix_fd (self->source, c->tag);
      c->tag = NULL;
    }
  if (c->fd >= 0)
    {
      close (c->fd);
      c->fd = -1;
    }
}

/* Streams (SPAWN_CHANNEL_STREAM) */

/**
 * spawn_process_get_stdin_pipe:
 * @self: a process
 *
 * The program's stdin as a stream, when the channel's mode is
 * %SPAWN_CHANNEL_STREAM, as [method@Gio.Subprocess.get_stdin_pipe].  A new stream
 * at each start; the one of an ended run stays usable (close it to give
 * the program end of file).  Unlike [method@Spawn.Process.write], a write to it
 * after the program closed its stdin raises SIGPIPE unless the
 * application ignores or blocks it, as with GSubprocess's.
 *
 * Returns: (transfer none) (nullable): the stream, or %NULL before the
 *   first start or in another mode
 */
GOutputStream *
spawn_process_get_stdin_pipe (SpawnProcess *self)
{
  GObject *s;

  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  s = self->channels[SPAWN_PROCESS_STDIN].stream;
  return _spawn_process_mode_is_stream (self->started.modes[SPAWN_PROCESS_STDIN])
           ? (GOutputStream *) s : NULL;
}

static GInputStream *
channel_output_stream (SpawnProcess *self, SpawnProcessChannel i)
{
  GObject *s = self->channels[i].stream;

  return _spawn_process_mode_is_stream (self->started.modes[i]) ? (GInputStream *) s : NULL;
}

/**
 * spawn_process_get_stdout_pipe:
 * @self: a process
 *
 * The program's stdout as a stream, when the channel's mode is
 * %SPAWN_CHANNEL_STREAM, as [method@Gio.Subprocess.get_stdout_pipe]: nothing of it
 * is buffered and "ready-read-stdout" is not emitted; read it yourself
 * (it stays readable after the end).  [method@Spawn.Process.communicate]
 * reads it as GSubprocess's does: it takes the pipe back and closes the
 * stream.  A stderr in %SPAWN_CHANNEL_MERGE mode comes through it too.  A
 * new stream at each start.
 *
 * Returns: (transfer none) (nullable): the stream, or %NULL before the
 *   first start or in another mode
 */
GInputStream *
spawn_process_get_stdout_pipe (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return channel_output_stream (self, SPAWN_PROCESS_STDOUT);
}

/**
 * spawn_process_get_stderr_pipe:
 * @self: a process
 *
 * The program's stderr as a stream: see [method@Spawn.Process.get_stdout_pipe].
 *
 * Returns: (transfer none) (nullable): the stream, or %NULL before the
 *   first start or in another mode
 */
GInputStream *
spawn_process_get_stderr_pipe (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  return channel_output_stream (self, SPAWN_PROCESS_STDERR);
}

/* Input */

/* write(2) that cannot raise SIGPIPE, without touching the process-wide
 * disposition: block SIGPIPE in this thread, and if the write raised it
 * (it is sent to the writing thread), take it off the pending set before
 * unblocking.  A SIGPIPE already pending before we started is left alone. */
static ssize_t
channel_write_no_sigpipe (int fd, const void *buf, size_t len)
{
  static const struct timespec zero = { 0, 0 };
  sigset_t pipe_set, old, waiting;
  gboolean was_pending;
  ssize_t n;
  int saved;

  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &pipe_set, &old);
  sigpending (&waiting);
  was_pending = sigismember (&waiting, SIGPIPE);
  do
    n = write (fd, buf, len);
  while (n < 0 && errno == EINTR);
  saved = errno;
  if (n < 0 && saved == EPIPE && !was_pending)
    while (sigtimedwait (&pipe_set, NULL, &zero) < 0 && errno == EINTR)
      ;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  errno = saved;
  return n;
}

static void
channel_watch_stdin (SpawnProcess *self)
{
  Channel *c = &self->channels[SPAWN_PROCESS_STDIN];

  if (c->fd < 0 || self->source == NULL)
    return;
  if (_spawn_process_pending (c) > 0 && c->tag == NULL)
    {
      c->tag = g_source_add_unix_fd (self->source, c->fd, G_IO_OUT);
      _spawn_process_attach_source (self);
    }
  else if (_spawn_process_pending (c) == 0 && c->tag != NULL)
    {
      /* Nothing to say: a closed reader would keep POLLERR raised. */
      g_source_remove_unix_fd (self->source, c->tag);
      c->tag = NULL;
    }
}

/* Closing our copy of a terminal's master tells the program nothing (the
 * channels share the master): it is told what a user at the keyboard
 * tells it, the terminal's end-of-file character (VEOF, ^D).  In
 * canonical mode (ICANON) that ends a read() with what the line holds,
 * and at the start of a line makes it return 0, so a line not ended gets
 * a second one.  In raw mode a program has its own idea of the end, and
 * nothing is sent.  Not written if the terminal has no room for it
 * (EAGAIN): the program then reads on. */
static void
channel_type_eof (SpawnProcess *self, Channel *c)
{
  struct termios t;
  char eof[2];

  if (!_spawn_process_mode_is_pty (self->started.modes[SPAWN_PROCESS_STDIN]) ||
      tcgetattr (c->fd, &t) < 0 || !(t.c_lflag & ICANON) ||
      t.c_cc[VEOF] == _POSIX_VDISABLE)
    return;
  eof[0] = eof[1] = (char) t.c_cc[VEOF];
  if (channel_write_no_sigpipe (c->fd, eof, c->at_line_start ? 1 : 2) > 0)
    self->write_count++;
}

gssize
_spawn_process_write_stdin (SpawnProcess *self)
{
  Channel *c = &self->channels[SPAWN_PROCESS_STDIN];
  gssize written = 0;
  int err = 0;

  while (c->fd >= 0 && _spawn_process_pending (c) > 0)
    {
      ssize_t n = channel_write_no_sigpipe (c->fd, channel_pending_data (c), _spawn_process_pending (c));

      if (n < 0 && errno == EAGAIN)
        break;
      /* What did not go stays counted (bytes_to_write), as QProcess
       * keeps it: it never reached the process. */
      if (n < 0)
        {
          err = -errno;
          self->write_errors++;
          _spawn_process_close_channel (self, SPAWN_PROCESS_STDIN);
          break;
        }
      if (n > 0)
        c->at_line_start = channel_pending_data (c)[n - 1] == '\n';
      channel_consume (c, n);
      written += n;
    }
  if (c->fd >= 0 && _spawn_process_pending (c) == 0 && self->close_write_requested)
    {
      channel_type_eof (self, c);
      _spawn_process_close_channel (self, SPAWN_PROCESS_STDIN);
    }
  channel_watch_stdin (self);
  if (written > 0)
    self->write_count++;
  return err < 0 ? err : written;
}

/* Output */

/* Whether a communicate() of the running run still collects: it
 * returns only at the end, so the read buffer size must not stop the
 * child before that (it would never end). */
static gboolean
channel_collecting (SpawnProcess *self)
{
  GList *l;

  for (l = self->waiters; l != NULL; l = l->next)
    {
      const SpawnProcessWaiter *w = l->data;

      if (w->capture && !w->ended && w->run == self->run)
        return TRUE;
    }
  return FALSE;
}

/* How much channel @i may read now: READ_CHUNK, or less up to the read
 * buffer size. */
static gsize
channel_room (SpawnProcess *self, SpawnProcessChannel i)
{
  gsize pending = _spawn_process_pending (&self->channels[i]);

  if (self->read_buffer_size == 0 || channel_collecting (self))
    return READ_CHUNK;
  return pending >= self->read_buffer_size
    ? 0 : MIN (READ_CHUNK, self->read_buffer_size - pending);
}

gboolean
_spawn_process_output_full (SpawnProcess *self, SpawnProcessChannel i)
{
  return channel_room (self, i) == 0;
}

void
_spawn_process_watch_output (SpawnProcess *self, SpawnProcessChannel i)
{
  Channel *c = &self->channels[i];
  gboolean want = c->fd >= 0 && !_spawn_process_output_full (self, i);

  if (self->source == NULL)
    return;
  /* Out of the source rather than polled for nothing: a pipe whose
   * writers are gone keeps POLLHUP raised, whatever the events asked. */
  if (want && c->tag == NULL)
    {
      c->tag = g_source_add_unix_fd (self->source, c->fd, G_IO_IN);
      _spawn_process_attach_source (self);
    }
  else if (!want && c->tag != NULL)
    {
      g_source_remove_unix_fd (self->source, c->tag);
      c->tag = NULL;
    }
}

gboolean
_spawn_process_read_channel (SpawnProcess *self, SpawnProcessChannel i, gboolean drain,
                             int *errnum)
{
  Channel *c = &self->channels[i];
  gboolean got = FALSE;
  int rounds;

  for (rounds = 0; c->fd >= 0 && rounds < (drain ? READS_AFTER_END : READS_PER_DISPATCH);
       rounds++)
    {
      /* At the end everything is read: the pipe holds at most its
       * capacity once the process is gone. */
      gsize room = drain ? READ_CHUNK : channel_room (self, i);
      guint len = c->data->len;
      ssize_t n;

      if (room == 0)
        break;
      g_byte_array_set_size (c->data, len + room);
      do
        n = read (c->fd, c->data->data + len, room);
      while (n < 0 && errno == EINTR);
      /* A terminal's master reads EIO once every holder of the slave has
       * gone: its end of file, which n_tty_read() answers only after what
       * they wrote has been read (it flushes the buffer work first). */
      if (n < 0 && errno == EIO && _spawn_process_mode_is_pty (self->started.modes[i]))
        n = 0;
      g_byte_array_set_size (c->data, len + MAX (n, 0));
      if (n > 0)
        {
          got = TRUE;
          continue;
        }
      if (n < 0 && errno == EAGAIN)
        break;
      if (n < 0)
        {
          *errnum = errno;
          _spawn_process_close_channel (self, i);
          break;
        }
      c->eof = TRUE;
      _spawn_process_close_channel (self, i);
    }
  if (!drain)
    _spawn_process_watch_output (self, i);
  if (got)
    self->read_count++;
  return got;
}

gboolean
_spawn_process_channel_buffered (SpawnProcess *self, SpawnProcessChannel i)
{
  return self->started.modes[i] == SPAWN_CHANNEL_PIPE ||
         self->started.modes[i] == SPAWN_CHANNEL_PTY ||
         (_spawn_process_mode_is_stream (self->started.modes[i]) && self->channels[i].adopted);
}

/* What is left in the pipe @fd of a process that has ended, into @c's
 * buffer (bounded, as after any end: a grandchild may keep writing). */
static void
channel_read_rest (Channel *c, int fd)
{
  int rounds;

  fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
  for (rounds = 0; rounds < READS_AFTER_END; rounds++)
    {
      guint len = c->data->len;
      ssize_t n;

      g_byte_array_set_size (c->data, len + READ_CHUNK);
      do
        n = read (fd, c->data->data + len, READ_CHUNK);
      while (n < 0 && errno == EINTR);
      g_byte_array_set_size (c->data, len + MAX (n, 0));
      if (n <= 0)
        break;
    }
  c->eof = TRUE;
}

gboolean
_spawn_process_adopt_stream (SpawnProcess *self, SpawnProcessChannel i, GError **error)
{
  static const char * const names[] = { "stdin", "stdout", "stderr" };
  Channel *c = &self->channels[i];
  gboolean closed, pending;
  int fd;

  if (!_spawn_process_mode_is_stream (self->started.modes[i]) || c->stream == NULL ||
      c->adopted)
    return TRUE;
  if (i == SPAWN_PROCESS_STDIN)
    {
      closed = g_output_stream_is_closed (G_OUTPUT_STREAM (c->stream));
      pending = g_output_stream_has_pending (G_OUTPUT_STREAM (c->stream));
    }
  else
    {
      closed = g_input_stream_is_closed (G_INPUT_STREAM (c->stream));
      pending = g_input_stream_has_pending (G_INPUT_STREAM (c->stream));
    }
  if (pending)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PENDING,
                   "Cannot communicate with “%s”: its %s stream has an operation pending",
                   self->argv != NULL ? self->argv[0] : "", names[i]);
      return FALSE;
    }
  c->adopted = TRUE;
  if (closed)
    {
      /* The caller closed it: nothing more comes through it. */
      c->eof = TRUE;
      return TRUE;
    }
  /* The descriptor becomes ours; the stream is closed without it. */
  if (i == SPAWN_PROCESS_STDIN)
    {
      fd = g_unix_output_stream_get_fd (G_UNIX_OUTPUT_STREAM (c->stream));
      g_unix_output_stream_set_close_fd (G_UNIX_OUTPUT_STREAM (c->stream), FALSE);
      g_output_stream_close (G_OUTPUT_STREAM (c->stream), NULL, NULL);
    }
  else
    {
      fd = g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (c->stream));
      g_unix_input_stream_set_close_fd (G_UNIX_INPUT_STREAM (c->stream), FALSE);
      g_input_stream_close (G_INPUT_STREAM (c->stream), NULL, NULL);
    }
  if (self->state != SPAWN_PROCESS_RUNNING || self->source == NULL)
    {
      /* Ended: its output is what is left in the pipe; input is moot. */
      if (i != SPAWN_PROCESS_STDIN)
        channel_read_rest (c, fd);
      close (fd);
      return TRUE;
    }
  fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
  c->fd = fd;
  if (i == SPAWN_PROCESS_STDIN)
    channel_watch_stdin (self);
  else
    _spawn_process_watch_output (self, i);
  return TRUE;
}

/* Reading */

static Channel *
channel_output (SpawnProcess *self, SpawnProcessChannel channel)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), NULL);
  g_return_val_if_fail (channel == SPAWN_PROCESS_STDOUT || channel == SPAWN_PROCESS_STDERR,
                        NULL);
  return &self->channels[channel];
}

/**
 * spawn_process_get_bytes_available:
 * @self: a process
 * @channel: %SPAWN_PROCESS_STDOUT or %SPAWN_PROCESS_STDERR
 *
 * How much output of @channel is buffered, to be read with
 * [method@Spawn.Process.read_all] or [method@Spawn.Process.read_line].
 * Only a %SPAWN_CHANNEL_PIPE or %SPAWN_CHANNEL_PTY channel is buffered
 * (stdout's, when stderr shares its terminal): in any other mode,
 * %SPAWN_CHANNEL_STREAM included, this and the calls that read the buffer
 * find nothing (read the stream of [method@Spawn.Process.get_stdout_pipe]
 * instead, or call [method@Spawn.Process.communicate]).
 *
 * Returns: how many bytes of @channel are buffered
 */
gsize
spawn_process_get_bytes_available (SpawnProcess *self, SpawnProcessChannel channel)
{
  Channel *c = channel_output (self, channel);

  return c != NULL ? _spawn_process_pending (c) : 0;
}

/**
 * spawn_process_read_all:
 * @self: a process
 * @channel: %SPAWN_PROCESS_STDOUT or %SPAWN_PROCESS_STDERR
 *
 * Takes everything buffered for @channel (nothing unless it is a
 * %SPAWN_CHANNEL_PIPE: see [method@Spawn.Process.get_bytes_available]).
 * With a read buffer size ([method@Spawn.Process.set_read_buffer_size]),
 * emptying the buffer lets the reading of the pipe go on.
 *
 * Returns: (transfer full): the bytes, maybe none
 */
GBytes *
spawn_process_read_all (SpawnProcess *self, SpawnProcessChannel channel)
{
  Channel *c = channel_output (self, channel);
  GBytes *bytes;

  if (c == NULL)
    return NULL;
  bytes = g_bytes_new (channel_pending_data (c), _spawn_process_pending (c));
  g_byte_array_set_size (c->data, 0);
  c->pos = 0;
  /* Room again below the read buffer size: read on. */
  _spawn_process_watch_output (self, channel);
  return bytes;
}

static const guint8 *
channel_find_newline (Channel *c)
{
  return memchr (channel_pending_data (c), '\n', _spawn_process_pending (c));
}

/**
 * spawn_process_can_read_line:
 * @self: a process
 * @channel: %SPAWN_PROCESS_STDOUT or %SPAWN_PROCESS_STDERR
 *
 * Whether a whole line (or, once @channel is closed, a last unterminated
 * one) is buffered on @channel, as QProcess::canReadLine().
 *
 * Returns: %TRUE if [method@Spawn.Process.read_line] would return a line
 */
gboolean
spawn_process_can_read_line (SpawnProcess *self, SpawnProcessChannel channel)
{
  Channel *c = channel_output (self, channel);

  if (c == NULL)
    return FALSE;
  return channel_find_newline (c) != NULL || (c->eof && _spawn_process_pending (c) > 0);
}

/**
 * spawn_process_read_line:
 * @self: a process
 * @channel: %SPAWN_PROCESS_STDOUT or %SPAWN_PROCESS_STDERR
 *
 * Takes one line from the buffer of @channel, without its newline.  Once
 * the process has closed @channel, a last line without a newline is
 * returned too.  This is for text: a line holding a NUL byte reads as
 * cut there; use [method@Spawn.Process.read_all] for binary output.
 *
 * Returns: (transfer full) (nullable): the line, or %NULL if no whole line
 *   is buffered
 */
char *
spawn_process_read_line (SpawnProcess *self, SpawnProcessChannel channel)
{
  Channel *c = channel_output (self, channel);
  const guint8 *nl;
  const char *start;
  gsize len;
  char *line;

  if (c == NULL)
    return NULL;
  start = (const char *) channel_pending_data (c);
  nl = channel_find_newline (c);
  if (nl != NULL)
    len = (const char *) nl - start;
  else if (c->eof && _spawn_process_pending (c) > 0)
    len = _spawn_process_pending (c);
  else
    return NULL;
  line = g_strndup (start, len);
  channel_consume (c, MIN (len + 1, _spawn_process_pending (c)));
  _spawn_process_watch_output (self, channel);
  return line;
}

/**
 * spawn_process_get_bytes_to_write:
 * @self: a process
 *
 * How much of the input given to [method@Spawn.Process.write] has not reached the
 * process yet.  After the process has ended, what it never read stays
 * counted here until the next start empties the buffer, as
 * QProcess::bytesToWrite() does; it is never written to a later run.
 *
 * Returns: how many bytes written with [method@Spawn.Process.write] still wait
 *   for the pipe
 */
gsize
spawn_process_get_bytes_to_write (SpawnProcess *self)
{
  g_return_val_if_fail (SPAWN_IS_PROCESS (self), 0);
  return _spawn_process_pending (&self->channels[SPAWN_PROCESS_STDIN]);
}
