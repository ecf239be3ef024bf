/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* guarantees: what the running kernel gives an application through
 * libspawn, measured, one experiment per guarantee (docs/kernels.md).
 *
 *   guarantees [--expect FILE] [--kernel NAME] [--only GUARANTEE]
 *              [--backend NAME]
 *
 * Each experiment uses the backend the library picks on this kernel (the
 * environment's LIBSPAWN_BACKEND and LIBSPAWN_KILL_ON_CLOSE are dropped;
 * --backend forces one instead, to see the experiments tell backends
 * apart) and answers yes or no with what it saw:
 *   status-never-lost     examples/library-safety's three applications (a
 *                         reaping SIGCHLD handler, a waitpid(-1) thread,
 *                         SIGCHLD ignored), each against 5 library children:
 *                         yes when the library got all 15 statuses
 *   no-sigchld            a counting SIGCHLD handler sees nothing from the
 *                         library's child, which has ended and been waited for
 *   no-zombie             once the child has ended (its pidfd polls
 *                         readable), /proc/PID goes without the application
 *                         calling anything; a "Z" there for 2 s is a no
 *   cpu-times             a child burns 300 ms of CPU; the exit information
 *                         must carry times (have_times), not zero
 *   kill-on-crash         an application (uid 65534 when run as root) starts
 *                         a kill-on-close child and is SIGKILLed: the child
 *                         must be gone within 10 s
 *   kill-on-crash-setuid  the same, the child a setuid-root program (needs
 *                         root, to make the setuid copy): its real uid stays
 *                         the application's, as with passwd or ping
 *   kill-on-crash-setuid-root
 *                         the same, and the child then makes itself fully
 *                         root (setresuid(0, 0, 0)), as su and sudo do
 *   born-in-cgroup        a job with pids.max = 1 and one child refuses a
 *                         second one at clone time: the kernel counted it in
 *                         the job's cgroup from birth (a child that moves
 *                         itself in afterwards is let in)
 * With --expect, the output is TAP for tests/suite: a line is "not ok" when
 * the answer differs from FILE's for this kernel (NAME, default
 * $LIBSPAWN_VM_KERNEL or "host"), better or worse.  FILE holds lines
 * "KERNEL GUARANTEE yes|no" (tests/guarantees.expect).  Without --expect,
 * the same lines, every one "ok" unless it could not be measured: a
 * report, not a test.  tests/kernels-doc makes docs/kernels.md of the
 * outputs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libspawn/libspawn.h>

#define KILL_DEADLINE_MS 10000
#define ZOMBIE_WINDOW_MS 2000
#define BURN_MS 300
#define NOBODY 65534

typedef enum {
  ANSWER_NO,
  ANSWER_YES,
  ANSWER_ERROR,  /* could not be measured: a failure, with the reason */
  ANSWER_SKIP,   /* cannot be measured by this user: a skip, with the reason */
} Answer;

typedef struct {
  const char *self;     /* this program, absolute */
  const char *safety;   /* examples/library-safety */
  const char *sleeper;  /* tests/guarantees-sleep */
} Context;

typedef Answer (*Experiment) (const Context *ctx, GString *evidence);

static int
guarantees_pidfd_open (pid_t pid)
{
  return syscall (SYS_pidfd_open, pid, 0);
}

/* Milliseconds on the monotonic clock. */
static gint64
guarantees_now_ms (void)
{
  return g_get_monotonic_time () / 1000;
}

/* ---- status-never-lost ---------------------------------------------- */

/* One row of library-safety (its --one MODE), on the library's own
 * choice of backend: adds "MODE D/N" to @evidence, returns the statuses
 * lost or -1 when the row did not run to its end. */
static int
status_row (const Context *ctx, const char *mode, GString *evidence)
{
  const char *argv[] = { ctx->safety, "--one", mode, NULL };
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  int status, got, n, lost;
  const char *line;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                     &status, &error))
    {
      g_string_append_printf (evidence, "%s: %s", mode, error->message);
      return -1;
    }
  line = out != NULL ? strstr (out, "library: ") : NULL;
  if (!WIFEXITED (status) || (WEXITSTATUS (status) != 0 && WEXITSTATUS (status) != 3) ||
      line == NULL || sscanf (line, "library: %d/%d statuses, %d lost", &got, &n, &lost) != 3 ||
      got + lost != n)
    {
      g_string_append_printf (evidence, "%s: library-safety did not run to its end "
                              "(wait status 0x%x)", mode, status);
      return -1;
    }
  g_string_append_printf (evidence, "%s%s %d/%d", g_str_has_suffix (evidence->str, ": ") ?
                          "" : ", ", mode, got, n);
  return n - got;
}

