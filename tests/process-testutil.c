/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* process-testutil.c - what the SpawnProcess cases share (see
 * process-testutil.h).
 */
#define _GNU_SOURCE
#include <string.h>

#include "process-testutil.h"

/* ---- what a process emits ---- */

static const char *
error_name (int code)
{
  switch (code)
    {
    case SPAWN_PROCESS_ERROR_FAILED_TO_START: return "failed-to-start";
    case SPAWN_PROCESS_ERROR_CRASHED: return "crashed";
    case SPAWN_PROCESS_ERROR_TIMED_OUT: return "timed-out";
    case SPAWN_PROCESS_ERROR_READ_ERROR: return "read-error";
    case SPAWN_PROCESS_ERROR_WRITE_ERROR: return "write-error";
    case SPAWN_PROCESS_ERROR_NOT_RUNNING: return "not-running";
    default: return "unknown";
    }
}

static void
log_event (Events *ev, const char *what)
{
  if (ev->log->len > 0)
    g_string_append_c (ev->log, ' ');
  g_string_append (ev->log, what);
}

void
collect_channel (SpawnProcess *proc, SpawnProcessChannel channel, GByteArray *into)
{
  GBytes *bytes = spawn_process_read_all (proc, channel);
  gsize len;
  const guint8 *p;

  g_assert_nonnull (bytes);
  p = g_bytes_get_data (bytes, &len);
  if (len > 0)
    g_byte_array_append (into, p, len);
  g_bytes_unref (bytes);
}

static void
on_started (SpawnProcess *proc, gpointer data)
{
  Events *ev = data;

  ev->started++;
  ev->state_in_started = spawn_process_get_state (proc);
  log_event (ev, "started");
}

static void
on_finished (SpawnProcess *proc, int exit_code, int exit_status, gpointer info,
             gpointer data)
{
  Events *ev = data;

  g_assert_nonnull (info);
  ev->finished++;
  ev->exit_code = exit_code;
  ev->exit_status = exit_status;
  ev->info = *(const SpawnExitInfo *) info;
  ev->exit_code_in_finished = spawn_process_get_exit_code (proc);
  ev->finished_thread = g_thread_self ();
  log_event (ev, "finished");
  if (ev->collect)
    {
      collect_channel (proc, SPAWN_PROCESS_STDOUT, ev->out);
      collect_channel (proc, SPAWN_PROCESS_STDERR, ev->err);
    }
}

static void
on_error (SpawnProcess *proc G_GNUC_UNUSED, GError *error, gpointer data)
{
  Events *ev = data;
  char *what;

  g_assert_nonnull (error);
  g_assert_true (error->domain == SPAWN_PROCESS_ERROR);
  g_array_append_val (ev->errors, error->code);
  what = g_strconcat ("error:", error_name (error->code), NULL);
  log_event (ev, what);
  g_free (what);
}

static void
on_state_changed (SpawnProcess *proc G_GNUC_UNUSED, int state, gpointer data)
{
  Events *ev = data;

  g_array_append_val (ev->states, state);
}

void
on_ready_stdout (SpawnProcess *proc, gpointer data)
{
  Events *ev = data;

  ev->ready_stdout++;
  if (ev->collect)
    collect_channel (proc, SPAWN_PROCESS_STDOUT, ev->out);
}

void
on_ready_stderr (SpawnProcess *proc, gpointer data)
{
  Events *ev = data;

  ev->ready_stderr++;
  if (ev->collect)
    collect_channel (proc, SPAWN_PROCESS_STDERR, ev->err);
}

static void
on_bytes_written (SpawnProcess *proc G_GNUC_UNUSED, guint64 count, gpointer data)
{
  Events *ev = data;

  g_assert_cmpuint (count, >, 0);
  ev->written += count;
}

/* Record everything @proc emits into @ev; drop @proc before clearing @ev. */
void
events_watch (Events *ev, SpawnProcess *proc)
{
  memset (ev, 0, sizeof (*ev));
  ev->log = g_string_new (NULL);
  ev->errors = g_array_new (FALSE, FALSE, sizeof (int));
  ev->states = g_array_new (FALSE, FALSE, sizeof (int));
  ev->out = g_byte_array_new ();
  ev->err = g_byte_array_new ();
  ev->exit_code = -1;
  ev->exit_status = -1;
  g_signal_connect (proc, "started", G_CALLBACK (on_started), ev);
  g_signal_connect (proc, "finished", G_CALLBACK (on_finished), ev);
  g_signal_connect (proc, "error-occurred", G_CALLBACK (on_error), ev);
  g_signal_connect (proc, "state-changed", G_CALLBACK (on_state_changed), ev);
  g_signal_connect (proc, "ready-read-stdout", G_CALLBACK (on_ready_stdout), ev);
  g_signal_connect (proc, "ready-read-stderr", G_CALLBACK (on_ready_stderr), ev);
  g_signal_connect (proc, "bytes-written", G_CALLBACK (on_bytes_written), ev);
}

