/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* base.h - what every backend and the core build on
 *
 * The bottom layer: the child's plan and the code that carries it out
 * between clone and exec (exec-child.c), SpawnExitInfo from what the
 * kernel says (exit-info.c), and descriptor helpers (fd.c).  Nothing here
 * knows which backend runs or calls up into the layers above
 * (docs/design.md, "Layers").  Inside the library functions return 0 or
 * -errno; the core turns that into a GError once, at the public edge.
 */
#pragma once

#include <sched.h>
#include <signal.h>

#include <libspawn/spawn-async.h>
#include <libspawn/spawn-enum-types.h>

/* What a child that fails before exec leaves for its parent. */
typedef struct {
  int step;                  /* a SpawnExecStep */
  int errnum;                /* 0: it exec'd (or died in exec) */
} SpawnExecReport;

/* Everything the child needs between clone and exec, prepared by the parent
 * so that the child only makes async-signal-safe calls (signal-safety(7)):
 * no malloc, no locks, no stdio.  It shares the parent's memory
 * (CLONE_VM | CLONE_VFORK) while the parent waits. */
typedef struct {
  const char *working_directory;
  const char *file;          /* what to exec, before any PATH search */
  char * const *argv;
  char * const *envp;
  const char *search_path;   /* NULL: exec file as given */
  char *path_buffer;         /* room for the longest PATH candidate */
  char **shell_argv;         /* preallocated /bin/sh argv for the fallback */
  gboolean close_descriptors;
  int fds[3];                /* what becomes 0, 1, 2, or a SPAWN_FD_ value */
  const int *source_fds;
  const int *target_fds;
  int *lifted_fds;           /* scratch, n_fds long, for the child */
  gsize n_fds;
  int max_target_fd;
  /* > 0: the child is cloned sharing our descriptor table (CLONE_FILES,
   * see SPAWN_EXEC_CLONE_FLAGS) and first makes a table of its own that
   * holds only our descriptors below this number, every one it needs
   * among them: close_range(CLOSE_RANGE_UNSHARE) copies that much and no
   * more, where a clone without CLONE_FILES copies the whole table, one
   * entry per pidfd of every live child.  0: a plain clone, which copies
   * it (a child_setup or G_SPAWN_LEAVE_DESCRIPTORS_OPEN may use any of
   * them; with the kernel's kill-on-close the child would hold its own
   * pidfd or clone fd, and our series refuses CLONE_FILES there).
   * core/spawn.c decides. */
  int share_fds_below;
  GSpawnChildSetupFunc child_setup;
  gpointer child_setup_data;
  sigset_t parent_mask;      /* restored in the child before exec */
  /* SPAWN_CHILD_KILL_ON_CLOSE, by the kernel: the backend's start() asks
   * for it (only where its probe_kill_on_close() said yes). */
  gboolean kernel_kill_on_close;
  /* SPAWN_CHILD_NEW_PROCESS_GROUP: setpgid(0, 0); SPAWN_CHILD_NEW_SESSION:
   * setsid().  Both before child_setup, which may change them again. */
  gboolean new_process_group;
  gboolean new_session;
  /* SPAWN_CHILD_CONTROLLING_TERMINAL: after setsid() (@new_session is
   * set too), TIOCSCTTY on the first of the child's 0, 1 and 2 that is
   * a terminal; before child_setup. */
  gboolean controlling_terminal;
  /* A job's cgroup (core/job.c): its directory, for a backend that can
   * start the child in it (clone3's CLONE_INTO_CGROUP: it then sets
   * @born_in_cgroup), and its cgroup.procs, into which the child moves
   * itself first thing otherwise.  -1: no job. */
  int cgroup_fd;
  int cgroup_procs_fd;
  gboolean born_in_cgroup;
  /* SPAWN_CHILD_KILL_ON_CLOSE, by PR_SET_PDEATHSIG: the child sets it
   * and reports ESRCH if getppid() is no longer @parent_pid (we died
   * before the prctl).  Only from the pdeathsig thread
   * (core/pdeathsig-thread.c), which sets both.  That thread's children
   * are always in its own PID namespace: clone(CLONE_THREAD) refuses to
   * create a thread whose pid_for_children differs, so getppid() cannot
   * be 0 here. */
  gboolean pdeathsig;
  pid_t parent_pid;
  /* The caller's CPU affinity and nice value, where they differ from the
   * pdeathsig thread's (which the child inherits): set in the child. */
  gboolean set_affinity;
  cpu_set_t affinity;
  gboolean set_nice;
  int nice;
  /* In the parent's memory, which the child shares (CLONE_VM); read
   * when CLONE_VFORK lets the parent go, that is once the child has
   * exec'd or exited.  No pipe: the parent would resume at the exec's
   * mm switch and then sleep until the exec closes a CLOEXEC write end. */
  SpawnExecReport *report;
} SpawnExecPlan;

