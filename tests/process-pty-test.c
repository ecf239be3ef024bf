/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* Programs on a pseudo-terminal: SPAWN_CHANNEL_PTY channels of a
 * SpawnProcess and, a layer down, SpawnPty with spawn_pty_spawn() and
 * SPAWN_CHILD_CONTROLLING_TERMINAL.  The programs (spawn-helper tty-*)
 * check isatty() and their controlling terminal, read a password with
 * echo off, react to SIGWINCH and are interrupted by a ^C written to the
 * master; the end of the program is the master's EIO, read as end of
 * file after everything it wrote.  Every case runs once per backend
 * (/spawn/pty/<backend>/...).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gio/gio.h>
#include <libspawn/libspawn.h>
#include "process-testutil.h"

typedef struct {
  Events *ev;
  const char *want;
} Awaited;

static gboolean
output_has (gpointer data)
{
  Awaited *a = data;

  /* A GByteArray that never held a byte has no data at all. */
  return a->ev->out->len > 0 &&
         g_strstr_len ((const char *) a->ev->out->data, a->ev->out->len, a->want) != NULL;
}

/* Runs the context until the collected stdout holds @want. */
static void
await_output (Events *ev, const char *want)
{
  Awaited a = { ev, want };

  if (!iterate_until (output_has, &a, WAIT_MS))
    g_error ("no “%s” in the output: “%.*s”", want, (int) ev->out->len,
             (const char *) ev->out->data);
}

static char *
collected (Events *ev)
{
  return g_strndup ((const char *) ev->out->data, ev->out->len);
}

/* A helper process with its three channels on one terminal, collecting. */
static SpawnProcess *
pty_process (Events *ev, const char *cmd, const char *arg)
{
  SpawnProcess *proc = testutil_helper_process (cmd, arg, NULL);
  int i;

  for (i = 0; i < 3; i++)
    spawn_process_set_channel_mode (proc, i, SPAWN_CHANNEL_PTY);
  events_watch (ev, proc);
  ev->collect = TRUE;
  return proc;
}

static void
test_isatty (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = NULL;
  g_autofree char *out = NULL;
  int fds_before;

  g_test_summary ("SPAWN_CHANNEL_PTY on all three channels: the program finds a "
                  "terminal on 0, 1 and 2, has it as its controlling terminal "
                  "(/dev/tty opens), leads its session, is the foreground group; "
                  "its output is read until the master's EIO, as end of file, "
                  "and no descriptor of ours is left");
  if (!testutil_use_backend (data))
    return;
  warm_up ();
  fds_before = testutil_count_fds ();
  proc = pty_process (&ev, "tty-check", NULL);
  testutil_start_ok (proc);
  g_assert_nonnull (spawn_process_get_pty (proc));
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  /* EIO was end of file, not a read error. */
  g_assert_cmpuint (ev.errors->len, ==, 0);
  out = collected (&ev);
  /* The terminal's output processing (ONLCR): \r\n. */
  g_assert_cmpstr (out, ==, "isatty 0=1 1=1 2=1 ctty=1 leader=1 fg=1\r\n");
  g_clear_object (&proc);
  events_clear (&ev);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

static void
test_stdout_only (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = testutil_helper_process ("tty-check", NULL);
  g_autofree char *out = NULL;

  g_test_summary ("stdout alone on a terminal: isatty() only there, and still "
                  "the controlling terminal (the first of 0-2 that is one)");
  if (!testutil_use_backend (data))
    return;
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_PTY);
  events_watch (&ev, proc);
  ev.collect = TRUE;
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  out = collected (&ev);
  /* fg: tcgetpgrp(0) on /dev/null fails, so 0. */
  g_assert_cmpstr (out, ==, "isatty 0=0 1=1 2=0 ctty=1 leader=1 fg=0\r\n");
  events_clear (&ev);
}

