/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* port-test.c - a GSubprocess program and its libspawn port, side by side
 *
 * Each case is written twice, once with GSubprocess (port_gio_*) and once
 * with SpawnProcess as docs/process.md's tables port it (port_spawn_*),
 * and each way writes what it saw into a log line: the output, the
 * status, the errors as domain and code.  The two logs must be equal,
 * and equal to what the case expects: a port that changes an output or
 * an error domain fails here.  The cases are the ordinary GSubprocess
 * idioms: a launcher with pipes, communicate_utf8 blocking and async,
 * wait_check after communicate, cancelling a wait on `sleep 100`, a
 * program that is missing (matched with G_SPAWN_ERROR), communicate on a
 * child whose background job holds its stdout (the output ends at the
 * pipe's end of file, not at the child's exit), a launcher's stdout
 * descriptor kept under STDERR_MERGE, and waiting and
 * communicating from a g_task_run_in_thread() worker while the main loop
 * runs (and while it does not).  Every case runs on every backend.
 */
#include "testutil.h"

#include <gio/gio.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

/* How long the cancel cases let `sleep 100` run before cancelling. */
#define CANCEL_AFTER_MS 200

/* "G_SPAWN_ERROR:NOENT"-style names for the errors a port must keep. */
static void
log_error (GString *log, const char *what, const GError *error)
{
  g_string_append_printf (log, "%s:%s/%d;", what, g_quark_to_string (error->domain),
                          error->code);
}

static void
log_result (GString *log, const char *what, gboolean ok, GError **error)
{
  if (ok)
    g_string_append_printf (log, "%s:ok;", what);
  else
    log_error (log, what, *error);
  g_clear_error (error);
}

static void
log_text (GString *log, const char *name, const char *text)
{
  g_string_append_printf (log, "%s=[%s];", name, text != NULL ? text : "(null)");
}

/* Runs @loop until @done is set. */
static void
run_until (GMainContext *context, const gboolean *done)
{
  while (!*done)
    g_main_context_iteration (context, TRUE);
}

static void
assert_same (const char *gio, const char *spawn, const char *expected)
{
  g_test_message ("GSubprocess: %s", gio);
  g_test_message ("libspawn:    %s", spawn);
  g_assert_cmpstr (spawn, ==, gio);
  g_assert_cmpstr (gio, ==, expected);
}

/* ---- a launcher with pipes, communicate_utf8, wait_check ---- */

static const char *launcher_script =
  "echo \"out $PORT_VAR $(pwd)\"; echo err >&2; cat; exit 3";

static char *
port_gio_launcher (const char *dir)
{
  GString *log = g_string_new (NULL);
  g_autoptr (GSubprocessLauncher) l = NULL;
  g_autoptr (GSubprocess) p = NULL;
  g_autofree char *out = NULL, *err = NULL;
  GError *error = NULL;
  gboolean ok;

  l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                 G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                 G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (l, "PORT_VAR", "value", TRUE);
  g_subprocess_launcher_set_cwd (l, dir);
  p = g_subprocess_launcher_spawn (l, &error, "sh", "-c", launcher_script, NULL);
  g_assert_no_error (error);
  ok = g_subprocess_communicate_utf8 (p, "input\n", NULL, &out, &err, &error);
  log_result (log, "communicate", ok, &error);
  log_text (log, "out", out);
  log_text (log, "err", err);
  ok = g_subprocess_wait_check (p, NULL, &error);
  log_result (log, "wait_check", ok, &error);
  ok = g_subprocess_wait (p, NULL, &error);
  log_result (log, "wait", ok, &error);
  g_string_append_printf (log, "exited:%d status:%d",
                          g_subprocess_get_if_exited (p),
                          g_subprocess_get_exit_status (p));
  return g_string_free (log, FALSE);
}

