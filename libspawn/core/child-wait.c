/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* child-wait.c - waiting for a SpawnChild without a callback of your own
 *
 * spawn_child_wait() blocks on the child's fd (and a cancellable's);
 * spawn_child_wait_async() is the child watch shaped as a GIO async call.
 * Neither takes the status when cancelled, so the child can be waited for
 * again.  SpawnChildHandle, the GObject that holds a child, is the async
 * wait's source object (a GTask's source must be a GObject, and a
 * SpawnChild is boxed): bindings finish the wait through it.
 */
#include "core-private.h"

#include <errno.h>
#include <poll.h>

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

  timeout = _spawn_child_get_recheck_interval (child);
  if (timeout == 0)
    timeout = -1;
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
      err = _spawn_child_collect (child, info);
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
      g_propagate_error (error, _spawn_error_new (-err, "The exit status of “%s” (PID %d)",
                                                  child->program, (int) child->pid));
      return FALSE;
    }
  return TRUE;
}

struct _SpawnChildHandle {
  GObject parent_instance;
  SpawnChild *child;
};

enum { HANDLE_PROP_CHILD = 1 };

G_DEFINE_FINAL_TYPE (SpawnChildHandle, spawn_child_handle, G_TYPE_OBJECT)

static void
spawn_child_handle_init (SpawnChildHandle *self G_GNUC_UNUSED)
{
}

static void
spawn_child_handle_finalize (GObject *object)
{
  SpawnChildHandle *self = SPAWN_CHILD_HANDLE (object);

  g_clear_pointer (&self->child, spawn_child_unref);
  G_OBJECT_CLASS (spawn_child_handle_parent_class)->finalize (object);
}

static void
spawn_child_handle_get_property (GObject *object, guint prop_id, GValue *value,
                                 GParamSpec *pspec)
{
  SpawnChildHandle *self = SPAWN_CHILD_HANDLE (object);

  if (prop_id == HANDLE_PROP_CHILD)
    g_value_set_boxed (value, self->child);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
spawn_child_handle_set_property (GObject *object, guint prop_id, const GValue *value,
                                 GParamSpec *pspec)
{
  SpawnChildHandle *self = SPAWN_CHILD_HANDLE (object);

  if (prop_id == HANDLE_PROP_CHILD)
    self->child = g_value_dup_boxed (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
spawn_child_handle_class_init (SpawnChildHandleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = spawn_child_handle_finalize;
  object_class->get_property = spawn_child_handle_get_property;
  object_class->set_property = spawn_child_handle_set_property;

  /**
   * SpawnChildHandle:child: (getter get_child)
   *
   * The child this handle holds.
   *
   * Since: 0.3
   */
  g_object_class_install_property (object_class, HANDLE_PROP_CHILD,
    g_param_spec_boxed ("child", NULL, NULL, SPAWN_TYPE_CHILD,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                        G_PARAM_STATIC_STRINGS));
}

/**
 * spawn_child_handle_get_child:
 * @self: a handle
 *
 * The child @self holds.
 *
 * Returns: (transfer none) (nullable): the child, or %NULL for a handle
 *   made without one
 *
 * Since: 0.3
 */
SpawnChild *
spawn_child_handle_get_child (SpawnChildHandle *self)
{
  g_return_val_if_fail (SPAWN_IS_CHILD_HANDLE (self), NULL);
  return self->child;
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
 * main context of the caller, where [method@Spawn.Child.wait_finish] gives the
 * result.  This is [method@Spawn.Child.watch_add] shaped as a GIO async call; it
 * holds a reference on @child until then.  The result's source object
 * (the first argument of @callback) is a new #SpawnChildHandle holding
 * @child, whose [method@Spawn.ChildHandle.wait_finish] finishes the wait
 * too: the form bindings use (`src.wait_finish (res)`).  Cancelling does not signal the
 * child: the callback gets %G_IO_ERROR_CANCELLED and @child can be waited
 * for again.
 */
void
spawn_child_wait_async (SpawnChild *child, GCancellable *cancellable,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  SpawnChildHandle *handle;
  GMainContext *context;
  ChildWait *w;
  GTask *task;

  g_return_if_fail (child != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  handle = g_object_new (SPAWN_TYPE_CHILD_HANDLE, "child", child, NULL);
  task = g_task_new (handle, cancellable, callback, user_data);
  g_object_unref (handle);
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
 * @child: the child given to [method@Spawn.Child.wait_async]
 * @result: the #GAsyncResult the callback got
 * @info: (out caller-allocates) (optional): how it ended
 * @error: return location for a #GError
 *
 * Finishes [method@Spawn.Child.wait_async].
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
  g_return_val_if_fail (G_IS_TASK (result), FALSE);
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

/**
 * spawn_child_handle_wait_finish:
 * @self: the source object the callback of [method@Spawn.Child.wait_async]
 *   got
 * @result: the #GAsyncResult the callback got
 * @info: (out caller-allocates) (optional): how it ended
 * @error: return location for a #GError
 *
 * Finishes [method@Spawn.Child.wait_async] as
 * [method@Spawn.Child.wait_finish] does, from the result's source object:
 *
 * ```python
 * def done (src, res):
 *     ok, info = src.wait_finish (res)
 * child.wait_async (None, done)
 * ```
 *
 * Returns: %TRUE with @info filled, or %FALSE with %G_IO_ERROR_CANCELLED
 *   or %SPAWN_ERROR_STATUS_LOST
 *
 * Since: 0.3
 */
gboolean
spawn_child_handle_wait_finish (SpawnChildHandle *self, GAsyncResult *result,
                                SpawnExitInfo *info, GError **error)
{
  g_return_val_if_fail (SPAWN_IS_CHILD_HANDLE (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return spawn_child_wait_finish (self->child, result, info, error);
}