static void
test_password (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = NULL;
  g_autofree char *out = NULL;
  GError *error = NULL;
  const char *p;

  g_test_summary ("the line discipline is a terminal's: a name typed at the "
                  "prompt is echoed, a password read with ECHO off is not, and "
                  "the program gets both lines");
  if (!testutil_use_backend (data))
    return;
  proc = pty_process (&ev, "tty-login", NULL);
  testutil_start_ok (proc);
  await_output (&ev, "Login: ");
  g_assert_true (spawn_process_write (proc, "alice\n", 6, &error));
  g_assert_no_error (error);
  await_output (&ev, "Password: ");
  g_assert_true (spawn_process_write (proc, "hunter2\n", 8, &error));
  g_assert_no_error (error);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  out = collected (&ev);
  g_assert_null (strstr (out, "hunter2"));
  /* The echo of the name, before the password prompt. */
  p = strstr (out, "Login: alice\r\n");
  g_assert_nonnull (p);
  g_assert_nonnull (strstr (p, "Password: "));
  g_assert_nonnull (strstr (out, "user=alice password-length=7\r\n"));
  events_clear (&ev);
}

static void
test_winch (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = NULL;
  g_autofree char *out = NULL;
  GError *error = NULL;
  guint16 rows = 0, columns = 0;

  g_test_summary ("the window size set before the start is the terminal's at "
                  "start; set while running, the program gets SIGWINCH and "
                  "reads the new size");
  if (!testutil_use_backend (data))
    return;
  proc = pty_process (&ev, "tty-winch", NULL);
  g_assert_true (spawn_process_set_window_size (proc, 30, 100, &error));
  g_assert_no_error (error);
  testutil_start_ok (proc);
  await_output (&ev, "size 30 100\r\n");
  g_assert_true (spawn_process_set_window_size (proc, 40, 120, &error));
  g_assert_no_error (error);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  out = collected (&ev);
  g_assert_cmpstr (out, ==, "size 30 100\r\nwinch 40 120\r\n");
  g_assert_true (spawn_pty_get_size (spawn_process_get_pty (proc), &rows, &columns, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rows, ==, 40);
  g_assert_cmpuint (columns, ==, 120);
  spawn_process_get_window_size (proc, &rows, &columns);
  g_assert_cmpuint (rows, ==, 40);
  g_assert_cmpuint (columns, ==, 120);
  events_clear (&ev);
}

static void
test_interrupt (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;

  g_test_summary ("^C written to the master is the terminal's INTR: SIGINT to "
                  "the foreground process group, which ends the program "
                  "(it would exit 0 if the byte reached it as input), also "
                  "when we were started with SIGINT ignored");
  struct sigaction ignore = { .sa_handler = SIG_IGN }, old;

  if (!testutil_use_backend (data))
    return;
  proc = pty_process (&ev, "tty-wait-intr", NULL);
  /* Started with SIGINT ignored, as a shell's background job is (CI's
   * run was): the child on its own terminal still gets the default. */
  g_assert_no_errno (sigaction (SIGINT, &ignore, &old));
  testutil_start_ok (proc);
  g_assert_no_errno (sigaction (SIGINT, &old, NULL));
  await_output (&ev, "ready\r\n");
  g_assert_true (spawn_process_write (proc, "\003", 1, &error));
  g_assert_no_error (error);
  run_until_finished (&ev);
  assert_crashed (proc, &ev, SIGINT);
  events_clear (&ev);
}

static void
test_drain (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = NULL;
  guint i;

  g_test_summary ("a program that writes more than the terminal buffers and "
                  "exits at once: every byte is read before the master's EIO "
                  "ends the channel, and EIO is no error");
  if (!testutil_use_backend (data))
    return;
  proc = pty_process (&ev, "tty-flood", "300000");
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_assert_cmpuint (ev.errors->len, ==, 0);
  g_assert_cmpuint (ev.out->len, ==, 300000);
  for (i = 0; i < ev.out->len; i++)
    g_assert_cmpint (ev.out->data[i], ==, 'x');
  events_clear (&ev);
}

static void
test_communicate (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autofree char *out = NULL, *err = NULL;
  GError *error = NULL;

  g_test_summary ("communicate() on a terminal: the input goes through the "
                  "line discipline (echoed), closing stdin types ^D (twice, "
                  "the line not being ended), so `cat` sees its end of file, "
                  "and stderr shares stdout's terminal and buffer");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("cat", NULL);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_PTY);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_PTY);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_PTY);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_communicate_utf8 (proc, "abc", NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_get_successful (proc));
  /* The echo, then what cat copied. */
  g_assert_cmpstr (out, ==, "abcabc");
  g_assert_cmpstr (err, ==, "");
}

