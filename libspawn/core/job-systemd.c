/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-systemd.c - a delegated cgroup from our user's systemd instance
 *
 * An application on a desktop runs in a unit of its user's systemd
 * instance (app-…-PID.scope, a .service), whose cgroup that instance owns:
 * systemd's cgroup delegation rules (https://systemd.io/CGROUP_DELEGATION/)
 * let a process write below a cgroup only where the unit has Delegate=yes.
 * The same rules forbid processes in an inner node (a cgroup with
 * children that has controllers enabled), so making our jobs' cgroups
 * below our own would need the application moved into a leaf: a library
 * must not move its application behind its back.
 *
 * So we ask the user's systemd instance, as VTE and GNOME Shell do for
 * the programs they start, for a transient scope with Delegate=yes:
 * StartTransientUnit on org.freedesktop.systemd1 on the session bus, over
 * GDBus on a private connection (never the shared one: it may exit the
 * application when the bus goes away), waiting for JobRemoved.  A scope
 * needs a process; ours is a keeper, a child of ours (so its PID cannot be
 * reused under us) that reads a pipe whose only write end we hold and
 * exits at EOF, that is when we exit, however we exit.  Once the scope is
 * ours, the keeper moves into a leaf of it, and every job's cgroup is made
 * beside it, so that the scope itself holds no process and may enable
 * controllers for its children.  One scope per process, made at the first
 * job that needs it; systemd removes it when nothing runs in it any more.
 */
#include "job-systemd-private.h"
#include "job-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gio/gio.h>

/* A generous bound on the call and on the job it queues: the user manager
 * answers in milliseconds, but a loaded machine (or an emulated one) may
 * take seconds. */
#define SYSTEMD_TIMEOUT_MS 20000

extern char **environ;

static GMutex systemd_lock;
static gboolean systemd_asked;      /* the fields below hold the answer */
static char *systemd_parent;        /* the scope's directory; NULL: own cgroup */
static int systemd_error;
static char *systemd_failed_what;
static int systemd_keeper_fd = -1;  /* write end of the keeper's stdin */

/* Whether @self (our cgroup) is in a unit of our own user's systemd
 * instance that was not delegated to us. */
static gboolean
systemd_self_is_managed (const char *self)
{
  g_autofree char *needle = g_strdup_printf ("/user@%u.service/", (unsigned) getuid ());
  char value[8];
  const char *names[] = { "user.delegate", "trusted.delegate" };
  gsize i;

  if (strstr (self, needle) == NULL)
    return FALSE;
  /* systemd marks a delegated unit's cgroup with one of these. */
  for (i = 0; i < G_N_ELEMENTS (names); i++)
    {
      ssize_t n = getxattr (self, names[i], value, sizeof value - 1);

      if (n > 0 && (value[0] == '1' || value[0] == 'y'))
        return FALSE;
    }
  return TRUE;
}

/* The session bus's address, never an autolaunch: a library must not
 * start a bus.  NULL if there is none. */
static char *
systemd_bus_address (void)
{
  const char *env = g_getenv ("DBUS_SESSION_BUS_ADDRESS");
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *socket_path = NULL;

  if (env != NULL && env[0] != '\0')
    return g_strdup (env);
  if (runtime == NULL)
    return NULL;
  socket_path = g_build_filename (runtime, "bus", NULL);
  if (!g_file_test (socket_path, G_FILE_TEST_EXISTS))
    return NULL;
  return g_strdup_printf ("unix:path=%s", socket_path);
}

/* The keeper: /bin/cat with its stdin the read end of a pipe and stdout
 * /dev/null.  posix_spawn() (vfork-like in glibc) runs nothing of ours in
 * the child; signal dispositions and the mask are reset there. */
