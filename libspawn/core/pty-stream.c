/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* pty-stream.c - a GInputStream on a pseudo-terminal's master
 *
 * A GUnixInputStream whose read reports the master's EIO as end of file:
 * the kernel answers EIO once every process holding the slave has gone,
 * after what they wrote has been read, and a plain GUnixInputStream
 * would make that a G_IO_ERROR_FAILED.  Only read_fn changes: the
 * pollable and async reads of GInputStream and GPollableInputStream come
 * down to it (GUnixInputStream's own pollable calls only poll the fd).
 * The fd may be non-blocking (the process layer shares the master's open
 * file, and with it O_NONBLOCK): the read polls first, as GLib's does.
 */
#include "core-private.h"

#include <errno.h>
#include <gio/gunixinputstream.h>
#include <unistd.h>

typedef struct {
  GUnixInputStream parent_instance;
} SpawnPtyInputStream;

typedef struct {
  GUnixInputStreamClass parent_class;
} SpawnPtyInputStreamClass;

static GType spawn_pty_input_stream_get_type (void);
G_DEFINE_TYPE (SpawnPtyInputStream, spawn_pty_input_stream, G_TYPE_UNIX_INPUT_STREAM)

/* Waits until @fd is readable or @cancellable is cancelled: FALSE with
 * @error on cancellation or a failed poll. */
static gboolean
pty_stream_wait (int fd, GCancellable *cancellable, GError **error)
{
  GPollFD pfd[2] = { { fd, G_IO_IN, 0 }, { -1, 0, 0 } };
  int nfds = g_cancellable_make_pollfd (cancellable, &pfd[1]) ? 2 : 1;
  int ret, saved;

  do
    ret = g_poll (pfd, nfds, -1);
  while (ret < 0 && errno == EINTR);
  saved = errno;
  if (nfds == 2)
    g_cancellable_release_fd (cancellable);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (ret < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot wait for the pseudo-terminal: %s", g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gssize
pty_stream_read (GInputStream *stream, void *buffer, gsize count,
                 GCancellable *cancellable, GError **error)
{
  int fd = g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (stream));

  for (;;)
    {
      ssize_t n;

      if (!pty_stream_wait (fd, cancellable, error))
        return -1;
      n = read (fd, buffer, count);
      if (n >= 0)
        return n;
      /* Every holder of the slave has gone, and all they wrote is read. */
      if (errno == EIO)
        return 0;
      if (errno != EINTR && errno != EAGAIN)
        {
          int saved = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot read from the pseudo-terminal: %s", g_strerror (saved));
          return -1;
        }
    }
}

static void
spawn_pty_input_stream_class_init (SpawnPtyInputStreamClass *klass)
{
  G_INPUT_STREAM_CLASS (klass)->read_fn = pty_stream_read;
}

static void
spawn_pty_input_stream_init (SpawnPtyInputStream *self G_GNUC_UNUSED)
{
}

GInputStream *
_spawn_pty_input_stream_new (int fd)
{
  return g_object_new (spawn_pty_input_stream_get_type (), "fd", fd, "close-fd", TRUE, NULL);
}
