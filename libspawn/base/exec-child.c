/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* exec-child.c - the child's side, between clone and exec
 *
 * Everything here runs in a child that shares the parent's memory while the
 * parent is suspended (CLONE_VM | CLONE_VFORK), with every signal blocked.
 * Only async-signal-safe calls (signal-safety(7)): no malloc, no locks, no
 * stdio.  The child even shares the parent thread's TLS, errno included:
 * the parent saves its errno around the clone.
 */
#include "base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

G_GNUC_NORETURN static void
exec_report (const SpawnExecPlan *l, SpawnExecStep step, int errnum)
{
  /* Our parent's memory: it reads this when we are gone. */
  l->report->step = step;
  l->report->errnum = errnum != 0 ? errnum : EIO;
  _exit (127);
}

/* A handler of the parent's must not run in the child: reset every caught
 * signal to its default before the mask is lifted.  Ignored signals stay
 * ignored, as across exec, except for a program on a terminal of its own
 * (@all): it gets every default, as VTE and KPty give the programs they
 * start, so that the terminal's ^C, ^\ and ^Z reach it even when we were
 * started with them ignored (a shell's background job is). */
static void
exec_reset_signal_handlers (gboolean all)
{
  struct sigaction sa;
  int sig;

  for (sig = 1; sig < NSIG; sig++)
    {
      if (sigaction (sig, NULL, &sa) < 0)
        continue;
      if (sa.sa_handler == SIG_DFL || (sa.sa_handler == SIG_IGN && !all))
        continue;
      sa.sa_handler = SIG_DFL;
      sa.sa_flags = 0;
      sigaction (sig, &sa, NULL);
    }
}

/* A descriptor table of our own, where we were cloned sharing our
 * parent's (CLONE_FILES), holding only its descriptors below @below.
 * With the upper bound at ~0U the kernel copies no more than those
 * (close_range(2), Linux 5.9); the rest are not ours to close.  0 or
 * -errno. */
static int
exec_unshare_fds_below (unsigned int below)
{
  return syscall (SYS_close_range, below, ~0U, CLOSE_RANGE_UNSHARE) == 0 ? 0 : -errno;
}

/* Before anything else (until then a descriptor we open or close is our
 * parent's), when plan->share_fds_below says we share its table: the
 * parent chose the bound to hold every descriptor we use.  The probe
 * said close_range() works (_spawn_fd_table_probe()), but a seccomp
 * filter is per thread and may have come since: then a copy of the
 * whole table, as a clone without CLONE_FILES would have made. */
static void
exec_own_fd_table (const SpawnExecPlan *l)
{
  if (l->share_fds_below > 0 &&
      exec_unshare_fds_below (l->share_fds_below) < 0 &&
      unshare (CLONE_FILES) < 0)
    exec_report (l, SPAWN_EXEC_STEP_FDS, errno);
}

/* The child of _spawn_fd_table_probe(): *@data is 0 or -errno. */
int
_spawn_exec_fd_table_probe_child (void *data)
{
  *(int *) data = exec_unshare_fds_below (3);
  return 0;
}