static int
systemd_start_keeper (pid_t *pid)
{
  char *argv[] = { (char *) "libspawn-scope-keeper", NULL };
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t all, none;
  int fds[2], err;

  if (pipe2 (fds, O_CLOEXEC) < 0)
    return -errno;
  sigfillset (&all);
  sigemptyset (&none);
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, fds[0], 0);
  posix_spawn_file_actions_addopen (&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  err = -posix_spawn (pid, "/bin/cat", &actions, &attr, argv, environ);
  posix_spawnattr_destroy (&attr);
  posix_spawn_file_actions_destroy (&actions);
  close (fds[0]);
  if (err < 0)
    {
      close (fds[1]);
      return err;
    }
  systemd_keeper_fd = _spawn_fd_above_stdio (fds[1]);
  return 0;
}

/* EOF to the keeper, which exits; reaped here, never left a zombie. */
static void
systemd_stop_keeper (pid_t keeper)
{
  close (systemd_keeper_fd);
  systemd_keeper_fd = -1;
  while (waitpid (keeper, NULL, 0) < 0 && errno == EINTR)
    ;
}

typedef struct {
  char *job_path;     /* the job StartTransientUnit queued; NULL: not yet */
  GPtrArray *removed; /* "path result" of each JobRemoved seen so far */
} SystemdWait;

static void
systemd_on_job_removed (GDBusConnection *connection G_GNUC_UNUSED,
                        const char *sender G_GNUC_UNUSED, const char *object_path G_GNUC_UNUSED,
                        const char *interface G_GNUC_UNUSED, const char *signal G_GNUC_UNUSED,
                        GVariant *parameters, gpointer user_data)
{
  SystemdWait *wait = user_data;
  guint32 id;
  const char *job, *unit, *result;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(uoss)")))
    return;
  g_variant_get (parameters, "(u&o&s&s)", &id, &job, &unit, &result);
  g_ptr_array_add (wait->removed, g_strdup_printf ("%s %s", job, result));
}

