/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* SpawnProcess's launcher features, the ones GSubprocessLauncher has:
 * passing fds (take_fd), a channel to the caller's fd, a child_setup,
 * SEARCH_PATH_FROM_ENVP and INHERIT_FDS, and the getters of the
 * configuration (environment, a variable, working directory, the last
 * error).  What GLib's gio/tests/gsubprocess.c checks of these (pass_fd,
 * child_setup, search_path_from_envp, the environment getters) plus what
 * a restartable object must get right: the fds are the caller's until the
 * process is finalized, serve every start, and are closed exactly once.
 * Every case runs once per backend (/spawn/launcher/<backend>/...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <libspawn/libspawn.h>
#include "testutil.h"

#define BIG_SIZE (4 * 1024 * 1024)

/* Starts @proc and returns its stdout once it has exited 0. */
static char *
output_of (SpawnProcess *proc)
{
  GError *error = NULL;
  char *out = NULL;

  testutil_start_ok (proc);
  g_assert_true (spawn_process_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_NORMAL);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 0);
  return out;
}

static void
assert_output (SpawnProcess *proc, const char *want)
{
  g_autofree char *out = output_of (proc);

  g_assert_cmpstr (out, ==, want);
}

/* Descriptors open after a first run, so that what the library sets up
 * once (probes, the reaper, GLib's wakeup fds) is not counted as ours. */
static int
warm_fds (void)
{
  SpawnProcess *proc = testutil_sh_process ("exit 0");

  assert_output (proc, "");
  g_object_unref (proc);
  return testutil_count_fds ();
}

/* Everything left in the pipe @fd, up to its end of file (bounded). */
static char *
read_to_eof (int fd)
{
  GString *s = g_string_new (NULL);
  char buf[256];
  ssize_t n;

  while ((n = read (fd, buf, sizeof buf)) > 0)
    g_string_append_len (s, buf, n);
  g_assert_cmpint (n, ==, 0);
  return g_string_free (s, FALSE);
}

static void
test_stream_cat (gconstpointer data)
{
  int fds_before;
  char buf[64];
  gsize n = 0;
  GError *error = NULL;
  SpawnProcess *proc;
  GOutputStream *in;
  GInputStream *out;

  g_test_summary ("STREAM channels (gsubprocess.c's cat_eof): write to the stdin "
                  "stream, close it, read the stdout stream to its end; nothing is "
                  "buffered; no descriptor left once the process is gone");
  if (!testutil_use_backend (data))
    return;
  fds_before = warm_fds ();
  proc = testutil_sh_process ("cat; echo err >&2");
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_STREAM);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_STREAM);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_MERGE);
  g_assert_null (spawn_process_get_stdout_pipe (proc));
  testutil_start_ok (proc);
  in = spawn_process_get_stdin_pipe (proc);
  out = spawn_process_get_stdout_pipe (proc);
  g_assert_true (G_IS_OUTPUT_STREAM (in));
  g_assert_true (G_IS_INPUT_STREAM (out));
  g_assert_null (spawn_process_get_stderr_pipe (proc));
  g_assert_true (g_output_stream_write_all (in, "hello\n", 6, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_output_stream_close (in, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_input_stream_read_all (out, buf, sizeof buf, &n, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (buf, n, "hello\nerr\n", 10);
  g_assert_true (spawn_process_wait_for_finished (proc, 30000, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 0);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 0);
  g_object_unref (proc);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

typedef struct {
  int pending;
  gssize spliced[2];
  GError *error[2];
} Splices;

static void
splice_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Splices *s = data;
  /* 0: into the program's stdin; 1: out of its stdout, into memory. */
  int i = G_IS_MEMORY_OUTPUT_STREAM (source) ? 1 : 0;
  s->spliced[i] = g_output_stream_splice_finish (G_OUTPUT_STREAM (source), res, &s->error[i]);
  s->pending--;
}

static void
test_stream_splice_async (gconstpointer data)
{
  g_autoptr (GBytes) pattern = NULL, got = NULL;
  g_autoptr (GInputStream) source = NULL;
  g_autoptr (GOutputStream) sink = NULL;
  guint8 *bytes = g_malloc (BIG_SIZE);
  Splices s = { 0 };
  SpawnProcess *proc;
  gsize i;

  g_test_summary ("STREAM channels, async: 4 MiB spliced into stdin and out of "
                  "stdout at the same time under the main loop, as GSubprocess "
                  "users do; what comes out is what went in");
  if (!testutil_use_backend (data))
    {
      g_free (bytes);
      return;
    }
  for (i = 0; i < BIG_SIZE; i++)
    bytes[i] = (guint8) (i * 7 + i / 4096);
  pattern = g_bytes_new_take (bytes, BIG_SIZE);
  source = g_memory_input_stream_new_from_bytes (pattern);
  sink = g_memory_output_stream_new_resizable ();
  proc = testutil_sh_process ("cat");
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_STREAM);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_STREAM);
  testutil_start_ok (proc);
  s.pending = 2;
  g_output_stream_splice_async (spawn_process_get_stdin_pipe (proc), source,
                                G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, G_PRIORITY_DEFAULT,
                                NULL, splice_done, &s);
  g_output_stream_splice_async (sink, G_INPUT_STREAM (spawn_process_get_stdout_pipe (proc)),
                                G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, G_PRIORITY_DEFAULT,
                                NULL, splice_done, &s);
  while (s.pending > 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (s.error[0]);
  g_assert_no_error (s.error[1]);
  g_assert_cmpint (s.spliced[0], ==, BIG_SIZE);
  g_assert_cmpint (s.spliced[1], ==, BIG_SIZE);
  got = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (sink));
  g_assert_true (g_bytes_equal (got, pattern));
  /* Watched from this context, which the splices ran: "finished" may have
   * come already. */
  while (spawn_process_get_state (proc) != SPAWN_PROCESS_NOT_RUNNING)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_NORMAL);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, 0);
  g_object_unref (proc);
  testutil_assert_no_children ();
}

