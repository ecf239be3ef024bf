/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* A GSubprocess program ported by renaming its calls: spawn_process_newv()
 * and spawn_process_set_subprocess_flags() with GIO's own GSubprocessFlags,
 * each flag and none meaning what they mean to GSubprocess (stdin from
 * /dev/null, stdout and stderr really ours); communicate() over
 * SPAWN_CHANNEL_STREAM channels, as GSubprocess's reads its pipes, and the
 * calls that read a buffer a stream channel does not have; the read buffer
 * size (QAbstractSocket::setReadBufferSize()), which stops reading a pipe
 * rather than let our memory grow, except for communicate().
 * Every case runs once per backend (/spawn/flags/<backend>/...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <libspawn/libspawn.h>
#include "process-testutil.h"

/* "st_dev:st_ino" of @fd, as `stat -L -c %d:%i` prints it; NULL if it is
 * not open. */
static char *
identity_of_fd (int fd)
{
  struct stat st;

  if (fstat (fd, &st) < 0)
    return NULL;
  return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT "\n",
                          (guint64) st.st_dev, (guint64) st.st_ino);
}

static char *
identity_of_path (const char *path)
{
  struct stat st;

  g_assert_no_errno (stat (path, &st));
  return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT "\n",
                          (guint64) st.st_dev, (guint64) st.st_ino);
}

/* What the shell @script prints on the channel @flags pipe, with
 * communicate_utf8() over the streams; it must exit 0. */
static char *
output_with_flags (const char *script, GSubprocessFlags flags, gboolean from_stderr)
{
  const char *argv[] = { "sh", "-c", script, NULL };
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;
  char *out = NULL, *err = NULL;

  proc = spawn_process_newv (argv, flags, &error);
  g_assert_no_error (error);
  g_assert_nonnull (proc);
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_get_successful (proc));
  if (from_stderr)
    {
      g_free (out);
      return err;
    }
  g_free (err);
  return out;
}

static void
test_none (gconstpointer data)
{
  const char *argv[] = { "sh", "-c", "read x; echo \"stdout-is-ours read:$?\"; "
                         "echo stderr-is-ours >&2", NULL };
  g_autofree char *null_id = NULL, *stdin_id = NULL;
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;

  g_test_summary ("G_SUBPROCESS_FLAGS_NONE means what it means to GSubprocess: "
                  "stdin is /dev/null (so `read x` ends at once instead of "
                  "hanging), stdout and stderr are really the parent's, "
                  "no stream, and the last unref leaves the process running");
  if (!testutil_use_backend (data) ||
      !testutil_isolated_output ("*stdout-is-ours read:1*", "*stderr-is-ours*"))
    return;
  /* In the subprocess, whose stdout and stderr the test process reads. */
  proc = spawn_process_newv (argv, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDIN), ==,
                   SPAWN_CHANNEL_DISCARD);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDOUT), ==,
                   SPAWN_CHANNEL_FORWARD);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDERR), ==,
                   SPAWN_CHANNEL_FORWARD);
  g_assert_cmpint (spawn_process_get_dispose_policy (proc), ==, SPAWN_DISPOSE_LEAVE_RUNNING);
  g_assert_cmpint (spawn_process_get_flags (proc), ==, SPAWN_PROCESS_FLAGS_NONE);
  g_assert_null (spawn_process_get_stdin_pipe (proc));
  g_assert_null (spawn_process_get_stdout_pipe (proc));
  g_assert_null (spawn_process_get_stderr_pipe (proc));
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 0);
  g_clear_object (&proc);

  /* stdin really is /dev/null. */
  null_id = identity_of_path ("/dev/null");
  stdin_id = output_with_flags ("stat -L -c %d:%i /proc/self/fd/0",
                                G_SUBPROCESS_FLAGS_STDOUT_PIPE, FALSE);
  g_assert_cmpstr (stdin_id, ==, null_id);
}

