/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* SpawnProcess: what is started and how (the library's process/config.c
 * and launch.c, and run.c's start_detached()).
 *
 * A program that is not there; the environment (inherited, replaced,
 * emptied, a name given twice) and the working directory; the channel
 * modes FILE, DISCARD and FORWARD, and a FILE that cannot be opened;
 * start_detached(), with the configuration, in a session of its own.
 *
 * The cases follow what QProcess's autotest covers.  Every case runs once
 * per backend (/spawn/process/<backend>/...), forced with
 * spawn_set_backend(); a backend the kernel lacks is skipped with the
 * reason.  Cases that change process-wide state (the environment, what
 * lands on our stdout) run in a subprocess.  Waits poll for readiness with
 * a bound; nothing sleeps to synchronise.  The rest of /spawn/process is in
 * process-run-test.c, process-io-test.c, process-wait-test.c and
 * process-edge-test.c.
 */
#define _GNU_SOURCE
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process-testutil.h"

static void
test_not_found (gconstpointer data)
{
  const char *missing[][2] = {
    { "no-such-program-anywhere", NULL },
    { "/nonexistent/program", NULL },
  };
  GError *error = NULL;
  int before;
  guint i;

  g_test_summary ("a program that does not exist: start() fails with "
                  "G_SPAWN_ERROR_NOENT, FAILED_TO_START is emitted, \"started\" "
                  "never is, the state stays NOT_RUNNING, nothing is left behind");
  if (!testutil_use_backend (data))
    return;
  warm_up ();
  before = testutil_count_fds ();
  for (i = 0; i < G_N_ELEMENTS (missing); i++)
    {
      SpawnProcess *proc = spawn_process_new (missing[i]);
      Events ev;

      events_watch (&ev, proc);
      g_assert_false (spawn_process_start (proc, &error));
      g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
      g_test_message ("%s", error->message);
      g_clear_error (&error);
      g_assert_cmpint (ev.started, ==, 0);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
      if (ev.states->len > 0)
        g_assert_cmpint (g_array_index (ev.states, int, ev.states->len - 1), ==,
                         SPAWN_PROCESS_NOT_RUNNING);

      g_assert_false (spawn_process_wait_for_started (proc, 1000, &error));
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
      g_clear_error (&error);
      g_assert_false (spawn_process_wait_for_finished (proc, 1000, NULL, &error));
      g_assert_error (error, SPAWN_PROCESS_ERROR, SPAWN_PROCESS_ERROR_NOT_RUNNING);
      g_clear_error (&error);
      pump (100);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_object_unref (proc);
      events_clear (&ev);
    }
  g_assert_cmpint (testutil_count_fds (), ==, before);
  testutil_assert_no_children ();
}

static gint
cmp_str_ptr (gconstpointer a, gconstpointer b, gpointer data G_GNUC_UNUSED)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

static void
sort_strv (char **v)
{
  g_qsort_with_data (v, g_strv_length (v), sizeof (char *), cmp_str_ptr, NULL);
}

/* Run "spawn-helper environ" as configured in @proc; its environment, sorted. */
static char **
child_environ (SpawnProcess *proc)
{
  char *out, **lines;
  Events ev;
  guint n;

  events_watch (&ev, proc);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  out = read_all_str (proc, SPAWN_PROCESS_STDOUT);
  lines = g_strsplit (out, "\n", -1);
  /* The last newline leaves an empty string behind (none if no output). */
  n = g_strv_length (lines);
  if (n > 0)
    {
      g_assert_cmpstr (lines[n - 1], ==, "");
      g_free (lines[n - 1]);
      lines[n - 1] = NULL;
    }
  sort_strv (lines);
  g_free (out);
  events_clear (&ev);
  return lines;
}

static void
test_environment (gconstpointer data)
{
  const char *whole[] = { "SPAWN_ONLY=1", "SPAWN_B=2", NULL };
  const char *none[] = { NULL };
  const char *want_whole[] = { "SPAWN_B=two", "SPAWN_C=3", NULL };
  char **got, **want;
  SpawnProcess *proc;

  g_test_summary ("the environment: inherited at start time with setenv() "
                  "and unsetenv() on top, or replaced whole with the same on "
                  "top, or empty");
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  g_setenv ("SPAWN_TEST_PARENT", "parent", TRUE);
  g_setenv ("SPAWN_TEST_DROP", "drop", TRUE);

  proc = testutil_helper_process ("environ", NULL);
  spawn_process_setenv (proc, "SPAWN_TEST_ADDED", "added");
  spawn_process_setenv (proc, "SPAWN_TEST_PARENT", "overridden");
  spawn_process_unsetenv (proc, "SPAWN_TEST_DROP");
  /* Set after the process was configured: what counts is start time. */
  g_setenv ("SPAWN_TEST_LATE", "late", TRUE);
  want = g_get_environ ();
  want = g_environ_setenv (want, "SPAWN_TEST_ADDED", "added", TRUE);
  want = g_environ_setenv (want, "SPAWN_TEST_PARENT", "overridden", TRUE);
  want = g_environ_unsetenv (want, "SPAWN_TEST_DROP");
  sort_strv (want);
  got = child_environ (proc);
  g_assert_cmpstrv (got, want);
  g_strfreev (got);
  g_strfreev (want);
  g_object_unref (proc);

  proc = testutil_helper_process ("environ", NULL);
  spawn_process_set_environment (proc, whole);
  spawn_process_setenv (proc, "SPAWN_C", "3");
  spawn_process_setenv (proc, "SPAWN_B", "two");
  spawn_process_unsetenv (proc, "SPAWN_ONLY");
  got = child_environ (proc);
  g_assert_cmpstrv (got, want_whole);
  g_strfreev (got);
  g_object_unref (proc);

  proc = testutil_helper_process ("environ", NULL);
  spawn_process_set_environment (proc, none);
  got = child_environ (proc);
  g_assert_cmpstrv (got, none);
  g_strfreev (got);
  g_object_unref (proc);
}

static void
test_working_directory (gconstpointer data)
{
  g_autofree char *dir = NULL, *real = NULL, *want = NULL;
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("the working directory reaches the child; one that does "
                  "not exist is FAILED_TO_START with G_SPAWN_ERROR_CHDIR");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-process-cwd-XXXXXX", &error);
  g_assert_no_error (error);
  real = realpath (dir, NULL);
  g_assert_nonnull (real);

  proc = testutil_helper_process ("pwd", NULL);
  events_watch (&ev, proc);
  spawn_process_set_working_directory (proc, dir);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  want = g_strconcat (real, "\n", NULL);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, want);
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("pwd", NULL);
  events_watch (&ev, proc);
  spawn_process_set_working_directory (proc, "/nonexistent/dir");
  g_assert_false (spawn_process_start (proc, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_CHDIR);
  g_clear_error (&error);
  g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_object_unref (proc);
  events_clear (&ev);
  g_rmdir (dir);
}

/* Poll until /proc/PID/cmdline shows spawn-helper: it has exec'd. */
static void
assert_runs_helper (GPid pid)
{
  char path[64];
  int i;

  g_snprintf (path, sizeof (path), "/proc/%d/cmdline", (int) pid);
  for (i = 0; i < 1000; i++)
    {
      g_autofree char *cmdline = NULL;

      if (g_file_get_contents (path, &cmdline, NULL, NULL) &&
          g_str_has_suffix (cmdline, "/spawn-helper"))
        return;
      g_usleep (10 * 1000);
    }
  g_error ("PID %d does not run spawn-helper after 10 s", (int) pid);
}

static void
test_start_detached (gconstpointer data)
{
  g_autofree char *dir = NULL, *real = NULL, *out = NULL, *want = NULL;
  const char *missing[] = { "no-such-program-anywhere", NULL };
  GError *error = NULL;
  SpawnProcess *proc;
  GPid pid = 0;
  Events ev;

  g_test_summary ("start_detached() returns the PID of a process that runs "
                  "with our argv, cwd, env and channels, PIPE meaning our own "
                  "stdio, emits nothing, and never becomes a zombie");
  /* PIPE channels are forwarded: the output lands on our stdio. */
  if (!testutil_use_backend (data) ||
      !testutil_isolated_output ("*out 0\nout 1\n*", "*err 0\nerr 1\n*"))
    return;
  dir = g_dir_make_tmp ("spawn-process-detached-XXXXXX", &error);
  g_assert_no_error (error);
  real = realpath (dir, NULL);
  g_assert_nonnull (real);
  out = g_build_filename (dir, "out", NULL);

  /* It runs on by itself, to the end: "survived" is its last act. */
  proc = testutil_helper_process ("sleep-print", "200", "survived", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  g_assert_cmpint (pid, >, 0);
  assert_runs_helper (pid);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  assert_ended (pid, TRUE);
  assert_file (out, "survived");
  /* Nothing to report on a process we let go. */
  pump (50);
  g_assert_cmpstr (ev.log->str, ==, "");
  g_object_unref (proc);
  events_clear (&ev);

  /* Working directory and environment. */
  proc = testutil_helper_process ("pwd", NULL);
  spawn_process_set_working_directory (proc, dir);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_ended (pid, TRUE);
  want = g_strconcat (real, "\n", NULL);
  assert_file (out, want);
  g_object_unref (proc);

  proc = testutil_helper_process ("env", "SPAWN_DETACHED", NULL);
  spawn_process_setenv (proc, "SPAWN_DETACHED", "yes");
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_ended (pid, TRUE);
  assert_file (out, "yes\n");
  g_object_unref (proc);

  proc = testutil_helper_process ("interleave", "2", NULL);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_ended (pid, TRUE);
  g_object_unref (proc);

  proc = spawn_process_new (missing);
  g_assert_false (spawn_process_start_detached (proc, &pid, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_object_unref (proc);

  testutil_assert_no_children ();
  remove_tree (dir);
}

static void
test_channel_file (gconstpointer data)
{
  g_autofree char *dir = NULL, *out = NULL, *err = NULL, *in = NULL;
  GError *error = NULL;
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("FILE channels: stdout and stderr truncate or append, "
                  "stdin reads the file, stderr MERGE follows stdout into "
                  "its file; nothing reaches our buffers");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-process-file-XXXXXX", &error);
  g_assert_no_error (error);
  out = g_build_filename (dir, "out", NULL);
  err = g_build_filename (dir, "err", NULL);
  in = g_build_filename (dir, "in", NULL);

  g_assert_true (g_file_set_contents (out, "old content, longer than the new\n", -1, NULL));
  proc = testutil_helper_process ("lines", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  g_assert_cmpint (spawn_process_get_channel_mode (proc, SPAWN_PROCESS_STDOUT), ==,
                   SPAWN_CHANNEL_FILE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_file (out, "line 0\nline 1\nend");
  g_assert_cmpint (ev.ready_stdout, ==, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("lines", "1", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, TRUE);
  testutil_start_ok (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 0);
  assert_file (out, "line 0\nline 1\nendline 0\nend");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDERR, err, FALSE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_file (err, "err 0\nerr 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "out 0\nout 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);

  /* cat ends at the file's end: no close_write_channel () needed. */
  g_assert_true (g_file_set_contents (in, "from a file\n", -1, NULL));
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDIN, in, FALSE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "from a file\n");
  assert_file (in, "from a file\n");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_MERGE);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_file (out, "out 0\nerr 0\nout 1\nerr 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);
  remove_tree (dir);
}

static void
test_channel_discard (gconstpointer data)
{
  SpawnProcess *proc;
  Events ev;

  g_test_summary ("DISCARD channels are /dev/null: output is written (the "
                  "helper checks) and lost, stdin reads EOF at once");
  if (!testutil_use_backend (data))
    return;
  /* interleave exits 1 if a write fails: a closed fd would show. */
  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_assert_cmpint (ev.ready_stdout, ==, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "err 0\nerr 1\n");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (proc);
  wait_finished_ok (proc, WAIT_MS);
  assert_exited (proc, &ev, 0);
  g_assert_cmpint (ev.ready_stderr, ==, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "out 0\nout 1\n");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);

  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  g_object_unref (proc);
  events_clear (&ev);
}

static void
test_channel_forward (gconstpointer data)
{
  GBytes *out = NULL, *err = NULL;
  GError *error = NULL;
  SpawnExitInfo info;
  SpawnProcess *proc;
  const char *lines[] = { testutil_helper, "lines", "1", NULL };
  const char *to_stderr[] = { testutil_helper, "stderr", "execute-err", NULL };
  Events ev;

  g_test_summary ("FORWARD channels share our own stdio, for start() and "
                  "for the NULL out pointers of execute()");
  if (!testutil_use_backend (data) ||
      !testutil_isolated_output ("*out 0\nout 1\n*line 0\nend*",
                                 "*err 0\nerr 1\n*execute-err*"))
    return;
  proc = testutil_helper_process ("interleave", "2", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_FORWARD);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  assert_read_all (proc, SPAWN_PROCESS_STDOUT, "");
  assert_read_all (proc, SPAWN_PROCESS_STDERR, "");
  g_object_unref (proc);
  events_clear (&ev);

  /* Our stdin here is /dev/null (g_test_trap_subprocess): cat ends. */
  proc = testutil_helper_process ("cat", NULL);
  events_watch (&ev, proc);
  spawn_process_set_channel_mode (proc, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_FORWARD);
  testutil_start_ok (proc);
  run_until_finished (&ev);
  assert_exited (proc, &ev, 0);
  g_object_unref (proc);
  events_clear (&ev);

  g_assert_true (spawn_process_execute (lines, WAIT_MS, NULL, &err, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (err), ==, 0);
  g_clear_pointer (&err, g_bytes_unref);
  g_assert_true (spawn_process_execute (to_stderr, WAIT_MS, &out, NULL, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (out), ==, 0);
  g_clear_pointer (&out, g_bytes_unref);
}

static void
test_bad_file (gconstpointer data)
{
  g_autofree char *dir = NULL, *out = NULL, *out_contents = NULL;
  struct {
    SpawnProcessChannel channel;
    const char *path;
    int code;   /* in SPAWN_ERROR, or -1: any */
  } cases[] = {
    { SPAWN_PROCESS_STDIN, "/nonexistent/dir/in", SPAWN_ERROR_NOENT },
    { SPAWN_PROCESS_STDOUT, "/nonexistent/dir/out", SPAWN_ERROR_NOENT },
    { SPAWN_PROCESS_STDERR, "/nonexistent/dir/err", SPAWN_ERROR_NOENT },
    { SPAWN_PROCESS_STDOUT, NULL /* the directory */, -1 },
  };
  GError *error = NULL;
  int before;
  guint i;

  g_test_summary ("a FILE channel that cannot be opened fails start() with "
                  "FAILED_TO_START; the program does not run, nothing is left");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("spawn-process-badfile-XXXXXX", &error);
  g_assert_no_error (error);
  out = g_build_filename (dir, "out", NULL);
  warm_up ();
  before = testutil_count_fds ();
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      /* Its stdout, where it is not the bad one, would show it ran. */
      SpawnProcess *proc = testutil_helper_process ("lines", "1", NULL);
      Events ev;

      events_watch (&ev, proc);
      if (cases[i].channel != SPAWN_PROCESS_STDOUT)
        spawn_process_set_channel_file (proc, SPAWN_PROCESS_STDOUT, out, FALSE);
      spawn_process_set_channel_file (proc, cases[i].channel,
                                      cases[i].path ? cases[i].path : dir, FALSE);
      g_assert_false (spawn_process_start (proc, &error));
      g_assert_nonnull (error);
      g_test_message ("%s", error->message);
      g_assert_true (error->domain == SPAWN_ERROR);
      if (cases[i].code >= 0)
        g_assert_error (error, SPAWN_ERROR, cases[i].code);
      g_clear_error (&error);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
      pump (50);
      g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
      g_object_unref (proc);
      events_clear (&ev);
    }
  if (g_file_get_contents (out, &out_contents, NULL, NULL))
    g_assert_cmpstr (out_contents, ==, "");
  g_assert_cmpint (testutil_count_fds (), ==, before);
  testutil_assert_no_children ();
  remove_tree (dir);
}

/* ---- defects found by review and by Qt's tst_qprocess ---- */

static void
test_environment_duplicate (gconstpointer data)
{
  const char *envp[] = { "SPAWN_DUP=first", "SPAWN_OTHER=1", "SPAWN_DUP=second", NULL };
  g_auto (GStrv) env = NULL;
  SpawnProcess *proc;

  g_test_summary ("set_environment() with a name given twice: the later "
                  "entry wins and the child gets the name once, as with "
                  "QProcessEnvironment");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("environ", NULL);
  spawn_process_set_environment (proc, envp);
  env = child_environ (proc);
  g_assert_cmpuint (g_strv_length (env), ==, 2);
  g_assert_cmpstr (env[0], ==, "SPAWN_DUP=second");
  g_assert_cmpstr (env[1], ==, "SPAWN_OTHER=1");
  g_object_unref (proc);
}

/* Field @field (1-based, as in proc(5)) of /proc/PID/stat, from the
 * state on (field 3): comm may hold anything, so from the last ')'. */
static long
stat_field (GPid pid, int field)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  g_auto (GStrv) fields = NULL;
  char *paren;

  g_assert_true (g_file_get_contents (path, &stat, NULL, NULL));
  paren = strrchr (stat, ')');
  g_assert_nonnull (paren);
  fields = g_strsplit (paren + 2, " ", -1);
  g_assert_cmpuint (g_strv_length (fields), >, (guint) field - 3);
  return strtol (fields[field - 3], NULL, 10);
}

static void
test_start_detached_session (gconstpointer data)
{
  const char *missing[] = { "no-such-program-anywhere", NULL };
  GError *error = NULL;
  SpawnProcess *proc;
  GPid pid = 0;
  Events ev;

  g_test_summary ("start_detached() puts the program in a session and "
                  "process group of its own (a Ctrl-C for ours does not reach "
                  "it), and a failure emits error-occurred FAILED_TO_START as "
                  "QProcess 6 does");
  if (!testutil_use_backend (data))
    return;
  proc = testutil_helper_process ("sleep", "100000", NULL);
  events_watch (&ev, proc);
  g_assert_true (spawn_process_start_detached (proc, &pid, &error));
  g_assert_no_error (error);
  assert_runs_helper (pid);
  g_test_message ("ours: pgid %d sid %d; detached: pgid %ld sid %ld",
                  (int) getpgrp (), (int) getsid (0), stat_field (pid, 5), stat_field (pid, 6));
  g_assert_cmpint (stat_field (pid, 5), !=, getpgrp ());
  g_assert_cmpint (stat_field (pid, 6), !=, getsid (0));
  /* Its own leader: the session and the group are its PID. */
  g_assert_cmpint (stat_field (pid, 6), ==, pid);
  g_assert_cmpint (stat_field (pid, 5), ==, pid);
  g_assert_no_errno (kill (pid, SIGKILL));
  assert_ended (pid, TRUE);
  g_assert_cmpstr (ev.log->str, ==, "");
  g_object_unref (proc);
  events_clear (&ev);

  proc = spawn_process_new (missing);
  events_watch (&ev, proc);
  g_assert_false (spawn_process_start_detached (proc, &pid, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_clear_error (&error);
  g_assert_cmpstr (ev.log->str, ==, "error:failed-to-start");
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_cmpuint (ev.states->len, ==, 0);
  g_object_unref (proc);
  events_clear (&ev);
  testutil_assert_no_children ();
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "not-found", test_not_found },
    { "environment", test_environment },
    { "working-directory", test_working_directory },
    { "start-detached", test_start_detached },
    { "channel-file", test_channel_file },
    { "channel-discard", test_channel_discard },
    { "channel-forward", test_channel_forward },
    { "bad-file", test_bad_file },
    { "environment-duplicate", test_environment_duplicate },
    { "start-detached-session", test_start_detached_session },
  };

  testutil_init (&argc, &argv);

  testutil_add_backend_cases ("/spawn/process", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
