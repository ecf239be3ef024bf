/* spawn-watch.c - the child-watch GSource, blocking waits and the reaper
 *
 * The source polls the child's fd and collects (reads the exit info, or
 * reaps) only in dispatch, so the PID stays the child's until the callback
 * has run.  Backends that cannot always be woken (sigchld) are also
 * rechecked on a timer.
 */
#include "spawn-private.h"

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
 * @function: called once when @child has ended
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
 * @error: return location for a #GError
 *
 * Blocks until @child has ended, by polling its fd: no main loop runs.
 *
 * Returns: %TRUE with @info filled, or %FALSE with
 *   %SPAWN_ERROR_STATUS_LOST when someone else took the status
 */
gboolean
spawn_child_wait (SpawnChild *child, SpawnExitInfo *info, GError **error)
{
  struct pollfd pfd;
  int timeout;
  int err;

  g_return_val_if_fail (child != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  timeout = child->ops->recheck_interval_ms ? (int) child->ops->recheck_interval_ms : -1;
  pfd.fd = child->fd;
  pfd.events = POLLIN;
  while ((err = _spawn_child_collect (child)) == -EAGAIN)
    poll (&pfd, 1, timeout);
  if (err < 0)
    {
      g_propagate_error (error, _spawn_error_new (-err, "Process %d", (int) child->pid));
      return FALSE;
    }
  if (info != NULL)
    *info = child->info;
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