void
events_clear (Events *ev)
{
  g_string_free (ev->log, TRUE);
  g_array_unref (ev->errors);
  g_array_unref (ev->states);
  g_byte_array_unref (ev->out);
  g_byte_array_unref (ev->err);
}

/* ---- running the thread-default main context ---- */

gboolean
on_expired (gpointer data)
{
  gboolean *expired = data;

  *expired = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterate the thread-default context until @done (checked before every
 * iteration) or @timeout_ms passed; returns whether @done said so. */
gboolean
iterate_until (Predicate done, gpointer data, int timeout_ms)
{
  GMainContext *ctx = g_main_context_ref_thread_default ();
  GSource *timeout = g_timeout_source_new (timeout_ms);
  gboolean expired = FALSE, ok;

  g_source_set_callback (timeout, on_expired, &expired, NULL);
  g_source_attach (timeout, ctx);
  while (!(ok = done (data)) && !expired)
    g_main_context_iteration (ctx, TRUE);
  g_source_destroy (timeout);
  g_source_unref (timeout);
  g_main_context_unref (ctx);
  return ok;
}

static gboolean
never (gpointer data G_GNUC_UNUSED)
{
  return FALSE;
}

/* Run the context for @ms, to see that nothing (more) happens. */
void
pump (int ms)
{
  iterate_until (never, NULL, ms);
}

static gboolean
is_finished (gpointer data)
{
  Events *ev = data;

  return ev->finished > 0;
}

void
run_until_finished (Events *ev)
{
  g_assert_true (iterate_until (is_finished, ev, WAIT_MS));
}

/* ---- processes ---- */

void
wait_finished_ok (SpawnProcess *proc, int timeout_ms)
{
  GError *error = NULL;

  g_assert_true (spawn_process_wait_for_finished (proc, timeout_ms, NULL, &error));
  g_assert_no_error (error);
}

/* Until @proc has finished: through the main loop, or if @blocking
 * through wait_for_finished(). */
void
await_finished (SpawnProcess *proc, Events *ev, gboolean blocking)
{
  if (blocking)
    wait_finished_ok (proc, WAIT_MS);
  else
    run_until_finished (ev);
}

/* Everything buffered on @channel, as a string (the helpers print text). */
char *
read_all_str (SpawnProcess *proc, SpawnProcessChannel channel)
{
  GBytes *bytes = spawn_process_read_all (proc, channel);
  gsize len;
  const char *p;
  char *s;

  g_assert_nonnull (bytes);
  p = g_bytes_get_data (bytes, &len);
  /* An empty GBytes may have no data pointer at all. */
  g_assert_true (len == 0 || memchr (p, '\0', len) == NULL);
  s = len > 0 ? g_strndup (p, len) : g_strdup ("");
  g_bytes_unref (bytes);
  return s;
}

void
assert_read_all (SpawnProcess *proc, SpawnProcessChannel channel, const char *want)
{
  char *got = read_all_str (proc, channel);

  g_assert_cmpstr (got, ==, want);
  g_free (got);
}

void
assert_exited (SpawnProcess *proc, Events *ev, int code)
{
  SpawnExitInfo info;

  g_assert_cmpint (ev->finished, ==, 1);
  g_assert_cmpint (ev->exit_status, ==, SPAWN_PROCESS_EXIT_NORMAL);
  g_assert_cmpint (ev->exit_code, ==, code);
  g_assert_cmpint (ev->info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (ev->info.status, ==, code);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_NORMAL);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, code);
  g_assert_true (spawn_process_get_exit_info (proc, &info));
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_EXITED);
  g_assert_cmpint (info.status, ==, code);
}

/* Ended by @sig: CRASHED reported, last of the errors, before "finished". */
void
assert_crashed (SpawnProcess *proc, Events *ev, int sig)
{
  g_assert_cmpint (ev->finished, ==, 1);
  g_assert_cmpint (ev->exit_status, ==, SPAWN_PROCESS_EXIT_CRASH);
  g_assert_cmpint (ev->exit_code, ==, sig);
  g_assert_cmpint (ev->info.kind, ==, SPAWN_EXIT_KILLED);
  g_assert_cmpint (ev->info.status, ==, sig);
  g_assert_cmpint (spawn_process_get_state (proc), ==, SPAWN_PROCESS_NOT_RUNNING);
  g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_CRASH);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, sig);
  g_assert_cmpuint (ev->errors->len, >=, 1);
  g_assert_cmpint (g_array_index (ev->errors, int, ev->errors->len - 1), ==,
                   SPAWN_PROCESS_ERROR_CRASHED);
  g_assert_true (g_str_has_suffix (ev->log->str, "error:crashed finished"));
}