static gboolean
systemd_on_timeout (gpointer user_data)
{
  gboolean *timed_out = user_data;

  *timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* The result ("done", "failed", ...) of @wait's job once JobRemoved named
 * it, iterating @context (ours, pushed) until then; NULL on timeout. */
static char *
systemd_wait_job (GMainContext *context, SystemdWait *wait)
{
  g_autofree char *prefix = g_strconcat (wait->job_path, " ", NULL);
  gboolean timed_out = FALSE;
  GSource *timeout = g_timeout_source_new (SYSTEMD_TIMEOUT_MS);
  char *result = NULL;

  g_source_set_callback (timeout, systemd_on_timeout, &timed_out, NULL);
  g_source_attach (timeout, context);
  while (result == NULL && !timed_out)
    {
      guint i;

      for (i = 0; i < wait->removed->len && result == NULL; i++)
        if (g_str_has_prefix (wait->removed->pdata[i], prefix))
          result = g_strdup ((char *) wait->removed->pdata[i] + strlen (prefix));
      if (result == NULL)
        g_main_context_iteration (context, TRUE);
    }
  g_source_destroy (timeout);
  g_source_unref (timeout);
  return result;
}

static GVariant *
systemd_scope_properties (pid_t keeper)
{
  GVariantBuilder props;
  GVariantBuilder pids;

  g_variant_builder_init (&pids, G_VARIANT_TYPE ("au"));
  g_variant_builder_add (&pids, "u", (guint32) keeper);
  g_variant_builder_init (&props, G_VARIANT_TYPE ("a(sv)"));
  g_variant_builder_add (&props, "(sv)", "Description",
                         g_variant_new_take_string (g_strdup_printf ("libspawn jobs of %s[%d]",
                                                                     g_get_prgname () ? g_get_prgname () : "?",
                                                                     (int) getpid ())));
  g_variant_builder_add (&props, "(sv)", "PIDs", g_variant_builder_end (&pids));
  g_variant_builder_add (&props, "(sv)", "Delegate", g_variant_new_boolean (TRUE));
  g_variant_builder_add (&props, "(sv)", "CollectMode", g_variant_new_string ("inactive-or-failed"));
  return g_variant_builder_end (&props);
}

/* StartTransientUnit(@unit) and wait for its job; 0 or -errno. */
static int
systemd_start_scope (GDBusConnection *bus, GMainContext *context, const char *unit,
                     pid_t keeper, char **failed_what)
{
  SystemdWait wait = { NULL, g_ptr_array_new_with_free_func (g_free) };
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply = NULL;
  g_autofree char *result = NULL;
  guint sub;

  /* Subscribed before the call: the job may end before its reply comes. */
  sub = g_dbus_connection_signal_subscribe (bus, "org.freedesktop.systemd1",
                                            "org.freedesktop.systemd1.Manager", "JobRemoved",
                                            "/org/freedesktop/systemd1", NULL,
                                            G_DBUS_SIGNAL_FLAGS_NONE, systemd_on_job_removed,
                                            &wait, NULL);
  reply = g_dbus_connection_call_sync (bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "StartTransientUnit",
                                       g_variant_new ("(ss@a(sv)@a(sa(sv)))", unit, "fail",
                                                      systemd_scope_properties (keeper),
                                                      g_variant_new_array (G_VARIANT_TYPE ("(sa(sv))"),
                                                                           NULL, 0)),
                                       G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NONE,
                                       SYSTEMD_TIMEOUT_MS, NULL, &error);
  if (reply != NULL)
    {
      g_variant_get (reply, "(o)", &wait.job_path);
      result = systemd_wait_job (context, &wait);
    }
  g_dbus_connection_signal_unsubscribe (bus, sub);
  g_ptr_array_unref (wait.removed);
  g_free (wait.job_path);
  if (reply == NULL)
    {
      g_dbus_error_strip_remote_error (error);
      *failed_what = g_strdup_printf ("a delegated scope from the systemd user manager "
                                      "(StartTransientUnit %s: %s)", unit, error->message);
      return -EACCES;
    }
  if (g_strcmp0 (result, "done") != 0)
    {
      *failed_what = g_strdup_printf ("a delegated scope from the systemd user manager "
                                      "(its job for %s: %s)", unit,
                                      result != NULL ? result : "no answer in time");
      return result != NULL ? -EACCES : -ETIMEDOUT;
    }
  return 0;
}

/* The scope's cgroup as an absolute path, from its ControlGroup property. */
static int
systemd_scope_path (GDBusConnection *bus, const char *unit, char **path, char **failed_what)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) unit_path = NULL, value = NULL;
  const char *object, *group;

  unit_path = g_dbus_connection_call_sync (bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "GetUnit",
                                           g_variant_new ("(s)", unit), G_VARIANT_TYPE ("(o)"),
                                           G_DBUS_CALL_FLAGS_NONE, SYSTEMD_TIMEOUT_MS, NULL, &error);
  if (unit_path != NULL)
    {
      g_variant_get (unit_path, "(&o)", &object);
      value = g_dbus_connection_call_sync (bus, "org.freedesktop.systemd1", object,
                                           "org.freedesktop.DBus.Properties", "Get",
                                           g_variant_new ("(ss)", "org.freedesktop.systemd1.Scope",
                                                          "ControlGroup"),
                                           G_VARIANT_TYPE ("(v)"), G_DBUS_CALL_FLAGS_NONE,
                                           SYSTEMD_TIMEOUT_MS, NULL, &error);
    }
  if (value == NULL)
    {
      g_dbus_error_strip_remote_error (error);
      *failed_what = g_strdup_printf ("the cgroup of %s (%s)", unit, error->message);
      return -EACCES;
    }
  {
    g_autoptr (GVariant) inner = NULL;

    g_variant_get (value, "(v)", &inner);
    group = g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING) ? g_variant_get_string (inner, NULL) : "";
    if (group[0] != '/')
      {
        *failed_what = g_strdup_printf ("the cgroup of %s (systemd names none)", unit);
        return -ENOENT;
      }
    return _spawn_cgroup_from_hierarchy (group, path);
  }
}