static Answer
measure_status_never_lost (const Context *ctx, GString *evidence)
{
  const char *modes[] = { "handler", "thief", "ignored" };
  int lost = 0, r;
  guint i;

  if (!g_file_test (ctx->safety, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_string_printf (evidence, "%s is not there", ctx->safety);
      return ANSWER_ERROR;
    }
  g_string_append (evidence, "statuses the library got: ");
  for (i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      if ((r = status_row (ctx, modes[i], evidence)) < 0)
        return ANSWER_ERROR;
      lost += r;
    }
  g_string_append_printf (evidence, " (examples/library-safety --one MODE); %d lost", lost);
  return lost == 0 ? ANSWER_YES : ANSWER_NO;
}

/* ---- no-sigchld ----------------------------------------------------- */

#define SIGCHLD_SLOTS 32
static volatile sig_atomic_t sigchld_count;
static volatile pid_t sigchld_pids[SIGCHLD_SLOTS];

/* Counts, and keeps the sender: it reaps nothing, so that the library's
 * wait is left alone. */
static void
sigchld_record (int sig, siginfo_t *si, void *uc)
{
  int n = sigchld_count;

  (void) sig;
  (void) uc;
  if (n < SIGCHLD_SLOTS)
    sigchld_pids[n] = si->si_pid;
  sigchld_count = n + 1;
}

static gboolean
sigchld_seen_from (pid_t pid)
{
  int i;

  for (i = 0; i < sigchld_count && i < SIGCHLD_SLOTS; i++)
    if (sigchld_pids[i] == pid)
      return TRUE;
  return FALSE;
}

/* Put back what was there before ours, unless the sigchld backend has
 * since put its own handler over ours (it chains to ours, which only
 * counts): removing it would leave that backend without its reaper. */
static void
sigchld_restore (const struct sigaction *old)
{
  struct sigaction now;

  sigaction (SIGCHLD, NULL, &now);
  if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == sigchld_record)
    sigaction (SIGCHLD, old, NULL);
}

static SpawnChild *
spawn_self (const Context *ctx, const char *mode, const char *arg, GError **error)
{
  const char *argv[] = { ctx->self, mode, arg, NULL };

  return spawn_async_fd (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0, NULL,
                         NULL, NULL, error);
}

static Answer
measure_no_sigchld (const Context *ctx, GString *evidence)
{
  struct sigaction sa = { 0 }, old;
  g_autoptr (GError) error = NULL;
  SpawnChild *child;
  sigset_t pending;
  gint64 until;
  pid_t pid;

  sa.sa_sigaction = sigchld_record;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction (SIGCHLD, &sa, &old);
  sigchld_count = 0;
  child = spawn_self (ctx, "--exit", NULL, &error);
  if (child == NULL || !spawn_child_wait (child, NULL, NULL, &error))
    {
      g_string_printf (evidence, "spawn or wait: %s", error->message);
      g_clear_pointer (&child, spawn_child_unref);
      sigchld_restore (&old);
      return ANSWER_ERROR;
    }
  pid = spawn_child_get_pid (child);
  spawn_child_unref (child);
  /* The signal, if any, was sent as the child ended, before the library
   * heard of it; a thread that had it blocked may run the handler a
   * little later.  Pending and blocked everywhere counts too. */
  until = guarantees_now_ms () + 300;
  while (!sigchld_seen_from (pid) && guarantees_now_ms () < until)
    g_usleep (10 * 1000);
  sigpending (&pending);
  sigchld_restore (&old);
  if (sigchld_seen_from (pid))
    {
      g_string_printf (evidence, "the application's SIGCHLD handler ran for the "
                       "library's child (si_pid %d)", (int) pid);
      return ANSWER_NO;
    }
  if (sigismember (&pending, SIGCHLD))
    {
      g_string_printf (evidence, "SIGCHLD pending (blocked) after the library's "
                       "child %d ended", (int) pid);
      return ANSWER_NO;
    }
  g_string_printf (evidence, "no SIGCHLD within 300 ms after the library reported "
                   "the end of its child %d (%d for anything else)", (int) pid,
                   (int) sigchld_count);
  return ANSWER_YES;
}