static void
test_read_does_not_hang (gconstpointer data)
{
  const char *argv[] = { "sh", "-c", "read x; exit 7", NULL };
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;

  g_test_summary ("the ported `sh -c 'read x'` + wait ends with "
                  "G_SUBPROCESS_FLAGS_NONE; with SpawnProcess's own default "
                  "(QProcess's: stdin a pipe left open) the same wait would "
                  "block, which is the trap the mapping table warns of");
  if (!testutil_use_backend (data))
    return;
  proc = spawn_process_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error);
  g_assert_no_error (error);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_get_if_exited (proc));
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 7);
  g_clear_object (&proc);

  /* The contrast: spawn_process_new()'s stdin pipe stays open. */
  proc = spawn_process_new (argv);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (proc);
  g_assert_false (spawn_process_wait_for_finished (proc, 100, NULL, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
  g_clear_error (&error);
  spawn_process_close_write_channel (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 7);
}

static void
test_stdin_flags (gconstpointer data)
{
  const char *cat[] = { "cat", NULL };
  g_autofree char *ours = NULL, *got = NULL;
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;
  GOutputStream *in;
  GInputStream *out;
  char buf[64];
  gsize n = 0;

  g_test_summary ("STDIN_PIPE hands stdin out as a stream (get_stdin_pipe), "
                  "STDIN_INHERIT gives the program our own stdin");
  if (!testutil_use_backend (data))
    return;
  proc = spawn_process_newv (cat, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                             &error);
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDIN), ==,
                   SPAWN_CHANNEL_STREAM);
  in = spawn_process_get_stdin_pipe (proc);
  out = spawn_process_get_stdout_pipe (proc);
  g_assert_true (G_IS_OUTPUT_STREAM (in));
  g_assert_true (G_IS_INPUT_STREAM (out));
  g_assert_true (g_output_stream_write_all (in, "through\n", 8, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_output_stream_close (in, NULL, &error));
  g_assert_true (g_input_stream_read_all (out, buf, sizeof buf, &n, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (buf, n, "through\n", 8);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&proc);

  ours = identity_of_fd (STDIN_FILENO);
  if (ours == NULL)
    {
      g_test_skip ("our stdin is closed: nothing to inherit");
      return;
    }
  got = output_with_flags ("stat -L -c %d:%i /proc/self/fd/0",
                           G_SUBPROCESS_FLAGS_STDIN_INHERIT | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                           FALSE);
  g_assert_cmpstr (got, ==, ours);
}

static void
test_stdout_flags (gconstpointer data)
{
  g_autofree char *null_id = NULL, *piped = NULL, *silenced = NULL;

  g_test_summary ("STDOUT_PIPE gives the output through the stdout stream, "
                  "STDOUT_SILENCE sends it to /dev/null");
  if (!testutil_use_backend (data))
    return;
  piped = output_with_flags ("echo out", G_SUBPROCESS_FLAGS_STDOUT_PIPE, FALSE);
  g_assert_cmpstr (piped, ==, "out\n");
  null_id = identity_of_path ("/dev/null");
  silenced = output_with_flags ("x=$(stat -L -c %d:%i /proc/$$/fd/1); echo \"$x\" >&2",
                                G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                G_SUBPROCESS_FLAGS_STDERR_PIPE, TRUE);
  g_assert_cmpstr (silenced, ==, null_id);
}

static void
test_stderr_flags (gconstpointer data)
{
  const char *script = "echo out; echo err >&2";
  const char *argv[] = { "sh", "-c", script, NULL };
  g_autofree char *null_id = NULL, *piped = NULL, *silenced = NULL;
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;
  char *out = NULL, *err = NULL;

  g_test_summary ("STDERR_PIPE gives stderr through its stream, STDERR_SILENCE "
                  "sends it to /dev/null, STDERR_MERGE into wherever stdout goes "
                  "(the stdout stream here), so communicate's stderr is NULL");
  if (!testutil_use_backend (data))
    return;
  piped = output_with_flags (script, G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                             G_SUBPROCESS_FLAGS_STDERR_PIPE, TRUE);
  g_assert_cmpstr (piped, ==, "err\n");
  null_id = identity_of_path ("/dev/null");
  silenced = output_with_flags ("stat -L -c %d:%i /proc/self/fd/2",
                                G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                G_SUBPROCESS_FLAGS_STDERR_SILENCE, FALSE);
  g_assert_cmpstr (silenced, ==, null_id);

  proc = spawn_process_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                             G_SUBPROCESS_FLAGS_STDERR_MERGE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDERR), ==,
                   SPAWN_CHANNEL_MERGE);
  g_assert_null (spawn_process_get_stderr_pipe (proc));
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "out\nerr\n");
  g_assert_null (err);
  g_free (out);
}