/* Killed by its kill timeout: TIMED_OUT, and no CRASHED after it, before
 * "finished" with SIGKILL. */
void
assert_killed_by_timeout (SpawnProcess *proc, Events *ev)
{
  g_assert_cmpint (ev->finished, ==, 1);
  g_assert_cmpint (ev->exit_status, ==, SPAWN_PROCESS_EXIT_CRASH);
  g_assert_cmpint (ev->exit_code, ==, SIGKILL);
  g_assert_cmpint (ev->info.kind, ==, SPAWN_EXIT_KILLED);
  g_assert_cmpint (ev->info.status, ==, SIGKILL);
  g_assert_cmpint (spawn_process_get_exit_status (proc), ==, SPAWN_PROCESS_EXIT_CRASH);
  g_assert_cmpint (spawn_process_get_exit_code (proc), ==, SIGKILL);
  g_assert_error (spawn_process_get_error (proc), SPAWN_PROCESS_ERROR,
                  SPAWN_PROCESS_ERROR_TIMED_OUT);
  g_assert_cmpstr (ev->log->str, ==, "started error:timed-out finished");
}

/* ---- the system's view ---- */

/* The state letter of process @pid from /proc, or 0 once it is gone. */
static char
process_state (GPid pid)
{
  char path[64], *stat = NULL, *paren, state;

  g_snprintf (path, sizeof (path), "/proc/%d/stat", (int) pid);
  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return 0;
  /* "pid (comm) S ...": comm may hold anything, so from the last ')'. */
  paren = strrchr (stat, ')');
  g_assert_nonnull (paren);
  state = paren[2];
  g_free (stat);
  return state;
}

void
assert_alive (GPid pid)
{
  char state = process_state (pid);

  g_assert_cmpint (pid, >, 0);
  if (state == 0 || state == 'Z' || state == 'X')
    g_error ("PID %d should be running, state is %c", (int) pid, state ? state : '-');
}

/* Poll until process @pid has ended: if @reaped, until it is gone from
 * /proc (a zombie stays, so 10 s tells a leak from a slow machine); else
 * until it has died, a zombie counting (its reaper may be someone else). */
void
assert_ended (GPid pid, gboolean reaped)
{
  char state = 0;
  int i;

  for (i = 0; i < 1000; i++)
    {
      state = process_state (pid);
      if (state == 0 || (!reaped && (state == 'Z' || state == 'X')))
        return;
      g_usleep (10 * 1000);
    }
  g_error ("PID %d %s after 10 s, state %c", (int) pid,
           reaped ? "is still there" : "still runs", state);
}

/* @len bytes that repeat nowhere a pipe's or a buffer's size would hide. */
guint8 *
pattern (gsize len)
{
  guint8 *p = g_malloc (len);
  guint32 x = 2463534242u;
  gsize i;

  for (i = 0; i < len; i++)
    {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      p[i] = x;
    }
  return p;
}

void
assert_same_bytes (const guint8 *got, gsize got_len, const guint8 *want, gsize want_len)
{
  gsize i;

  g_assert_cmpuint (got_len, ==, want_len);
  if (memcmp (got, want, want_len) == 0)
    return;
  for (i = 0; got[i] == want[i]; i++)
    ;
  g_error ("data differs from byte %" G_GSIZE_FORMAT " on", i);
}

static char *
file_contents (const char *path)
{
  GError *error = NULL;
  char *s = NULL;

  g_assert_true (g_file_get_contents (path, &s, NULL, &error));
  g_assert_no_error (error);
  return s;
}

void
assert_file (const char *path, const char *want)
{
  char *got = file_contents (path);

  g_assert_cmpstr (got, ==, want);
  g_free (got);
}

void
remove_tree (const char *dir)
{
  const char *rm[] = { "rm", "-rf", dir, NULL };

  g_assert_true (g_spawn_sync (NULL, (char **) rm, NULL, G_SPAWN_SEARCH_PATH,
                               NULL, NULL, NULL, NULL, NULL, NULL));
}

/* Start and finish one process, so that whatever the library sets up once
 * (backend probes, the reaper) is there before we count descriptors. */
void
warm_up (void)
{
  SpawnProcess *proc = testutil_helper_process ("exit", "0", NULL);

  testutil_start_ok (proc);
  wait_finished_ok (proc, WAIT_MS);
  g_object_unref (proc);
}