/* ---- no-zombie ------------------------------------------------------ */

/* The state letter of /proc/@pid/stat, or 0 when it is gone. */
static char
proc_state (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  const char *p;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return 0;
  p = strrchr (stat, ')');
  return p != NULL && p[1] == ' ' ? p[2] : '?';
}

/* Watch @pid from its end (@pidfd readable) for ZOMBIE_WINDOW_MS. */
static Answer
zombie_watch (pid_t pid, int pidfd, GString *evidence)
{
  struct pollfd pfd = { pidfd, POLLIN, 0 };
  gint64 until;
  char state;

  if (poll (&pfd, 1, 30000) != 1)
    {
      g_string_printf (evidence, "child %d did not end within 30 s", (int) pid);
      return ANSWER_ERROR;
    }
  until = guarantees_now_ms () + ZOMBIE_WINDOW_MS;
  while ((state = proc_state (pid)) != 0 && guarantees_now_ms () < until)
    g_usleep (5 * 1000);
  if (state == 0)
    {
      g_string_printf (evidence, "child %d left /proc as it ended, the application "
                       "having called nothing", (int) pid);
      return ANSWER_YES;
    }
  g_string_printf (evidence, "child %d stayed in /proc (state %c) for %d ms after it "
                   "ended, until the application waited", (int) pid, state,
                   ZOMBIE_WINDOW_MS);
  return state == 'Z' ? ANSWER_NO : ANSWER_ERROR;
}

static Answer
measure_no_zombie (const Context *ctx, GString *evidence)
{
  g_autoptr (GError) error = NULL;
  SpawnChild *child;
  Answer answer;
  int pidfd;
  pid_t pid;

  child = spawn_self (ctx, "--exit", NULL, &error);
  if (child == NULL)
    {
      g_string_printf (evidence, "spawn: %s", error->message);
      return ANSWER_ERROR;
    }
  pid = spawn_child_get_pid (child);
  pidfd = guarantees_pidfd_open (pid);
  if (pidfd < 0)
    {
      /* ESRCH: reaped already, which only an autoreaping kernel does
       * without us; anything else is a failure to look. */
      g_string_printf (evidence, "child %d: pidfd_open: %s", (int) pid, g_strerror (errno));
      answer = errno == ESRCH ? ANSWER_YES : ANSWER_ERROR;
    }
  else
    {
      answer = zombie_watch (pid, pidfd, evidence);
      close (pidfd);
    }
  spawn_child_wait (child, NULL, NULL, NULL);
  spawn_child_unref (child);
  return answer;
}

/* ---- cpu-times ------------------------------------------------------ */

static Answer
measure_cpu_times (const Context *ctx, GString *evidence)
{
  g_autofree char *ms = g_strdup_printf ("%d", BURN_MS);
  g_autoptr (GError) error = NULL;
  SpawnExitInfo info = { 0 };
  SpawnChild *child;
  guint64 total;

  child = spawn_self (ctx, "--burn", ms, &error);
  if (child == NULL || !spawn_child_wait (child, &info, NULL, &error))
    {
      g_string_printf (evidence, "spawn or wait: %s", error->message);
      g_clear_pointer (&child, spawn_child_unref);
      return ANSWER_ERROR;
    }
  spawn_child_unref (child);
  if (info.kind != SPAWN_EXIT_EXITED || info.status != 0)
    {
      g_string_printf (evidence, "the burning child ended badly (kind %d, status %d)",
                       info.kind, info.status);
      return ANSWER_ERROR;
    }
  total = info.utime_usec + info.stime_usec;
  g_string_printf (evidence, "a child that used %d ms of CPU: ", BURN_MS);
  if (!info.have_times)
    {
      g_string_append (evidence, "no times in its exit information (have_times FALSE)");
      return ANSWER_NO;
    }
  /* Nonzero is the guarantee; how close is evidence.  clonefd's times
   * are tick samples, as SIGCHLD's si_utime (task_cputime()); wait4()'s
   * and PIDFD_INFO_EXIT_CPUTIME's are scaled to the scheduler's runtime
   * (task_cputime_adjusted()).  A guest that misses ticks under load
   * undercounts the first. */
  g_string_append_printf (evidence, "user %" G_GUINT64_FORMAT " ms + system %"
                          G_GUINT64_FORMAT " ms (%d%% of it)", info.utime_usec / 1000,
                          info.stime_usec / 1000, (int) (total / (BURN_MS * 10)));
  return total > 0 ? ANSWER_YES : ANSWER_NO;
}