static void
test_inherit_fds (gconstpointer data)
{
  g_autofree char *script = NULL, *with = NULL, *without = NULL;
  int fds[2];

  g_test_summary ("INHERIT_FDS leaves a descriptor without close-on-exec open "
                  "in the program; without it, the program does not get it");
  if (!testutil_use_backend (data))
    return;
  g_assert_no_errno (pipe (fds));
  script = g_strdup_printf ("if test -e /proc/self/fd/%d; then echo open; "
                            "else echo closed; fi", fds[0]);
  with = output_with_flags (script, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                            G_SUBPROCESS_FLAGS_INHERIT_FDS, FALSE);
  without = output_with_flags (script, G_SUBPROCESS_FLAGS_STDOUT_PIPE, FALSE);
  close (fds[0]);
  close (fds[1]);
  g_assert_cmpstr (with, ==, "open\n");
  g_assert_cmpstr (without, ==, "closed\n");
}

static void
test_search_path_from_envp (gconstpointer data)
{
  const char *argv[] = { "only-in-envp-path", NULL };
  g_autofree char *dir = NULL, *prog = NULL, *path_env = NULL;
  g_autoptr (SpawnProcess) proc = NULL;
  const char *env[2];
  GError *error = NULL;
  char *out = NULL;

  g_test_summary ("SEARCH_PATH_FROM_ENVP looks the program up in the PATH of "
                  "the environment it gets (set_subprocess_flags, as the "
                  "launcher's flags); set_subprocess_flags without it clears it; "
                  "an environment without PATH gets GLib's default, not ours, "
                  "as GSubprocess");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("flags-test-XXXXXX", &error);
  g_assert_no_error (error);
  prog = g_build_filename (dir, argv[0], NULL);
  g_assert_true (g_file_set_contents (prog, "#!/bin/sh\necho found\n", -1, &error));
  g_assert_no_errno (chmod (prog, 0755));
  path_env = g_strconcat ("PATH=", dir, NULL);
  env[0] = path_env;
  env[1] = NULL;

  proc = spawn_process_new (argv);
  spawn_process_set_environment (proc, env);
  spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                      G_SUBPROCESS_FLAGS_SEARCH_PATH_FROM_ENVP);
  g_assert_cmpint (spawn_process_get_flags (proc), ==,
                   SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "found\n");
  g_free (out);

  spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_assert_cmpint (spawn_process_get_flags (proc), ==, SPAWN_PROCESS_FLAGS_NONE);
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_nonnull (error);
  g_test_message ("without the flag: %s", error->message);
  g_clear_error (&error);

  /* An environment without PATH: GLib's default (/bin:/usr/bin:.), as
   * GSubprocess, never ours, which here holds the program. */
  {
    const char *no_path[] = { "SPAWN_TEST=1", NULL };
    g_autofree char *old_path = g_strdup (g_getenv ("PATH"));
    g_autofree char *our_path = g_strconcat (dir, ":", old_path, NULL);

    g_assert_true (g_setenv ("PATH", our_path, TRUE));
    spawn_process_set_environment (proc, no_path);
    spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_SEARCH_PATH_FROM_ENVP);
    g_assert_false (spawn_process_start (proc, &error));
    g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
    g_clear_error (&error);
    /* Without the flag, ours is searched. */
    spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDOUT_PIPE);
    testutil_start_ok (proc);
    g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpstr (out, ==, "found\n");
    g_free (out);
    g_assert_true (g_setenv ("PATH", old_path, TRUE));
  }

  g_unlink (prog);
  g_rmdir (dir);
}