static void
test_stream_restart (gconstpointer data)
{
  GInputStream *first, *second;
  GError *error = NULL;
  SpawnProcess *proc;
  char buf[16];
  gsize n = 0;

  g_test_summary ("STREAM channels across runs: each start gives a new stream; "
                  "one the caller still holds keeps the old run's output to its end");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_sh_process ("echo run");
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_STREAM);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, 30000, NULL, &error));
  g_assert_no_error (error);
  first = g_object_ref (spawn_process_get_stdout_pipe (proc));
  testutil_start_ok (proc);
  second = spawn_process_get_stdout_pipe (proc);
  g_assert_true (second != first);
  g_assert_true (g_input_stream_read_all (first, buf, sizeof buf, &n, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (buf, n, "run\n", 4);
  g_object_unref (first);
  g_assert_true (g_input_stream_read_all (second, buf, sizeof buf, &n, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (buf, n, "run\n", 4);
  g_assert_true (spawn_process_wait_for_finished (proc, 30000, NULL, &error));
  g_assert_no_error (error);
  g_object_unref (proc);
  testutil_assert_no_children ();
}

static void
test_take_fd (gconstpointer data)
{
  int fds_before, p[2], q[2];
  g_autofree char *got = NULL;
  SpawnProcess *proc;

  g_test_summary ("take_fd: the fd reaches the program under its target number at "
                  "every start; taking the same target again closes the old source; "
                  "finalize closes the rest");
  if (!testutil_use_backend (data))
    return;
  fds_before = warm_fds ();
  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  g_assert_no_errno (pipe2 (q, O_CLOEXEC));

  proc = testutil_sh_process ("echo run >&5");
  spawn_process_take_fd (proc, p[1], 5);
  assert_output (proc, "");
  assert_output (proc, "");
  /* The old source goes when the target is taken again: p's end of file
   * proves its last writer (ours) is closed. */
  spawn_process_take_fd (proc, q[1], 5);
  got = read_to_eof (p[0]);
  g_assert_cmpstr (got, ==, "run\nrun\n");
  g_clear_pointer (&got, g_free);
  assert_output (proc, "");
  g_object_unref (proc);
  got = read_to_eof (q[0]);
  g_assert_cmpstr (got, ==, "run\n");
  close (p[0]);
  close (q[0]);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

static void
test_take_fd_invalid (gconstpointer data)
{
  int fds_before, p[2];
  const GError *last;
  GError *error = NULL;
  SpawnProcess *proc;

  g_test_summary ("take_fd to 0, 1 or 2 makes the start fail with SPAWN_ERROR_INVAL "
                  "and error-occurred FAILED_TO_START, which get_error() then "
                  "returns; no child, no fd left");
  if (!testutil_use_backend (data))
    return;
  fds_before = warm_fds ();
  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  proc = testutil_sh_process ("exit 0");
  g_assert_null (spawn_process_get_error (proc));
  spawn_process_take_fd (proc, p[1], 1);
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL);
  g_clear_error (&error);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  last = spawn_process_get_error (proc);
  g_assert_nonnull (last);
  g_assert_error ((GError *) last, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_FAILED_TO_START);
  g_object_unref (proc);
  close (p[0]);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

static void
test_channel_fd (gconstpointer data)
{
  int fds_before, p[2], in;
  g_autofree char *dir = NULL, *path = NULL, *got = NULL;
  GError *error = NULL;
  SpawnProcess *proc;

  g_test_summary ("set_channel_fd: stdout to the caller's pipe, stderr MERGEd "
                  "into it, at every start; stdin from the caller's file; "
                  "choosing another mode closes the fd");
  if (!testutil_use_backend (data))
    return;
  fds_before = warm_fds ();
  g_assert_no_errno (pipe2 (p, O_CLOEXEC));
  proc = testutil_sh_process ("echo out; echo err >&2");
  spawn_process_set_channel_fd (proc, SPAWN_PROCESS_STDOUT, p[1]);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_MERGE);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDOUT), ==,
                   SPAWN_CHANNEL_FD);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, 30000, NULL, &error));
  g_assert_no_error (error);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, 30000, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (spawn_process_get_bytes_available (proc, SPAWN_PROCESS_STDOUT), ==, 0);
  /* Back to a pipe of ours: the caller's fd is closed, so p ends. */
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_PIPE);
  got = read_to_eof (p[0]);
  g_assert_cmpstr (got, ==, "out\nerr\nout\nerr\n");
  close (p[0]);
  g_object_unref (proc);

  dir = g_dir_make_tmp ("spawn-launcher-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "in", NULL);
  g_assert_true (g_file_set_contents (path, "from the caller's fd\n", -1, NULL));
  in = open (path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (in, >=, 0);
  proc = testutil_sh_process ("cat");
  spawn_process_set_channel_fd (proc, SPAWN_PROCESS_STDIN, in);
  assert_output (proc, "from the caller's fd\n");
  g_object_unref (proc);
  g_unlink (path);
  g_rmdir (dir);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  testutil_assert_no_children ();
}

static void
set_umask_027 (gpointer data G_GNUC_UNUSED)
{
  umask (027);
}

static void
count_destroy (gpointer data)
{
  (*(int *) data)++;
}

static void
test_child_setup (gconstpointer data)
{
  g_autofree char *dir = NULL, *path = NULL, *contents = NULL, *want = NULL;
  GError *error = NULL;
  SpawnProcess *proc;
  int destroyed = 0, i;
  GPid pid = 0;

  g_test_summary ("child_setup runs in the child before exec at every start, "
                  "also after start_detached()'s setsid(); its destroy notify "
                  "runs on replace and finalize");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_sh_process ("umask");
  spawn_process_set_child_setup (proc, set_umask_027, &destroyed, count_destroy);
  assert_output (proc, "0027\n");
  assert_output (proc, "0027\n");
  spawn_process_set_child_setup (proc, set_umask_027, &destroyed, count_destroy);
  g_assert_cmpint (destroyed, ==, 1);
  g_object_unref (proc);
  g_assert_cmpint (destroyed, ==, 2);

  /* Detached: its own session (sid == pid) and our child_setup. */
  dir = g_dir_make_tmp ("spawn-launcher-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "out", NULL);
  proc = testutil_sh_process ("umask; echo $$ $(cut -d' ' -f6 /proc/$$/stat); echo done");
  spawn_process_set_child_setup (proc, set_umask_027, NULL, NULL);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, path, FALSE);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  for (i = 0; i < 3000; i++)
    {
      g_clear_pointer (&contents, g_free);
      if (g_file_get_contents (path, &contents, NULL, NULL) && g_str_has_suffix (contents, "done\n"))
        break;
      g_usleep (10 * 1000);
    }
  want = g_strdup_printf ("0027\n%d %d\ndone\n", (int) pid, (int) pid);
  g_assert_cmpstr (contents, ==, want);
  g_object_unref (proc);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_search_path_from_envp (gconstpointer data)
{
  g_autofree char *dir = NULL, *script = NULL, *path_var = NULL;
  const char *argv[] = { "spawn-launcher-only-here", NULL };
  GError *error = NULL;
  SpawnProcess *proc;

  g_test_summary ("SEARCH_PATH_FROM_ENVP finds the program in the PATH of the "
                  "child's environment; without it, our PATH is searched and "
                  "the start fails with G_SPAWN_ERROR_NOENT");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-launcher-XXXXXX", &error);
  g_assert_no_error (error);
  script = g_build_filename (dir, argv[0], NULL);
  g_assert_true (g_file_set_contents (script, "#!/bin/sh\necho found\n", -1, NULL));
  g_assert_no_errno (chmod (script, 0755));
  path_var = g_strconcat ("PATH=", dir, NULL);

  proc = spawn_process_new (argv);
  spawn_process_set_environment (proc, (const char *[]) { path_var, NULL });
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  spawn_process_set_flags (proc, SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP);
  g_assert_cmpint (spawn_process_get_flags (proc), ==, SPAWN_PROCESS_FLAGS_SEARCH_PATH_FROM_ENVP);
  assert_output (proc, "found\n");
  g_object_unref (proc);
  g_unlink (script);
  g_rmdir (dir);
  testutil_assert_no_children ();
}

static void
test_inherit_fds (gconstpointer data)
{
  g_autofree char *script = NULL;
  SpawnProcess *proc;
  int fd;

  g_test_summary ("INHERIT_FDS leaves our fds without close-on-exec open in the "
                  "program; by default they are closed");
  if (!testutil_use_backend (data))
    return;
  fd = open ("/dev/null", O_RDONLY); /* no O_CLOEXEC, on purpose */
  g_assert_cmpint (fd, >=, 3);
  script = g_strdup_printf ("if [ -e /proc/self/fd/%d ]; then echo open; else echo closed; fi", fd);
  proc = testutil_sh_process (script);
  assert_output (proc, "closed\n");
  spawn_process_set_flags (proc, SPAWN_PROCESS_FLAGS_INHERIT_FDS);
  assert_output (proc, "open\n");
  g_object_unref (proc);
  close (fd);
}

static void
test_getters (gconstpointer data)
{
  const char *env[] = { "SPAWN_A=1", "SPAWN_B=2", NULL };
  const char *want[] = { "SPAWN_B=2", "SPAWN_C=3", NULL };
  g_auto (GStrv) got = NULL;
  g_autofree char *home = NULL, *b = NULL, *a = NULL;
  SpawnProcess *proc;

  g_test_summary ("the getters return what the setters set: the environment the "
                  "child would get (ours, or the one set, with setenv/unsetenv "
                  "on top), one variable, the working directory, the flags, the "
                  "kill timeout and the dispose policy");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_sh_process ("exit 0");
  g_assert_null (spawn_process_get_working_directory (proc));
  home = spawn_process_getenv (proc, "PATH");
  g_assert_cmpstr (home, ==, g_getenv ("PATH"));
  g_assert_cmpint (spawn_process_get_flags (proc), ==, SPAWN_PROCESS_FLAGS_NONE);
  g_assert_cmpint (spawn_process_get_kill_timeout (proc), ==, 0);
  g_assert_cmpint (spawn_process_get_dispose_policy (proc), ==, SPAWN_DISPOSE_KILL);

  spawn_process_set_environment (proc, env);
  spawn_process_setenv (proc, "SPAWN_C", "3");
  spawn_process_unsetenv (proc, "SPAWN_A");
  got = spawn_process_get_environment (proc);
  g_assert_cmpstrv (got, want);
  b = spawn_process_getenv (proc, "SPAWN_B");
  a = spawn_process_getenv (proc, "SPAWN_A");
  g_assert_cmpstr (b, ==, "2");
  g_assert_null (a);
  spawn_process_set_working_directory (proc, "/");
  g_assert_cmpstr (spawn_process_get_working_directory (proc), ==, "/");
  spawn_process_set_kill_timeout (proc, 1234);
  g_assert_cmpint (spawn_process_get_kill_timeout (proc), ==, 1234);
  spawn_process_set_dispose_policy (proc, SPAWN_DISPOSE_LEAVE_RUNNING);
  g_assert_cmpint (spawn_process_get_dispose_policy (proc), ==, SPAWN_DISPOSE_LEAVE_RUNNING);
  g_object_unref (proc);
}

static int
count_words (const char *s, const char *word)
{
  g_auto (GStrv) words = g_strsplit (s, " ", -1);
  int n = 0;

  for (int i = 0; words[i] != NULL; i++)
    n += strcmp (words[i], word) == 0;
  return n;
}

static void
count_notify (GObject *object G_GNUC_UNUSED, GParamSpec *pspec, gpointer data)
{
  GString *log = data;

  g_string_append_printf (log, " %s", pspec->name);
}

static void
test_properties (gconstpointer data)
{
  const char *argv[] = { "sh", "-c", "exit 3", NULL };
  g_auto (GStrv) got_argv = NULL;
  g_autoptr (GString) log = g_string_new (NULL);
  g_autofree char *wd = NULL;
  g_autoptr (GEnumClass) modes = NULL;
  SpawnProcessState state;
  SpawnBackend backend;
  int kill_timeout, exit_code;
  GError *error = NULL;
  SpawnProcess *proc;

  g_test_summary ("GObject properties: construct with argv and kill-timeout, read "
                  "every one back, notify:: for the setters (only on change) and "
                  "for state, pid, backend and exit-code during a run; the enums "
                  "have GTypes with nicks");
  if (!testutil_use_backend (data))
    return;
  proc = g_object_new (SPAWN_TYPE_PROCESS, "argv", argv, "kill-timeout", 60000,
                       "working-directory", "/", NULL);
  g_object_get (proc, "argv", &got_argv, "kill-timeout", &kill_timeout,
                "working-directory", &wd, "state", &state, "exit-code", &exit_code, NULL);
  g_assert_cmpstrv (got_argv, argv);
  g_assert_cmpint (kill_timeout, ==, 60000);
  g_assert_cmpstr (wd, ==, "/");
  g_assert_cmpint (state, ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_cmpint (exit_code, ==, -1);

  g_signal_connect (proc, "notify", G_CALLBACK (count_notify), log);
  spawn_process_set_kill_timeout (proc, 60000); /* unchanged: no notify */
  spawn_process_set_flags (proc, SPAWN_PROCESS_FLAGS_INHERIT_FDS);
  g_object_set (proc, "dispose-policy", SPAWN_DISPOSE_LEAVE_RUNNING, NULL);
  g_assert_cmpstr (log->str, ==, " flags dispose-policy");
  g_string_truncate (log, 0);
  testutil_start_ok (proc);
  g_assert_true (spawn_process_wait_for_finished (proc, 30000, NULL, &error));
  g_assert_no_error (error);
  g_object_get (proc, "exit-code", &exit_code, "backend", &backend, NULL);
  g_assert_cmpint (exit_code, ==, 3);
  g_assert_cmpint (backend, ==, spawn_process_get_backend (proc));
  g_assert_cmpint (backend, !=, SPAWN_BACKEND_AUTO);
  /* Starting, running, not running; the PID twice (set, cleared); the
   * order inside a freeze is GLib's. */
  g_assert_cmpint (count_words (log->str, "state"), ==, 3);
  g_assert_cmpint (count_words (log->str, "pid"), ==, 2);
  g_assert_cmpint (count_words (log->str, "backend"), ==, 1);
  g_assert_cmpint (count_words (log->str, "exit-code"), ==, 1);
  g_assert_cmpint (count_words (log->str, "exit-status"), ==, 1);
  g_object_unref (proc);

  modes = g_type_class_ref (SPAWN_TYPE_CHANNEL_MODE);
  g_assert_cmpstr (g_enum_get_value (modes, SPAWN_CHANNEL_STREAM)->value_nick, ==, "stream");
  g_assert_true (G_TYPE_IS_FLAGS (SPAWN_TYPE_PROCESS_FLAGS));
  g_assert_true (G_TYPE_IS_BOXED (SPAWN_TYPE_CHILD));
  g_assert_true (G_TYPE_IS_BOXED (SPAWN_TYPE_EXIT_INFO));
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "stream-cat", test_stream_cat },
    { "stream-splice-async", test_stream_splice_async },
    { "stream-restart", test_stream_restart },
    { "take-fd", test_take_fd },
    { "take-fd-invalid", test_take_fd_invalid },
    { "channel-fd", test_channel_fd },
    { "child-setup", test_child_setup },
    { "search-path-from-envp", test_search_path_from_envp },
    { "inherit-fds", test_inherit_fds },
    { "getters", test_getters },
    { "properties", test_properties },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/launcher", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