/* Moves the keeper from the scope's top into a leaf "keeper" of it. */
static int
systemd_move_keeper (const char *scope, pid_t keeper, char **failed_what)
{
  g_autofree char *leaf = g_build_filename (scope, "keeper", NULL);
  g_autofree char *procs = g_build_filename (leaf, "cgroup.procs", NULL);
  char pid_text[16];
  int fd, len, err = 0;

  if (mkdir (leaf, 0755) < 0 && errno != EEXIST)
    err = -errno;
  len = g_snprintf (pid_text, sizeof pid_text, "%d", (int) keeper);
  if (err == 0 && (fd = open (procs, O_WRONLY | O_CLOEXEC)) < 0)
    err = -errno;
  else if (err == 0)
    {
      if (write (fd, pid_text, len) != len)
        err = -errno;
      close (fd);
    }
  if (err < 0)
    *failed_what = g_strdup (procs);
  return err;
}

/* Connects, starts the keeper, asks for the scope: the whole first answer. */
static int
systemd_ask (char **parent, char **failed_what)
{
  g_autofree char *address = systemd_bus_address ();
  g_autofree char *unit = NULL;
  g_autoptr (GError) error = NULL;
  GMainContext *context;
  GDBusConnection *bus;
  pid_t keeper;
  int err;

  if (address == NULL)
    {
      *failed_what = g_strdup ("a delegated scope from the systemd user manager (no session "
                               "bus: neither DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR/bus)");
      return -ENOENT;
    }
  /* Our own context: the signal is delivered there, and we iterate only it. */
  context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  bus = g_dbus_connection_new_for_address_sync (address,
                                                G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                NULL, NULL, &error);
  if (bus == NULL)
    {
      *failed_what = g_strdup_printf ("a delegated scope from the systemd user manager (the "
                                      "session bus %s: %s)", address, error->message);
      err = -ENOENT;
    }
  else if ((err = systemd_start_keeper (&keeper)) < 0)
    *failed_what = g_strdup ("a keeper process for a systemd scope (/bin/cat)");
  else
    {
      g_dbus_connection_set_exit_on_close (bus, FALSE);
      unit = g_strdup_printf ("libspawn-%d-%08x.scope", (int) getpid (), g_random_int ());
      err = systemd_start_scope (bus, context, unit, keeper, failed_what);
      if (err == 0)
        err = systemd_scope_path (bus, unit, parent, failed_what);
      if (err == 0)
        err = systemd_move_keeper (*parent, keeper, failed_what);
      if (err < 0)
        systemd_stop_keeper (keeper);
    }
  if (bus != NULL)
    {
      g_dbus_connection_close_sync (bus, NULL, NULL);
      g_object_unref (bus);
    }
  while (g_main_context_iteration (context, FALSE))
    ;
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return err;
}

int
_spawn_job_systemd_parent (const char **parent, char **failed_what)
{
  const char *self, *env = g_getenv ("LIBSPAWN_JOB_SYSTEMD");
  int err;

  *parent = NULL;
  if (env != NULL && strcmp (env, "0") == 0)
    return 0;
  if (_spawn_cgroup_self (&self) < 0 || !systemd_self_is_managed (self))
    return 0;
  g_mutex_lock (&systemd_lock);
  if (!systemd_asked)
    {
      g_clear_pointer (&systemd_failed_what, g_free);
      systemd_error = systemd_ask (&systemd_parent, &systemd_failed_what);
      /* A timeout may pass: asked again next time.  Anything else stays. */
      systemd_asked = systemd_error != -ETIMEDOUT;
      if (systemd_error < 0)
        g_clear_pointer (&systemd_parent, g_free);
    }
  *parent = systemd_parent;
  err = systemd_error;
  if (err < 0)
    *failed_what = g_strdup (systemd_failed_what);
  g_mutex_unlock (&systemd_lock);
  return err;
}
