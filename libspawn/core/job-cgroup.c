/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-cgroup.c - one cgroup v2 directory per job
 *
 * Where: below our own cgroup (the "0::" line of /proc/self/cgroup, under
 * the first cgroup2 mount of /proc/self/mountinfo), as a transient scope of
 * systemd's is below its slice.  Creating a child cgroup needs write access
 * to our own (root, or a subtree systemd delegated to us).  Limits need the
 * controller in our cgroup's cgroup.subtree_control, and cgroup v2's "no
 * internal processes" rule refuses that (EBUSY) while our cgroup has
 * processes of its own, unless it is the root: then the application must
 * run in a delegated cgroup and move itself into a leaf, as systemd's
 * Delegate= documentation asks.  We do not move the application behind
 * its back; the error says what to do.
 *
 * cgroup.kill (5.14) kills the whole tree, also what forks meanwhile;
 * cpu.stat's usage is there without any controller; memory.peak (6.8) and
 * memory.events need the memory controller.  Every function returns 0 or
 * -errno.
 */
#include "job-private.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The absolute path of our own cgroup, found once. */
static char *cgroup_self_path;
static int cgroup_self_error;
/* The first cgroup2 mount: where, and which path of the hierarchy. */
static char *cgroup_mount_point;
static char *cgroup_mount_root;

/* The first cgroup2 mount of /proc/self/mountinfo: its mount point and the
 * path in the hierarchy it shows (its root). */
static int
cgroup_find_mount (char **mount_point, char **mount_root)
{
  g_autofree char *contents = NULL;
  g_auto (GStrv) lines = NULL;
  gsize i;

  if (!g_file_get_contents ("/proc/self/mountinfo", &contents, NULL, NULL))
    return -ENOENT;
  lines = g_strsplit (contents, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      const char *dash = strstr (lines[i], " - ");
      g_auto (GStrv) fields = NULL;

      if (dash == NULL || !g_str_has_prefix (dash + 3, "cgroup2 "))
        continue;
      /* id parent major:minor root mount-point ... */
      fields = g_strsplit (lines[i], " ", 6);
      if (g_strv_length (fields) < 6)
        continue;
      *mount_root = g_strcompress (fields[3]);
      *mount_point = g_strcompress (fields[4]);
      return 0;
    }
  return -ENOENT;
}

static void
cgroup_find_self (void)
{
  g_autofree char *contents = NULL;
  char *mount_point = NULL, *mount_root = NULL;
  g_auto (GStrv) lines = NULL;
  const char *path = NULL;
  gsize i;
  int err;

  if ((err = cgroup_find_mount (&cgroup_mount_point, &cgroup_mount_root)) < 0)
    {
      cgroup_self_error = err;
      return;
    }
  if (!g_file_get_contents ("/proc/self/cgroup", &contents, NULL, NULL))
    {
      cgroup_self_error = -ENOENT;
      return;
    }
  mount_point = cgroup_mount_point;
  mount_root = cgroup_mount_root;
  lines = g_strsplit (contents, "\n", -1);
  for (i = 0; lines[i] != NULL && path == NULL; i++)
    if (g_str_has_prefix (lines[i], "0::"))
      path = lines[i] + 3;
  /* A mount of a subtree (a container's) shows paths below its root. */
  if (path != NULL && strcmp (mount_root, "/") != 0 &&
      g_str_has_prefix (path, mount_root))
    path += strlen (mount_root);
  if (path == NULL)
    cgroup_self_error = -ENOENT;
  else
    cgroup_self_path = g_build_filename (mount_point, path, NULL);
}

int
_spawn_cgroup_self (const char **path)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      cgroup_find_self ();
      g_once_init_leave (&once, 1);
    }
  *path = cgroup_self_path;
  return cgroup_self_path != NULL ? 0 : cgroup_self_error;
}

