/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* child.c - SpawnChild: the handle, its watch, and the reaper
 *
 * A SpawnChild is what spawn_async_fd() returns: the PID, the process fd,
 * and once collected how the child ended.  Collecting (reading the exit
 * info, or reaping) happens once, under the child's lock, and only when
 * someone asks: a watch's dispatch, a wait, SpawnProcess.  The watch
 * is made ready by its context's hub (child-hub.c) when the child's fd
 * turns readable (and, for backends that cannot always be woken,
 * rechecks on a timer), so with the pidfd backend the PID stays the
 * child's until its callback has run (clonefd: the kernel reaps at exit;
 * sigchld: its SIGCHLD handler reaps the child its signal names, or all
 * it finds without pidfds, and keeps the status).  A
 * child whose last handle goes while it runs is handed to the reaper, a
 * private thread that watches it to its end (pidfd and sigchld backends;
 * with clonefd the kernel reaps it).
 */
#include "core-private.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>

/* Collects once, under the child's lock; 0, -EAGAIN or -ECHILD. */
static int
child_collect (SpawnChild *child)
{
  int err;

  g_mutex_lock (&child->lock);
  if (!child->collected)
    {
      err = child->ops->collect (child, &child->info);
      if (err != -EAGAIN)
        {
          child->collect_error = err;
          g_atomic_int_set (&child->collected, TRUE);
        }
    }
  err = child->collected ? child->collect_error : -EAGAIN;
  g_mutex_unlock (&child->lock);
  return err;
}

/* A watch is a GSource of its own (its priority, its callback, its
 * destroy), with no fd and no prepare or check: its context's hub
 * (child-hub.c) makes it ready when the child's fd turns readable, so a
 * context watching N children polls one fd and does the work of the
 * ready watches only. */
typedef struct {
  GSource source;
  SpawnChild *child;
  /* Made by the first dispatch, in the watch's context; freed by dispose
   * (any thread: never while a dispatch holds its reference). */
  SpawnReadyLink *link;
  /* No link could be made (no epoll fd to be had): the fd is polled by
   * this source itself, as before the hub. */
  gboolean polls_itself;
} SpawnChildWatch;

static void
child_watch_schedule_recheck (SpawnChildWatch *w)
{
  guint ms = w->child->recheck_interval_ms;

  g_source_set_ready_time (&w->source,
                           ms > 0 ? g_get_monotonic_time () + ms * 1000 : -1);
}

/* First dispatch, in the context the watch was attached to. */
static void
child_watch_link (SpawnChildWatch *w)
{
  int err = 0;

  w->link = _spawn_ready_link_new (&w->source, w->child->fd,
                                   g_source_get_context (&w->source), &err);
  if (w->link == NULL)
    {
      g_debug ("child watch of PID %d polls its own fd: %s", (int) w->child->pid,
               g_strerror (-err));
      g_source_add_unix_fd (&w->source, w->child->fd, G_IO_IN);
      w->polls_itself = TRUE;
    }
}

static gboolean
child_watch_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  SpawnChildWatch *w = (SpawnChildWatch *) source;
  SpawnChildWatchFunc func = (SpawnChildWatchFunc) (void (*) (void)) callback;
  GError *error = NULL;
  int err;

  if (w->link == NULL && !w->polls_itself)
    child_watch_link (w);
  err = child_collect (w->child);
  if (err == -EAGAIN)
    {
      /* Not ready before the rearm: the hub runs in this thread, and a
       * rearm of a readable fd reports it at once. */
      child_watch_schedule_recheck (w);
      if (w->link != NULL)
        _spawn_ready_link_rearm (w->link);
      return G_SOURCE_CONTINUE;
    }
  if (err < 0)
    error = _spawn_error_new (-err, "The exit status of “%s” (PID %d)",
                              w->child->program, (int) w->child->pid);
  if (func != NULL)
    func (w->child, err == 0 ? &w->child->info : NULL, error, user_data);
  g_clear_error (&error);
  return G_SOURCE_REMOVE;
}

static void
child_watch_dispose (GSource *source)
{
  SpawnChildWatch *w = (SpawnChildWatch *) source;

  g_clear_pointer (&w->link, _spawn_ready_link_free);
}

