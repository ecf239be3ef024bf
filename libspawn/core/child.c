/* spawn-watch.c - the child-watch GSource, blocking waits and the reaper
 *
 * The source polls the child's fd and collects (reads the exit info, or
 * reaps) only in dispatch, so the PID stays the child's until the callback
 * has run.  Backends that cannot always be woken (sigchld) are also
 * rechecked on a timer.
 */
#include "backend.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>

typedef struct {
  GSource source;
  SpawnChild *child;
  gpointer tag;
} SpawnChildWatch;

static void
schedule_recheck (SpawnChildWatch *w)
{
  guint ms = w->child->ops->recheck_interval_ms;

  if (ms > 0)
    g_source_set_ready_time (&w->source,
                             g_get_monotonic_time () + ms * 1000);
}

static gboolean
watch_prepare (GSource *source, gint *timeout)
{
  SpawnChildWatch *w = (SpawnChildWatch *) source;

  *timeout = -1;
  /* Collected through another watch: nothing left to wait for. */
  return g_atomic_int_get (&w->child->collected);
}

static gboolean
watch_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  SpawnChildWatch *w = (SpawnChildWatch *) source;
  SpawnChildWatchFunc func = (SpawnChildWatchFunc) (void (*) (void)) callback;
  GError *error = NULL;
  int err;

  err = _spawn_child_collect (w->child);
  if (err == -EAGAIN)
    {
      schedule_recheck (w);
      return G_SOURCE_CONTINUE;
    }
  if (err < 0)
    error = _spawn_error_new (-err, "Process %d", (int) w->child->pid);
  if (func != NULL)
    func (w->child, err == 0 ? &w->child->info : NULL, error, user_data);
  g_clear_error (&error);
  return G_SOURCE_REMOVE;
}

static void
watch_finalize (GSource *source)
{
  SpawnChildWatch *w = (SpawnChildWatch *) source;

  spawn_child_unref (w->child);
}

static GSourceFuncs watch_funcs = {
  .prepare = watch_prepare,
  .dispatch = watch_dispatch,
  .finalize = watch_finalize,
};

/**
 * spawn_child_watch_source_new:
 * @child: a child
 *
 * A source that dispatches once, when @child has ended.  Its callback is a
 * #SpawnChildWatchFunc (use g_source_set_callback() with a cast, as for
 * g_child_watch_source_new()).  It holds a reference on @child.  Several
 * watches on one child, in any main contexts, each get the same result.
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

  source = g_source_new (&watch_funcs, sizeof (SpawnChildWatch));
  w = (SpawnChildWatch *) source;
  w->child = spawn_child_ref (child);
  w->tag = g_source_add_unix_fd (source, child->fd, G_IO_IN);
  name = g_strdup_printf ("libspawn child watch (pid %d, %s)", (int) child->pid,
                          child->ops->name);
  g_source_set_name (source, name);
  g_free (name);
  schedule_recheck (w);
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
 * Watches @child from the thread-default main context.
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
 * spawn_child_watch_add_full() at %G_PRIORITY_DEFAULT.
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

/**
 * spawn_child_wait:
 * @child: a child
 * @info: (out caller-allocates) (optional): how it ended
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Blocks until @child has ended, by polling its fd (and @cancellable's):
 * no main loop runs.  Cancelling returns %G_IO_ERROR_CANCELLED and leaves
 * @child as it was, running and not collected: it can be waited for again.
 * A @cancellable cancelled before the call fails it at once, whether the
 * child has ended or not.
 *
 * Returns: %TRUE with @info filled, or %FALSE with %G_IO_ERROR_CANCELLED,
 *   or %SPAWN_ERROR_STATUS_LOST when someone else took the status
 */
gboolean
spawn_child_wait (SpawnChild *child, SpawnExitInfo *info, GCancellable *cancellable,
                  GError **error)
{
  struct pollfd pfd[2];
  GPollFD cancel_fd;
  gboolean cancelled = FALSE;
  nfds_t n = 1;
  int timeout;
  int err = 0;

  g_return_val_if_fail (child != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  timeout = child->ops->recheck_interval_ms ? (int) child->ops->recheck_interval_ms : -1;
  pfd[0].fd = child->fd;
  pfd[0].events = POLLIN;
  if (g_cancellable_make_pollfd (cancellable, &cancel_fd))
    {
      pfd[1].fd = cancel_fd.fd;
      pfd[1].events = POLLIN;
      n = 2;
    }
  for (;;)
    {
      /* Before collecting: a cancelled wait must not take the status
       * (sigchld and pidfd reap in collect), so that a later one gets it. */
      if (g_cancellable_is_cancelled (cancellable))
        {
          cancelled = TRUE;
          break;
        }
      err = _spawn_child_collect (child);
      if (err != -EAGAIN)
        break;
      poll (pfd, n, timeout);
    }
  if (n == 2)
    g_cancellable_release_fd (cancellable);
  if (cancelled)
    return !g_cancellable_set_error_if_cancelled (cancellable, error);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Process %d", (int) child->pid));
      return FALSE;
    }
  if (info != NULL)
    *info = child->info;
  return TRUE;
}

/* spawn_child_wait_async(): a child watch and, with a cancellable, a
 * cancellable source, both on the task's context; whichever dispatches
 * first destroys the other and returns the task.  Both run in the one
 * thread that runs that context, so they cannot race. */