static void
test_conflicting_flags (gconstpointer data)
{
  const char *argv[] = { "true", NULL };
  static const struct {
    GSubprocessFlags flags;
    const char *message;
  } bad[] = {
    { G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDIN_INHERIT,
      "*at most one disposition for the stdin stream*STDIN_PIPE*STDIN_INHERIT*" },
    { G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE,
      "*at most one disposition for the stdout stream*STDOUT_PIPE*STDOUT_SILENCE*" },
    { G_SUBPROCESS_FLAGS_STDERR_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE,
      "*at most one disposition for the stderr stream*STDERR_PIPE*STDERR_MERGE*" },
    { G_SUBPROCESS_FLAGS_STDERR_SILENCE | G_SUBPROCESS_FLAGS_STDERR_MERGE,
      "*at most one disposition for the stderr stream*STDERR_SILENCE*STDERR_MERGE*" },
  };
  gsize i;

  g_test_summary ("two flags for one channel are refused with "
                  "GSubprocessLauncher's critical, nothing started and nothing "
                  "changed");
  if (!testutil_use_backend (data))
    return;
  for (i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (SpawnProcess) proc = spawn_process_new (argv);
      GError *error = NULL;

      g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL, bad[i].message);
      g_assert_null (spawn_process_newv (argv, bad[i].flags, &error));
      g_test_assert_expected_messages ();
      g_assert_no_error (error);

      g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL, bad[i].message);
      spawn_process_set_subprocess_flags (proc, bad[i].flags);
      g_test_assert_expected_messages ();
      g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDIN), ==,
                       SPAWN_CHANNEL_PIPE);
      g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDOUT), ==,
                       SPAWN_CHANNEL_PIPE);
      g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDERR), ==,
                       SPAWN_CHANNEL_PIPE);
    }

  /* A flag for a channel that has a file is a second disposition too, as
   * GSubprocessLauncher's _set_flags() after _set_stdout_file_path(). */
  {
    g_autoptr (SpawnProcess) proc = spawn_process_new (argv);

    spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, "/dev/null", FALSE);
    g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL,
                           "*at most one disposition for the stdout stream*file*");
    spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDOUT_PIPE);
    g_test_assert_expected_messages ();
    g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDOUT), ==,
                     SPAWN_CHANNEL_FILE);
    g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDIN), ==,
                     SPAWN_CHANNEL_PIPE);
  }
  testutil_assert_no_children ();
}

static void
test_redirection_kept (gconstpointer data)
{
  const char *argv[] = { "sh", "-c", "echo out; echo err >&2", NULL };
  g_autofree char *dir = NULL, *path = NULL, *text = NULL;
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;

  g_test_summary ("set_subprocess_flags after set_channel_file keeps the file, "
                  "as a launcher keeps its file path whatever the order: NONE "
                  "leaves stdout in the file (stdin /dev/null), STDERR_MERGE "
                  "sends stderr there too");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("flags-test-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "out", NULL);
  proc = spawn_process_new (argv);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, path, FALSE);
  spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDIN), ==,
                   SPAWN_CHANNEL_DISCARD);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDOUT), ==,
                   SPAWN_CHANNEL_FILE);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_check (proc, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "out\n");
  g_clear_pointer (&text, g_free);

  spawn_process_set_subprocess_flags (proc, G_SUBPROCESS_FLAGS_STDERR_MERGE);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_check (proc, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "out\nerr\n");

  g_assert_no_errno (g_unlink (path));
  g_assert_no_errno (g_rmdir (dir));
  testutil_assert_no_children ();
}

static void
test_newv_failure (gconstpointer data)
{
  const char *argv[] = { "/nonexistent/program", NULL };
  GError *error = NULL;
  int fds_before;

  g_test_summary ("a program that cannot be started: NULL and a GError naming "
                  "it, no descriptor and no child left");
  if (!testutil_use_backend (data))
    return;
  warm_up ();
  fds_before = testutil_count_fds ();
  g_assert_null (spawn_process_newv (argv, G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                     G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "/nonexistent/program"));
  g_clear_error (&error);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

static void
test_new_with_flags (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;
  char *out = NULL;

  g_test_summary ("spawn_process_new_with_flags() is g_subprocess_new(): the "
                  "arguments as a list, started at once");
  if (!testutil_use_backend (data))
    return;
  proc = spawn_process_new_with_flags (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                       "echo", "a", "b", NULL);
  g_assert_no_error (error);
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "a b\n");
  g_free (out);
}