static void
test_lower_layer (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "tty-check", NULL };
  g_autoptr (SpawnPty) pty = NULL;
  g_autoptr (SpawnChild) child = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  SpawnExitInfo info;
  GError *error = NULL;
  guint16 rows, columns;

  g_test_summary ("spawn_pty_spawn(): the slave is the child's stdio and "
                  "controlling terminal and our copy is closed, so "
                  "spawn_pty_read_bytes() reads its output, then end of file "
                  "(no bytes) where read(2) says EIO; a second spawn on the "
                  "same terminal is refused");
  if (!testutil_use_backend (data))
    return;
  pty = spawn_pty_new (0, 0, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_pty_get_size (pty, &rows, &columns, &error));
  g_assert_cmpuint (rows, ==, 24);
  g_assert_cmpuint (columns, ==, 80);
  g_assert_true (g_str_has_prefix (spawn_pty_get_slave_name (pty), "/dev/pts/"));
  g_assert_cmpint (spawn_pty_get_slave_fd (pty), >, 2);
  child = spawn_pty_spawn (pty, NULL, argv, NULL, 0, SPAWN_CHILD_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (child);
  g_assert_cmpint (spawn_pty_get_slave_fd (pty), ==, -1);
  for (;;)
    {
      g_autoptr (GBytes) bytes = spawn_pty_read_bytes (pty, 4096, &error);

      g_assert_no_error (error);
      if (g_bytes_get_size (bytes) == 0)
        break;
      g_string_append_len (out, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
    }
  g_assert_cmpstr (out->str, ==, "isatty 0=1 1=1 2=1 ctty=1 leader=1 fg=1\r\n");
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, 0);
  g_clear_pointer (&child, spawn_child_unref);

  child = spawn_pty_spawn (pty, NULL, argv, NULL, 0, SPAWN_CHILD_FLAGS_NONE, &error);
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_assert_null (child);
  g_clear_error (&error);
}

static void
test_no_terminal (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "exit", "0", NULL };
  g_autoptr (SpawnChild) child = NULL;
  GError *error = NULL;
  int fds_before;

  g_test_summary ("SPAWN_CHILD_CONTROLLING_TERMINAL without a terminal on 0-2: "
                  "the start fails (ENOTTY, the step named), leaving no child, "
                  "zombie or descriptor");
  if (!testutil_use_backend (data))
    return;
  warm_up ();
  fds_before = testutil_count_fds ();
  child = spawn_async_fd_full (NULL, argv, NULL, G_SPAWN_STDIN_FROM_DEV_NULL |
                               G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                               NULL, NULL, -1, -1, -1, NULL, NULL, 0, NULL, NULL, NULL,
                               SPAWN_CHILD_CONTROLLING_TERMINAL, &error);
  g_assert_null (child);
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "controlling terminal"));
  g_assert_nonnull (strstr (error->message, testutil_helper));
  g_assert_nonnull (strstr (error->message, g_strerror (ENOTTY)));
  g_clear_error (&error);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

static void
test_restart (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = NULL;
  SpawnPty *first;
  int run;

  g_test_summary ("each start gets a terminal of its own (the last one's slave "
                  "is gone)");
  if (!testutil_use_backend (data))
    return;
  proc = pty_process (&ev, "tty-check", NULL);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  first = spawn_pty_ref (spawn_process_get_pty (proc));
  for (run = 0; run < 2; run++)
    {
      g_byte_array_set_size (ev.out, 0);
      ev.finished = 0;
      testutil_start_ok (proc);
      run_until_finished (&ev);
      g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 0);
      g_assert_true (spawn_process_get_pty (proc) != first);
      g_assert_cmpuint (ev.out->len, >, 0);
    }
  spawn_pty_unref (first);
  events_clear (&ev);
}

/* Everything @stream gives until its end of file, which must come
 * without an error. */