typedef struct {
  SpawnChild *child;
  GSource *watch;
  GSource *cancel;
  SpawnExitInfo info;
} ChildWait;

static void
child_wait_free (gpointer data)
{
  ChildWait *w = data;

  /* Both sources are destroyed before the task can go (each holds a
   * reference on it until then); these are our own references. */
  g_clear_pointer (&w->watch, g_source_unref);
  g_clear_pointer (&w->cancel, g_source_unref);
  spawn_child_unref (w->child);
  g_free (w);
}

static void
child_wait_exited (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
                   const GError *error, gpointer data)
{
  GTask *task = data;
  ChildWait *w = g_task_get_task_data (task);

  if (w->cancel != NULL)
    g_source_destroy (w->cancel);
  if (error != NULL)
    g_task_return_error (task, g_error_copy (error));
  else
    {
      w->info = *info;
      g_task_return_boolean (task, TRUE);
    }
}

static gboolean
child_wait_cancelled (GCancellable *cancellable G_GNUC_UNUSED, gpointer data)
{
  GTask *task = data;
  ChildWait *w = g_task_get_task_data (task);

  /* Nothing was collected: the child can be waited for again. */
  g_source_destroy (w->watch);
  g_task_return_error_if_cancelled (task);
  return G_SOURCE_REMOVE;
}

/**
 * spawn_child_wait_async:
 * @child: a child
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called once @child has ended, or the wait was
 *   cancelled
 * @user_data: data for @callback
 *
 * Waits for @child without blocking: @callback runs in the thread-default
 * main context of the caller, where spawn_child_wait_finish() gives the
 * result.  This is spawn_child_watch_add() shaped as a GIO async call; it
 * holds a reference on @child until then.  Cancelling does not signal the
 * child: the callback gets %G_IO_ERROR_CANCELLED and @child can be waited
 * for again.
 */
void
spawn_child_wait_async (SpawnChild *child, GCancellable *cancellable,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  GMainContext *context;
  ChildWait *w;
  GTask *task;

  g_return_if_fail (child != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, spawn_child_wait_async);
  g_task_set_name (task, "spawn_child_wait_async");
  w = g_new0 (ChildWait, 1);
  w->child = spawn_child_ref (child);
  g_task_set_task_data (task, w, child_wait_free);
  if (g_task_return_error_if_cancelled (task))
    {
      g_object_unref (task);
      return;
    }
  context = g_task_get_context (task);
  w->watch = spawn_child_watch_source_new (child);
  g_source_set_callback (w->watch, (GSourceFunc) (void (*) (void)) child_wait_exited,
                         g_object_ref (task), g_object_unref);
  g_source_attach (w->watch, context);
  if (cancellable != NULL)
    {
      w->cancel = g_cancellable_source_new (cancellable);
      g_source_set_callback (w->cancel, (GSourceFunc) (void (*) (void)) child_wait_cancelled,
                             g_object_ref (task), g_object_unref);
      g_source_attach (w->cancel, context);
    }
  g_object_unref (task);
}

/**
 * spawn_child_wait_finish:
 * @child: the child given to spawn_child_wait_async()
 * @result: the #GAsyncResult the callback got
 * @info: (out caller-allocates) (optional): how it ended
 * @error: return location for a #GError
 *
 * Finishes spawn_child_wait_async().
 *
 * Returns: %TRUE with @info filled, or %FALSE with %G_IO_ERROR_CANCELLED
 *   or %SPAWN_ERROR_STATUS_LOST
 */
gboolean
spawn_child_wait_finish (SpawnChild *child, GAsyncResult *result, SpawnExitInfo *info,
                         GError **error)
{
  ChildWait *w;

  g_return_val_if_fail (child != NULL, FALSE);
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == spawn_child_wait_async,
                        FALSE);
  w = g_task_get_task_data (G_TASK (result));
  g_return_val_if_fail (w->child == child, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;
  if (info != NULL)
    *info = w->info;
  return TRUE;
}

/* The reaper: children whose last handle went while they ran.  Watched
 * on a private context in a thread of our own, started on first use. */
static GMainContext *reaper_context;

static gpointer
reaper_thread (gpointer data)
{
  GMainLoop *loop = g_main_loop_new (data, FALSE);

  g_main_loop_run (loop);
  return NULL;
}

static void
reaped (SpawnChild          *child G_GNUC_UNUSED,
        const SpawnExitInfo *info G_GNUC_UNUSED,
        const GError        *error G_GNUC_UNUSED,
        gpointer             data G_GNUC_UNUSED)
{
}

void
_spawn_reaper_adopt (SpawnChild *child)
{
  static gsize started;
  GSource *source;

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
      g_thread_unref (g_thread_new ("libspawn-reaper", reaper_thread,
                                    reaper_context));
      pthread_sigmask (SIG_SETMASK, &saved, NULL);
      g_once_init_leave (&started, 1);
    }
  source = spawn_child_watch_source_new (child);
  g_source_set_callback (source, (GSourceFunc) (void (*) (void)) reaped, NULL, NULL);
  g_source_attach (source, reaper_context);
  g_source_unref (source);
  /* The source holds its own reference now. */
  spawn_child_unref (child);
}