static char *
port_spawn_launcher (const char *dir)
{
  GString *log = g_string_new (NULL);
  g_autoptr (SpawnProcess) p = NULL;
  g_autofree char *out = NULL, *err = NULL;
  GError *error = NULL;
  gboolean ok;

  p = spawn_process_new ((const char *[]) { "sh", "-c", launcher_script, NULL });
  spawn_process_setenv (p, "PORT_VAR", "value");
  spawn_process_set_working_directory (p, dir);
  g_assert_true (spawn_process_start (p, &error));
  g_assert_no_error (error);
  ok = spawn_process_communicate_utf8 (p, "input\n", NULL, &out, &err, &error);
  log_result (log, "communicate", ok, &error);
  log_text (log, "out", out);
  log_text (log, "err", err);
  ok = spawn_process_wait_check (p, NULL, &error);
  log_result (log, "wait_check", ok, &error);
  ok = spawn_process_wait (p, NULL, &error);
  log_result (log, "wait", ok, &error);
  g_string_append_printf (log, "exited:%d status:%d",
                          spawn_process_get_if_exited (p),
                          spawn_process_get_exit_code (p));
  return g_string_free (log, FALSE);
}

static void
test_launcher (gconstpointer data)
{
  g_autofree char *dir = NULL, *real = NULL, *gio = NULL, *spawn = NULL, *expected = NULL;
  GError *error = NULL;

  g_test_summary ("a launcher with stdin, stdout and stderr pipes, an environment "
                  "variable and a working directory; communicate_utf8, then "
                  "wait_check and wait on the ended process: the same output, "
                  "the same G_SPAWN_EXIT_ERROR");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("port-test-XXXXXX", &error);
  g_assert_no_error (error);
  real = realpath (dir, NULL);
  gio = port_gio_launcher (real);
  spawn = port_spawn_launcher (real);
  expected = g_strdup_printf ("communicate:ok;out=[out value %s\ninput\n];err=[err\n];"
                              "wait_check:%s/3;wait:ok;exited:1 status:3",
                              real, g_quark_to_string (G_SPAWN_EXIT_ERROR));
  assert_same (gio, spawn, expected);
  g_assert_no_errno (g_rmdir (dir));
  testutil_assert_no_children ();
}

/* ---- communicate_utf8_async, then wait_check_async ---- */

typedef struct {
  GString *log;
  gboolean done;
} Async;

static void
gio_wait_check_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  GError *error = NULL;
  gboolean ok = g_subprocess_wait_check_finish (G_SUBPROCESS (source), res, &error);

  log_result (a->log, "wait_check_async", ok, &error);
  a->done = TRUE;
}

static void
gio_communicate_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  g_autofree char *out = NULL, *err = NULL;
  GError *error = NULL;
  gboolean ok = g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), res, &out,
                                                      &err, &error);

  log_result (a->log, "communicate_async", ok, &error);
  log_text (a->log, "out", out);
  log_text (a->log, "err", err);
  g_subprocess_wait_check_async (G_SUBPROCESS (source), NULL, gio_wait_check_cb, a);
}

static char *
port_gio_async (void)
{
  Async a = { g_string_new (NULL), FALSE };
  g_autoptr (GSubprocess) p = NULL;
  GError *error = NULL;

  p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                        &error, "tr", "a-z", "A-Z", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (p, "hello\n", NULL, gio_communicate_cb, &a);
  run_until (NULL, &a.done);
  return g_string_free (a.log, FALSE);
}

static void
spawn_wait_check_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  GError *error = NULL;
  gboolean ok = spawn_process_wait_check_finish (SPAWN_PROCESS (source), res, &error);

  log_result (a->log, "wait_check_async", ok, &error);
  a->done = TRUE;
}

static void
spawn_communicate_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  g_autofree char *out = NULL, *err = NULL;
  GError *error = NULL;
  gboolean ok = spawn_process_communicate_utf8_finish (SPAWN_PROCESS (source), res, &out,
                                                       &err, &error);

  log_result (a->log, "communicate_async", ok, &error);
  log_text (a->log, "out", out);
  log_text (a->log, "err", err);
  spawn_process_wait_check_async (SPAWN_PROCESS (source), NULL, spawn_wait_check_cb, a);
}

static char *
port_spawn_async (void)
{
  Async a = { g_string_new (NULL), FALSE };
  g_autoptr (SpawnProcess) p = NULL;
  GError *error = NULL;

  /* GSubprocess's stderr is inherited unless piped. */
  p = spawn_process_new ((const char *[]) { "tr", "a-z", "A-Z", NULL });
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
  g_assert_true (spawn_process_start (p, &error));
  g_assert_no_error (error);
  spawn_process_communicate_utf8_async (p, "hello\n", NULL, spawn_communicate_cb, &a);
  run_until (NULL, &a.done);
  return g_string_free (a.log, FALSE);
}

