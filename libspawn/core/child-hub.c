/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* child-hub.c - one epoll set per GMainContext for every child fd we watch
 *
 * A context that watches N children polls one descriptor, not N, and an
 * exit costs the work of the ready fd only (docs/design.md, "Thousands of
 * children").  The hub is a GSource holding an epoll fd; each watched
 * child fd is in it with EPOLLONESHOT and a link naming the GSource to
 * make ready (g_source_set_ready_time (target, 0)), which then dispatches
 * at its own priority.  One mutex guards the table of hubs, every link's
 * target and every link's life, so that a source disposed of in another
 * thread is never touched after its dispose returned.
 */
#include "core-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

typedef struct {
  GMainContext *context;     /* not a reference */
  int priority;
} SpawnHubKey;

typedef struct {
  GSource source;
  SpawnHubKey key;           /* the key in hubs */
  int epfd;
  /* Every link in the epoll set, also here: the epoll set is kernel
   * memory, and a link only it names (a reaper entry whose child is still
   * running, say) would look lost to a leak checker at exit. */
  GQueue links;
} SpawnHub;

struct _SpawnReadyLink {
  SpawnHub *hub;             /* a reference on the hub's source */
  GSource *target;           /* NULL once unlinked */
  /* Or, for a link made by _spawn_ready_link_new_func(): called from
   * the hub's dispatch; NULL once unlinked. */
  SpawnReadyFunc func;
  gpointer data;
  gpointer (*data_ref) (gpointer data);
  GDestroyNotify data_unref;
  int fd;                    /* in the epoll set */
  int dup_fd;                /* our dup() of the caller's fd, or -1 */
  gint fired;                /* atomic: readiness seen since the last arm */
  GList node;                /* in hub->links */
};

/* Guards hubs, every SpawnHub's links and every link's target and
 * func. */
static GMutex hub_lock;
static GHashTable *hubs;     /* SpawnHubKey * -> SpawnHub * */

static guint
child_hub_key_hash (gconstpointer p)
{
  const SpawnHubKey *key = p;

  return g_direct_hash (key->context) ^ (guint) key->priority;
}

static gboolean
child_hub_key_equal (gconstpointer a, gconstpointer b)
{
  const SpawnHubKey *x = a, *y = b;

  return x->context == y->context && x->priority == y->priority;
}

#define HUB_BATCH 64

static gboolean
child_hub_dispatch (GSource *source, GSourceFunc callback G_GNUC_UNUSED,
                    gpointer user_data G_GNUC_UNUSED)
{
  SpawnHub *hub = (SpawnHub *) source;
  struct epoll_event ev[HUB_BATCH];
  GSource *ready[HUB_BATCH];
  SpawnReadyLink called[HUB_BATCH];
  int n, i, k = 0, m = 0;

  /* Under the lock: a link is freed only under it, after its
   * EPOLL_CTL_DEL, so every event names a live link; a target or func is
   * cleared under it before what it names can go.  A func's data is
   * referenced here, so a link freed meanwhile (another thread) leaves
   * it valid until the call has returned. */
  g_mutex_lock (&hub_lock);
  n = epoll_wait (hub->epfd, ev, HUB_BATCH, 0);
  for (i = 0; i < n; i++)
    {
      SpawnReadyLink *link = ev[i].data.ptr;

      g_atomic_int_set (&link->fired, TRUE);
      if (link->target != NULL)
        ready[k++] = g_source_ref (link->target);
      else if (link->func != NULL)
        {
          called[m] = *link;
          called[m++].data = link->data_ref (link->data);
        }
    }
  g_mutex_unlock (&hub_lock);
  for (i = 0; i < k; i++)
    {
      g_source_set_ready_time (ready[i], 0);
      g_source_unref (ready[i]);
    }
  for (i = 0; i < m; i++)
    {
      called[i].func (called[i].data);
      called[i].data_unref (called[i].data);
    }
  return G_SOURCE_CONTINUE;
}

static void
child_hub_finalize (GSource *source)
{
  SpawnHub *hub = (SpawnHub *) source;

  g_mutex_lock (&hub_lock);
  if (hubs != NULL && g_hash_table_lookup (hubs, &hub->key) == hub)
    g_hash_table_remove (hubs, &hub->key);
  g_mutex_unlock (&hub_lock);
  if (hub->epfd >= 0)
    close (hub->epfd);
}

static GSourceFuncs child_hub_funcs = {
  .dispatch = child_hub_dispatch,
  .finalize = child_hub_finalize,
};

/* Under hub_lock: @context's hub at @priority, made if it has none (or
 * only one that was destroyed with a context freed at the same address);
 * a new reference, or NULL with -errno in @err. */
static SpawnHub *
child_hub_get (GMainContext *context, int priority, int *err)
{
  SpawnHubKey key = { context, priority };
  SpawnHub *hub;
  GSource *source;
  int epfd;

  if (hubs == NULL)
    hubs = g_hash_table_new (child_hub_key_hash, child_hub_key_equal);
  hub = g_hash_table_lookup (hubs, &key);
  if (hub != NULL && !g_source_is_destroyed (&hub->source))
    return (SpawnHub *) g_source_ref (&hub->source);
  epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (epfd >= 0)
    epfd = _spawn_fd_above_stdio (epfd);
  if (epfd < 0)
    {
      *err = epfd == -1 ? -errno : epfd;
      return NULL;
    }
  source = g_source_new (&child_hub_funcs, sizeof (SpawnHub));
  hub = (SpawnHub *) source;
  hub->key = key;
  hub->epfd = epfd;
  g_source_set_static_name (source, "libspawn child hub");
  g_source_set_priority (source, priority);
  g_source_add_unix_fd (source, epfd, G_IO_IN);
  /* A callback it calls may run a nested loop that waits for another
   * child of this hub: its events are one-shot and its dispatch holds no
   * lock while it calls, so it may be entered again. */
  g_source_set_can_recurse (source, TRUE);
  /* Replace, not insert: a destroyed hub of a context freed at this
   * address may still be in the table (its links keep it), and insert
   * would keep that hub's key, freed with it. */
  g_hash_table_replace (hubs, &hub->key, hub);
  /* The context's reference keeps it while it is attached; links hold
   * their own.  Attaching takes the context's lock, never ours. */
  g_source_attach (source, context);
  return hub;
}

/* Under hub_lock. */
static int
child_hub_add_fd (SpawnReadyLink *link, int fd)
{
  struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = link };

  link->fd = fd;
  if (epoll_ctl (link->hub->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
    return 0;
  if (errno != EEXIST)
    return -errno;
  /* The same fd watched twice in one context: an epoll set holds a
   * descriptor once, so the second link adds a copy of it. */
  link->dup_fd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  if (link->dup_fd < 0)
    return -errno;
  link->fd = link->dup_fd;
  if (epoll_ctl (link->hub->epfd, EPOLL_CTL_ADD, link->fd, &ev) == 0)
    return 0;
  return -errno;
}

/* Puts @link's fd in the hub of (@context, @priority); frees @link and
 * returns NULL with @err set on failure. */
static SpawnReadyLink *
child_hub_link (SpawnReadyLink *link, int fd, GMainContext *context, int priority,
                int *err)
{
  gboolean unused = FALSE;
  SpawnHub *hub;

  link->dup_fd = -1;
  g_mutex_lock (&hub_lock);
  hub = child_hub_get (context, priority, err);
  if (hub != NULL)
    {
      link->hub = hub;
      *err = child_hub_add_fd (link, fd);
      if (*err == 0)
        {
          link->node.data = link;
          g_queue_push_tail_link (&hub->links, &link->node);
        }
      else if (hub->links.length == 0 && g_hash_table_lookup (hubs, &hub->key) == hub)
        {
          /* A hub made for this link alone: not left behind. */
          g_hash_table_remove (hubs, &hub->key);
          unused = TRUE;
        }
    }
  g_mutex_unlock (&hub_lock);
  if (hub == NULL || *err < 0)
    {
      if (link->dup_fd >= 0)
        close (link->dup_fd);
      if (unused)
        g_source_destroy (&hub->source);
      if (hub != NULL)
        g_source_unref (&hub->source);
      g_free (link);
      return NULL;
    }
  return link;
}

/**
 * _spawn_ready_link_new:
 * @target: the source to make ready (not a reference: @target unlinks in
 *   its dispose function at the latest)
 * @fd: a descriptor that turns readable once (a child's fd)
 * @context: @target's context
 * @err: (out): -errno on failure
 *
 * Puts @fd in @context's hub: when it turns readable, @target's ready
 * time is set to 0.  One-shot: _spawn_ready_link_rearm() asks again.
 *
 * Returns: (transfer full) (nullable): the link, or %NULL with @err set
 */
SpawnReadyLink *
_spawn_ready_link_new (GSource *target, int fd, GMainContext *context, int *err)
{
  SpawnReadyLink *link = g_new0 (SpawnReadyLink, 1);

  link->target = target;
  return child_hub_link (link, fd, context, G_MININT, err);
}

/**
 * _spawn_ready_link_new_func:
 * @fd: a descriptor that turns readable once (a child's fd)
 * @context: the context whose thread calls @func
 * @priority: the priority @func is called at
 * @func: called from the hub's dispatch when @fd turns readable
 * @data: for @func
 * @data_ref: takes a reference on @data (under the hub's lock: atomic)
 * @data_unref: drops it
 *
 * As _spawn_ready_link_new(), with no GSource of the caller's: the hub
 * of (@context, @priority) calls @func itself, holding a reference on
 * @data for the call.  Once _spawn_ready_link_free() has returned, the
 * hub reads no new event of the link; a call whose event it had read
 * before may still run, or even begin, in the context's thread (with
 * its reference on @data), so @func checks a state of its own (a
 * "claimed" or "done" flag) before acting.
 *
 * Returns: (transfer full) (nullable): the link, or %NULL with @err set
 */
SpawnReadyLink *
_spawn_ready_link_new_func (int fd, GMainContext *context, int priority,
                            SpawnReadyFunc func, gpointer data,
                            gpointer (*data_ref) (gpointer data),
                            GDestroyNotify data_unref, int *err)
{
  SpawnReadyLink *link = g_new0 (SpawnReadyLink, 1);

  link->func = func;
  link->data = data;
  link->data_ref = data_ref;
  link->data_unref = data_unref;
  return child_hub_link (link, fd, context, priority, err);
}

/* Whether the fd turned readable since the link was made or re-armed;
 * clears the answer. */
gboolean
_spawn_ready_link_take_fired (SpawnReadyLink *link)
{
  return g_atomic_int_exchange (&link->fired, FALSE);
}

/* Asks for the next readiness of the link's fd. */
void
_spawn_ready_link_rearm (SpawnReadyLink *link)
{
  struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = link };

  g_mutex_lock (&hub_lock);
  if (link->target != NULL || link->func != NULL)
    epoll_ctl (link->hub->epfd, EPOLL_CTL_MOD, link->fd, &ev);
  g_mutex_unlock (&hub_lock);
}

/* Takes the fd out of the hub and frees @link; from any thread.  Once it
 * returns, the hub never touches the target again.  The last link of a
 * hub destroys it: a context that watches no child keeps nothing of ours. */
void
_spawn_ready_link_free (SpawnReadyLink *link)
{
  SpawnHub *hub;
  gboolean last;

  if (link == NULL)
    return;
  hub = link->hub;
  g_mutex_lock (&hub_lock);
  epoll_ctl (hub->epfd, EPOLL_CTL_DEL, link->fd, NULL);
  link->target = NULL;
  link->func = NULL;
  g_queue_unlink (&hub->links, &link->node);
  last = hub->links.length == 0;
  if (last && g_hash_table_lookup (hubs, &hub->key) == hub)
    g_hash_table_remove (hubs, &hub->key);
  g_mutex_unlock (&hub_lock);
  if (link->dup_fd >= 0)
    close (link->dup_fd);
  g_free (link);
  /* Outside our lock: destroy takes the context's. */
  if (last)
    g_source_destroy (&hub->source);
  g_source_unref (&hub->source);
}