/* The flags every backend's start() clones a child of @plan with, to
 * which it adds its own. */
#define SPAWN_EXEC_CLONE_FLAGS(plan) \
  (CLONE_VM | CLONE_VFORK | ((plan)->share_fds_below > 0 ? CLONE_FILES : 0))

#define SPAWN_FD_NULL    (-1) /* /dev/null */
#define SPAWN_FD_INHERIT (-2) /* the parent's own 0, 1 or 2 */

/* Which step of the child's plan failed. */
typedef enum {
  SPAWN_EXEC_STEP_EXEC,
  SPAWN_EXEC_STEP_CHDIR,
  SPAWN_EXEC_STEP_FDS,
  SPAWN_EXEC_STEP_AFFINITY,
  SPAWN_EXEC_STEP_NICE,
  SPAWN_EXEC_STEP_KILL_ON_CLOSE,
  SPAWN_EXEC_STEP_PROCESS_GROUP,
  SPAWN_EXEC_STEP_CGROUP,
  SPAWN_EXEC_STEP_CONTROLLING_TERMINAL,
} SpawnExecStep;

/* exec-child.c: the child's side of every backend, the function it runs
 * after clone (@plan is a SpawnExecPlan): carry out the plan and exec, or
 * leave a SpawnExecReport and _exit(127). */
int _spawn_exec_child (void *plan);
/* The child of _spawn_fd_table_probe(): sets the int at @err to 0 or
 * -errno. */
int _spawn_exec_fd_table_probe_child (void *err);
/* What failed, in words, for the message that names the program (or the
 * directory, for SPAWN_EXEC_STEP_CHDIR). */
const char *_spawn_exec_step_describe (SpawnExecStep step);

/* exit-info.c: SpawnExitInfo from what the kernel reports. */
struct rusage;
/* From a waitpid-style status and (if not NULL) a struct rusage. */
void _spawn_exit_info_from_wait_status (SpawnExitInfo *info, int wait_status,
                                        const struct rusage *ru);
/* The CPU times of a struct rusage, in microseconds. */
void _spawn_exit_info_set_rusage (SpawnExitInfo *info, const struct rusage *ru);
/* From a CLD_* code and status (siginfo_t style). */
void _spawn_exit_info_from_code (SpawnExitInfo *info, int code, int status);

/* fd.c */
/* Moves @fd (CLOEXEC) above 2, where an fd of ours would otherwise
 * become a child's stdio when the application has closed its own.
 * Returns the fd to use: @fd itself if it cannot be moved (fd table
 * full), as losing it would be worse. */
int _spawn_fd_above_stdio (int fd);
/* pipe2(O_CLOEXEC) with both ends above stdio; 0 or -errno. */
int _spawn_fd_pipe (int p[2]);
/* Closes both ends that are open and sets them to -1. */
void _spawn_fd_close_pair (int p[2]);
/* pidfd_send_signal(2): 0 or -errno (ESRCH once the process has been
 * reaped).  A clone fd is taken where a pidfd is. */
int _spawn_fd_send_signal (int pidfd, int signum);
/* Whether a CLONE_FILES child can make a table of its own with
 * close_range(CLOSE_RANGE_UNSHARE), asked of a child on @stack (fd.c):
 * 0 or -errno. */
int _spawn_fd_table_probe (void *stack, gsize stack_size);
