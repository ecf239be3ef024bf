/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* child-shared-watch.c - spawn_child_watch_add_shared(): a watch that is
 * not a GSource
 *
 * spawn_child_watch_add() attaches a GSource per child, as
 * g_child_watch_add() does, and GLib visits every attached source twice
 * in every iteration of its context: N watches cost each iteration O(N)
 * (docs/design.md, "What is left per iteration").  A shared watch is a
 * record in the hub of its (context, priority) instead (child-hub.c),
 * whose dispatch collects the child and calls the callback: one source
 * per context and priority, however many children it watches.  Its ID is
 * ours, with the high bit set, so that one given to g_source_remove() by
 * mistake is not found (a critical) rather than naming someone else's
 * source; spawn_child_watch_remove_shared() removes it from any thread.
 * A child that must be rechecked on a timer (sigchld without pidfds), or
 * whose fd cannot go into a hub, gets a watch source of its own, still
 * under one of our IDs.
 */
#include "core-private.h"

#include <errno.h>

typedef struct {
  gint ref_count;            /* atomic */
  gint claimed;              /* atomic: called or removed, once */
  guint id;
  SpawnChild *child;
  SpawnChildWatchFunc func;
  gpointer data;
  GDestroyNotify notify;
  SpawnReadyLink *link;      /* taken out by shared_watch_unlink(), or NULL */
  GSource *source;           /* the fallback, or NULL */
} SharedWatch;

/* Guards watches, next_id and the storing of every watch's link. */
static GMutex watches_lock;
static GHashTable *watches;  /* ID -> SharedWatch (a reference) */
static guint next_id;

#define SHARED_WATCH_ID_BIT 0x80000000u

static gpointer
shared_watch_ref (gpointer data)
{
  SharedWatch *w = data;

  g_atomic_int_inc (&w->ref_count);
  return w;
}

static void
shared_watch_unref (gpointer data)
{
  SharedWatch *w = data;

  if (!g_atomic_int_dec_and_test (&w->ref_count))
    return;
  /* Out of the hub already (shared_watch_unlink(), or never linked). */
  g_assert (w->link == NULL);
  g_clear_pointer (&w->source, g_source_unref);
  if (w->notify != NULL)
    w->notify (w->data);
  spawn_child_unref (w->child);
  g_free (w);
}

/* After winning the claim: out of the table and out of the hub, then
 * the table's reference dropped.  The link goes first, while the table's
 * reference still holds the record: once _spawn_ready_link_free() has
 * returned the hub begins no call, so it never takes a reference on a
 * record whose count has reached 0 (a call under way holds its own). */
static void
shared_watch_unlink (SharedWatch *w)
{
  SpawnReadyLink *link;
  GSource *source;

  g_mutex_lock (&watches_lock);
  g_hash_table_remove (watches, GUINT_TO_POINTER (w->id));
  link = g_steal_pointer (&w->link);
  source = w->source;
  g_mutex_unlock (&watches_lock);
  _spawn_ready_link_free (link);
  if (source != NULL)
    g_source_destroy (source);
  shared_watch_unref (w);
}

static void
shared_watch_call (SharedWatch *w, int err)
{
  GError *error = NULL;

  if (!g_atomic_int_compare_and_exchange (&w->claimed, FALSE, TRUE))
    return;
  if (err < 0)
    error = _spawn_error_new (-err, "The exit status of “%s” (PID %d)",
                              w->child->program, (int) w->child->pid);
  w->func (w->child, err == 0 ? &w->child->info : NULL, error, w->data);
  g_clear_error (&error);
  shared_watch_unlink (w);
}

/* From the hub's dispatch, which holds a reference on @data. */
static void
shared_watch_ready (gpointer data)
{
  SharedWatch *w = data;
  int err;

  if (g_atomic_int_get (&w->claimed))
    return;
  err = _spawn_child_collect (w->child, NULL);
  if (err == -EAGAIN)
    {
      /* The link is stored and taken under the lock
       * (shared_watch_attach(), shared_watch_unlink()). */
      g_mutex_lock (&watches_lock);
      if (w->link != NULL)
        _spawn_ready_link_rearm (w->link);
      g_mutex_unlock (&watches_lock);
    }
  else
    shared_watch_call (w, err);
}

/* The fallback source's callback. */
static void
shared_watch_source_done (SpawnChild *child G_GNUC_UNUSED,
                          const SpawnExitInfo *info G_GNUC_UNUSED,
                          const GError *error G_GNUC_UNUSED, gpointer data)
{
  SharedWatch *w = data;

  shared_watch_call (w, w->child->collect_error);
}

/* Under watches_lock: a fresh ID, never 0's and never in use. */
static guint
shared_watch_insert (SharedWatch *w)
{
  if (watches == NULL)
    watches = g_hash_table_new (NULL, NULL);
  do
    w->id = SHARED_WATCH_ID_BIT | (++next_id & ~SHARED_WATCH_ID_BIT);
  while (w->id == SHARED_WATCH_ID_BIT ||
         g_hash_table_contains (watches, GUINT_TO_POINTER (w->id)));
  g_hash_table_insert (watches, GUINT_TO_POINTER (w->id), w);
  return w->id;
}

/* Links @w to the hub of (@context, @priority), or gives it a source of
 * its own.  Under the lock, so that shared_watch_ready() (rearming) and
 * shared_watch_unlink() (taking them away), which may run in another
 * thread as soon as the link or source exists, see what is stored; a
 * removal that came first (the claim taken before anything was stored)
 * is undone here.  Lock order: watches_lock, then the hub's or the
 * context's. */