static void
child_watch_finalize (GSource *source)
{
  SpawnChildWatch *w = (SpawnChildWatch *) source;

  spawn_child_unref (w->child);
}

static GSourceFuncs child_watch_funcs = {
  .dispatch = child_watch_dispatch,
  .finalize = child_watch_finalize,
};

/**
 * spawn_child_watch_source_new:
 * @child: a child
 *
 * Creates a source that dispatches once, when @child has ended.  Its
 * callback is a [callback@Spawn.ChildWatchFunc] (use
 * [method@GLib.Source.set_callback] with a cast, as for
 * [func@GLib.child_watch_source_new]).
 *
 * The source holds a reference on @child until it is finalized, so the
 * caller may drop its own.  It is not attached: attach it to the context
 * that should run the callback.  Several watches on one child, in any main
 * contexts, each get the same result.
 *
 * Returns: (transfer full): a new #GSource
 */
GSource *
spawn_child_watch_source_new (SpawnChild *child)
{
  SpawnChildWatch *w;
  GSource *source;
  char *name;

  g_return_val_if_fail (child != NULL, NULL);
  g_return_val_if_fail (child->fd >= 0, NULL);

  source = g_source_new (&child_watch_funcs, sizeof (SpawnChildWatch));
  w = (SpawnChildWatch *) source;
  w->child = spawn_child_ref (child);
  g_source_set_dispose_function (source, child_watch_dispose);
  name = g_strdup_printf ("libspawn child watch (pid %d, %s)", (int) child->pid,
                          child->ops->name);
  g_source_set_name (source, name);
  g_free (name);
  /* Ready at once: the first dispatch links the watch to the hub of the
   * context it was attached to (GLib has no attach hook). */
  g_source_set_ready_time (source, 0);
  return source;
}

/**
 * spawn_child_watch_add_full:
 * @priority: the priority of the watch
 * @child: a child
 * @function: called once when @child has ended
 * @data: data for @function
 * @notify: (nullable): called when the watch is removed
 *
 * Watches @child: @function runs once, when @child has ended, from the
 * main context that was the thread-default one when this was called
 * ([func@GLib.MainContext.get_thread_default]).  Unlike
 * [func@GLib.child_watch_add_full], which always attaches to the global
 * default context, a worker thread that pushed a context of its own gets
 * its callbacks there.
 *
 * The watch holds a reference on @child until it is removed (after
 * @function has run, or by [func@GLib.Source.remove]), so the caller may
 * drop its own reference at once: the child is still watched, and reaped.
 * Several watches on one child each get the same result.
 * [method@Spawn.Child.watch_source_new] gives the #GSource to attach
 * elsewhere.
 *
 * Returns: the source ID
 */
guint
spawn_child_watch_add_full (int priority, SpawnChild *child,
                            SpawnChildWatchFunc function, gpointer data,
                            GDestroyNotify notify)
{
  GSource *source;
  guint id;

  g_return_val_if_fail (child != NULL, 0);
  g_return_val_if_fail (function != NULL, 0);

  source = spawn_child_watch_source_new (child);
  if (priority != G_PRIORITY_DEFAULT)
    g_source_set_priority (source, priority);
  g_source_set_callback (source, (GSourceFunc) (void (*) (void)) function, data,
                         notify);
  id = g_source_attach (source, g_main_context_get_thread_default ());
  g_source_unref (source);
  return id;
}

/**
 * spawn_child_watch_add:
 * @child: a child
 * @function: (scope async): called once when @child has ended
 * @data: data for @function
 *
 * Watches @child at %G_PRIORITY_DEFAULT: @function runs once, when @child
 * has ended, from the thread-default main context of the caller (not the
 * global default one, as with [func@GLib.child_watch_add]).  The watch
 * holds a reference on @child until it is removed.  See
 * [func@Spawn.Child.watch_add_full].
 *
 * Returns: the source ID
 */
guint
spawn_child_watch_add (SpawnChild *child, SpawnChildWatchFunc function,
                       gpointer data)
{
  return spawn_child_watch_add_full (G_PRIORITY_DEFAULT, child, function, data,
                                     NULL);
}

/* The reaper: children whose last handle went while they ran.  Watched
 * on a private context in a thread of our own, started on first use. */
static GMainContext *reaper_context;