int
_spawn_cgroup_from_hierarchy (const char *hierarchy_path, char **path)
{
  const char *self;
  int err;

  if ((err = _spawn_cgroup_self (&self)) < 0)
    return err;
  if (strcmp (cgroup_mount_root, "/") != 0)
    {
      if (!g_str_has_prefix (hierarchy_path, cgroup_mount_root))
        return -ENOENT;  /* outside what our mount shows */
      hierarchy_path += strlen (cgroup_mount_root);
    }
  *path = g_build_filename (cgroup_mount_point, hierarchy_path, NULL);
  return 0;
}

/* The path in the hierarchy (as /proc/PID/cgroup shows it) of @path, a
 * directory below our cgroup2 mount. */
static char *
cgroup_hierarchy_path (const char *path)
{
  const char *rest = path + strlen (cgroup_mount_point);

  if (strcmp (cgroup_mount_root, "/") == 0)
    return g_strdup (rest[0] == '/' ? rest : path);
  return g_strconcat (cgroup_mount_root, rest, NULL);
}

/* Writes @text to the file @name of @dir_fd. */
static int
cgroup_write (int dir_fd, const char *name, const char *text)
{
  gsize len = strlen (text);
  int fd, err = 0;

  fd = openat (dir_fd, name, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (write (fd, text, len) != (ssize_t) len)
    err = -errno;
  close (fd);
  return err;
}

/* All of @fd from offset 0, NUL-terminated, or NULL with errno set.  A
 * cgroup file has no size to ask for (st_size is 0 or a page): read to
 * the end, however long (cgroup.procs of a big job is many pages). */
static char *
cgroup_read_fd (int fd)
{
  GByteArray *buf = g_byte_array_sized_new (4096);
  off_t off = 0;
  ssize_t n;

  for (;;)
    {
      g_byte_array_set_size (buf, off + 4096);
      n = pread (fd, buf->data + off, 4096, off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      off += n;
    }
  if (n < 0)
    {
      int saved_errno = errno;

      g_byte_array_unref (buf);
      errno = saved_errno;
      return NULL;
    }
  g_byte_array_set_size (buf, off + 1);
  buf->data[off] = '\0';
  return (char *) g_byte_array_free (buf, FALSE);
}

/* The file @name of @dir_fd, whole, NUL-terminated, or NULL with errno
 * set. */
static char *
cgroup_read (int dir_fd, const char *name)
{
  char *text;
  int fd, saved_errno;

  fd = openat (dir_fd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  text = cgroup_read_fd (fd);
  saved_errno = errno;
  close (fd);
  errno = saved_errno;
  return text;
}

/* The value of "@key N" in the flat-keyed @text; FALSE if absent. */
static gboolean
cgroup_key (const char *text, const char *key, guint64 *value)
{
  gsize len = strlen (key);
  const char *p = text;

  while (p != NULL && *p != '\0')
    {
      if (strncmp (p, key, len) == 0 && p[len] == ' ')
        {
          *value = g_ascii_strtoull (p + len + 1, NULL, 10);
          return TRUE;
        }
      p = strchr (p, '\n');
      if (p != NULL)
        p++;
    }
  return FALSE;
}

/* "+memory" in our cgroup's cgroup.subtree_control, if not there yet. */
static int
cgroup_enable_controller (int parent_fd, const char *controller)
{
  g_autofree char *have = cgroup_read (parent_fd, "cgroup.subtree_control");
  g_autofree char *available = NULL;
  g_autofree char *plus = NULL;
  g_auto (GStrv) words = NULL;

  if (have == NULL)
    return -errno;
  words = g_strsplit_set (g_strstrip (have), " ", -1);
  if (g_strv_contains ((const char * const *) words, controller))
    return 0;
  available = cgroup_read (parent_fd, "cgroup.controllers");
  g_strfreev (words);
  words = g_strsplit_set (available != NULL ? g_strstrip (available) : "", " ", -1);
  if (!g_strv_contains ((const char * const *) words, controller))
    return -ENODEV;
  plus = g_strconcat ("+", controller, NULL);
  return cgroup_write (parent_fd, "cgroup.subtree_control", plus);
}

static const char *
cgroup_limit_controller (const char *file)
{
  if (g_str_has_prefix (file, "memory."))
    return "memory";
  if (g_str_has_prefix (file, "pids."))
    return "pids";
  return "cpu";
}

int
_spawn_cgroup_create (SpawnCgroup *cg, const char *parent, const char *name,
                      const SpawnJobLimits *limits, char **failed_what)
{
  const char *files[] = { "memory.max", "pids.max", "cpu.max" };
  char values[3][64] = { "", "", "" };
  const char *self;
  int parent_fd, err, i;

  cg->dir_fd = cg->procs_fd = -1;
  if ((err = _spawn_cgroup_self (&self)) < 0)
    return err;
  if (parent != NULL)
    self = parent;
  if (limits->memory_max > 0)
    g_snprintf (values[0], sizeof values[0], "%" G_GUINT64_FORMAT, limits->memory_max);
  if (limits->pids_max > 0)
    g_snprintf (values[1], sizeof values[1], "%" G_GUINT64_FORMAT, limits->pids_max);
  if (limits->cpu_quota_usec > 0)
    g_snprintf (values[2], sizeof values[2], "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                limits->cpu_quota_usec, limits->cpu_period_usec);

  parent_fd = open (self, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0)
    return -errno;
  /* The memory controller also when no limit asks for it: memory.peak
   * and memory.events (the OOM kills) come with it.  Best effort. */
  if (values[0][0] == '\0')
    cgroup_enable_controller (parent_fd, "memory");
  for (i = 0; i < 3; i++)
    if (values[i][0] != '\0' &&
        (err = cgroup_enable_controller (parent_fd, cgroup_limit_controller (files[i]))) < 0)
      {
        *failed_what = g_strdup_printf ("the %s controller below %s",
                                        cgroup_limit_controller (files[i]), self);
        close (parent_fd);
        return err;
      }
  cg->path = g_build_filename (self, name, NULL);
  if (mkdirat (parent_fd, name, 0755) < 0)
    {
      err = -errno;
      close (parent_fd);
      *failed_what = g_strdup (cg->path);
      g_clear_pointer (&cg->path, g_free);
      return err;
    }
  close (parent_fd);
  cg->dir_fd = open (cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg->dir_fd < 0)
    {
      err = -errno;
      goto fail;
    }
  for (i = 0; i < 3; i++)
    if (values[i][0] != '\0' && (err = cgroup_write (cg->dir_fd, files[i], values[i])) < 0)
      {
        *failed_what = g_strdup_printf ("%s/%s", cg->path, files[i]);
        goto fail;
      }
  cg->procs_fd = openat (cg->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
  if (cg->procs_fd < 0)
    {
      err = -errno;
      goto fail;
    }
  cg->procs_fd = _spawn_fd_above_stdio (cg->procs_fd);
  cg->dir_fd = _spawn_fd_above_stdio (cg->dir_fd);
  return 0;

fail:
  if (*failed_what == NULL)
    *failed_what = g_strdup (cg->path);
  /* Nothing ran in it: its removal fails only if someone else made a
   * cgroup in it meanwhile, which then keeps it. */
  if (_spawn_cgroup_remove (cg, NULL) < 0)
    _spawn_cgroup_release (cg);
  return err;
}

/* Whether anything runs in it or below it: 1, 0, or -errno. */
static int
cgroup_populated_fd (int events_fd)
{
  g_autofree char *text = cgroup_read_fd (events_fd);
  guint64 populated = 1;

  if (text == NULL)
    return -errno;
  cgroup_key (text, "populated", &populated);
  return populated != 0;
}

int
_spawn_cgroup_populated (SpawnCgroup *cg)
{
  int fd, r;

  fd = openat (cg->dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  r = cgroup_populated_fd (fd);
  close (fd);
  return r;
}

/* Waits until nothing runs in it: cgroup.events signals each change with
 * POLLPRI (kernfs_notify).  -ETIMEDOUT after @timeout_ms (-1: never). */
int
_spawn_cgroup_wait_empty (SpawnCgroup *cg, int timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  int fd, r;

  fd = openat (cg->dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  while ((r = cgroup_populated_fd (fd)) == 1)
    {
      struct pollfd pfd = { fd, POLLPRI, 0 };
      int left = -1;

      if (timeout_ms >= 0)
        {
          left = (int) ((deadline - g_get_monotonic_time () + 999) / 1000);
          if (left <= 0)
            {
              r = -ETIMEDOUT;
              break;
            }
        }
      if (poll (&pfd, 1, left) < 0 && errno != EINTR)
        {
          r = -errno;
          break;
        }
    }
  close (fd);
  return r < 0 ? r : 0;
}

/* A cgroup below a job's: the job's own holds the processes a program of
 * the job moved into cgroups it made (a nested job, a container runtime,
 * systemd --user).  @parent_fd/@name is the directory, @dir_fd it opened,
 * @rel its path below the job's cgroup. */
typedef int (*CgroupVisit) (int parent_fd, const char *name, int dir_fd, const char *rel,
                            gpointer data);

/* Calls @visit on every cgroup below @dir_fd, deepest first (so that a
 * visit may remove the directory).  Goes on after a failed visit; returns
 * the first failure. */
static int
cgroup_walk_below (int dir_fd, const char *rel, CgroupVisit visit, gpointer data)
{
  struct dirent *e;
  DIR *dir;
  int fd, err = 0;

  fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      err = -errno;
      close (fd);
      return err;
    }
  while ((e = readdir (dir)) != NULL)
    {
      g_autofree char *sub_rel = NULL;
      int sub_fd, r;

      if (e->d_type != DT_DIR || strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      sub_fd = openat (dirfd (dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (sub_fd < 0)
        {
          /* Removed meanwhile (by its maker): nothing to do there. */
          if (errno != ENOENT && err == 0)
            err = -errno;
          continue;
        }
      sub_rel = rel[0] != '\0' ? g_strconcat (rel, "/", e->d_name, NULL) : g_strdup (e->d_name);
      r = cgroup_walk_below (sub_fd, sub_rel, visit, data);
      if (r == 0)
        r = visit (dirfd (dir), e->d_name, sub_fd, sub_rel, data);
      close (sub_fd);
      if (r < 0 && err == 0)
        err = r;
    }
  closedir (dir);
  return err;
}

typedef struct {
  int signum;
  const char *line;           /* "0::/our/path/NAME" */
} CgroupSignal;

/* Whether /proc/@pid/cgroup puts @pid in the job's cgroup or below it. */
static gboolean
cgroup_pid_is_ours (int pid, const char *line)
{
  g_autofree char *proc_path = g_strdup_printf ("/proc/%d/cgroup", pid);
  g_autofree char *where = NULL;
  gsize len = strlen (line);
  const char *p;

  if (!g_file_get_contents (proc_path, &where, NULL, NULL))
    return FALSE;
  for (p = where; p != NULL; p = strchr (p, '\n'), p = p != NULL ? p + 1 : NULL)
    if (strncmp (p, line, len) == 0 && (p[len] == '\n' || p[len] == '/' || p[len] == '\0'))
      return TRUE;
  return FALSE;
}

/* @signum to every process listed in @dir_fd's cgroup.procs, each through
 * a pidfd opened first and then checked to be ours, so that a PID that
 * ended and was reused meanwhile is not signalled. */
static int
cgroup_signal_procs (int parent_fd G_GNUC_UNUSED, const char *name G_GNUC_UNUSED, int dir_fd,
                     const char *rel G_GNUC_UNUSED, gpointer data)
{
  const CgroupSignal *how = data;
  g_autofree char *procs = cgroup_read (dir_fd, "cgroup.procs");
  g_auto (GStrv) pids = NULL;
  int i, err = 0;

  if (procs == NULL)
    return errno == ENOENT ? 0 : -errno;
  pids = g_strsplit (procs, "\n", -1);
  for (i = 0; pids[i] != NULL; i++)
    {
      int pid = atoi (pids[i]);
      int pidfd, r;

      if (pid <= 0 || (pidfd = syscall (SYS_pidfd_open, pid, 0)) < 0)
        continue;
      if (cgroup_pid_is_ours (pid, how->line) &&
          (r = _spawn_fd_send_signal (pidfd, how->signum)) < 0 && r != -ESRCH && err == 0)
        err = r;
      close (pidfd);
    }
  return err;
}

/* @signum to every process of the job's cgroup and of the cgroups below
 * it.  A process forked during the walk may be missed: for SIGKILL use
 * cgroup.kill, which is exact. */
static int
cgroup_signal_each (SpawnCgroup *cg, int signum)
{
  g_autofree char *hierarchy = cgroup_hierarchy_path (cg->path);
  /* "0::/its/path", as /proc/PID/cgroup names it: the job's cgroup need
   * not be below ours (a systemd scope's is beside it). */
  g_autofree char *line = g_strdup_printf ("0::%s", hierarchy);
  CgroupSignal how;
  int err, r;

  how.signum = signum;
  how.line = line;
  err = cgroup_signal_procs (-1, NULL, cg->dir_fd, "", &how);
  r = cgroup_walk_below (cg->dir_fd, "", cgroup_signal_procs, &how);
  return err < 0 ? err : r;
}

int
_spawn_cgroup_signal (SpawnCgroup *cg, int signum)
{
  int err;

  if (signum == SIGKILL)
    {
      err = cgroup_write (cg->dir_fd, "cgroup.kill", "1");
      /* Before 5.14: one by one. */
      if (err != -ENOENT)
        return err;
    }
  return cgroup_signal_each (cg, signum);
}

void
_spawn_cgroup_read_usage (SpawnCgroup *cg, SpawnJobUsage *usage)
{
  g_autofree char *cpu = cgroup_read (cg->dir_fd, "cpu.stat");
  g_autofree char *events = cgroup_read (cg->dir_fd, "memory.events");
  g_autofree char *peak = cgroup_read (cg->dir_fd, "memory.peak");

  if (cpu != NULL)
    {
      cgroup_key (cpu, "usage_usec", &usage->cpu_usec);
      cgroup_key (cpu, "user_usec", &usage->user_usec);
      cgroup_key (cpu, "system_usec", &usage->system_usec);
    }
  if (events != NULL)
    cgroup_key (events, "oom_kill", &usage->oom_kills);
  usage->have_memory_peak = peak != NULL;
  if (peak != NULL)
    usage->memory_peak = g_ascii_strtoull (peak, NULL, 10);
}

typedef struct {
  char *failed;               /* the first directory not removed, below the job's */
} CgroupRemove;

static int
cgroup_remove_one (int parent_fd, const char *name, int dir_fd G_GNUC_UNUSED, const char *rel,
                   gpointer data)
{
  CgroupRemove *rm = data;

  if (unlinkat (parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
    return 0;
  if (rm->failed == NULL)
    rm->failed = g_strdup (rel);
  return -errno;
}

int
_spawn_cgroup_remove (SpawnCgroup *cg, char **failed_path)
{
  CgroupRemove rm = { NULL };
  int err = 0;

  if (cg->path == NULL)
    return 0;
  /* What programs of the job made below it first, deepest first: rmdir
   * refuses a cgroup that has children (EBUSY). */
  if (cg->dir_fd >= 0)
    err = cgroup_walk_below (cg->dir_fd, "", cgroup_remove_one, &rm);
  if (err == 0 && rmdir (cg->path) < 0 && errno != ENOENT)
    err = -errno;
  if (err < 0)
    {
      /* Keep the directory and its fds: the job still holds it, and a
       * later close (or the guardian) tries again. */
      if (failed_path != NULL)
        *failed_path = rm.failed != NULL ? g_build_filename (cg->path, rm.failed, NULL)
                                         : g_strdup (cg->path);
      g_free (rm.failed);
      return err;
    }
  _spawn_cgroup_release (cg);
  return 0;
}

/* Closes the fds and forgets the path, leaving the directory. */
void
_spawn_cgroup_release (SpawnCgroup *cg)
{
  if (cg->procs_fd >= 0)
    close (cg->procs_fd);
  if (cg->dir_fd >= 0)
    close (cg->dir_fd);
  cg->procs_fd = cg->dir_fd = -1;
  g_clear_pointer (&cg->path, g_free);
}