static char *
read_stream_to_end (GInputStream *stream)
{
  g_autoptr (GString) out = g_string_new (NULL);
  char buf[4096];
  GError *error = NULL;
  gssize n;

  while ((n = g_input_stream_read (stream, buf, sizeof buf, NULL, &error)) > 0)
    g_string_append_len (out, buf, n);
  g_assert_no_error (error);
  g_assert_cmpint (n, ==, 0);
  return g_strdup (out->str);
}

static void
test_stream (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = testutil_helper_process ("cat", NULL);
  g_autofree char *out = NULL;
  GOutputStream *in;
  GError *error = NULL;
  int i;

  g_test_summary ("SPAWN_CHANNEL_PTY_STREAM: GIO streams on the terminal's "
                  "master; a line written is echoed and copied, ^D written "
                  "ends `cat`, and the input stream reads the master's EIO as "
                  "end of file, not as G_IO_ERROR_FAILED");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < 3; i++)
    spawn_process_set_channel_mode (proc, i, SPAWN_CHANNEL_PTY_STREAM);
  testutil_start_ok (proc);
  g_assert_null (spawn_process_get_stderr_pipe (proc));
  in = spawn_process_get_stdin_pipe (proc);
  g_assert_nonnull (in);
  g_assert_true (g_output_stream_write_all (in, "hello\n\004", 7, NULL, NULL, &error));
  g_assert_no_error (error);
  out = read_stream_to_end (spawn_process_get_stdout_pipe (proc));
  g_assert_cmpstr (out, ==, "hello\r\nhello\r\n");
  wait_finished_ok (proc, WAIT_MS);
  g_assert_true (spawn_process_get_successful (proc));
}

static void
on_read_bytes (GObject *source, GAsyncResult *result, gpointer data)
{
  GString *out = data;
  GError *error = NULL;
  g_autoptr (GBytes) bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source),
                                                               result, &error);

  g_assert_no_error (error);
  if (g_bytes_get_size (bytes) == 0)
    {
      g_string_append (out, "<eof>");
      return;
    }
  g_string_append_len (out, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_input_stream_read_bytes_async (G_INPUT_STREAM (source), 4096, G_PRIORITY_DEFAULT, NULL,
                                   on_read_bytes, out);
}

static gboolean
string_ends_eof (gpointer data)
{
  return g_str_has_suffix (((GString *) data)->str, "<eof>");
}

static void
test_stream_async (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = testutil_helper_process ("tty-check", NULL);
  g_autoptr (GString) out = g_string_new (NULL);
  GError *error = NULL;

  g_test_summary ("the input stream of a SPAWN_CHANNEL_PTY_STREAM stdout read "
                  "asynchronously, from the main loop, to its end of file");
  if (!testutil_use_backend (data))
    return;
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_PTY);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_PTY_STREAM);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_PTY);
  testutil_start_ok (proc);
  g_input_stream_read_bytes_async (spawn_process_get_stdout_pipe (proc), 4096,
                                   G_PRIORITY_DEFAULT, NULL, on_read_bytes, out);
  g_assert_true (iterate_until (string_ends_eof, out, WAIT_MS));
  g_assert_cmpstr (out->str, ==, "isatty 0=1 1=1 2=1 ctty=1 leader=1 fg=1\r\n<eof>");
  /* The loop may have seen the end already: GSubprocess's wait, which
   * returns at once then (wait_for_finished() would fail, as QProcess's). */
  g_assert_true (spawn_process_wait (proc, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_get_successful (proc));
}

static void
test_stream_communicate (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = testutil_helper_process ("cat", NULL);
  g_autofree char *out = NULL;
  GError *error = NULL;
  int i;

  g_test_summary ("communicate() takes SPAWN_CHANNEL_PTY_STREAM channels back "
                  "from their streams, as it does pipes, and ends the input "
                  "with the terminal's ^D");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < 3; i++)
    spawn_process_set_channel_mode (proc, i, SPAWN_CHANNEL_PTY_STREAM);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_communicate_utf8 (proc, "abc", NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "abcabc");
  g_assert_true (spawn_process_get_successful (proc));
}