static gpointer
child_reaper_thread (gpointer data)
{
  GMainLoop *loop = g_main_loop_new (data, FALSE);

  g_main_loop_run (loop);
  return NULL;
}

static void
child_reaped (SpawnChild          *child G_GNUC_UNUSED,
        const SpawnExitInfo *info G_GNUC_UNUSED,
        const GError        *error G_GNUC_UNUSED,
        gpointer             data G_GNUC_UNUSED)
{
}

/* A child the reaper holds through a function link of its context's
 * hub, not a GSource per child: a program that lets thousands of running
 * children go would otherwise make the reaper's thread walk all of them
 * in every iteration (docs/design.md, "What is left per iteration"). */
typedef struct {
  gint ref_count;            /* atomic */
  gint done;                 /* atomic: collected, once */
  SpawnChild *child;         /* the reference the reaper took over */
  SpawnReadyLink *link;      /* stored under reaper_lock */
} ReaperEntry;

/* Guards the storing and reading of every entry's link: the reaper's
 * thread may call child_reaper_ready() before the adopting thread has
 * stored it. */
static GMutex reaper_lock;

static gpointer
child_reaper_entry_ref (gpointer data)
{
  ReaperEntry *r = data;

  g_atomic_int_inc (&r->ref_count);
  return r;
}

static void
child_reaper_entry_unref (gpointer data)
{
  ReaperEntry *r = data;

  if (!g_atomic_int_dec_and_test (&r->ref_count))
    return;
  g_assert (r->link == NULL);
  spawn_child_unref (r->child);
  g_free (r);
}

/* Once collected: out of the hub while a reference still holds @r (so
 * that the hub never references it at 0), then the link's reference
 * dropped.  The link may not be stored yet (child_reaper_adopt() checks
 * again once it is). */
static void
child_reaper_done (ReaperEntry *r)
{
  SpawnReadyLink *link;

  g_mutex_lock (&reaper_lock);
  link = g_steal_pointer (&r->link);
  g_mutex_unlock (&reaper_lock);
  _spawn_ready_link_free (link);
  child_reaper_entry_unref (r);
}

/* From the reaper context's hub, which holds a reference on @data. */
static void
child_reaper_ready (gpointer data)
{
  ReaperEntry *r = data;

  if (g_atomic_int_get (&r->done))
    return;
  if (child_collect (r->child) == -EAGAIN)
    {
      g_mutex_lock (&reaper_lock);
      _spawn_ready_link_rearm (r->link);
      g_mutex_unlock (&reaper_lock);
    }
  else if (g_atomic_int_compare_and_exchange (&r->done, FALSE, TRUE))
    child_reaper_done (r);
}

/* Takes over @child's reference. */
static void
child_reaper_adopt (SpawnChild *child)
{
  static gsize started;
  SpawnReadyLink *link, *stale = NULL;
  ReaperEntry *r;
  GSource *source;
  int err = 0;

  if (g_once_init_enter (&started))
    {
      sigset_t all, saved;

      reaper_context = g_main_context_new ();
      /* Born with every signal blocked, as GLib's worker is: a thread of
       * ours must never be the one the application's process-directed
       * signals (SIGCHLD, SIGINT, SIGTERM...) land in, whatever the mask
       * of the thread that happens to drop the first child. */
      sigfillset (&all);
      pthread_sigmask (SIG_SETMASK, &all, &saved);
      g_thread_unref (g_thread_new ("libspawn-reaper", child_reaper_thread,
                                    reaper_context));
      pthread_sigmask (SIG_SETMASK, &saved, NULL);
      g_once_init_leave (&started, 1);
    }
  if (child->recheck_interval_ms == 0)
    {
      r = g_new0 (ReaperEntry, 1);
      r->ref_count = 2;        /* the link's, and ours until it is stored */
      r->child = child;
      g_mutex_lock (&reaper_lock);
      link = _spawn_ready_link_new_func (child->fd, reaper_context, G_PRIORITY_DEFAULT,
                                         child_reaper_ready, r, child_reaper_entry_ref,
                                         child_reaper_entry_unref, &err);
      /* Collected already (the reaper's thread ran before this): the
       * link is this thread's to free. */
      if (g_atomic_int_get (&r->done))
        stale = link;
      else
        r->link = link;
      g_mutex_unlock (&reaper_lock);
      if (link != NULL)
        {
          _spawn_ready_link_free (stale);
          child_reaper_entry_unref (r);
          return;
        }
      g_debug ("reaper: PID %d gets a source of its own: %s", (int) child->pid,
               g_strerror (-err));
      r->child = NULL;
      g_free (r);
    }
  source = spawn_child_watch_source_new (child);
  g_source_set_callback (source, (GSourceFunc) (void (*) (void)) child_reaped, NULL, NULL);
  g_source_attach (source, reaper_context);
  g_source_unref (source);
  /* The source holds its own reference now. */
  spawn_child_unref (child);
}