static void
shared_watch_attach (SharedWatch *w, int priority, GMainContext *context)
{
  SpawnReadyLink *stale = NULL;
  GSource *source = NULL;
  int err = 0;

  g_mutex_lock (&watches_lock);
  if (_spawn_child_get_recheck_interval (w->child) == 0)
    w->link = _spawn_ready_link_new_func (w->child->fd, context, priority,
                                          shared_watch_ready, w, shared_watch_ref,
                                          shared_watch_unref, &err);
  if (w->link == NULL)
    {
      if (err != 0)
        g_debug ("shared watch of PID %d has a source of its own: %s",
                 (int) w->child->pid, g_strerror (-err));
      w->source = spawn_child_watch_source_new (w->child);
      g_source_set_priority (w->source, priority);
      g_source_set_callback (w->source,
                             (GSourceFunc) (void (*) (void)) shared_watch_source_done,
                             shared_watch_ref (w), shared_watch_unref);
      g_source_attach (w->source, context);
    }
  if (g_atomic_int_get (&w->claimed))
    {
      stale = g_steal_pointer (&w->link);
      source = w->source;
    }
  g_mutex_unlock (&watches_lock);
  _spawn_ready_link_free (stale);
  if (source != NULL)
    g_source_destroy (source);
}

/**
 * spawn_child_watch_add_shared:
 * @priority: the priority of the watch
 * @child: a child
 * @function: (scope notified) (closure data) (destroy notify): called
 *   once when @child has ended
 * @data: data for @function
 * @notify: (nullable): called when the watch is removed
 *
 * Watches @child as [func@Spawn.Child.watch_add_full] does (@function
 * runs once, when @child has ended, from the main context that was the
 * thread-default one when this was called, at @priority), but the watch
 * is not a #GSource of its own: one source per context and priority
 * calls the callbacks of every shared watch there.  GLib visits every
 * attached source twice in each iteration of a context, so N watches
 * from [method@Spawn.Child.watch_add] cost each iteration O(N); N shared
 * watches cost it one source.  Use this where a loop watches hundreds or
 * thousands of children at once (a build or test runner, a supervisor).
 *
 * The ID returned is therefore not a #GSource ID: remove the watch with
 * [func@Spawn.Child.watch_remove_shared], not [func@GLib.Source.remove]
 * (which does not find it, and says so in a critical warning).
 *
 * The watch holds a reference on @child until it is removed (after
 * @function has run, or by [func@Spawn.Child.watch_remove_shared]), so
 * the caller may drop its own reference at once.  Several watches on one
 * child, shared or not, each get the same result.
 *
 * Returns: the watch ID (greater than 0)
 *
 * Since: 0.3
 */
guint
spawn_child_watch_add_shared (int priority, SpawnChild *child,
                              SpawnChildWatchFunc function, gpointer data,
                              GDestroyNotify notify)
{
  GMainContext *context;
  SharedWatch *w;
  guint id;

  g_return_val_if_fail (child != NULL, 0);
  g_return_val_if_fail (child->fd >= 0, 0);
  g_return_val_if_fail (function != NULL, 0);

  w = g_new0 (SharedWatch, 1);
  w->ref_count = 1;          /* the table's */
  w->child = spawn_child_ref (child);
  w->func = function;
  w->data = data;
  w->notify = notify;
  context = g_main_context_ref_thread_default ();
  /* In the table before it can be called (from the context's thread,
   * which may be another one). */
  g_mutex_lock (&watches_lock);
  id = shared_watch_insert (w);
  shared_watch_ref (w);
  g_mutex_unlock (&watches_lock);
  shared_watch_attach (w, priority, context);
  shared_watch_unref (w);
  g_main_context_unref (context);
  return id;
}

/**
 * spawn_child_watch_remove_shared:
 * @id: an ID from [func@Spawn.Child.watch_add_shared]
 *
 * Removes a shared watch before its callback has run, from any thread;
 * its notify function is called (once a call of the callback under way
 * in another thread has returned).  The watch does not collect the child
 * (a collection its context's thread had begun may still finish, without
 * the callback): a wait or another watch gets its status.  What
 * [func@GLib.Source.remove] is to the IDs of [method@Spawn.Child.watch_add].
 *
 * Unlike a #GSource watch, a shared watch does not end when its main
 * context is freed: it is then never called, and keeps its child and
 * data until it is removed with this function.
 *
 * Returns: %TRUE if the watch was removed, %FALSE if its callback had
 *   run (or was running: a callback that removes its own watch gets
 *   %FALSE) or it had been removed already
 *
 * Since: 0.3
 */
gboolean
spawn_child_watch_remove_shared (guint id)
{
  SharedWatch *w = NULL;

  g_return_val_if_fail (id & SHARED_WATCH_ID_BIT, FALSE);

  g_mutex_lock (&watches_lock);
  if (watches != NULL)
    w = g_hash_table_lookup (watches, GUINT_TO_POINTER (id));
  if (w != NULL && !g_atomic_int_compare_and_exchange (&w->claimed, FALSE, TRUE))
    w = NULL;
  g_mutex_unlock (&watches_lock);
  if (w == NULL)
    return FALSE;
  shared_watch_unlink (w);
  return TRUE;
}