/* ---- kill-on-crash -------------------------------------------------- */

/* A root-owned setuid copy of the sleeper in a fresh directory; NULL with
 * @evidence set when that cannot be made. */
static char *
setuid_copy (const Context *ctx, GString *evidence)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("guarantees-XXXXXX", &error);
  g_autofree char *data = NULL;
  char *path;
  gsize len;

  if (dir == NULL || !g_file_get_contents (ctx->sleeper, &data, &len, &error))
    {
      g_string_printf (evidence, "setuid copy: %s", error->message);
      return NULL;
    }
  path = g_build_filename (dir, "sleep-setuid", NULL);
  if (chmod (dir, 0755) < 0 || !g_file_set_contents (path, data, len, &error) ||
      chown (path, 0, 0) < 0 || chmod (path, 04755) < 0)
    {
      g_string_printf (evidence, "setuid copy %s: %s", path,
                       error != NULL ? error->message : g_strerror (errno));
      g_free (path);
      return NULL;
    }
  return path;
}

static void
setuid_remove (char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  unlink (path);
  rmdir (dir);
  g_free (path);
}

/* The application's first line: its child's PID, or why it has none. */
static pid_t
app_read_child (int fd, GString *evidence)
{
  struct pollfd pfd = { fd, POLLIN, 0 };
  char buf[256];
  ssize_t n = 0;
  char *end;
  long pid;

  if (poll (&pfd, 1, 60000) == 1)
    n = read (fd, buf, sizeof buf - 1);
  buf[MAX (n, 0)] = '\0';
  g_strchomp (buf);
  pid = strtol (buf, &end, 10);
  if (n <= 0 || *end != '\0' || pid <= 0)
    {
      g_string_printf (evidence, "the application said \"%s\"", buf);
      return -1;
    }
  return pid;
}

/* Whose the child is: "Uid:" of /proc/@pid/status (real, effective...). */
static char *
proc_uids (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *status = NULL;
  const char *p;

  if (!g_file_get_contents (path, &status, NULL, NULL) ||
      (p = strstr (status, "\nUid:\t")) == NULL)
    return g_strdup ("?");
  return g_strdelimit (g_strndup (p + 6, strcspn (p + 6, "\n")), "\t", '/');
}

/* Wait until the child's uids (real/effective/saved/fs) are @want: a
 * setuid exec has taken when spawn returns, a setresuid() after it a
 * moment later.  FALSE, with what they are in *@uids, after 10 s. */
static gboolean
uids_wait (pid_t pid, const char *want, char **uids)
{
  gint64 until = guarantees_now_ms () + 10000;

  for (;;)
    {
      *uids = proc_uids (pid);
      if (g_str_equal (*uids, want) || guarantees_now_ms () > until)
        return g_str_equal (*uids, want);
      g_free (*uids);
      g_usleep (10 * 1000);
    }
}

/* The application is gone: is its child, watched through @pidfd, too? */
static Answer
kill_watch (pid_t pid, int pidfd, const char *uids, GString *evidence)
{
  struct pollfd pfd = { pidfd, POLLIN, 0 };
  gint64 t0 = guarantees_now_ms ();

  if (poll (&pfd, 1, KILL_DEADLINE_MS) == 1)
    {
      g_string_append_printf (evidence, "child %d (uids %s) ended %d ms after the "
                              "application was SIGKILLed", (int) pid, uids,
                              (int) (guarantees_now_ms () - t0));
      waitpid (pid, NULL, 0);  /* ours as the subreaper, unless autoreaped */
      return ANSWER_YES;
    }
  g_string_append_printf (evidence, "child %d (uids %s) still ran %d s after the "
                          "application was SIGKILLed", (int) pid, uids,
                          KILL_DEADLINE_MS / 1000);
  syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  poll (&pfd, 1, KILL_DEADLINE_MS);
  waitpid (pid, NULL, 0);
  return ANSWER_NO;
}

typedef struct {
  const char *sleeper;  /* the program the child runs */
  const char *arg;      /* and its argument, or NULL */
  gboolean setuid;      /* it is a setuid-root copy */
  char uids[64];        /* what /proc/PID/status must say once it runs */
} KillCase;