/* Set FD_CLOEXEC on every descriptor from 3 up, without allocating. */
static void
exec_cloexec_from_3 (void)
{
  char buf[1024];
  struct rlimit rl;
  long n, i;
  int dir, fd;

  if (syscall (SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return;

  /* Before 5.11: walk /proc/self/fd with raw getdents64. */
  dir = open ("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0)
    {
      while ((n = syscall (SYS_getdents64, dir, buf, sizeof (buf))) > 0)
        for (i = 0; i < n;)
          {
            struct dirent64 *d = (struct dirent64 *) (buf + i);
            const char *p = d->d_name;

            for (fd = 0; *p >= '0' && *p <= '9'; p++)
              fd = fd * 10 + (*p - '0');
            if (*p == '\0' && p != d->d_name && fd >= 3 && fd != dir)
              fcntl (fd, F_SETFD, FD_CLOEXEC);
            i += d->d_reclen;
          }
      close (dir);
      return;
    }

  /* No /proc either: every possible descriptor. */
  if (getrlimit (RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
    rl.rlim_cur = 65536;
  for (fd = 3; fd < (int) rl.rlim_cur; fd++)
    fcntl (fd, F_SETFD, FD_CLOEXEC);
}

/* Move @fd out of the range of every target, so that placing one
 * descriptor never overwrites the source of another. */
static int
exec_lift_fd (const SpawnExecPlan *l, int fd, int floor)
{
  int moved;

  if (fd < 0 || fd >= floor)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, floor);
  if (moved < 0)
    exec_report (l, SPAWN_EXEC_STEP_FDS, errno);
  return moved;
}

/* Every source has been lifted above every target, so @from != @to, and
 * dup2() leaves the new descriptor without FD_CLOEXEC. */
static void
exec_place_fd (const SpawnExecPlan *l, int from, int to)
{
  while (dup2 (from, to) < 0)
    if (errno != EINTR)
      exec_report (l, SPAWN_EXEC_STEP_FDS, errno);
}

static void
exec_setup_fds (SpawnExecPlan *l)
{
  int floor = MAX (l->max_target_fd, 2) + 1;
  int stdio[3];
  int devnull = -1;
  gsize i;
  int fd;

  /* First lift every source above every target, then place them. */
  for (fd = 0; fd < 3; fd++)
    stdio[fd] = exec_lift_fd (l, l->fds[fd], floor);
  for (i = 0; i < l->n_fds; i++)
    l->lifted_fds[i] = exec_lift_fd (l, l->source_fds[i], floor);

  if (l->close_descriptors)
    exec_cloexec_from_3 ();

  for (fd = 0; fd < 3; fd++)
    {
      if (stdio[fd] == SPAWN_FD_INHERIT)
        {
          /* Our own 0-2 as they are, but they must survive exec. */
          int flags = fcntl (fd, F_GETFD);
          if (flags >= 0 && (flags & FD_CLOEXEC))
            fcntl (fd, F_SETFD, flags & ~FD_CLOEXEC);
          continue;
        }
      if (stdio[fd] == SPAWN_FD_NULL)
        {
          if (devnull < 0)
            {
              devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
              if (devnull < 0)
                exec_report (l, SPAWN_EXEC_STEP_FDS, errno);
              devnull = exec_lift_fd (l, devnull, floor);
            }
          exec_place_fd (l, devnull, fd);
        }
      else
        exec_place_fd (l, stdio[fd], fd);
    }
  for (i = 0; i < l->n_fds; i++)
    exec_place_fd (l, l->lifted_fds[i], l->target_fds[i]);
}

/* execve, and for a script without #! (ENOEXEC) the shell, as execvp and
 * g_spawn do.  Returns only on failure, with the errno to report. */
static int
exec_try (const SpawnExecPlan *l, const char *path)
{
  execve (path, l->argv, l->envp);
  if (errno == ENOEXEC && l->shell_argv != NULL)
    {
      l->shell_argv[1] = (char *) path;
      execve ("/bin/sh", l->shell_argv, l->envp);
      errno = ENOEXEC;
    }
  return errno;
}

static int
exec_search_path (const SpawnExecPlan *l)
{
  gsize file_len = strlen (l->file);
  gboolean saw_eacces = FALSE;
  const char *p = l->search_path;
  int err;

  for (;;)
    {
      const char *end = strchrnul (p, ':');
      gsize dir_len = end - p;
      char *b = l->path_buffer;

      /* An empty entry means the current directory. */
      if (dir_len > 0)
        {
          memcpy (b, p, dir_len);
          b += dir_len;
          *b++ = '/';
        }
      memcpy (b, l->file, file_len + 1);

      err = exec_try (l, l->path_buffer);
      switch (err)
        {
        case EACCES:
          saw_eacces = TRUE;
          break;
        /* As GLib and execvp: only "not here" moves on; ELOOP or
         * ENAMETOOLONG end the search with that error. */
        case ENOENT:
        case ENOTDIR:
        case ENODEV:
        case ETIMEDOUT:
        case ESTALE:
          break;
        default:
          return err;
        }
      if (*end == '\0')
        break;
      p = end + 1;
    }
  return saw_eacces ? EACCES : ENOENT;
}

/* The terminal on our stdin, stdout or stderr (the first that is one)
 * becomes the controlling terminal of the session we lead: a terminal
 * emulator's child, as login_tty(3) does it, but without the dup2s
 * exec_setup_fds() has done already.  ioctl(2) is async-signal-safe in
 * practice (a system call, nothing of libc's state); isatty(3) is not on
 * the list, so TIOCSCTTY itself tells a terminal from the rest (ENOTTY).
 * Argument 0: never steal a terminal that is another session's. */
static void
exec_controlling_terminal (const SpawnExecPlan *l)
{
  int err = ENOTTY;
  int fd;

  for (fd = 0; fd < 3; fd++)
    {
      if (ioctl (fd, TIOCSCTTY, 0) == 0)
        return;
      /* EBADF (a closed 0-2) and ENOTTY: not a terminal, try the next;
       * EPERM (another session's terminal) is the answer to report. */
      if (errno != ENOTTY && errno != EBADF)
        err = errno;
    }
  exec_report (l, SPAWN_EXEC_STEP_CONTROLLING_TERMINAL, err);
}

int
_spawn_exec_child (void *data)
{
  SpawnExecPlan *l = data;
  int err;

  /* First: until then a descriptor we open or close is our parent's. */
  exec_own_fd_table (l);

  /* Into the job's cgroup before anything else, and before
   * exec_setup_fds() can place a target on the descriptor.  The window:
   * until this write the child counts in our cgroup, and a cgroup.kill of
   * the job does not reach it; it has run none of the caller's code yet
   * and cannot have forked.  CLONE_INTO_CGROUP has no window. */
  if (l->cgroup_procs_fd >= 0 && !l->born_in_cgroup &&
      write (l->cgroup_procs_fd, "0", 1) != 1)
    exec_report (l, SPAWN_EXEC_STEP_CGROUP, errno);
  exec_reset_signal_handlers (l->controlling_terminal);
  exec_setup_fds (l);
  if (l->working_directory != NULL && chdir (l->working_directory) < 0)
    exec_report (l, SPAWN_EXEC_STEP_CHDIR, errno);
  /* The caller's, where the pdeathsig thread's differed: before
   * child_setup, which may want to change them again. */
  if (l->set_affinity && sched_setaffinity (0, sizeof (l->affinity), &l->affinity) < 0)
    exec_report (l, SPAWN_EXEC_STEP_AFFINITY, errno);
  /* Best effort: raising the priority back to the caller's needs
   * CAP_SYS_NICE or RLIMIT_NICE; without them the child keeps the
   * pdeathsig thread's (lower) priority rather than not starting. */
  if (l->set_nice && setpriority (PRIO_PROCESS, 0, l->nice) < 0 &&
      errno != EACCES && errno != EPERM)
    exec_report (l, SPAWN_EXEC_STEP_NICE, errno);
  /* setsid() makes a group too; both fail only with EPERM (we already
   * lead a group or session: impossible for a new child). */
  if (l->new_session && setsid () < 0)
    exec_report (l, SPAWN_EXEC_STEP_PROCESS_GROUP, errno);
  else if (l->new_process_group && !l->new_session && setpgid (0, 0) < 0)
    exec_report (l, SPAWN_EXEC_STEP_PROCESS_GROUP, errno);
  if (l->controlling_terminal)
    exec_controlling_terminal (l);
  if (l->child_setup != NULL)
    l->child_setup (l->child_setup_data);
  /* Kill-on-close without the kernel's help: die with the thread that
   * cloned us, which is our pdeathsig thread and ends only with the
   * process.  After child_setup: a change of euid, egid, fsuid or fsgid
   * there (dropping privileges, the usual use) makes commit_creds()
   * clear the setting.  If the process died before the prctl, we were
   * reparented and nobody will ever send the signal: say so and leave.
   * A setuid/setgid or file-capabilities exec resets it too
   * (docs/api.md). */
  if (l->pdeathsig)
    {
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
        exec_report (l, SPAWN_EXEC_STEP_KILL_ON_CLOSE, errno);
      if (getppid () != l->parent_pid)
        exec_report (l, SPAWN_EXEC_STEP_KILL_ON_CLOSE, ESRCH);
    }
  sigprocmask (SIG_SETMASK, &l->parent_mask, NULL);

  /* GLib's answer, where a PATH search would find a directory. */
  if (l->file[0] == '\0')
    err = ENOENT;
  else if (l->search_path != NULL)
    err = exec_search_path (l);
  else
    err = exec_try (l, l->file);
  exec_report (l, SPAWN_EXEC_STEP_EXEC, err);
}

const char *
_spawn_exec_step_describe (SpawnExecStep step)
{
  switch (step)
    {
    case SPAWN_EXEC_STEP_CHDIR:
      return "Failed to change to directory";
    case SPAWN_EXEC_STEP_FDS:
      return "Failed to set up file descriptors for";
    case SPAWN_EXEC_STEP_AFFINITY:
      return "Failed to give the caller's CPU affinity to";
    case SPAWN_EXEC_STEP_NICE:
      return "Failed to give the caller's nice value to";
    case SPAWN_EXEC_STEP_KILL_ON_CLOSE:
      return "Failed to set up kill-on-close for";
    case SPAWN_EXEC_STEP_CGROUP:
      return "Failed to put into its job's cgroup";
    case SPAWN_EXEC_STEP_PROCESS_GROUP:
      return "Failed to start a new process group or session for";
    case SPAWN_EXEC_STEP_CONTROLLING_TERMINAL:
      return "Failed to give a controlling terminal to";
    case SPAWN_EXEC_STEP_EXEC:
    default:
      return "Failed to execute child process";
    }
}
