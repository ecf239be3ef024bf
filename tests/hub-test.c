/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* hub-test: child watches share one epoll set per GMainContext
 * (core/child-hub.c, docs/design.md "Thousands of children"): a context
 * watching many children polls a few descriptors, not one per child; and
 * the contracts of a watch stay: its own priority, several watches on one
 * child, destroy from another thread, nothing left once nothing is watched.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "backend.h"

/* The most descriptors one poll() of the context was given. */
static guint max_nfds;

static gint
counting_poll (GPollFD *fds, guint nfds, gint timeout)
{
  max_nfds = MAX (max_nfds, nfds);
  return g_poll (fds, nfds, timeout);
}

static void
on_count (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
          const GError *error, gpointer data)
{
  int *remaining = data;

  g_assert_no_error ((GError *) error);
  g_assert_cmpint (info->kind, ==, SPAWN_EXIT_KILLED);
  (*remaining)--;
}

/* Iterates @ctx until *@remaining is 0, at most 120 s. */
static void
iterate_until_zero (GMainContext *ctx, int *remaining)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;

  while (*remaining > 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (ctx, FALSE);
      if (*remaining > 0)
        g_usleep (1000);
    }
}

#define N_MANY 200

static void
test_poll_few_fds (gconstpointer data)
{
  GMainContext *ctx;
  SpawnChild *children[N_MANY];
  int remaining = N_MANY, i;

  g_test_summary ("a context watching 200 children gives poll() a few descriptors, "
                  "not one per child; each still gets its status");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  g_main_context_set_poll_func (ctx, counting_poll);
  for (i = 0; i < N_MANY; i++)
    {
      children[i] = testutil_start_helper ("sleep", "60000");
      spawn_child_watch_add (children[i], on_count, &remaining);
    }
  max_nfds = 0;
  for (i = 0; i < 5; i++)
    g_main_context_iteration (ctx, FALSE);
  g_test_message ("running: at most %u descriptors per poll", max_nfds);
  g_assert_cmpuint (max_nfds, <=, 4);
  for (i = 0; i < N_MANY; i++)
    {
      g_assert_true (spawn_child_send_signal (children[i], SIGKILL, NULL));
      spawn_child_unref (children[i]);
    }
  iterate_until_zero (ctx, &remaining);
  g_test_message ("ending: at most %u descriptors per poll", max_nfds);
  g_assert_cmpuint (max_nfds, <=, 4);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

static void
on_process_finished (SpawnProcess *proc G_GNUC_UNUSED, int code G_GNUC_UNUSED,
                     int status G_GNUC_UNUSED, gpointer info G_GNUC_UNUSED, gpointer data)
{
  int *remaining = data;

  (*remaining)--;
}

#define N_PROCESSES 100

/* N_PROCESSES running SpawnProcesses without pipes (this is about the
 * child's own fd), each counting down @remaining when it finishes. */
static void
start_sleepers (SpawnProcess **procs, int *remaining)
{
  int i;

  for (i = 0; i < N_PROCESSES; i++)
    {
      procs[i] = testutil_helper_process ("sleep", "60000", NULL);
      spawn_process_set_channel_mode (procs[i], SPAWN_PROCESS_STDOUT, SPAWN_CHANNEL_FORWARD);
      spawn_process_set_channel_mode (procs[i], SPAWN_PROCESS_STDERR, SPAWN_CHANNEL_FORWARD);
      g_signal_connect (procs[i], "finished", G_CALLBACK (on_process_finished),
                        remaining);
      testutil_start_ok (procs[i]);
    }
}

static void
test_process_poll_few_fds (gconstpointer data)
{
  SpawnProcess *procs[N_PROCESSES];
  GMainContext *ctx;
  int remaining = N_PROCESSES, i;

  g_test_summary ("100 running SpawnProcesses without pipes give poll() a few "
                  "descriptors, not one per child");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  g_main_context_set_poll_func (ctx, counting_poll);
  start_sleepers (procs, &remaining);
  max_nfds = 0;
  for (i = 0; i < 5; i++)
    g_main_context_iteration (ctx, FALSE);
  g_test_message ("running: at most %u descriptors per poll", max_nfds);
  g_assert_cmpuint (max_nfds, <=, 4);
  for (i = 0; i < N_PROCESSES; i++)
    g_assert_true (spawn_process_kill (procs[i], NULL));
  iterate_until_zero (ctx, &remaining);
  g_assert_cmpuint (max_nfds, <=, 4);
  for (i = 0; i < N_PROCESSES; i++)
    g_object_unref (procs[i]);
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
  int i;

  g_test_summary ("each watch dispatches at its own priority: of two ended "
                  "children and an idle, HIGH first, then DEFAULT, then LOW");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  low = testutil_start_helper ("exit", "1");
  high = testutil_start_helper ("exit", "2");
  testutil_wait_readable (low);
  testutil_wait_readable (high);
  spawn_child_watch_add_full (G_PRIORITY_LOW, low, on_order, order, NULL);
  spawn_child_watch_add_full (G_PRIORITY_HIGH, high, on_order, order, NULL);
  {
    GSource *idle = g_idle_source_new ();

    g_source_set_callback (idle, on_idle_order, order, NULL);
    g_source_attach (idle, ctx);
    g_source_unref (idle);
  }
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
on_twice (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
          const GError *error, gpointer data)
{
  int *got = data;

  g_assert_no_error ((GError *) error);
  g_assert_cmpint (info->status, ==, 7);
  (*got)++;
}

static void
test_same_child_twice (gconstpointer data)
{
  GMainContext *ctx;
  SpawnChild *child;
  int fds_before, got = 0, remaining;

  g_test_summary ("two watches on one child in one context both get its status; "
                  "no descriptor is left once nothing is watched");
  if (!testutil_use_backend (data))
    return;
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  child = testutil_start_helper ("exit", "7");
  fds_before = testutil_count_fds ();
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  spawn_child_watch_add (child, on_twice, &got);
  spawn_child_watch_add (child, on_twice, &got);
  while (got < 2)
    g_main_context_iteration (ctx, TRUE);
  remaining = 0;
  iterate_until_zero (ctx, &remaining);
  /* The hub and its epoll fd go with the last watch (and the dup() the
   * second watch's link added). */
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  g_assert_cmpint (testutil_count_fds (), ==, fds_before);
  spawn_child_unref (child);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

typedef struct {
  GMainContext *ctx;
  GSource *sources[64];
  gint destroyed;
  gboolean joined;            /* main thread only: the destroyer is done */
  gint fired_after;
} Destroyer;

static void
on_destroyed_watch (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info G_GNUC_UNUSED,
                    const GError *error G_GNUC_UNUSED, gpointer data)
{
  Destroyer *d = data;

  /* GLib lets a dispatch that had begun finish after g_source_destroy()
   * returns in another thread: what must not be is a callback in an
   * iteration begun after every destroy returned. */
  if (d->joined)
    g_atomic_int_inc (&d->fired_after);
}

static gpointer
destroy_thread (gpointer data)
{
  Destroyer *d = data;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (d->sources); i++)
    g_source_destroy (d->sources[i]);
  g_atomic_int_set (&d->destroyed, 1);
  return NULL;
}

static void
test_destroy_other_thread (gconstpointer data)
{
  SpawnChild *children[64];
  Destroyer d = { 0 };
  GThread *thread;
  int i, j;

  g_test_summary ("watches destroyed from another thread while their children end "
                  "and the context runs: no callback after, no epoll fd left");
  if (!testutil_use_backend (data))
    return;
  d.ctx = g_main_context_new ();
  g_main_context_push_thread_default (d.ctx);
  for (i = 0; i < 64; i++)
    {
      children[i] = testutil_start_helper ("sleep", i % 2 ? "1" : "60000");
      d.sources[i] = spawn_child_watch_source_new (children[i]);
      g_source_set_callback (d.sources[i], (GSourceFunc) (void (*) (void)) on_destroyed_watch,
                             &d, NULL);
      g_source_attach (d.sources[i], d.ctx);
    }
  thread = g_thread_new ("destroyer", destroy_thread, &d);
  for (j = 0; j < 200 && !g_atomic_int_get (&d.destroyed); j++)
    g_main_context_iteration (d.ctx, FALSE);
  g_thread_join (thread);
  d.joined = TRUE;
  for (j = 0; j < 10; j++)
    g_main_context_iteration (d.ctx, FALSE);
  g_assert_cmpint (d.fired_after, ==, 0);
  for (i = 0; i < 64; i++)
    {
      g_source_unref (d.sources[i]);
      spawn_child_send_signal (children[i], SIGKILL, NULL);
      g_assert_nonnull (children[i]);
    }
  /* Their watches gone, the children are ours to wait for. */
  for (i = 0; i < 64; i++)
    {
      g_assert_true (spawn_child_wait (children[i], NULL, NULL, NULL));
      spawn_child_unref (children[i]);
    }
  /* The sources are gone, and with their dispose the hub. */
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  g_main_context_pop_thread_default (d.ctx);
  g_main_context_unref (d.ctx);
  testutil_assert_no_children ();
}

static void
test_process_attaches_no_source (gconstpointer data)
{
  SpawnProcess *procs[N_PROCESSES];
  guint first, last, id, attached = 0;
  int remaining = N_PROCESSES, i;
  GMainContext *ctx;

  g_test_summary ("100 SpawnProcesses without pipes or deadlines attach no GSource "
                  "per process to the context (GLib walks every attached source in "
                  "every iteration); each still finishes");
  if (!testutil_use_backend (data))
    return;
  if (testutil_backend (data) == SPAWN_BACKEND_SIGCHLD &&
      g_strcmp0 (g_getenv ("LIBSPAWN_SIGCHLD_NO_PIDFD"), "1") == 0)
    {
      g_test_skip ("LIBSPAWN_SIGCHLD_NO_PIDFD=1: each sigchld child is rechecked "
                   "on a timer, a deadline of its process's source");
      return;
    }
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  first = testutil_mark_source_id (ctx);
  start_sleepers (procs, &remaining);
  last = testutil_mark_source_id (ctx);
  for (id = first + 1; id < last; id++)
    if (g_main_context_find_source_by_id (ctx, id) != NULL)
      attached++;
  g_test_message ("%u sources attached for %d processes", attached, N_PROCESSES);
  g_assert_cmpuint (attached, <=, 2);
  for (i = 0; i < N_PROCESSES; i++)
    g_assert_true (spawn_process_kill (procs[i], NULL));
  iterate_until_zero (ctx, &remaining);
  for (i = 0; i < N_PROCESSES; i++)
    g_object_unref (procs[i]);
  g_assert_cmpint (testutil_count_epoll_fds (), ==, 0);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

/* core/child.c, for the tests. */
GMainContext *_spawn_child_reaper_context (void);

static void
test_reaper_attaches_no_source (gconstpointer data)
{
  guint first, last, id, attached = 0;
  GMainContext *reaper;
  GPid pids[N_PROCESSES];
  int i;

  g_test_summary ("100 children let go while they run (no handle, no watch) are "
                  "reaped by the library's reaper thread with no GSource per "
                  "child in its context; none is left a zombie");
  if (!testutil_use_backend (data))
    return;
  if (testutil_backend (data) == SPAWN_BACKEND_CLONEFD ||
      testutil_backend (data) == SPAWN_BACKEND_AUTOREAP)
    {
      g_test_skip ("the kernel reaps this backend's children: no reaper");
      return;
    }
  if (testutil_backend (data) == SPAWN_BACKEND_SIGCHLD &&
      g_strcmp0 (g_getenv ("LIBSPAWN_SIGCHLD_NO_PIDFD"), "1") == 0)
    {
      g_test_skip ("LIBSPAWN_SIGCHLD_NO_PIDFD=1: each sigchld child is rechecked "
                   "on a timer, through a source of its own");
      return;
    }
  /* The reaper's context exists from its first child on. */
  spawn_child_unref (testutil_start_helper ("exit", "0"));
  reaper = _spawn_child_reaper_context ();
  g_assert_nonnull (reaper);
  first = testutil_mark_source_id (reaper);
  for (i = 0; i < N_PROCESSES; i++)
    {
      SpawnChild *child = testutil_start_helper ("sleep", "60000");

      pids[i] = spawn_child_get_pid (child);
      spawn_child_unref (child);
    }
  last = testutil_mark_source_id (reaper);
  for (id = first + 1; id < last; id++)
    if (g_main_context_find_source_by_id (reaper, id) != NULL)
      attached++;
  g_test_message ("%u sources attached to the reaper's context for %d children",
                  attached, N_PROCESSES);
  g_assert_cmpuint (attached, <=, 1);
  /* Unreaped until they end, so the PIDs are still theirs. */
  for (i = 0; i < N_PROCESSES; i++)
    g_assert_cmpint (kill (pids[i], SIGKILL), ==, 0);
  testutil_assert_no_children ();
}

/* Whether this kernel has pidfd_open() and waitid(P_PIDFD) (5.4). */
static gboolean
kernel_has_pidfd_wait (void)
{
  siginfo_t si;
  int fd = syscall (SYS_pidfd_open, getpid (), 0);
  gboolean yes;

  if (fd < 0)
    return FALSE;
  memset (&si, 0, sizeof (si));
  yes = waitid ((idtype_t) 3 /* P_PIDFD */, fd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 ||
        errno != EINVAL;
  close (fd);
  return yes;
}

#define N_ONE_BY_ONE 100

static void
test_sigchld_exit_no_sweep (gconstpointer data)
{
  SpawnChild *children[N_ONE_BY_ONE];
  int remaining, i;
  unsigned before;
  GMainContext *ctx;

  g_test_summary ("with pidfds, an exit costs the sigchld handler no sweep "
                  "(whose last waitid(P_ALL) walks every child of the process): "
                  "100 children ended one at a time, each status delivered");
  if (!testutil_use_backend (data))
    return;
  if (testutil_backend (data) != SPAWN_BACKEND_SIGCHLD)
    {
      g_test_skip ("only the sigchld backend has a SIGCHLD handler");
      return;
    }
  if (g_strcmp0 (g_getenv ("LIBSPAWN_SIGCHLD_NO_PIDFD"), "1") == 0 ||
      !kernel_has_pidfd_wait ())
    {
      g_test_skip ("no pidfds (LIBSPAWN_SIGCHLD_NO_PIDFD=1 or a kernel before 5.4): "
                   "the handler must sweep to learn which child ended");
      return;
    }
  ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  for (i = 0; i < N_ONE_BY_ONE; i++)
    children[i] = testutil_start_helper ("sleep", "60000");
  for (i = 0; i < N_ONE_BY_ONE; i++)
    spawn_child_watch_add (children[i], on_count, &remaining);
  before = _spawn_sigchld_sweeps ();
  for (i = 0; i < N_ONE_BY_ONE; i++)
    {
      remaining = 1;
      g_assert_true (spawn_child_send_signal (children[i], SIGKILL, NULL));
      iterate_until_zero (ctx, &remaining);
    }
  g_test_message ("%u sweeps for %d exits", _spawn_sigchld_sweeps () - before,
                  N_ONE_BY_ONE);
  g_assert_cmpuint (_spawn_sigchld_sweeps () - before, ==, 0);
  for (i = 0; i < N_ONE_BY_ONE; i++)
    spawn_child_unref (children[i]);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  testutil_assert_no_children ();
}

static volatile sig_atomic_t app_reaped;

/* The application's own handler: reaps whatever it can, as many do. */
static void
app_reaping_handler (int signum G_GNUC_UNUSED)
{
  int saved_errno = errno;

  while (waitpid (-1, NULL, WNOHANG) > 0)
    app_reaped++;
  errno = saved_errno;
}

typedef struct {
  int called;
  int lost;
} Statuses;

static void
on_status (SpawnChild *child G_GNUC_UNUSED, const SpawnExitInfo *info,
           const GError *error, gpointer data)
{
  Statuses *st = data;

  st->called++;
  if (error != NULL)
    st->lost++;
  else
    g_assert_cmpint (info->status, ==, 3);
}

#define N_MERGED 20

static void
test_sigchld_app_handler_merged (gconstpointer data)
{
  struct sigaction sa = { .sa_handler = app_reaping_handler, .sa_flags = SA_RESTART };
  SpawnChild *children[N_MERGED];
  Statuses st = { 0 };
  sigset_t chld;
  gint64 deadline;
  int i;

  g_test_summary ("an application SIGCHLD handler that reaps with waitpid(-1), which "
                  "ours chains to: 20 exits merged into one signal all reach their "
                  "watches (ours are swept before its handler runs)");
  if (testutil_backend (data) != SPAWN_BACKEND_SIGCHLD)
    {
      g_test_skip ("only the sigchld backend has a SIGCHLD handler");
      return;
    }
  if (!testutil_use_backend (data) || !testutil_isolated ())
    return;
  /* Before our first spawn, which installs ours on top of it. */
  g_assert_no_errno (sigaction (SIGCHLD, &sa, NULL));
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  g_assert_cmpint (pthread_sigmask (SIG_BLOCK, &chld, NULL), ==, 0);
  for (i = 0; i < N_MERGED; i++)
    {
      children[i] = testutil_start_helper ("exit", "3");
      spawn_child_watch_add (children[i], on_status, &st);
    }
  for (i = 0; i < N_MERGED; i++)
    testutil_wait_readable (children[i]);
  /* One SIGCHLD pending for twenty exits, delivered here. */
  g_assert_cmpint (pthread_sigmask (SIG_UNBLOCK, &chld, NULL), ==, 0);
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (st.called < N_MERGED)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (1000);
    }
  g_test_message ("%d of %d statuses lost; the application's handler reaped %d",
                  st.lost, N_MERGED, (int) app_reaped);
  g_assert_cmpint (st.lost, ==, 0);
  g_assert_cmpint (app_reaped, ==, 0);
  for (i = 0; i < N_MERGED; i++)
    spawn_child_unref (children[i]);
  testutil_assert_no_children ();
}

int
main (int argc, char **argv)
{
  static const TestutilCase cases[] = {
    { "poll-few-fds", test_poll_few_fds },
    { "process-poll-few-fds", test_process_poll_few_fds },
    { "priorities", test_priorities },
    { "same-child-twice", test_same_child_twice },
    { "destroy-other-thread", test_destroy_other_thread },
    { "process-attaches-no-source", test_process_attaches_no_source },
    { "sigchld-exit-no-sweep", test_sigchld_exit_no_sweep },
    { "reaper-attaches-no-source", test_reaper_attaches_no_source },
    { "sigchld-app-handler-merged", test_sigchld_app_handler_merged },
  };

  testutil_init (&argc, &argv);
  testutil_add_backend_cases ("/spawn/hub", cases, G_N_ELEMENTS (cases));
  return g_test_run ();
}