/* Start the application with @kc's kill-on-close child, kill it, and see
 * whether the child follows. */
static Answer
kill_experiment (const Context *ctx, const KillCase *kc, GString *evidence)
{
  const char *argv[] = { ctx->self, "--app", kc->sleeper, kc->arg, NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *uids = NULL;
  int out = -1, pidfd = -1;
  Answer answer = ANSWER_ERROR;
  GPid app;
  pid_t pid;

  /* The orphan comes to us, not to init, and we reap it. */
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  if (!g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                 NULL, NULL, &app, NULL, &out, NULL, &error))
    {
      g_string_printf (evidence, "application: %s", error->message);
      return ANSWER_ERROR;
    }
  pid = app_read_child (out, evidence);
  if (pid > 0 && (pidfd = guarantees_pidfd_open (pid)) < 0)
    g_string_printf (evidence, "pidfd_open(%d): %s", (int) pid, g_strerror (errno));
  if (pidfd >= 0)
    {
      if (!uids_wait (pid, kc->uids, &uids))
        g_string_printf (evidence, "child %d has uids %s, not %s%s", (int) pid, uids,
                         kc->uids, kc->setuid ? " (a nosuid mount?)" : "");
      else
        answer = ANSWER_YES;
    }
  kill (app, SIGKILL);
  waitpid (app, NULL, 0);
  close (out);
  if (answer == ANSWER_YES)
    answer = kill_watch (pid, pidfd, uids, evidence);
  else if (pidfd >= 0)
    syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  if (pidfd >= 0)
    close (pidfd);
  prctl (PR_SET_CHILD_SUBREAPER, 0);
  return answer;
}

/* The application's uid: 65534 when we are root (it drops to it). */
static unsigned
kill_app_uid (void)
{
  return getuid () == 0 ? NOBODY : getuid ();
}

static Answer
measure_kill_on_crash (const Context *ctx, GString *evidence)
{
  KillCase kc = { ctx->sleeper, NULL, FALSE, "" };
  unsigned u = kill_app_uid ();

  g_snprintf (kc.uids, sizeof kc.uids, "%u/%u/%u/%u", u, u, u, u);
  g_string_append_printf (evidence, "application as uid %u: ", u);
  return kill_experiment (ctx, &kc, evidence);
}

/* After a setuid-root exec: @root, the child also makes itself fully root
 * (its real uid too), as su and sudo do. */
static Answer
kill_setuid_case (const Context *ctx, gboolean root, GString *evidence)
{
  KillCase kc = { NULL, root ? "root" : NULL, TRUE, "" };
  char *copy;
  Answer answer;

  if (getuid () != 0)
    {
      g_string_printf (evidence, "making a setuid-root program needs root");
      return ANSWER_SKIP;
    }
  copy = setuid_copy (ctx, evidence);
  if (copy == NULL)
    return ANSWER_ERROR;
  kc.sleeper = copy;
  g_snprintf (kc.uids, sizeof kc.uids, root ? "0/0/0/0" : "%u/0/0/0", kill_app_uid ());
  g_string_append_printf (evidence, "application as uid %u, child setuid root%s: ",
                          kill_app_uid (), root ? " then setresuid(0, 0, 0)" : "");
  answer = kill_experiment (ctx, &kc, evidence);
  setuid_remove (copy);
  return answer;
}

static Answer
measure_kill_on_crash_setuid (const Context *ctx, GString *evidence)
{
  return kill_setuid_case (ctx, FALSE, evidence);
}

static Answer
measure_kill_on_crash_setuid_root (const Context *ctx, GString *evidence)
{
  return kill_setuid_case (ctx, TRUE, evidence);
}

/* ---- born-in-cgroup ------------------------------------------------- */

static Answer
born_second (SpawnJob *job, const Context *ctx, GString *evidence)
{
  const char *argv[] = { ctx->self, "--exit", NULL };
  g_autoptr (GError) error = NULL;
  SpawnChild *extra;

  extra = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  if (extra == NULL)
    {
      g_string_append_printf (evidence, "a second child was refused at clone time: %s",
                              error->message);
      return ANSWER_YES;
    }
  g_string_append (evidence, "a second child got in: it was moved there after birth, "
                   "which pids.max does not police");
  spawn_child_wait (extra, NULL, NULL, NULL);
  spawn_child_unref (extra);
  return ANSWER_NO;
}