static void
test_dispose_leaves_running (gconstpointer data)
{
  const char *argv[] = { testutil_helper, "sleep", "100000", NULL };
  SpawnProcess *proc;
  GError *error = NULL;
  GPid pid;

  g_test_summary ("the last unref of a process from newv() leaves it running, "
                  "as a GSubprocess's does (fire and forget), reaped later");
  if (!testutil_use_backend (data))
    return;
  proc = spawn_process_newv (argv, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_no_error (error);
  pid = spawn_process_get_pid (proc);
  g_object_unref (proc);
  assert_alive (pid);
  g_assert_no_errno (kill (pid, SIGKILL));
  assert_ended (pid, TRUE);
}

/* STREAM channels and communicate() */

static SpawnProcess *
start_streams (const char *script)
{
  const char *argv[] = { "sh", "-c", script, NULL };
  SpawnProcess *proc = spawn_process_new (argv);
  int i;

  for (i = 0; i < 3; i++)
    spawn_process_set_channel_mode (proc, i, SPAWN_CHANNEL_STREAM);
  testutil_start_ok (proc);
  return proc;
}

static void
on_communicated (GObject *source, GAsyncResult *result, gpointer data)
{
  GAsyncResult **out = data;

  g_assert_true (SPAWN_IS_PROCESS (source));
  *out = g_object_ref (result);
}

static void
test_stream_communicate (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GBytes) in = g_bytes_new_static ("bytes in\n", 9);
  GBytes *out = NULL, *err = NULL;
  GAsyncResult *result = NULL;
  GError *error = NULL;
  char *sout = NULL, *serr = NULL;
  GInputStream *stdout_stream;
  char two[2];
  int fds_before;

  g_test_summary ("communicate() and communicate_utf8(), blocking and async, "
                  "read stdout and stderr and write stdin through "
                  "SPAWN_CHANNEL_STREAM pipes, as GSubprocess's communicate "
                  "reads its pipes: never success with a NULL output; the "
                  "streams are closed after, what was read from one before "
                  "is not returned again, no descriptor is left");
  if (!testutil_use_backend (data))
    return;
  /* What GLib sets up once for the async calls is not ours. */
  proc = start_streams ("cat");
  spawn_process_communicate_utf8_async (proc, "warm", NULL, on_communicated, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_clear_object (&result);
  g_clear_object (&proc);
  fds_before = testutil_count_fds ();

  proc = start_streams ("cat; echo err >&2");
  g_assert_true (spawn_process_communicate_utf8 (proc, "utf8 in", NULL, &sout, &serr, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (sout, ==, "utf8 in");
  g_assert_cmpstr (serr, ==, "err\n");
  g_clear_pointer (&sout, g_free);
  g_clear_pointer (&serr, g_free);
  g_assert_true (g_output_stream_is_closed (spawn_process_get_stdin_pipe (proc)));
  g_assert_true (g_input_stream_is_closed (spawn_process_get_stdout_pipe (proc)));
  g_assert_true (g_input_stream_is_closed (spawn_process_get_stderr_pipe (proc)));

  /* Again, GBytes flavour, after reading the first two bytes ourselves. */
  g_clear_object (&proc);
  proc = start_streams ("echo 12345; read x; echo \"$x\" >&2");
  stdout_stream = spawn_process_get_stdout_pipe (proc);
  g_assert_true (g_input_stream_read_all (stdout_stream, two, 2, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_communicate (proc, in, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_nonnull (out);
  g_assert_nonnull (err);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), g_bytes_get_size (out), "345\n", 4);
  g_assert_cmpmem (g_bytes_get_data (err, NULL), g_bytes_get_size (err), "bytes in\n", 9);
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);

  /* Async, utf8. */
  g_clear_object (&proc);
  proc = start_streams ("cat; echo err >&2");
  spawn_process_communicate_utf8_async (proc, "async in", NULL, on_communicated, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (spawn_process_communicate_utf8_finish (proc, result, &sout, &serr, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (sout, ==, "async in");
  g_assert_cmpstr (serr, ==, "err\n");
  g_clear_pointer (&sout, g_free);
  g_clear_pointer (&serr, g_free);
  g_clear_object (&result);

  /* A stream the caller closed gives nothing, not NULL. */
  g_clear_object (&proc);
  proc = start_streams ("echo err >&2; echo lost");
  g_assert_true (g_input_stream_close (spawn_process_get_stdout_pipe (proc), NULL, &error));
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &sout, &serr, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (sout, ==, "");
  g_assert_cmpstr (serr, ==, "err\n");
  g_clear_pointer (&sout, g_free);
  g_clear_pointer (&serr, g_free);

  g_clear_object (&proc);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

static void
test_stream_communicate_ended (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;
  char *sout = NULL, *serr = NULL;

  g_test_summary ("communicate_utf8() on a process that has ended reads what is "
                  "left in its stream pipes, as GSubprocess reads its pipes to "
                  "their end");
  if (!testutil_use_backend (data))
    return;
  proc = start_streams ("echo out; echo err >&2");
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &sout, &serr, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (sout, ==, "out\n");
  g_assert_cmpstr (serr, ==, "err\n");
  g_free (sout);
  g_free (serr);
}

static void
on_read_done (GObject *source, GAsyncResult *result, gpointer data)
{
  gboolean *done = data;
  GError *error = NULL;

  g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);
  g_clear_error (&error);
  *done = TRUE;
}

static void
test_stream_pending (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  GError *error = NULL;
  char *sout = NULL, *serr = NULL;
  gboolean done = FALSE;
  char buf[16];

  g_test_summary ("communicate() while the stdout stream has a read pending "
                  "fails with G_IO_ERROR_PENDING, saying which stream; once the "
                  "read is over it works");
  if (!testutil_use_backend (data))
    return;
  proc = start_streams ("read x; echo \"got $x\"; echo err >&2");
  g_input_stream_read_async (spawn_process_get_stdout_pipe (proc), buf, sizeof buf,
                             G_PRIORITY_DEFAULT, cancel, on_read_done, &done);
  g_assert_false (spawn_process_communicate_utf8 (proc, "x\n", NULL, &sout, &serr, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_PENDING);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "stdout"));
  g_clear_error (&error);
  g_assert_null (sout);
  g_cancellable_cancel (cancel);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (spawn_process_communicate_utf8 (proc, "x\n", NULL, &sout, &serr, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (sout, ==, "got x\n");
  g_assert_cmpstr (serr, ==, "err\n");
  g_free (sout);
  g_free (serr);
}

static void
test_stream_siblings (gconstpointer data)
{
  g_autoptr (SpawnProcess) proc = NULL;
  g_autoptr (GBytes) all = NULL;
  GError *error = NULL;
  char buf[16];
  gsize n = 0;

  g_test_summary ("the calls that read SpawnProcess's buffers find nothing on "
                  "stream channels (the data stays in the stream), and "
                  "wait_for_ready_read(), which could never return TRUE, fails "
                  "at once with READ_ERROR instead of waiting");
  if (!testutil_use_backend (data))
    return;
  proc = start_streams ("echo out; echo err >&2; read x");
  g_assert_false (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error));
  g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_READ_ERROR);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "“sh”"));
  g_clear_error (&error);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 0);
  g_assert_false (spawn_process_can_read_line (proc, SPAWN_PROCESS_STDOUT));
  g_assert_null (spawn_process_read_line (proc, SPAWN_PROCESS_STDERR));
  all = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);
  g_assert_cmpuint (g_bytes_get_size (all), ==, 0);
  /* The output is in the stream. */
  g_assert_true (g_input_stream_read_all (spawn_process_get_stdout_pipe (proc), buf, 4,
                                          &n, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (buf, n, "out\n", 4);
  g_assert_true (g_output_stream_close (spawn_process_get_stdin_pipe (proc), NULL, &error));
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);

  /* One buffered channel is enough to wait on. */
  g_clear_object (&proc);
  proc = start_streams ("echo out; echo err >&2");
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_PIPE);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "err\n");
}

