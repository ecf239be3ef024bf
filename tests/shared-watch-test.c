/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* shared-watch-test: spawn_child_watch_add_shared() (core/child-shared-watch.c,
 * docs/api.md "Thousands of children"): a watch that is not a GSource of its
 * own, so that a context watching N children does not walk N sources per
 * iteration; and what a watch promises stays: its status, its priority,
 * its thread-default context, removal before it runs (from any thread,
 * the notify once, the child left as it was), nothing left behind.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* Whether the backend gives this child's watch a recheck timer, which a
 * shared watch honours with a source of its own (sigchld without pidfds). */
static gboolean
skip_if_rechecked (gconstpointer data)
{
  if (testutil_backend (data) == SPAWN_BACKEND_SIGCHLD &&
      g_strcmp0 (g_getenv ("LIBSPAWN_SIGCHLD_NO_PIDFD"), "1") == 0)
    {
      g_test_skip ("LIBSPAWN_SIGCHLD_NO_PIDFD=1: each sigchld child is rechecked "
                   "on a timer, through a source of its own");
      return TRUE;
    }
  return FALSE;
}

typedef struct {
  int called;
  int killed;
  int notified;
} Counts;

static void
on_count (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
          const GError *error, gpointer data)
{
  Counts *c = data;

  g_assert_no_error ((GError *) error);
  c->called++;
  if (info->kind == SPAWN_EXIT_KILLED && info->status == SIGKILL)
    c->killed++;
}

static void
on_notify (gpointer data)
{
  Counts *c = data;

  c->notified++;
}

/* Iterates @ctx until @c has @n calls, at most 120 s. */
static void
iterate_until_called (GMainContext *ctx, Counts *c, int n)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;

  while (c->called < n)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (!g_main_context_iteration (ctx, FALSE))
        g_usleep (1000);
    }
}

#define N_MANY 200