/* For the tests: the reaper's context, NULL before its first child. */
GMainContext *
_spawn_child_reaper_context (void)
{
  return reaper_context;
}

void
_spawn_child_keep_alive (SpawnChild *child)
{
  child_reaper_adopt (spawn_child_ref (child));
}

/**
 * SpawnChild: (ref-func spawn_child_ref) (unref-func spawn_child_unref)
 *
 * A handle to a child started by [func@Spawn.async_fd]: its PID, its process
 * fd, and its exit once it has ended.  Reference-counted and thread-safe.
 */
G_DEFINE_BOXED_TYPE (SpawnChild, spawn_child, spawn_child_ref, spawn_child_unref)

SpawnChild *
_spawn_child_new (const SpawnBackendOps *ops, const char *program, gboolean kill_on_close)
{
  SpawnChild *child = g_new0 (SpawnChild, 1);

  child->ref_count = 1;
  child->ops = ops;
  child->program = g_strdup (program);
  child->fd = -1;
  child->recheck_interval_ms = ops->recheck_interval_ms;
  child->kill_on_close = kill_on_close;
  g_mutex_init (&child->lock);
  return child;
}

/**
 * spawn_child_ref:
 * @child: a child
 *
 * Takes a reference to @child.
 *
 * Returns: (transfer full): @child
 */
SpawnChild *
spawn_child_ref (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, NULL);

  g_atomic_int_inc (&child->ref_count);
  return child;
}

/**
 * spawn_child_unref:
 * @child: (transfer full): a child
 *
 * Drops a reference.  The last one does not wait for the process: a child
 * still running is killed first if it was started with
 * %SPAWN_CHILD_KILL_ON_CLOSE, then handed to a private reaper thread (pidfd and sigchld
 * backends) or left to the kernel (clonefd), so it never becomes a zombie.
 */
void
spawn_child_unref (SpawnChild *child)
{
  g_return_if_fail (child != NULL);

  if (!g_atomic_int_dec_and_test (&child->ref_count))
    return;
  if (child->forget != NULL)
    {
      child->forget (child->forget_data, child);
      child->forget = NULL;
    }
  /* Not left to the kernel even where it would do it (clonefd with
   * AUTOKILL): a fork() of the application may share the fd. */
  if (child->pid > 0 && child->kill_on_close &&
      !g_atomic_int_get (&child->collected))
    {
      g_mutex_lock (&child->lock);
      if (!child->collected)
        child->ops->send_signal (child, SIGKILL);
      g_mutex_unlock (&child->lock);
    }
  if (child->pid > 0 && child->ops->needs_reaping &&
      !g_atomic_int_get (&child->collected))
    {
      /* Resurrected with one reference, which the reaper drops. */
      g_atomic_int_set (&child->ref_count, 1);
      child_reaper_adopt (child);
      return;
    }
  if (child->pid > 0)
    child->ops->finalize (child);
  g_mutex_clear (&child->lock);
  g_free (child->program);
  g_free (child);
}

/**
 * spawn_child_get_pid:
 * @child: a child
 *
 * The child's process ID.  With the clonefd backend the kernel reaps the
 * child itself, and with the sigchld backend the library's SIGCHLD handler
 * reaps it as it ends, so once it has ended the PID may name another
 * process: use it for display, use the handle to act on the child.
 *
 * Returns: the PID
 */
GPid
spawn_child_get_pid (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, 0);
  return child->pid;
}

/**
 * spawn_child_get_fd:
 * @child: a child
 *
 * The descriptor that turns readable when the child has ended (a clone fd,
 * a pidfd, or with the sigchld backend on a kernel without pidfds an
 * eventfd woken by the SIGCHLD handler).  It belongs to the
 * child: poll it, don't read or close it.
 *
 * Returns: the descriptor
 */