/* The read buffer size */

#define LIMIT 65536

static void
test_read_buffer_bounded (gconstpointer data)
{
  const char *argv[] = { "head", "-c", "100000000", "/dev/zero", NULL };
  g_autoptr (SpawnProcess) proc = NULL;
  GError *error = NULL;
  guint64 total = 0;
  gsize most = 0;
  int i;

  g_test_summary ("with read-buffer-size 64 KiB, `head -c 100000000 /dev/zero` "
                  "that nobody reads leaves at most 64 KiB buffered, through "
                  "waits and the main loop alike (the child blocks in write), "
                  "and every byte arrives once the application reads");
  if (!testutil_use_backend (data))
    return;
  proc = spawn_process_new (argv);
  spawn_process_set_read_buffer_size (proc, LIMIT);
  testutil_start_ok (proc);
  /* It fills up to the limit, not beyond... */
  while (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT) < LIMIT)
    {
      g_assert_true (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), <=,
                        LIMIT);
    }
  /* ... and stays there: the waits find nothing more to read. */
  for (i = 0; i < 5; i++)
    {
      g_assert_false (spawn_process_wait_for_ready_read (proc, 20, NULL, &error));
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_TIMED_OUT);
      g_clear_error (&error);
      g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==,
                        LIMIT);
    }
  pump (200);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==,
                    LIMIT);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_RUNNING);

  /* Now read: the rest flows, never more than the limit at a time. */
  while (spawn_process_get_state (proc) == SPAWN_PROCESS_RUNNING)
    {
      g_autoptr (GBytes) chunk = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);

      total += g_bytes_get_size (chunk);
      most = MAX (most, g_bytes_get_size (chunk));
      if (!spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, &error))
        {
          g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
          g_clear_error (&error);
        }
    }
  g_assert_cmpuint (most, <=, LIMIT);
  /* What the end drained: at most the limit and a pipe's capacity. */
  {
    g_autoptr (GBytes) rest = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);

    total += g_bytes_get_size (rest);
  }
  g_assert_cmpuint (total, ==, 100000000);
  g_assert_true (spawn_process_get_successful (proc));
}