static void
test_attaches_no_source (gconstpointer data)
{
  SpawnChild *children[N_MANY];
  guint first, last, id, attached = 0, attached_plain = 0;
  Counts c = { 0 };
  GMainContext *ctx;
  int fds_before, i;

  g_test_summary ("200 shared watches attach no GSource per child (200 plain "
                  "watches attach 200); each gets its child's status and its "
                  "notify once; no descriptor or child left");
  if (!testutil_use_backend (data) || skip_if_rechecked (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  for (i = 0; i < N_MANY; i++)
    children[i] = testutil_start_helper ("sleep", "60000");
  fds_before = testutil_count_fds ();

  /* The measure, on the plain watch: one source per child. */
  first = testutil_mark_source_id (ctx);
  for (i = 0; i < N_MANY; i++)
    spawn_child_watch_add (children[i], on_count, &c);
  last = testutil_mark_source_id (ctx);
  for (id = first + 1; id < last; id++)
    {
      GSource *s = g_main_context_find_source_by_id (ctx, id);

      if (s != NULL)
        {
          attached_plain++;
          g_source_destroy (s);
        }
    }
  g_test_message ("plain watches: %u sources attached for %d children", attached_plain, N_MANY);
  g_assert_cmpuint (attached_plain, >=, N_MANY);
  /* Destroyed before their first dispatch: nothing of theirs is left. */
  while (g_main_context_iteration (ctx, FALSE))
    ;

  first = testutil_mark_source_id (ctx);
  for (i = 0; i < N_MANY; i++)
    g_assert_cmpuint (spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, children[i],
                                                    on_count, &c, on_notify), >, 0);
  last = testutil_mark_source_id (ctx);
  for (id = first + 1; id < last; id++)
    if (g_main_context_find_source_by_id (ctx, id) != NULL)
      attached++;
  g_test_message ("shared watches: %u sources attached for %d children", attached, N_MANY);
  g_assert_cmpuint (attached, <=, 1);

  for (i = 0; i < N_MANY; i++)
    {
      g_assert_true (spawn_child_send_signal (children[i], SIGKILL, NULL));
      spawn_child_unref (children[i]);
    }
  iterate_until_called (ctx, &c, N_MANY);
  while (g_main_context_iteration (ctx, FALSE))
    ;
  g_assert_cmpint (c.called, ==, N_MANY);
  g_assert_cmpint (c.killed, ==, N_MANY);
  g_assert_cmpint (c.notified, ==, N_MANY);
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  /* The children's fds went with them; the hub's epoll fd with the last
   * watch. */
  g_assert_cmpint (testutil_count_fds (), <=, fds_before - N_MANY);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

static void
on_order (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
          const GError *error, gpointer data)
{
  GString *order = data;

  g_assert_no_error ((GError *) error);
  g_string_append_printf (order, "watch%d ", info->status);
}

static gboolean
on_idle_order (gpointer data)
{
  g_string_append (data, "idle ");
  return G_SOURCE_REMOVE;
}

static void
test_priorities (gconstpointer data)
{
  GString *order = g_string_new (NULL);
  SpawnChild *low, *high;
  GMainContext *ctx;
  GSource *idle;
  int i;

  g_test_summary ("each shared watch is called at its own priority: of two ended "
                  "children and an idle, HIGH first, then DEFAULT, then LOW");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  low = testutil_start_helper ("exit", "1");
  high = testutil_start_helper ("exit", "2");
  testutil_wait_readable (low);
  testutil_wait_readable (high);
  spawn_child_watch_add_shared (G_PRIORITY_LOW, low, on_order, order, NULL);
  spawn_child_watch_add_shared (G_PRIORITY_HIGH, high, on_order, order, NULL);
  idle = g_idle_source_new ();
  g_source_set_callback (idle, on_idle_order, order, NULL);
  g_source_attach (idle, ctx);
  g_source_unref (idle);
  for (i = 0; i < 100 && strlen (order->str) < strlen ("watch2 idle watch1 "); i++)
    g_main_context_iteration (ctx, FALSE);
  g_assert_cmpstr (order->str, ==, "watch2 idle watch1 ");
  spawn_child_unref (low);
  spawn_child_unref (high);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  g_string_free (order, TRUE);
  testutil_assert_no_children ();
}

static void
on_never (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info G_GNUC_UNUSED,
          const GError *error G_GNUC_UNUSED, gpointer data G_GNUC_UNUSED)
{
  g_assert_not_reached ();
}

static guint self_id;
static gboolean self_removed;

static void
on_remove_self (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info G_GNUC_UNUSED,
                const GError *error G_GNUC_UNUSED, gpointer data)
{
  self_removed = spawn_child_watch_remove_shared (self_id);
  on_count (child, info, error, data);
}

static void
test_remove (gconstpointer data)
{
  Counts removed = { 0 }, later = { 0 }, self = { 0 };
  SpawnExitInfo info;
  GMainContext *ctx;
  SpawnChild *child;
  GError *error = NULL;
  guint id;

  g_test_summary ("a shared watch removed before its child ends is never called, "
                  "its notify runs once, the child stays uncollected for a later "
                  "wait; removing twice, after the call, or from the callback "
                  "itself says FALSE");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  child = testutil_start_helper ("sleep", "60000");
  id = spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, child, on_never, &removed,
                                     on_notify);
  g_assert_true (spawn_child_watch_remove_shared (id));
  g_assert_cmpint (removed.notified, ==, 1);
  g_assert_false (spawn_child_watch_remove_shared (id));
  g_assert_true (spawn_child_send_signal (child, SIGKILL, NULL));
  testutil_wait_readable (child);
  while (g_main_context_iteration (ctx, FALSE))
    ;
  g_assert_cmpint (removed.notified, ==, 1);

  /* Still there to collect; a watch added after the end is called. */
  id = spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, child, on_count, &later,
                                     on_notify);
  iterate_until_called (ctx, &later, 1);
  g_assert_cmpint (later.killed, ==, 1);
  g_assert_cmpint (later.notified, ==, 1);
  g_assert_false (spawn_child_watch_remove_shared (id));
  g_assert_true (spawn_child_wait (child, &info, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (info.kind, ==, SPAWN_EXIT_KILLED);

  self_id = spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, child, on_remove_self,
                                          &self, on_notify);
  iterate_until_called (ctx, &self, 1);
  g_assert_false (self_removed);
  g_assert_cmpint (self.notified, ==, 1);

  spawn_child_unref (child);
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

#define N_RACE 64

typedef struct {
  guint ids[N_RACE];
  gint called;               /* atomic */
  gint notified;             /* atomic */
  gint removed;              /* by the other thread, atomic */
  gint joined;               /* atomic: the remover is done */
  gint called_after;         /* atomic */
} Race;

static void
on_race (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info G_GNUC_UNUSED,
         const GError *error, gpointer data)
{
  Race *r = data;

  g_assert_no_error ((GError *) error);
  g_atomic_int_inc (&r->called);
  if (g_atomic_int_get (&r->joined))
    g_atomic_int_inc (&r->called_after);
}

static void
on_race_notify (gpointer data)
{
  Race *r = data;

  g_atomic_int_inc (&r->notified);
}

static gpointer
remove_thread (gpointer data)
{
  Race *r = data;
  int i;

  for (i = 0; i < N_RACE; i++)
    if (spawn_child_watch_remove_shared (r->ids[i]))
      g_atomic_int_inc (&r->removed);
  return NULL;
}

static void
test_remove_other_thread (gconstpointer data)
{
  SpawnChild *children[N_RACE];
  Race r = { 0 };
  GMainContext *ctx;
  GThread *thread;
  int i;

  g_test_summary ("shared watches removed from another thread while their "
                  "children end and the loop runs: each is either called or "
                  "removed, never both, never after the removals returned; "
                  "every notify once");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  for (i = 0; i < N_RACE; i++)
    {
      children[i] = testutil_start_helper ("sleep", "60000");
      r.ids[i] = spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, children[i],
                                               on_race, &r, on_race_notify);
    }
  for (i = 0; i < N_RACE; i++)
    g_assert_true (spawn_child_send_signal (children[i], SIGKILL, NULL));
  thread = g_thread_new ("remover", remove_thread, &r);
  for (i = 0; i < 200; i++)
    g_main_context_iteration (ctx, FALSE);
  g_thread_join (thread);
  g_atomic_int_set (&r.joined, TRUE);
  for (i = 0; i < N_RACE; i++)
    testutil_wait_readable (children[i]);
  while (g_main_context_iteration (ctx, FALSE))
    ;
  g_test_message ("%d called, %d removed", r.called, r.removed);
  g_assert_cmpint (r.called + r.removed, ==, N_RACE);
  g_assert_cmpint (r.called_after, ==, 0);
  g_assert_cmpint (r.notified, ==, N_RACE);
  /* A removed watch left its child uncollected: collected here, so that
   * no child goes to the reaper (whose hub has an epoll fd of its own). */
  for (i = 0; i < N_RACE; i++)
    {
      SpawnExitInfo info;
      GError *error = NULL;

      g_assert_true (spawn_child_wait (children[i], &info, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (info.kind, ==, SPAWN_EXIT_KILLED);
      spawn_child_unref (children[i]);
    }
  while (g_main_context_iteration (ctx, FALSE))
    ;
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

static void
test_bad_ids (gconstpointer data)
{
  Counts c = { 0 };
  GMainContext *ctx;
  SpawnChild *child;
  guint id;

  g_test_summary ("an ID that is not a shared watch's is refused with a critical; "
                  "g_source_remove() does not find a shared watch's ID and says so, "
                  "and the watch still runs");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL, "*SHARED_WATCH_ID_BIT*");
  g_assert_false (spawn_child_watch_remove_shared (0));
  g_test_assert_expected_messages ();
  g_test_expect_message ("libspawn", G_LOG_LEVEL_CRITICAL, "*SHARED_WATCH_ID_BIT*");
  g_assert_false (spawn_child_watch_remove_shared (testutil_mark_source_id (ctx)));
  g_test_assert_expected_messages ();
  /* Never handed out: FALSE, no critical. */
  g_assert_false (spawn_child_watch_remove_shared (0xfffffff0u));

  child = testutil_start_helper ("exit", "3");
  id = spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, child, on_count, &c, on_notify);
  g_test_expect_message ("GLib", G_LOG_LEVEL_CRITICAL, "*not found*");
  g_assert_false (g_source_remove (id));
  g_test_assert_expected_messages ();
  iterate_until_called (ctx, &c, 1);
  g_assert_cmpint (c.notified, ==, 1);
  spawn_child_unref (child);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

typedef struct {
  GMainContext *ctx;
  SpawnChild *second;
  Counts inner;
  gboolean nested_done;
} Nested;

/* The first child's callback: waits in a nested loop for the second's. */
static void
on_first_nested (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info G_GNUC_UNUSED,
                 const GError *error, gpointer data)
{
  Nested *n = data;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  g_assert_no_error ((GError *) error);
  spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, n->second, on_count, &n->inner, NULL);
  g_assert_true (spawn_child_send_signal (n->second, SIGKILL, NULL));
  while (n->inner.called == 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (!g_main_context_iteration (n->ctx, FALSE))
        g_usleep (1000);
    }
  n->nested_done = TRUE;
}

static void
test_nested_loop (gconstpointer data)
{
  Nested n = { 0 };
  SpawnChild *first;
  gint64 deadline;

  g_test_summary ("a shared watch's callback that runs a nested loop waiting for "
                  "another shared watch of the same context and priority gets it");
  if (!testutil_use_backend (data))
    return;
  n.ctx = g_main_context_new ();
  g_main_context_push_thread_default (n.ctx);
  first = testutil_start_helper ("exit", "0");
  n.second = testutil_start_helper ("sleep", "60000");
  spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, first, on_first_nested, &n, NULL);
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (!n.nested_done)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (!g_main_context_iteration (n.ctx, FALSE))
        g_usleep (1000);
    }
  g_assert_cmpint (n.inner.killed, ==, 1);
  spawn_child_unref (first);
  spawn_child_unref (n.second);
  while (g_main_context_iteration (n.ctx, FALSE))
    ;
  g_main_context_pop_thread_default (n.ctx);
  g_main_context_unref (n.ctx);
  testutil_assert_no_children ();
}