static void
test_async (gconstpointer data)
{
  g_autofree char *gio = NULL, *spawn = NULL;

  g_test_summary ("communicate_utf8_async, then wait_check_async from its "
                  "callback: the same output, stderr NULL where it is not piped");
  if (!testutil_use_backend (data))
    return;
  gio = port_gio_async ();
  spawn = port_spawn_async ();
  assert_same (gio, spawn,
               "communicate_async:ok;out=[HELLO\n];err=[(null)];wait_check_async:ok;");
  testutil_assert_no_children ();
}

/* ---- cancelling a wait on `sleep 100` ---- */

static gboolean
cancel_cb (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

static void
gio_cancelled_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  GError *error = NULL;
  gboolean ok = g_subprocess_wait_check_finish (G_SUBPROCESS (source), res, &error);

  log_result (a->log, "wait_check_async", ok, &error);
  a->done = TRUE;
}

static char *
port_gio_cancel (void)
{
  Async a = { g_string_new (NULL), FALSE };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GSubprocess) p = NULL;
  GError *error = NULL;
  gboolean ok;

  p = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, "sleep", "100", NULL);
  g_assert_no_error (error);
  g_timeout_add (CANCEL_AFTER_MS, cancel_cb, cancellable);
  g_subprocess_wait_check_async (p, cancellable, gio_cancelled_cb, &a);
  run_until (NULL, &a.done);
  /* Still running: cancelling a wait does not end the process. */
  g_string_append_printf (a.log, "running:%d;", g_subprocess_get_identifier (p) != NULL);
  g_subprocess_force_exit (p);
  ok = g_subprocess_wait_check (p, NULL, &error);
  log_result (a.log, "wait_check", ok, &error);
  g_string_append_printf (a.log, "signaled:%d sig:%d", g_subprocess_get_if_signaled (p),
                          g_subprocess_get_term_sig (p));
  return g_string_free (a.log, FALSE);
}

static void
spawn_cancelled_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  GError *error = NULL;
  gboolean ok = spawn_process_wait_check_finish (SPAWN_PROCESS (source), res, &error);

  log_result (a->log, "wait_check_async", ok, &error);
  a->done = TRUE;
}

static char *
port_spawn_cancel (void)
{
  Async a = { g_string_new (NULL), FALSE };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (SpawnProcess) p = NULL;
  GError *error = NULL;
  gboolean ok;

  p = spawn_process_new ((const char *[]) { "sleep", "100", NULL });
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_FORWARD);
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
  g_assert_true (spawn_process_start (p, &error));
  g_assert_no_error (error);
  g_timeout_add (CANCEL_AFTER_MS, cancel_cb, cancellable);
  spawn_process_wait_check_async (p, cancellable, spawn_cancelled_cb, &a);
  run_until (NULL, &a.done);
  g_string_append_printf (a.log, "running:%d;",
                          spawn_process_get_state (p) == SPAWN_PROCESS_RUNNING);
  g_assert_true (spawn_process_kill (p, &error));
  g_assert_no_error (error);
  ok = spawn_process_wait_check (p, NULL, &error);
  log_result (a.log, "wait_check", ok, &error);
  g_string_append_printf (a.log, "signaled:%d sig:%d", spawn_process_get_if_signaled (p),
                          spawn_process_get_term_sig (p));
  return g_string_free (a.log, FALSE);
}

static void
test_cancel (gconstpointer data)
{
  g_autofree char *gio = NULL, *spawn = NULL, *want = NULL;

  g_test_summary ("wait_check_async on `sleep 100`, cancelled after a moment: "
                  "CANCELLED, the process runs on; killed, wait_check says "
                  "G_SPAWN_ERROR_FAILED (a signal) and the status says SIGKILL");
  if (!testutil_use_backend (data))
    return;
  gio = port_gio_cancel ();
  spawn = port_spawn_cancel ();
  want = g_strdup_printf ("wait_check_async:%s/%d;running:1;"
                          "wait_check:%s/%d;signaled:1 sig:9",
                          g_quark_to_string (G_IO_ERROR), G_IO_ERROR_CANCELLED,
                          g_quark_to_string (G_SPAWN_ERROR), G_SPAWN_ERROR_FAILED);
  assert_same (gio, spawn, want);
  testutil_assert_no_children ();
}