int
spawn_child_get_fd (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, -1);
  return child->fd;
}

/**
 * spawn_child_get_backend:
 * @child: a child
 *
 * Which backend started @child and watches it.
 *
 * Returns: the backend that started @child
 */
SpawnBackend
spawn_child_get_backend (SpawnChild *child)
{
  g_return_val_if_fail (child != NULL, SPAWN_BACKEND_AUTO);
  return child->ops->kind;
}

int
_spawn_child_collect (SpawnChild *child, SpawnExitInfo *info)
{
  int err = child_collect (child);

  /* Written once, before collected was set: stable from here on. */
  if (err == 0 && info != NULL)
    *info = child->info;
  return err;
}

guint
_spawn_child_get_recheck_interval (SpawnChild *child)
{
  return child->recheck_interval_ms;
}

/**
 * spawn_child_send_signal:
 * @child: a child
 * @signum: the signal
 * @error: return location for a #GError
 *
 * Sends @signum to the child, never to a process that reused its PID:
 * through the clone fd or the pidfd where the backend has one; with the
 * sigchld backend, only while its PID is still the child's (nobody else
 * reaped it, same start time; see [the sigchld
 * backend](design.html#what-the-sigchld-backend-can-and-cannot-guarantee)
 * in the design notes for the windows a waitpid(-1) elsewhere still
 * leaves).
 *
 * Returns: %TRUE if sent; %FALSE with %SPAWN_ERROR_SRCH if the child has
 *   already ended
 */
gboolean
spawn_child_send_signal (SpawnChild *child, int signum, GError **error)
{
  int err = -ESRCH;

  g_return_val_if_fail (child != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&child->lock);
  if (!child->collected)
    err = child->ops->send_signal (child, signum);
  g_mutex_unlock (&child->lock);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot signal “%s” (PID %d)",
                                                  child->program, (int) child->pid));
      return FALSE;
    }
  return TRUE;
}

/**
 * spawn_child_send_signal_to_group:
 * @child: a child started with %SPAWN_CHILD_NEW_PROCESS_GROUP or
 *   %SPAWN_CHILD_NEW_SESSION
 * @signum: the signal
 * @error: return location for a #GError
 *
 * Sends @signum to the child's process group: the child and every
 * descendant that has not left the group (a setsid() or setpgid() of
 * their own, as daemons do, leaves it).  Sent only while the child, the
 * group's leader, has not ended: its PID then cannot have been reused for
 * another group.  A descendant that outlives the child is reached by a job
 * ([class@Spawn.Job]), not by this.
 *
 * A child started without a group of its own gets %SPAWN_ERROR_INVAL:
 * its group is ours.
 *
 * Returns: %TRUE if sent; %FALSE with %SPAWN_ERROR_SRCH if the child has
 *   already ended
 *
 * Since: 0.3
 */
gboolean
spawn_child_send_signal_to_group (SpawnChild *child, int signum, GError **error)
{
  int err = -ESRCH;

  g_return_val_if_fail (child != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!child->group_leader)
    {
      g_set_error (error, SPAWN_ERROR, SPAWN_ERROR_INVAL,
                   "“%s” (PID %d) has no process group of its own (start it with "
                   "SPAWN_CHILD_NEW_PROCESS_GROUP)", child->program, (int) child->pid);
      return FALSE;
    }
  g_mutex_lock (&child->lock);
  /* Signal 0 through the handle first: the leader is alive (or, with
   * pidfd, a zombie nobody can reap while we hold the lock), so the
   * group's ID is still its PID.
   * ### RACE: with clonefd (the kernel reaps) and sigchld (our handler
   * reaps) the leader can end, the group empty and the PID be reused as
   * a new group between the two calls; a job's cgroup has no such
   * window. */
  if (!child->collected)
    err = child->ops->send_signal (child, 0);
  if (err == 0 && kill (-child->pid, signum) < 0)
    err = -errno;
  g_mutex_unlock (&child->lock);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Cannot signal the process group of “%s” (%d)",
                                                  child->program, (int) child->pid));
      return FALSE;
    }
  return TRUE;
}