static void
on_ready_take (SpawnProcess *proc, gpointer data)
{
  guint64 *total = data;
  g_autoptr (GBytes) chunk = NULL;

  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), <=,
                    LIMIT);
  chunk = spawn_process_read_all (proc, SPAWN_PROCESS_STDOUT);
  *total += g_bytes_get_size (chunk);
}

static void
test_read_buffer_main_loop (gconstpointer data)
{
  const char *argv[] = { "head", "-c", "10000000", "/dev/zero", NULL };
  g_autoptr (SpawnProcess) proc = NULL;
  guint64 total = 0;
  Events ev;

  g_test_summary ("with read-buffer-size, a ready-read-stdout handler that "
                  "reads sees at most the limit each time, and the whole "
                  "output arrives through the main loop");
  if (!testutil_use_backend (data))
    return;
  proc = spawn_process_new (argv);
  spawn_process_set_read_buffer_size (proc, LIMIT);
  events_watch (&ev, proc);
  g_signal_connect (proc, "ready-read-stdout", G_CALLBACK (on_ready_take), &total);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  g_assert_cmpuint (total, ==, 10000000);
  events_clear (&ev);
}

static void
test_read_buffer_communicate (gconstpointer data)
{
  const char *argv[] = { "head", "-c", "10000000", "/dev/zero", NULL };
  g_autoptr (SpawnProcess) proc = NULL;
  GBytes *out = NULL;
  GError *error = NULL;
  guint64 notified = 0;

  g_test_summary ("communicate() collects everything whatever the read buffer "
                  "size, also from a process already held up by a full "
                  "buffer (which would never end otherwise), as QProcess's "
                  "readAll returns all; the property notifies and reads back");
  if (!testutil_use_backend (data))
    return;
  proc = spawn_process_new (argv);
  g_object_set (proc, "read-buffer-size", (guint64) LIMIT, NULL);
  g_object_get (proc, "read-buffer-size", &notified, NULL);
  g_assert_cmpuint (notified, ==, LIMIT);
  g_assert_cmpuint (spawn_process_get_read_buffer_size (proc), ==, LIMIT);
  testutil_start_ok (proc);
  while (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT) < LIMIT)
    g_assert_true (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, NULL));
  g_assert_true (spawn_process_communicate (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (out), ==, 10000000);
  g_bytes_unref (out);

  /* Lifting the limit while full lets it run to its end. */
  testutil_start_ok (proc);
  while (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT) < LIMIT)
    g_assert_true (spawn_process_wait_for_ready_read (proc, WAIT_MS, NULL, NULL));
  spawn_process_set_read_buffer_size (proc, 0);
  g_assert_true (spawn_process_wait_for_finished (proc, WAIT_MS, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==,
                    10000000);
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "none", test_none },
    { "none-read-does-not-hang", test_read_does_not_hang },
    { "stdin", test_stdin_flags },
    { "stdout", test_stdout_flags },
    { "stderr", test_stderr_flags },
    { "inherit-fds", test_inherit_fds },
    { "search-path-from-envp", test_search_path_from_envp },
    { "conflicting", test_conflicting_flags },
    { "redirection-kept", test_redirection_kept },
    { "newv-failure", test_newv_failure },
    { "new-with-flags", test_new_with_flags },
    { "dispose-leaves-running", test_dispose_leaves_running },
    { "stream-communicate", test_stream_communicate },
    { "stream-communicate-ended", test_stream_communicate_ended },
    { "stream-pending", test_stream_pending },
    { "stream-siblings", test_stream_siblings },
    { "read-buffer-bounded", test_read_buffer_bounded },
    { "read-buffer-main-loop", test_read_buffer_main_loop },
    { "read-buffer-communicate", test_read_buffer_communicate },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/flags", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