/* ---- programs that cannot be started ---- */

static char *
port_gio_missing (const char *not_executable)
{
  GString *log = g_string_new (NULL);
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  GSubprocess *p;
  GError *error = NULL;

  p = g_subprocess_newv ((const char *[]) { "/nonexistent/program", NULL },
                         G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_null (p);
  g_string_append_printf (log, "matches-noent:%d;",
                          g_error_matches (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT));
  log_result (log, "missing", FALSE, &error);
  p = g_subprocess_newv ((const char *[]) { "no-such-program-in-path", NULL },
                         G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_null (p);
  log_result (log, "not-in-path", FALSE, &error);
  p = g_subprocess_newv ((const char *[]) { not_executable, NULL },
                         G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_null (p);
  log_result (log, "not-executable", FALSE, &error);
  g_subprocess_launcher_set_cwd (l, "/nonexistent/dir");
  p = g_subprocess_launcher_spawn (l, &error, "true", NULL);
  g_assert_null (p);
  log_result (log, "chdir", FALSE, &error);
  return g_string_free (log, FALSE);
}

static gboolean
spawn_start (const char *program, const char *dir, GError **error)
{
  g_autoptr (SpawnProcess) p = spawn_process_new ((const char *[]) { program, NULL });
  gboolean ok;

  spawn_process_set_working_directory (p, dir);
  ok = spawn_process_start (p, error);
  /* Every message names the program. */
  if (!ok)
    {
      g_test_message ("%s", (*error)->message);
      g_assert_nonnull (strstr ((*error)->message, program));
    }
  return ok;
}

static char *
port_spawn_missing (const char *not_executable)
{
  GString *log = g_string_new (NULL);
  GError *error = NULL;

  g_assert_false (spawn_start ("/nonexistent/program", NULL, &error));
  g_string_append_printf (log, "matches-noent:%d;",
                          g_error_matches (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT));
  log_result (log, "missing", FALSE, &error);
  g_assert_false (spawn_start ("no-such-program-in-path", NULL, &error));
  log_result (log, "not-in-path", FALSE, &error);
  g_assert_false (spawn_start (not_executable, NULL, &error));
  log_result (log, "not-executable", FALSE, &error);
  g_assert_false (spawn_start ("true", "/nonexistent/dir", &error));
  log_result (log, "chdir", FALSE, &error);
  return g_string_free (log, FALSE);
}

static void
test_missing (gconstpointer data)
{
  g_autofree char *dir = NULL, *plain = NULL, *gio = NULL, *spawn = NULL, *want = NULL;
  GError *error = NULL;

  g_test_summary ("a missing program, one not in PATH, one without the x bit and "
                  "a working directory that does not exist: the same G_SPAWN_ERROR "
                  "codes (NOENT, NOENT, ACCES, CHDIR), so g_error_matches() keeps "
                  "matching after a port");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("port-test-XXXXXX", &error);
  g_assert_no_error (error);
  plain = g_build_filename (dir, "not-executable", NULL);
  g_assert_true (g_file_set_contents (plain, "#!/bin/sh\n", -1, NULL));
  g_assert_no_errno (chmod (plain, 0644));
  gio = port_gio_missing (plain);
  spawn = port_spawn_missing (plain);
  want = g_strdup_printf ("matches-noent:1;missing:%s/%d;not-in-path:%s/%d;"
                          "not-executable:%s/%d;chdir:%s/%d;",
                          g_quark_to_string (G_SPAWN_ERROR), G_SPAWN_ERROR_NOENT,
                          g_quark_to_string (G_SPAWN_ERROR), G_SPAWN_ERROR_NOENT,
                          g_quark_to_string (G_SPAWN_ERROR), G_SPAWN_ERROR_ACCES,
                          g_quark_to_string (G_SPAWN_ERROR), G_SPAWN_ERROR_CHDIR);
  assert_same (gio, spawn, want);
  g_assert_no_errno (g_unlink (plain));
  g_assert_no_errno (g_rmdir (dir));
  testutil_assert_no_children ();
}

/* ---- output from a grandchild that outlives the child ---- */

/* The child ends at once; its background subshell writes a line later
 * through the pipe it inherited.  GSubprocess's communicate() returns at
 * the end of file of its pipes, so it gets both lines. */
static const char *grandchild_script = "echo a; (sleep 0.3; echo b) &";

/* The child ends at once and leaves `sleep 100` holding the pipe, its
 * PID written to $1 so that the test can end it. */
static const char *holder_script = "echo a; sleep 100 & echo $! > \"$1\"";

static void
gio_communicated_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  g_autofree char *out = NULL;
  GError *error = NULL;
  gboolean ok = g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), res, &out,
                                                      NULL, &error);

  log_result (a->log, "communicate_async", ok, &error);
  log_text (a->log, "out", out);
  a->done = TRUE;
}

