/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* process-testutil.h - what the SpawnProcess case files share
 * (process-launch-test, process-io-test, process-wait-test and
 * process-run-test): a record of everything a process emits, running the
 * thread-default context until something holds, the ends a process can
 * come to, and what the system sees of a PID.
 */
#pragma once

#include "testutil.h"

G_BEGIN_DECLS

/* Generous bounds for things that take milliseconds when all is well. */
#define WAIT_MS 30000

/* ---- what a process emits ---- */

typedef struct {
  GString *log;            /* "started", "error:NAME", "finished", in order */
  GArray *errors;          /* SpawnProcessError codes, in order */
  GArray *states;          /* every new state, in order */
  int started;
  int finished;
  int exit_code;
  int exit_status;
  SpawnExitInfo info;
  SpawnProcessState state_in_started;
  int exit_code_in_finished;
  GThread *finished_thread;
  int ready_stdout;
  int ready_stderr;
  guint64 written;
  /* Read both channels on "ready-read-*" and on "finished" into these. */
  gboolean collect;
  GByteArray *out;
  GByteArray *err;
} Events;

void events_watch (Events *ev, SpawnProcess *proc);
void events_clear (Events *ev);
/* The handlers events_watch() connects that a case may disconnect again. */
void on_ready_stdout (SpawnProcess *proc, gpointer data);
void on_ready_stderr (SpawnProcess *proc, gpointer data);
void collect_channel (SpawnProcess *proc, SpawnProcessChannel channel,
                      GByteArray *into);

/* ---- running the thread-default main context ---- */

typedef gboolean (*Predicate) (gpointer data);

gboolean on_expired (gpointer data);
gboolean iterate_until (Predicate done, gpointer data, int timeout_ms);
void pump (int ms);
void run_until_finished (Events *ev);

/* ---- processes ---- */

void wait_finished_ok (SpawnProcess *proc, int timeout_ms);
void await_finished (SpawnProcess *proc, Events *ev, gboolean blocking);
char *read_all_str (SpawnProcess *proc, SpawnProcessChannel channel);
void assert_read_all (SpawnProcess *proc, SpawnProcessChannel channel,
                      const char *want);
void assert_exited (SpawnProcess *proc, Events *ev, int code);
void assert_crashed (SpawnProcess *proc, Events *ev, int sig);
void assert_killed_by_timeout (SpawnProcess *proc, Events *ev);

/* ---- the system's view ---- */

void assert_alive (GPid pid);
void assert_ended (GPid pid, gboolean reaped);
guint8 *pattern (gsize len);
void assert_same_bytes (const guint8 *got, gsize got_len, const guint8 *want,
                        gsize want_len);
void assert_file (const char *path, const char *want);
void remove_tree (const char *dir);
void warm_up (void);

G_END_DECLS