static Answer
measure_born_in_cgroup (const Context *ctx, GString *evidence)
{
  const char *argv[] = { ctx->sleeper, NULL };
  g_autoptr (SpawnJob) job = spawn_job_new ();
  g_autoptr (GError) error = NULL;
  SpawnChild *first;
  Answer answer = ANSWER_ERROR;

  spawn_job_set_pids_max (job, 1);
  spawn_job_set_require_cgroup (job, TRUE);
  first = spawn_job_spawn (job, NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                           NULL, NULL, NULL, 0, &error);
  if (first == NULL)
    {
      g_string_printf (evidence, "a job with pids.max: %s", error->message);
      return ANSWER_ERROR;
    }
  g_string_printf (evidence, "job %s, pids.max 1, one child in it; ",
                   spawn_job_get_cgroup_path (job));
  answer = born_second (job, ctx, evidence);
  spawn_job_kill (job, NULL);
  spawn_child_wait (first, NULL, NULL, NULL);
  spawn_child_unref (first);
  if (!spawn_job_close (job, 10000, &error))
    {
      g_string_append_printf (evidence, "; closing the job: %s", error->message);
      answer = ANSWER_ERROR;
    }
  return answer;
}

/* ---- the run -------------------------------------------------------- */

static const struct {
  const char *name;
  Experiment run;
} guarantees[] = {
  { "status-never-lost", measure_status_never_lost },
  { "no-sigchld", measure_no_sigchld },
  { "no-zombie", measure_no_zombie },
  { "cpu-times", measure_cpu_times },
  { "kill-on-crash", measure_kill_on_crash },
  { "kill-on-crash-setuid", measure_kill_on_crash_setuid },
  { "kill-on-crash-setuid-root", measure_kill_on_crash_setuid_root },
  { "born-in-cgroup", measure_born_in_cgroup },
};

/* FILE's answer for @kernel and @guarantee: "yes", "no", or NULL. */
static const char *
expected_answer (char **lines, const char *kernel, const char *guarantee)
{
  char **l;

  for (l = lines; l != NULL && *l != NULL; l++)
    {
      char k[64], g[64], a[8];

      if (**l != '#' && sscanf (*l, "%63s %63s %7s", k, g, a) == 3 &&
          g_str_equal (k, kernel) && g_str_equal (g, guarantee))
        return g_str_equal (a, "yes") ? "yes" : g_str_equal (a, "no") ? "no" : NULL;
    }
  return NULL;
}

/* One TAP line; returns whether it is a failure. */
static gboolean
report (int n, const char *name, Answer answer, const char *want, gboolean expecting,
        const char *backend, const GString *evidence)
{
  const char *got = answer == ANSWER_YES ? "yes" : "no";
  gboolean bad;

  if (answer == ANSWER_SKIP)
    {
      printf ("ok %d - %s # SKIP %s\n", n, name, evidence->str);
      return FALSE;
    }
  if (answer == ANSWER_ERROR)
    {
      printf ("not ok %d - %s: could not measure (%s)\n", n, name, evidence->str);
      return TRUE;
    }
  bad = expecting && g_strcmp0 (want, got) != 0;
  printf ("%s %d - %s: %s", bad ? "not ok" : "ok", n, name, got);
  if (bad)
    printf (want != NULL ? ", expected %s" : ", no expectation for this kernel%s",
            want != NULL ? want : "");
  printf (" [%s] %s\n", backend, evidence->str);
  return bad;
}

static int
run_all (const Context *ctx, const char *kernel, char **expect, const char *only)
{
  const char *backend = spawn_backend_to_string (spawn_get_backend ());
  struct utsname u;
  int failed = 0, n = 0;
  guint i;

  uname (&u);
  printf ("# kernel: %s, Linux %s\n# backend: %s (%s)\n", kernel, u.release, backend,
          g_getenv ("LIBSPAWN_BACKEND") != NULL ? "forced with --backend" :
          "the library's choice here");
  for (i = 0; i < G_N_ELEMENTS (guarantees); i++)
    {
      GString *evidence;
      Answer answer;

      if (only != NULL && !g_str_equal (only, guarantees[i].name))
        continue;
      evidence = g_string_new (NULL);
      fflush (stdout);
      answer = guarantees[i].run (ctx, evidence);
      failed += report (++n, guarantees[i].name, answer,
                        expected_answer (expect, kernel, guarantees[i].name),
                        expect != NULL, backend, evidence);
      g_string_free (evidence, TRUE);
    }
  printf ("1..%d\n", n);
  return failed ? 1 : 0;
}