static void
spawn_communicated_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Async *a = data;
  g_autofree char *out = NULL;
  GError *error = NULL;
  gboolean ok = spawn_process_communicate_utf8_finish (SPAWN_PROCESS (source), res, &out,
                                                       NULL, &error);

  log_result (a->log, "communicate_async", ok, &error);
  log_text (a->log, "out", out);
  a->done = TRUE;
}

static char *
port_gio_grandchild (void)
{
  Async a = { g_string_new (NULL), FALSE };
  const char *argv[] = { "sh", "-c", grandchild_script, NULL };
  g_autoptr (GSubprocess) p = NULL, q = NULL;
  g_autofree char *out = NULL;
  GError *error = NULL;
  gboolean ok;

  p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  ok = g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error);
  log_result (a.log, "communicate", ok, &error);
  log_text (a.log, "out", out);
  ok = g_subprocess_wait_check (p, NULL, &error);
  log_result (a.log, "wait_check", ok, &error);
  q = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (q, NULL, NULL, gio_communicated_cb, &a);
  run_until (NULL, &a.done);
  return g_string_free (a.log, FALSE);
}

static char *
port_spawn_grandchild (void)
{
  Async a = { g_string_new (NULL), FALSE };
  const char *argv[] = { "sh", "-c", grandchild_script, NULL };
  g_autoptr (SpawnProcess) p = NULL, q = NULL;
  g_autofree char *out = NULL;
  GError *error = NULL;
  gboolean ok;

  p = spawn_process_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  ok = spawn_process_communicate_utf8 (p, NULL, NULL, &out, NULL, &error);
  log_result (a.log, "communicate", ok, &error);
  log_text (a.log, "out", out);
  ok = spawn_process_wait_check (p, NULL, &error);
  log_result (a.log, "wait_check", ok, &error);
  q = spawn_process_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  spawn_process_communicate_utf8_async (q, NULL, NULL, spawn_communicated_cb, &a);
  run_until (NULL, &a.done);
  return g_string_free (a.log, FALSE);
}

static void
test_grandchild (gconstpointer data)
{
  g_autofree char *gio = NULL, *spawn = NULL;

  g_test_summary ("communicate_utf8, blocking and async, on a child that ends "
                  "while its background subshell still holds stdout and writes "
                  "a line later: both lines, as GSubprocess returns at the end "
                  "of file of its pipes, not at the child's exit");
  if (!testutil_use_backend (data))
    return;
  gio = port_gio_grandchild ();
  spawn = port_spawn_grandchild ();
  assert_same (gio, spawn, "communicate:ok;out=[a\nb\n];wait_check:ok;"
                           "communicate_async:ok;out=[a\nb\n];");
  testutil_assert_no_children ();
}

static char *
port_gio_holder (const char *pidfile)
{
  Async a = { g_string_new (NULL), FALSE };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GSubprocess) p = NULL;
  GError *error = NULL;
  gboolean ok;

  p = g_subprocess_newv ((const char *[]) { "sh", "-c", holder_script, "sh", pidfile, NULL },
                         G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_timeout_add (CANCEL_AFTER_MS, cancel_cb, cancellable);
  g_subprocess_communicate_utf8_async (p, NULL, cancellable, gio_communicated_cb, &a);
  run_until (NULL, &a.done);
  ok = g_subprocess_wait_check (p, NULL, &error);
  log_result (a.log, "wait_check", ok, &error);
  g_string_append_printf (a.log, "exited:%d status:%d", g_subprocess_get_if_exited (p),
                          g_subprocess_get_exit_status (p));
  testutil_kill_pidfile (pidfile);
  return g_string_free (a.log, FALSE);
}