static void
test_lower_layer_stream (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "tty-check", NULL };
  g_autoptr (SpawnPty) pty = NULL;
  g_autoptr (SpawnChild) child = NULL;
  g_autofree char *out = NULL;
  SpawnExitInfo info;
  GError *error = NULL;

  g_test_summary ("spawn_pty_get_input_stream(): the master read through GIO, "
                  "to an end of file where read(2) says EIO");
  if (!testutil_use_backend (data))
    return;
  pty = spawn_pty_new (0, 0, &error);
  g_assert_no_error (error);
  child = spawn_pty_spawn (pty, NULL, argv, NULL, 0, SPAWN_CHILD_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_pty_get_input_stream (pty) == spawn_pty_get_input_stream (pty));
  out = read_stream_to_end (spawn_pty_get_input_stream (pty));
  g_assert_cmpstr (out, ==, "isatty 0=1 1=1 2=1 ctty=1 leader=1 fg=1\r\n");
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.status, ==, 0);
  /* The master is still ours: the stream had a copy. */
  g_assert_true (g_input_stream_close (spawn_pty_get_input_stream (pty), NULL, NULL));
  g_assert_cmpint (fcntl (spawn_pty_get_master_fd (pty), F_GETFD), >=, 0);
}

/* Fills the fd table (below a lowered RLIMIT_NOFILE) but for @room
 * descriptors; returns the fillers, to close. */
static GArray *
fill_fd_table (int room)
{
  struct rlimit rl = { 64, 64 };
  GArray *fillers = g_array_new (FALSE, FALSE, sizeof (int));
  int fd;

  g_assert_no_errno (setrlimit (RLIMIT_NOFILE, &rl));
  while ((fd = dup (0)) >= 0)
    g_array_append_val (fillers, fd);
  g_assert_cmpint (errno, ==, EMFILE);
  for (; room > 0; room--)
    {
      close (g_array_index (fillers, int, fillers->len - 1));
      g_array_set_size (fillers, fillers->len - 1);
    }
  return fillers;
}

static void
close_fillers (GArray *fillers)
{
  guint i;

  for (i = 0; i < fillers->len; i++)
    close (g_array_index (fillers, int, i));
  g_array_unref (fillers);
}

static void
test_fd_table_full (gconstpointer data)
{
  Events ev = { 0 };
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;
  int fds_before, room;

  g_test_summary ("no room for the terminal (no fd at all, or the master but "
                  "not the slave): spawn_pty_new() and a start with PTY "
                  "channels fail with SPAWN_ERROR_MFILE, the message naming "
                  "the program, and leave no descriptor or child behind");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  warm_up ();
  proc = pty_process (&ev, "tty-check", NULL);
  fds_before = testutil_count_fds ();
  for (room = 0; room < 2; room++)
    {
      GArray *fillers = fill_fd_table (room);
      SpawnPty *pty = spawn_pty_new (0, 0, &error);

      g_assert_null (pty);
      g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_MFILE);
      g_assert_nonnull (strstr (error->message, "pseudo-terminal"));
      g_clear_error (&error);
      g_assert_false (spawn_process_start (proc, &error));
      g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_MFILE);
      g_assert_nonnull (strstr (error->message, testutil_helper));
      g_clear_error (&error);
      close_fillers (fillers);
      g_assert_cmpint (testutil_count_fds (), ==, fds_before);
    }
  g_assert_cmpint (ev.started, ==, 0);
  g_assert_null (spawn_process_get_pty (proc));
  testutil_assert_no_children ();
  events_clear (&ev);
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "isatty", test_isatty },
    { "stdout-only", test_stdout_only },
    { "password", test_password },
    { "winch", test_winch },
    { "interrupt", test_interrupt },
    { "drain", test_drain },
    { "communicate", test_communicate },
    { "restart", test_restart },
    { "stream", test_stream },
    { "stream-async", test_stream_async },
    { "stream-communicate", test_stream_communicate },
    { "lower-layer", test_lower_layer },
    { "lower-layer-stream", test_lower_layer_stream },
    { "no-terminal", test_no_terminal },
    { "fd-table-full", test_fd_table_full },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/pty", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