static void
test_context_gone (gconstpointer data)
{
  Counts gone = { 0 }, next = { 0 };
  SpawnChild *a, *b;
  GMainContext *ctx;
  guint id;
  int i;

  g_test_summary ("a shared watch whose context is freed first is never called and "
                  "is still removed by its ID (its notify once); contexts made after "
                  "get their watches called");
  if (!testutil_use_backend (data))
    return;
  a = testutil_start_helper ("sleep", "60000");
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  id = spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, a, on_never, &gone, on_notify);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  for (i = 0; i < 3; i++)
    {
      /* Often at the address just freed: its hub must be a new one. */
      ctx = g_main_context_new ();
      g_main_context_push_thread_default (ctx);
      b = testutil_start_helper ("exit", "3");
      spawn_child_watch_add_shared (G_PRIORITY_DEFAULT, b, on_count, &next, on_notify);
      spawn_child_unref (b);
      if (i == 1)
        {
          g_assert_true (spawn_child_watch_remove_shared (id));
          g_assert_cmpint (gone.notified, ==, 1);
        }
      iterate_until_called (ctx, &next, i + 1);
      g_main_context_pop_thread_default (ctx);
      g_main_context_unref (ctx);
    }
  g_assert_cmpint (next.notified, ==, 3);
  g_assert_true (spawn_child_send_signal (a, SIGKILL, NULL));
  testutil_wait_readable (a);
  g_assert_true (spawn_child_wait (a, NULL, NULL, NULL));
  spawn_child_unref (a);
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  testutil_assert_no_children ();
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "attaches-no-source", test_attaches_no_source },
    { "priorities", test_priorities },
    { "remove", test_remove },
    { "remove-other-thread", test_remove_other_thread },
    { "bad-ids", test_bad_ids },
    { "context-gone", test_context_gone },
    { "nested-loop", test_nested_loop },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/shared-watch", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