static char *
port_spawn_holder (const char *pidfile)
{
  Async a = { g_string_new (NULL), FALSE };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (SpawnProcess) p = NULL;
  GError *error = NULL;
  gboolean ok;

  p = spawn_process_newv ((const char *[]) { "sh", "-c", holder_script, "sh", pidfile,
                                             NULL },
                          G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_timeout_add (CANCEL_AFTER_MS, cancel_cb, cancellable);
  spawn_process_communicate_utf8_async (p, NULL, cancellable, spawn_communicated_cb, &a);
  run_until (NULL, &a.done);
  ok = spawn_process_wait_check (p, NULL, &error);
  log_result (a.log, "wait_check", ok, &error);
  g_string_append_printf (a.log, "exited:%d status:%d", spawn_process_get_if_exited (p),
                          spawn_process_get_exit_code (p));
  testutil_kill_pidfile (pidfile);
  return g_string_free (a.log, FALSE);
}

static void
test_grandchild_holds (gconstpointer data)
{
  g_autofree char *dir = NULL, *pidfile = NULL, *gio = NULL, *spawn = NULL, *want = NULL;
  GError *error = NULL;

  g_test_summary ("communicate_utf8_async on a child that leaves `sleep 100` "
                  "holding its stdout, cancelled after a moment: CANCELLED, and "
                  "a wait_check after it returns at once with the child's status "
                  "(the end held for communicate is let go)");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("port-test-XXXXXX", &error);
  g_assert_no_error (error);
  pidfile = g_build_filename (dir, "holder.pid", NULL);
  gio = port_gio_holder (pidfile);
  spawn = port_spawn_holder (pidfile);
  want = g_strdup_printf ("communicate_async:%s/%d;out=[(null)];wait_check:ok;"
                          "exited:1 status:0",
                          g_quark_to_string (G_IO_ERROR), G_IO_ERROR_CANCELLED);
  assert_same (gio, spawn, want);
  g_assert_no_errno (g_rmdir (dir));
  testutil_assert_no_children ();
}

/* ---- a launcher's descriptor for stdout, then STDERR_MERGE ---- */

static int
open_output (const char *path)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  g_assert_no_errno (fd);
  return fd;
}