/* ---- the children --------------------------------------------------- */

static int
child_burn (const char *ms)
{
  struct timespec ts;
  gint64 want = g_ascii_strtoll (ms, NULL, 10) * 1000000;
  volatile guint64 spin = 0;

  do
    {
      for (int i = 0; i < 100000; i++)
        spin++;
      clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    }
  while ((gint64) ts.tv_sec * 1000000000 + ts.tv_nsec < want);
  return 0;
}

/* The application for kill-on-crash: as uid 65534 when started as root
 * (before any thread, so that the set*id calls cover the process), one
 * kill-on-close child running @sleeper, its PID on stdout, then it waits
 * to be killed. */
static int
child_app (const char *sleeper, const char *arg)
{
  const char *argv[] = { sleeper, arg, NULL };
  g_autoptr (GError) error = NULL;
  SpawnChild *child;

  if (getuid () == 0 &&
      (setgroups (0, NULL) < 0 || setresgid (NOBODY, NOBODY, NOBODY) < 0 ||
       setresuid (NOBODY, NOBODY, NOBODY) < 0))
    {
      printf ("setresuid(%d): %s\n", NOBODY, g_strerror (errno));
      return 1;
    }
  child = spawn_async_fd_full (NULL, argv, NULL, 0, NULL, NULL, -1, -1, -1, NULL, NULL, 0,
                               NULL, NULL, NULL, SPAWN_CHILD_KILL_ON_CLOSE, &error);
  if (child == NULL)
    {
      printf ("spawn %s: %s\n", sleeper, error->message);
      return 1;
    }
  printf ("%d\n", (int) spawn_child_get_pid (child));
  fflush (stdout);
  for (;;)
    pause ();
}

int
main (int argc, char **argv)
{
  g_autofree char *self = NULL, *dir = NULL, *safety = NULL, *sleeper = NULL;
  const char *expect_file = NULL, *only = NULL, *backend = NULL;
  const char *kernel = g_getenv ("LIBSPAWN_VM_KERNEL");
  g_auto (GStrv) expect = NULL;
  g_autofree char *text = NULL;
  Context ctx;
  int i;

  if (argc == 2 && g_str_equal (argv[1], "--exit"))
    return 0;
  if (argc == 3 && g_str_equal (argv[1], "--burn"))
    return child_burn (argv[2]);
  if ((argc == 3 || argc == 4) && g_str_equal (argv[1], "--app"))
    return child_app (argv[2], argv[3]);
  for (i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--expect") && i + 1 < argc)
        expect_file = argv[++i];
      else if (g_str_equal (argv[i], "--kernel") && i + 1 < argc)
        kernel = argv[++i];
      else if (g_str_equal (argv[i], "--only") && i + 1 < argc)
        only = argv[++i];
      else if (g_str_equal (argv[i], "--backend") && i + 1 < argc)
        backend = argv[++i];
      else
        {
          fprintf (stderr, "usage: %s [--expect FILE] [--kernel NAME] [--only GUARANTEE] "
                   "[--backend NAME]\n", argv[0]);
          return 2;
        }
    }
  if (expect_file != NULL)
    {
      g_autoptr (GError) error = NULL;

      if (!g_file_get_contents (expect_file, &text, NULL, &error))
        {
          fprintf (stderr, "guarantees: %s\n", error->message);
          return 2;
        }
      expect = g_strsplit (text, "\n", -1);
    }
  /* The library's own choice, whatever the caller's environment forces;
   * or, with --backend, that one here and in library-safety's rows. */
  if (backend != NULL)
    g_setenv ("LIBSPAWN_BACKEND", backend, TRUE);
  else
    g_unsetenv ("LIBSPAWN_BACKEND");
  g_unsetenv ("LIBSPAWN_KILL_ON_CLOSE");
  self = g_canonicalize_filename (argv[0], NULL);
  dir = g_path_get_dirname (self);
  safety = g_build_filename (dir, "..", "examples", "library-safety", NULL);
  sleeper = g_build_filename (dir, "guarantees-sleep", NULL);
  ctx = (Context) { self, safety, sleeper };
  return run_all (&ctx, kernel != NULL ? kernel : "host", expect, only);
}