static char *
port_gio_fd_merge (const char *path)
{
  GString *log = g_string_new (NULL);
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_autoptr (GSubprocess) p = NULL;
  g_autofree char *text = NULL;
  GError *error = NULL;
  gboolean ok;

  g_subprocess_launcher_take_stdout_fd (l, open_output (path));
  g_subprocess_launcher_set_flags (l, G_SUBPROCESS_FLAGS_STDERR_MERGE);
  p = g_subprocess_launcher_spawn (l, &error, "sh", "-c", "echo hello; echo oops >&2", NULL);
  g_assert_no_error (error);
  ok = g_subprocess_wait_check (p, NULL, &error);
  log_result (log, "wait_check", ok, &error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  log_text (log, "file", text);
  return g_string_free (log, FALSE);
}

static char *
port_spawn_fd_merge (const char *path)
{
  GString *log = g_string_new (NULL);
  g_autoptr (SpawnProcess) p = NULL;
  g_autofree char *text = NULL;
  GError *error = NULL;
  gboolean ok;

  p = spawn_process_new ((const char *[]) { "sh", "-c", "echo hello; echo oops >&2", NULL });
  spawn_process_set_channel_fd (p, SPAWN_PROCESS_STDOUT, open_output (path));
  spawn_process_set_subprocess_flags (p, G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_assert_true (spawn_process_start (p, &error));
  g_assert_no_error (error);
  ok = spawn_process_wait_check (p, NULL, &error);
  log_result (log, "wait_check", ok, &error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  log_text (log, "file", text);
  return g_string_free (log, FALSE);
}

static void
test_fd_merge (gconstpointer data)
{
  g_autofree char *dir = NULL, *path = NULL, *gio = NULL, *spawn = NULL;
  GError *error = NULL;

  g_test_summary ("a launcher given a descriptor for stdout, then the flags "
                  "STDERR_MERGE: the descriptor stays, and both lines go to it");
  if (!testutil_use_backend (data))
    return;
  dir = g_dir_make_tmp ("port-test-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "out", NULL);
  gio = port_gio_fd_merge (path);
  spawn = port_spawn_fd_merge (path);
  assert_same (gio, spawn, "wait_check:ok;file=[hello\noops\n];");
  g_assert_no_errno (g_unlink (path));
  g_assert_no_errno (g_rmdir (dir));
  testutil_assert_no_children ();
}

/* ---- from a g_task_run_in_thread() worker ---- */

/* The worker's part: communicate, then wait_check, then a wait on the
 * second process that the main thread's loop cancels. */
typedef struct {
  GObject *first;              /* `read x; echo got $x` */
  GObject *second;             /* `sleep 100` */
  GCancellable *cancellable;   /* for the wait on @second */
  GString *log;
  gboolean done;
} Worker;

static void
worker_gio (GTask *task, gpointer source G_GNUC_UNUSED, gpointer data,
            GCancellable *unused G_GNUC_UNUSED)
{
  Worker *w = data;
  GSubprocess *p = G_SUBPROCESS (w->first);
  g_autofree char *out = NULL;
  GError *error = NULL;
  gboolean ok;

  ok = g_subprocess_communicate_utf8 (p, "42\n", NULL, &out, NULL, &error);
  log_result (w->log, "communicate", ok, &error);
  log_text (w->log, "out", out);
  ok = g_subprocess_wait_check (p, NULL, &error);
  log_result (w->log, "wait_check", ok, &error);
  if (w->second != NULL)
    {
      ok = g_subprocess_wait (G_SUBPROCESS (w->second), w->cancellable, &error);
      log_result (w->log, "wait-cancelled", ok, &error);
    }
  g_task_return_boolean (task, TRUE);
}

static void
worker_spawn (GTask *task, gpointer source G_GNUC_UNUSED, gpointer data,
              GCancellable *unused G_GNUC_UNUSED)
{
  Worker *w = data;
  SpawnProcess *p = SPAWN_PROCESS (w->first);
  g_autofree char *out = NULL;
  GError *error = NULL;
  gboolean ok;

  ok = spawn_process_communicate_utf8 (p, "42\n", NULL, &out, NULL, &error);
  log_result (w->log, "communicate", ok, &error);
  log_text (w->log, "out", out);
  ok = spawn_process_wait_check (p, NULL, &error);
  log_result (w->log, "wait_check", ok, &error);
  if (w->second != NULL)
    {
      ok = spawn_process_wait (SPAWN_PROCESS (w->second), w->cancellable, &error);
      log_result (w->log, "wait-cancelled", ok, &error);
    }
  g_task_return_boolean (task, TRUE);
}

static void
worker_done (GObject *source G_GNUC_UNUSED, GAsyncResult *res, gpointer data)
{
  Worker *w = data;

  g_assert_true (g_task_propagate_boolean (G_TASK (res), NULL));
  w->done = TRUE;
}

/* Runs @func in a worker: with @loop, while the main thread runs its loop
 * (and cancels the wait on w->second after a moment); without, while the
 * main thread blocks in g_task_run_in_thread_sync(). */
static void
worker_run (Worker *w, GTaskThreadFunc func, gboolean loop)
{
  g_autoptr (GTask) task = g_task_new (NULL, NULL, loop ? worker_done : NULL, w);

  g_task_set_task_data (task, w, NULL);
  if (!loop)
    {
      g_task_run_in_thread_sync (task, func);
      g_assert_true (g_task_propagate_boolean (task, NULL));
      return;
    }
  g_timeout_add (CANCEL_AFTER_MS, cancel_cb, w->cancellable);
  g_task_run_in_thread (task, func);
  g_clear_object (&task);
  run_until (NULL, &w->done);
}

static char *
port_gio_thread (gboolean loop)
{
  Worker w = { NULL, NULL, g_cancellable_new (), g_string_new (NULL), FALSE };
  GError *error = NULL;

  w.first = G_OBJECT (g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                        &error, "sh", "-c", "read x; echo got $x", NULL));
  g_assert_no_error (error);
  if (loop)
    {
      w.second = G_OBJECT (g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error,
                                             "sleep", "100", NULL));
      g_assert_no_error (error);
    }
  worker_run (&w, worker_gio, loop);
  /* The unref after the wait: the first has ended, the second is ended
   * here as a GSubprocess user would (force_exit and wait). */
  if (w.second != NULL)
    {
      g_subprocess_force_exit (G_SUBPROCESS (w.second));
      g_assert_true (g_subprocess_wait (G_SUBPROCESS (w.second), NULL, &error));
      g_assert_no_error (error);
    }
  g_clear_object (&w.first);
  g_clear_object (&w.second);
  g_object_unref (w.cancellable);
  return g_string_free (w.log, FALSE);
}

static char *
port_spawn_thread (gboolean loop)
{
  Worker w = { NULL, NULL, g_cancellable_new (), g_string_new (NULL), FALSE };
  SpawnProcess *p;
  GError *error = NULL;

  p = spawn_process_new ((const char *[]) { "sh", "-c", "read x; echo got $x", NULL });
  spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
  g_assert_true (spawn_process_start (p, &error));
  g_assert_no_error (error);
  w.first = G_OBJECT (p);
  if (loop)
    {
      p = spawn_process_new ((const char *[]) { "sleep", "100", NULL });
      spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDIN, SPAWN_CHANNEL_DISCARD);
      spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_FORWARD);
      spawn_process_set_channel_mode (p, SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
      g_assert_true (spawn_process_start (p, &error));
      g_assert_no_error (error);
      w.second = G_OBJECT (p);
    }
  worker_run (&w, worker_spawn, loop);
  if (w.second != NULL)
    {
      /* Cancelling left it running. */
      g_assert_cmpint (spawn_process_get_state (SPAWN_PROCESS (w.second)), ==,
                       SPAWN_PROCESS_RUNNING);
      g_assert_true (spawn_process_kill (SPAWN_PROCESS (w.second), &error));
      g_assert_no_error (error);
      g_assert_true (spawn_process_wait (SPAWN_PROCESS (w.second), NULL, &error));
      g_assert_no_error (error);
    }
  g_clear_object (&w.first);
  g_clear_object (&w.second);
  g_object_unref (w.cancellable);
  return g_string_free (w.log, FALSE);
}

static void
test_thread (gconstpointer data)
{
  g_autofree char *gio = NULL, *spawn = NULL, *want = NULL;

  g_test_summary ("communicate_utf8, wait_check and a cancelled wait from a "
                  "g_task_run_in_thread() worker while the main thread runs "
                  "the loop the processes are watched from: the same output "
                  "and errors as GSubprocess, no WRONG_THREAD");
  if (!testutil_use_backend (data))
    return;
  gio = port_gio_thread (TRUE);
  spawn = port_spawn_thread (TRUE);
  want = g_strdup_printf ("communicate:ok;out=[got 42\n];wait_check:ok;"
                          "wait-cancelled:%s/%d;",
                          g_quark_to_string (G_IO_ERROR), G_IO_ERROR_CANCELLED);
  assert_same (gio, spawn, want);
  testutil_assert_no_children ();
}

static void
test_thread_sync (gconstpointer data)
{
  g_autofree char *gio = NULL, *spawn = NULL;

  g_test_summary ("communicate_utf8 and wait_check from a worker while the "
                  "main thread blocks in g_task_run_in_thread_sync() (nobody "
                  "runs the process's context: the worker polls it itself)");
  if (!testutil_use_backend (data))
    return;
  gio = port_gio_thread (FALSE);
  spawn = port_spawn_thread (FALSE);
  assert_same (gio, spawn, "communicate:ok;out=[got 42\n];wait_check:ok;");
  testutil_assert_no_children ();
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "launcher", test_launcher },
    { "async", test_async },
    { "cancel", test_cancel },
    { "missing", test_missing },
    { "grandchild", test_grandchild },
    { "grandchild-holds", test_grandchild_holds },
    { "fd-merge", test_fd_merge },
    { "thread", test_thread },
    { "thread-sync", test_thread_sync },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/port", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
