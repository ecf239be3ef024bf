/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* clone4-fuzz: random clone4() calls, checked against what the series
 * promises, with the clone fds they make read, polled, passed, forked and
 * closed by other threads at the same time.
 *
 *   clone4-fuzz [--seed N] [--count N] [--seconds N] [--workers N]
 *
 * Each worker process runs one calling thread and two "chaos" threads.
 * The calling thread makes either a wild call (random 64-bit flags weighted
 * toward valid ones, exit signals, sizes 0-256, args and clonefd pointers
 * that are valid, NULL, unmapped, kernel, unaligned, read-only or straddle
 * a guard page, random clonefd_flags; CLONE_INTO_CGROUP with a cgroup field
 * that names the run's cgroup, descriptor 0, a bad descriptor, a directory
 * that is no cgroup or a value above INT_MAX, behind structures that end
 * before, inside or after that field) whose child, if one is made, exits at
 * once without touching memory; or a behaviour call (a valid CLONE_FD call,
 * with or without CLONE_FD_AUTOKILL)
 * whose child exits, execs, starts threads, forks, is signalled, stopped
 * and continued, or ptraced, and whose report must say exactly how it
 * ended; or an autokill call: a CLONE_FD_AUTOKILL child that would live for
 * a minute, whose clone fd is dup'ed and maybe left in flight in an
 * SCM_RIGHTS message, and which must still run before the last copy goes
 * and die after.  The chaos threads take clone fds from a shared pool and read them
 * (also into bad buffers), poll, epoll, ioctl, dup, pass them over
 * SCM_RIGHTS (leaving some in flight), hand them to a forked reader, signal
 * and close them.
 *
 * What must hold: a call the series must refuse fails; every errno is one
 * clone4 may return; a successful CLONE_FD call stores an open descriptor
 * with the asked flags; every report is right; CLONEFD_GET_INFO still
 * answers after another process consumed the report; at the end of a
 * worker no descriptor is left beyond its own and no child or zombie; at
 * the end of the run no process is left and the run's cgroup is empty.
 * The model knows both kernels: one with struct clone4_args' cgroup field
 * (CLONE4_ARGS_SIZE_VER1), where a nonzero field without the flag is
 * EINVAL, and one without it, where any nonzero byte past the first 56 is
 * E2BIG and the flag is unknown.  The kernel log (KASAN, lockdep,
 * kmemleak, BUG, WARNING) is vm/run's to check.
 *
 * Each thread's sequence of calls follows from the seed (printed first);
 * the interleaving of threads does not, so a rerun repeats the calls, not
 * necessarily the races.  Skips, saying why, without clone4 or CLONE_FD.
 * x86_64 (syscall 1000).  TAP on stdout: one line per worker and one for
 * the processes left behind.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../libspawn/backends/clone4.h"
#include "fuzz-rng.h"
#include "proc-scan.h"

#define NR_CLONE4 SPAWN_NR_CLONE4
#define CLONE_FD_ SPAWN_CLONE_FD
#define CLONE_AUTOREAP_ SPAWN_CLONE_AUTOREAP
#define CLONE_FD_AUTOKILL_ SPAWN_CLONE_FD_AUTOKILL
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#define ARGS_SIZE ((unsigned) sizeof (struct spawn_clone4_args)) /* 56 */
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
/* CLONE4_ARGS_SIZE_VER1: struct clone4_args with the cgroup field, which
 * libspawn's own struct (VER0) does not have. */
struct fuzz_clone4_args {
  struct spawn_clone4_args v0;
  uint64_t cgroup;
};
#define ARGS_SIZE_V1 ((unsigned) sizeof (struct fuzz_clone4_args)) /* 64 */
#define PAGE 4096
#define POOL_MAX 64
/* Under TCG with KASAN a child can take seconds to be scheduled. */
#define REPORT_TIMEOUT_MS 30000

/* What the series accepts: clone's legacy flags without the namespace ones,
 * CSIGNAL (the exit signal's byte), CLONE_DETACHED and CLONE_PIDFD; plus
 * CLONE_CLEAR_SIGHAND, CLONE_AUTOREAP, CLONE_FD and CLONE_FD_AUTOKILL. */
#define NS_FLAGS                                                                         \
  (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |        \
   CLONE_NEWPID | CLONE_NEWNET)
#define VALID_FLAGS                                                                      \
  ((0xffffffffULL & ~(0xffULL | CLONE_DETACHED | CLONE_PIDFD | NS_FLAGS)) |            \
   CLONE_CLEAR_SIGHAND | CLONE_AUTOREAP_ | CLONE_FD_ | CLONE_FD_AUTOKILL_)

/* Set by main before the workers fork: does the kernel know the cgroup
 * field; a cgroup v2 directory of the run's (-1 if none could be made);
 * a directory that is no cgroup. */
static int cgroup_field;
static int cgroup_fd = -1;
static int notcg_fd = -1;

static uint64_t kernel_addr[] = { 0xffffffff81000000ULL, 0xffff888000000000ULL,
                                  0x0000800000000000ULL /* non-canonical */ };

/* ---- small things ---- */

static void
sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* ---- the worker's shared state ---- */

struct worker {
  int index;
  uint64_t seed;
  long count;
  double deadline;
  atomic_int stop;
  char failure[512];
  pthread_mutex_t lock; /* pool, failure */
  int pool[POOL_MAX];
  int pool_len;
  int sock[2]; /* SCM_RIGHTS loop */
  int epfd;
  /* Memory the calls point into. */
  unsigned char *args_page; /* RW, followed by a PROT_NONE guard page */
  unsigned char *guard;
  unsigned char *scratch;   /* RW: ptid, ctid, clonefd slots; its end takes partial reads */
  unsigned char *ro_page;   /* PROT_READ, but rewritten (made writable) before a call */
  unsigned char *ro_bad;    /* PROT_READ, always: the chaos threads' unwritable buffer */
  /* Statistics. */
  long calls, wild, created, refused, by_errno[134];
  long into_cgroup; /* wild children made with CLONE_INTO_CGROUP */
  long behaviours[8], autokills, autokill_flag;
  atomic_long chaos_ops, passed_fds, forked_reads;
};

static void
worker_fail (struct worker *w, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
worker_fail (struct worker *w, const char *fmt, ...)
{
  va_list ap;

  pthread_mutex_lock (&w->lock);
  if (!w->failure[0]) {
    va_start (ap, fmt);
    vsnprintf (w->failure, sizeof w->failure, fmt, ap);
    va_end (ap);
  }
  pthread_mutex_unlock (&w->lock);
  atomic_store (&w->stop, 1);
}

/* Hands @fd to the chaos threads, or closes it when the pool is full. */
static void
pool_put (struct worker *w, int fd)
{
  pthread_mutex_lock (&w->lock);
  if (w->pool_len < POOL_MAX) {
    w->pool[w->pool_len++] = fd;
    fd = -1;
  }
  pthread_mutex_unlock (&w->lock);
  if (fd >= 0)
    close (fd);
}

static int
pool_take (struct worker *w, struct rng *r)
{
  int fd = -1;

  pthread_mutex_lock (&w->lock);
  if (w->pool_len > 0) {
    unsigned i = below (r, w->pool_len);

    fd = w->pool[i];
    w->pool[i] = w->pool[--w->pool_len];
  }
  pthread_mutex_unlock (&w->lock);
  return fd;
}

/* ---- the clone fd's report ---- */

/* Waits for @fd to be readable and returns its report through the ioctl;
 * 0, or a message in @why. */
static int
await_report (int fd, struct spawn_clonefd_info *info, char *why, size_t whylen)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  int n;

  while ((n = poll (&p, 1, REPORT_TIMEOUT_MS)) < 0 && errno == EINTR)
    ;
  if (n != 1) {
    snprintf (why, whylen, "clone fd %d not readable after %d ms", fd, REPORT_TIMEOUT_MS);
    return -1;
  }
  if (ioctl (fd, SPAWN_CLONEFD_GET_INFO, info) < 0) {
    snprintf (why, whylen, "CLONEFD_GET_INFO on a readable clone fd: %s", strerror (errno));
    return -1;
  }
  return 0;
}

static int
report_is (const struct spawn_clonefd_info *info, int exited, int value)
{
  if (exited)
    return info->code == CLD_EXITED && (int) info->status == value;
  /* SIGSEGV and SIGABRT dump core where RLIMIT_CORE allows it. */
  return (info->code == CLD_KILLED || info->code == CLD_DUMPED) && (int) info->status == value;
}

/* ---- wild calls ---- */

/* clone4() whose child exits at once with @status, touching no memory:
 * safe with CLONE_VM, CLONE_VFORK, any stack and any TLS.  Every catchable
 * signal is blocked in the calling thread, so the child inherits a mask
 * that keeps handlers off a stack it may share. */
static long
clone4_exiting_child (uint64_t flags, unsigned long size, uint64_t args, int status)
{
  register unsigned long r10 __asm__ ("r10") = args;
  register unsigned long r8 __asm__ ("r8") = (unsigned) status;
  long ret;

  __asm__ volatile ("syscall\n\t"
                    "test %%rax, %%rax\n\t"
                    "jnz 1f\n\t"
                    "mov %%r8d, %%edi\n\t"
                    "mov $60, %%eax\n\t" /* SYS_exit: the thread, or the process */
                    "syscall\n\t"
                    "hlt\n"
                    "1:"
                    : "=a"(ret)
                    : "0"((long) NR_CLONE4), "D"((unsigned long) (flags >> 32)),
                      "S"((unsigned long) (uint32_t) flags), "d"(size), "r"(r10), "r"(r8)
                    : "rcx", "r11", "memory");
  return ret;
}

enum ptr_kind { P_VALID, P_UNALIGNED, P_NULL, P_UNMAPPED, P_KERNEL, P_RO, P_STRADDLE, P_OVERLAP };

static uint64_t
flags_random (struct rng *r)
{
  static const uint64_t legacy[] = {
    CLONE_VM, CLONE_FS, CLONE_FILES, CLONE_SIGHAND, CLONE_PTRACE, CLONE_VFORK,
    CLONE_PARENT, CLONE_THREAD, CLONE_SYSVSEM, CLONE_SETTLS, CLONE_PARENT_SETTID,
    CLONE_CHILD_CLEARTID, CLONE_UNTRACED, CLONE_CHILD_SETTID, CLONE_IO, CLONE_CLEAR_SIGHAND,
  };
  uint64_t f = 0;
  unsigned mode = below (r, 100);

  if (mode < 10)
    return rnd (r); /* anything (the exit signal's byte is set apart) */
  if (mode < 25) {
    /* What libspawn asks for. */
    f = CLONE_FD_ | CLONE_AUTOREAP_;
    if (chance (r, 50))
      f |= CLONE_VM | CLONE_VFORK;
    if (chance (r, 50))
      f |= CLONE_FD_AUTOKILL_;
    if (chance (r, 30))
      f |= CLONE_INTO_CGROUP; /* a job's child */
    return f;
  }
  for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++)
    if (chance (r, 15))
      f |= legacy[i];
  if (f & CLONE_THREAD && chance (r, 70))
    f |= CLONE_SIGHAND | CLONE_VM;
  if (chance (r, 60))
    f |= CLONE_FD_;
  if (chance (r, 50))
    f |= CLONE_AUTOREAP_;
  if (chance (r, 20))
    f |= CLONE_FD_AUTOKILL_;
  if (chance (r, 15))
    f |= CLONE_INTO_CGROUP;
  if (chance (r, 25))
    f |= 1ULL << below (r, 64); /* anything: a namespace flag, CLONE_PIDFD, an unknown bit */
  if (chance (r, 10))
    f |= NS_FLAGS & (1ULL << (17 + below (r, 15)));
  return f;
}

/* Exit signals: mostly none or SIGCHLD; never SIGKILL or SIGSTOP, which
 * would end or stop the worker (not a kernel bug); above 64 invalid. */
static unsigned
exit_signal_random (struct rng *r)
{
  static const unsigned signals[] = { 0, 0, 0, SIGCHLD, SIGCHLD, SIGUSR1, SIGUSR2, 36, 64, 65, 200 };

  return signals[below (r, sizeof signals / sizeof signals[0])];
}

static uint64_t
pointer (struct worker *w, struct rng *r, enum ptr_kind kind, unsigned char *valid)
{
  switch (kind) {
  case P_VALID: return (uintptr_t) valid;
  case P_UNALIGNED: return (uintptr_t) valid + 1 + below (r, 3);
  case P_NULL: return 0;
  case P_UNMAPPED: return (uintptr_t) w->guard + below (r, PAGE);
  case P_KERNEL: return kernel_addr[below (r, 3)];
  case P_RO: return (uintptr_t) w->ro_page + 8 * below (r, 16);
  case P_STRADDLE: return (uintptr_t) w->guard - 2;
  case P_OVERLAP: break;
  }
  return 0;
}

/* Do the ints at user addresses a and b share a byte? */
static int
ints_overlap (uint64_t a, uint64_t b)
{
  return (a > b ? a - b : b - a) < sizeof (int);
}

static int
pointer_writable (enum ptr_kind kind)
{
  return kind == P_VALID || kind == P_UNALIGNED || kind == P_OVERLAP;
}

static int
errno_allowed (long err, uint64_t flags)
{
  switch (err) {
  case EINVAL: case EFAULT: case E2BIG: case ENOMEM: case EAGAIN:
  case EPERM: case ENOSPC: case EMFILE: case ENFILE: case EBUSY:
    return 1;
  /* cgroup_can_fork(), as for clone3(): not a cgroup v2 directory, a
   * removed one, a thread into another domain, no permission. */
  case EBADF: case ENOENT: case ENODEV: case EOPNOTSUPP: case EACCES:
    return cgroup_field && (flags & CLONE_INTO_CGROUP);
  }
  return 0;
}

enum cg_kind { CG_ZERO, CG_VALID, CG_FD0, CG_BADFD, CG_NOTCG, CG_BIG, CG_RANDOM };

static void
wild_call (struct worker *w, struct rng *r)
{
  struct spawn_clone4_args a = { 0 };
  struct fuzz_clone4_args whole;
  enum cg_kind cg_kind = CG_ZERO;
  uint64_t cg = 0, k_cg = 0;
  uint64_t flags = flags_random (r), uargs;
  unsigned sig = exit_signal_random (r), size, tail_len;
  unsigned char *ptid = w->scratch + 128, *ctid = w->scratch + 192, *slot;
  enum ptr_kind args_kind, fd_kind = P_VALID, ptid_kind, ctid_kind;
  int status = below (r, 256), must_fail = 0, want_errno = 0, tail_dirty = 0;
  int args_readable, fd = -1, overlap_ctid = 0;
  /* Half the calls keep every argument but the flags in bounds, so that
   * more of them get past the checks and into copy_process(). */
  int tame = chance (r, 50);
  long ret;

  if (tame && chance (r, 80))
    sig = chance (r, 50) ? SIGCHLD : 0;
  flags = (flags & ~0xffULL) | sig;

  /* The size: 0, the struct, around it, anything up to 256. */
  switch (tame ? 1 + below (r, 3) : below (r, 6)) {
  case 0: size = 0; break;
  case 1: case 2: size = ARGS_SIZE; break;
  case 3: size = ARGS_SIZE + 8 * (1 + below (r, 8)); break;
  default: size = below (r, 257); break;
  }
  /* The cgroup field's callers mostly pass the VER1 size. */
  if ((flags & CLONE_INTO_CGROUP) && tame && chance (r, 80))
    size = ARGS_SIZE_V1;
  /* The tail dirtied below starts after the cgroup field (bytes 56-63),
   * which has values of its own. */
  tail_len = size > ARGS_SIZE_V1 ? size - ARGS_SIZE_V1 : 0;

  /* Fields. */
  ptid_kind = (enum ptr_kind[]){ P_VALID, P_VALID, P_NULL, P_UNMAPPED, P_KERNEL, P_RO }[below (r, tame ? 2 : 6)];
  ctid_kind = (enum ptr_kind[]){ P_VALID, P_VALID, P_NULL, P_UNMAPPED, P_KERNEL, P_RO }[below (r, tame ? 2 : 6)];
  a.ptid = pointer (w, r, ptid_kind, ptid);
  a.ctid = pointer (w, r, ctid_kind, ctid);
  switch (below (r, tame ? 2 : 4)) {
  case 0: break;
  case 1: a.stack_start = (uintptr_t) w->scratch; a.stack_size = PAGE; break;
  case 2: a.stack_start = rnd (r); a.stack_size = rnd (r) & 0xffff; break;
  case 3: a.stack_start = chance (r, 50) ? (uintptr_t) w->scratch : 0; a.stack_size = a.stack_start ? 0 : PAGE; break;
  }
  a.tls = chance (r, 50) ? (uintptr_t) w->scratch : rnd (r);
  if ((flags & CLONE_FD_) || (!tame && chance (r, 10))) {
    fd_kind = (enum ptr_kind[]){ P_VALID, P_VALID, P_VALID, P_UNALIGNED, P_NULL, P_UNMAPPED,
                                 P_KERNEL, P_RO, P_STRADDLE, P_OVERLAP }[below (r, tame ? 4 : 10)];
    /* P_OVERLAP: on ptid or on ctid, each refused when the flag that
     * writes through it is given. */
    overlap_ctid = chance (r, 50);
    a.clonefd = fd_kind == P_OVERLAP ? (overlap_ctid ? a.ctid : a.ptid) + below (r, 4) -
                                           (chance (r, 50) ? 0 : 3)
                                     : pointer (w, r, fd_kind, w->scratch + 256);
    if (fd_kind == P_OVERLAP && !pointer_writable (overlap_ctid ? ctid_kind : ptid_kind))
      fd_kind = P_UNMAPPED; /* overlapping a bad pointer is just as bad */
    switch (below (r, tame ? 4 : 6)) {
    case 0: a.clonefd_flags = 0; break;
    case 1: a.clonefd_flags = O_CLOEXEC; break;
    case 2: a.clonefd_flags = O_NONBLOCK; break;
    case 3: a.clonefd_flags = O_CLOEXEC | O_NONBLOCK; break;
    case 4: a.clonefd_flags = 1u << below (r, 32); break;
    case 5: a.clonefd_flags = (uint32_t) rnd (r); break;
    }
  }
  if (!tame && chance (r, 8))
    a.pad = 1 + below (r, 1000);
  if ((flags & CLONE_INTO_CGROUP) || (!tame && chance (r, 10))) {
    cg_kind = (enum cg_kind[]){ CG_VALID, CG_VALID, CG_VALID, CG_ZERO, CG_FD0, CG_BADFD,
                                CG_NOTCG, CG_BIG, CG_RANDOM }[below (r, tame ? 3 : 9)];
    switch (cg_kind) {
    case CG_ZERO: case CG_FD0: cg = 0; break;
    case CG_VALID: cg = cgroup_fd >= 0 ? (uint64_t) cgroup_fd : (uint64_t) notcg_fd; break;
    case CG_BADFD: cg = 0x7fffffff; break; /* never open: no race with the chaos threads */
    case CG_NOTCG: cg = (uint64_t) notcg_fd; break;
    case CG_BIG: cg = 0x80000000ULL + below (r, 1000); break;
    case CG_RANDOM: cg = rnd (r); break;
    }
    if (cg_kind == CG_VALID && cgroup_fd < 0)
      cg_kind = CG_NOTCG;
  }
  whole.v0 = a;
  whole.cgroup = cg;

  /* Where the struct goes: in the args page (ending at the guard, maybe
   * unaligned, maybe straddling it), or at a bad address. */
  args_kind = (enum ptr_kind[]){ P_VALID, P_VALID, P_VALID, P_VALID, P_UNALIGNED,
                                 P_NULL, P_UNMAPPED, P_KERNEL, P_STRADDLE, P_RO }[below (r, tame ? 5 : 10)];
  args_readable = args_kind == P_VALID || args_kind == P_UNALIGNED || args_kind == P_RO;
  {
    unsigned char *at;
    size_t room = size ? size : ARGS_SIZE_V1;

    if (args_kind == P_STRADDLE)
      at = w->guard - room + 1 + below (r, room < 8 ? room : 8);
    else if (args_kind == P_RO)
      at = w->ro_page; /* holds a copy of the struct: see below */
    else
      at = w->guard - room - (args_kind == P_UNALIGNED ? 1 + below (r, 7) : 8 * below (r, 4));
    if (args_kind != P_RO) {
      unsigned char *end = at + room > w->guard ? w->guard : at + room;

      memset (w->args_page, 0, PAGE);
      memcpy (at, &whole, (size_t) (end - at) < sizeof whole ? (size_t) (end - at) : sizeof whole);
      if (tail_len && at + size <= w->guard && !tame && chance (r, 60)) {
        at[ARGS_SIZE_V1 + below (r, tail_len)] = 1 + below (r, 255);
        tail_dirty = 1;
      }
    } else {
      if (mprotect (w->ro_page, PAGE, PROT_READ | PROT_WRITE) < 0) {
        worker_fail (w, "mprotect: %s", strerror (errno));
        return;
      }
      memset (w->ro_page, 0, PAGE);
      memcpy (w->ro_page, &whole, sizeof whole);
      mprotect (w->ro_page, PAGE, PROT_READ);
    }
    uargs = args_kind == P_NULL      ? 0
            : args_kind == P_UNMAPPED ? (uintptr_t) w->guard + 64
            : args_kind == P_KERNEL   ? kernel_addr[below (r, 3)]
                                      : (uintptr_t) at;
  }

  /* What the kernel reads of the cgroup field: the bytes of it that the
   * size covers (little-endian), the rest taken as zero. */
  if (size >= ARGS_SIZE_V1)
    k_cg = cg;
  else if (size > ARGS_SIZE)
    k_cg = cg & ((1ULL << (8 * (size - ARGS_SIZE))) - 1);

  /* What the series must refuse, and where the errno is certain. */
  if (size > 0 && size < ARGS_SIZE) {
    must_fail = 1, want_errno = EINVAL;
  } else if (size > 0 && !args_readable) {
    /* A kernel without the cgroup field checks bytes 56 on for zero
     * before it copies the rest: a straddling struct whose cgroup bytes
     * are readable and not zero is E2BIG there, not EFAULT. */
    must_fail = 1;
    want_errno = !cgroup_field && cg && args_kind == P_STRADDLE ? 0 : EFAULT;
  } else if (tail_dirty || (!cgroup_field && k_cg)) {
    /* Without the field, its bytes are an unknown tail too. */
    must_fail = 1, want_errno = E2BIG;
  } else {
    struct spawn_clone4_args k = size ? a : (struct spawn_clone4_args){ 0 };
    uint64_t f = flags & ~0xffULL;
    uint64_t child_tid = CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;

    if (!size)
      fd_kind = P_NULL; /* no struct: the kernel sees clonefd = 0 */
    uint64_t valid = VALID_FLAGS | (cgroup_field ? CLONE_INTO_CGROUP : 0);

    if (!size)
      k_cg = 0;
    must_fail = k.pad || (!(f & CLONE_FD_) && (k.clonefd || k.clonefd_flags)) ||
                (f & ~valid) || sig > 64 ||
                /* The cgroup field: only with the flag, room for it, an int;
                 * a descriptor that is never open or no cgroup is EBADF. */
                (!(f & CLONE_INTO_CGROUP) && k_cg) ||
                ((f & CLONE_INTO_CGROUP) && (size < ARGS_SIZE_V1 || k_cg > 0x7fffffff)) ||
                ((f & CLONE_INTO_CGROUP) && (cg_kind == CG_BADFD || cg_kind == CG_NOTCG)) ||
                ((f & (CLONE_THREAD | CLONE_PARENT)) && sig) ||
                ((f & (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND)) == (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND)) ||
                (!k.stack_start != !k.stack_size) ||
                ((f & CLONE_AUTOREAP_) && ((f & (CLONE_THREAD | CLONE_PARENT)) || sig)) ||
                ((f & CLONE_FD_) && (f & (CLONE_THREAD | CLONE_PARENT))) ||
                ((f & CLONE_FD_AUTOKILL_) && (~f & (CLONE_FD_ | CLONE_AUTOREAP_))) ||
                /* The child would hold its own clone fd. */
                ((f & CLONE_FD_AUTOKILL_) && (f & CLONE_FILES)) ||
                ((f & CLONE_FD_) && (k.clonefd_flags & ~(O_CLOEXEC | O_NONBLOCK))) ||
                ((f & CLONE_FD_) && !pointer_writable (fd_kind)) ||
                /* No int the kernel stores may share a byte with another,
                 * but ptid and ctid may be the same address. */
                ((f & CLONE_FD_) && (f & CLONE_PARENT_SETTID) && ints_overlap (k.clonefd, k.ptid)) ||
                ((f & CLONE_FD_) && (f & child_tid) && ints_overlap (k.clonefd, k.ctid)) ||
                ((f & CLONE_PARENT_SETTID) && (f & child_tid) && k.ptid != k.ctid &&
                 ints_overlap (k.ptid, k.ctid));
  }

  slot = fd_kind == P_VALID || fd_kind == P_UNALIGNED || fd_kind == P_OVERLAP
             ? (unsigned char *) (uintptr_t) a.clonefd
             : NULL;
  if (slot)
    memcpy (slot, &(int){ -1 }, sizeof (int));
  if (pointer_writable (ptid_kind))
    memcpy (ptid, &(int){ 0 }, sizeof (int));

  w->wild++;
  ret = clone4_exiting_child (flags, size, uargs, status);
  if (ret < 0) {
    long err = -ret;

    w->refused++;
    w->by_errno[err < 134 ? err : 0]++;
    if (!errno_allowed (err, flags))
      worker_fail (w, "flags %#llx size %u: errno %ld (%s), not one clone4 returns",
                   (unsigned long long) flags, size, err, strerror ((int) err));
    else if (want_errno && err != want_errno)
      worker_fail (w, "flags %#llx size %u args kind %d: %s, wanted %s",
                   (unsigned long long) flags, size, args_kind, strerror ((int) err),
                   strerror (want_errno));
    return;
  }

  w->created++;
  if (flags & CLONE_INTO_CGROUP)
    w->into_cgroup++;
  if (must_fail) {
    worker_fail (w, "flags %#llx size %u args kind %d clonefd kind %d flags %#x pad %u "
                 "cgroup kind %d value %#llx: created process %ld, must be refused",
                 (unsigned long long) flags, size, args_kind, fd_kind, a.clonefd_flags, a.pad,
                 cg_kind, (unsigned long long) cg, ret);
    return;
  }
  /* (Without a struct the kernel's ptid is NULL.) */
  if ((flags & CLONE_PARENT_SETTID) && size >= ARGS_SIZE && pointer_writable (ptid_kind)) {
    int stored;

    memcpy (&stored, ptid, sizeof stored);
    if (stored != ret)
      worker_fail (w, "CLONE_PARENT_SETTID stored %d, the child is %ld", stored, ret);
  }
  if (flags & CLONE_FD_) {
    struct spawn_clonefd_info info;
    char why[200];
    int fdflags, flflags;

    memcpy (&fd, slot, sizeof fd);
    fdflags = fcntl (fd, F_GETFD);
    flflags = fcntl (fd, F_GETFL);
    if (fdflags < 0 || flflags < 0) {
      worker_fail (w, "CLONE_FD call made %ld but *clonefd = %d is no descriptor", ret, fd);
      return;
    }
    if (!!(fdflags & FD_CLOEXEC) != !!(a.clonefd_flags & O_CLOEXEC) ||
        !!(flflags & O_NONBLOCK) != !!(a.clonefd_flags & O_NONBLOCK))
      worker_fail (w, "clone fd flags FD %#x FL %#x, asked %#x", fdflags, flflags, a.clonefd_flags);
    if (chance (r, 50)) {
      pool_put (w, fd); /* read while it may still be running */
      fd = -1;
    } else if (await_report (fd, &info, why, sizeof why) < 0) {
      worker_fail (w, "wild child %ld (flags %#llx): %s", ret, (unsigned long long) flags, why);
    } else if (!report_is (&info, 1, status)) {
      worker_fail (w, "wild child %ld: report %u/%u, wanted exit %d", ret, info.code, info.status, status);
    }
  }
  /* Our own child unless autoreaped, a thread, or our parent's. */
  if (!(flags & (CLONE_AUTOREAP_ | CLONE_THREAD | CLONE_PARENT))) {
    int st;
    pid_t got;

    while ((got = waitpid (ret, &st, __WALL)) < 0 && errno == EINTR)
      ;
    if (got != ret)
      worker_fail (w, "waitpid(%ld): %s", ret, strerror (errno));
    else if (!WIFEXITED (st) || WEXITSTATUS (st) != status)
      worker_fail (w, "wild child %ld: wait status %#x, wanted exit %d", ret, st, status);
  }
  if (fd >= 0)
    pool_put (w, fd);
}

/* ---- behaviour calls ---- */

enum behaviour { B_EXIT, B_EXEC, B_THREADS, B_FORK, B_SIGNAL, B_STOPCONT, B_PTRACE, B_N };
static const char *const behaviour_name[] = { "exit", "exec", "threads", "fork",
                                              "signal", "stop/continue", "ptrace" };
static const char *self_exe = "/proc/self/exe";

/* In the child of a raw clone4() of a threaded process: system calls only,
 * no libc state (its locks may be held by threads that are not here). */
static void __attribute__ ((noreturn))
child_run (enum behaviour b, int status, char *const *argv)
{
  static const sigset_t none;

  switch (b) {
  case B_EXIT:
    syscall (SYS_exit_group, status);
    break;
  case B_EXEC:
  case B_THREADS:
  case B_FORK:
    syscall (SYS_execve, self_exe, argv, (char *const[]){ NULL });
    syscall (SYS_exit_group, 127);
    break;
  default:
    /* Wait to be signalled, stopped, traced; give up after a minute. */
    syscall (SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
    for (int i = 0; i < 60; i++) {
      struct timespec ts = { 1, 0 };

      syscall (SYS_nanosleep, &ts, NULL);
    }
    syscall (SYS_exit_group, 99);
  }
  for (;;)
    ;
}

static void
behaviour_call (struct worker *w, struct rng *r)
{
  enum behaviour b = below (r, B_N);
  struct spawn_clone4_args a = { 0 };
  struct spawn_clonefd_info info;
  int slot = -1, status = below (r, 256), want_exit = 1, want = status, reaped = 0, sig = 0;
  uint64_t flags = CLONE_FD_;
  char st_arg[16], why[200];
  char *argv[] = { (char *) "clone4-fuzz", (char *) "--child", (char *) "exit", st_arg, NULL };
  long pid;

  switch (below (r, 3)) {
  case 0:
    flags |= CLONE_AUTOREAP_;
    /* We hold the clone fd until the report: nothing may change. */
    if (chance (r, 50)) {
      flags |= CLONE_FD_AUTOKILL_;
    }
    break;
  case 1: flags |= SIGCHLD; break;
  case 2: break; /* exit signal 0: only __WALL sees it */
  }
  /* CLONE_VFORK only where the child ends or execs on its own. */
  if (b <= B_FORK && chance (r, 25))
    flags |= CLONE_VFORK;
  a.clonefd = (uintptr_t) &slot;
  a.clonefd_flags = (uint32_t[]){ 0, O_CLOEXEC, O_NONBLOCK, O_CLOEXEC | O_NONBLOCK }[below (r, 4)];
  snprintf (st_arg, sizeof st_arg, "%d", status);
  if (b == B_THREADS)
    argv[2] = (char *) "threads";
  else if (b == B_FORK)
    argv[2] = (char *) "fork";

  pid = syscall (NR_CLONE4, (unsigned) (flags >> 32), (unsigned) flags, (unsigned long) ARGS_SIZE, &a);
  if (pid == 0)
    child_run (b, status, argv);
  if (pid < 0) {
    if (errno != EAGAIN && errno != ENOMEM)
      worker_fail (w, "valid clone4(%#llx) for %s: %s", (unsigned long long) flags,
                   behaviour_name[b], strerror (errno));
    return;
  }
  if (slot < 0) {
    worker_fail (w, "clone4 made %ld but stored no clone fd", pid);
    return;
  }
  w->created++;
  w->behaviours[b]++;
  if (flags & CLONE_FD_AUTOKILL_)
    w->autokill_flag++;
  if (b >= B_SIGNAL)
    sleep_ms (below (r, 4));
  switch (b) {
  case B_SIGNAL:
    sig = (int[]){ SIGKILL, SIGTERM, SIGSEGV, SIGABRT, SIGUSR1, SIGHUP }[below (r, 6)];
    break;
  case B_STOPCONT:
    sig = SIGKILL;
    for (int i = 0; i < 3; i++) {
      syscall (SYS_pidfd_send_signal, slot, SIGSTOP, NULL, 0);
      sleep_ms (below (r, 3));
      syscall (SYS_pidfd_send_signal, slot, SIGCONT, NULL, 0);
    }
    if (chance (r, 50))
      syscall (SYS_pidfd_send_signal, slot, SIGSTOP, NULL, 0); /* killed while stopped */
    break;
  case B_PTRACE: {
    int st;

    sig = SIGKILL;
    if (ptrace (PTRACE_SEIZE, pid, 0, 0) < 0) {
      worker_fail (w, "PTRACE_SEIZE of our child %ld: %s", pid, strerror (errno));
      break;
    }
    if (ptrace (PTRACE_INTERRUPT, pid, 0, 0) < 0 || waitpid (pid, &st, __WALL) != pid ||
        !WIFSTOPPED (st)) {
      worker_fail (w, "PTRACE_INTERRUPT / waitpid of tracee %ld: %s", pid, strerror (errno));
      break;
    }
    if (chance (r, 50)) {
      ptrace (PTRACE_DETACH, pid, 0, 0);
    } else {
      /* Killed while we trace it: as tracer we see its end first. */
      syscall (SYS_pidfd_send_signal, slot, SIGKILL, NULL, 0);
      if (waitpid (pid, &st, __WALL) != pid || !WIFSIGNALED (st))
        worker_fail (w, "tracee %ld: waitpid after SIGKILL: %s (status %#x)", pid,
                     strerror (errno), st);
      reaped = !(flags & CLONE_AUTOREAP_);
      sig = 0;
    }
    break;
  }
  default:
    break;
  }
  if (sig && syscall (SYS_pidfd_send_signal, slot, sig, NULL, 0) < 0)
    worker_fail (w, "pidfd_send_signal(clone fd, %d) to %ld: %s", sig, pid, strerror (errno));
  if (b >= B_SIGNAL)
    want_exit = 0, want = b == B_SIGNAL ? sig : SIGKILL;

  if (await_report (slot, &info, why, sizeof why) < 0) {
    worker_fail (w, "%s child %ld: %s", behaviour_name[b], pid, why);
    kill (pid, SIGKILL);
  } else if (!report_is (&info, want_exit, want)) {
    worker_fail (w, "%s child %ld: report code %u status %u, wanted %s %d", behaviour_name[b],
                 pid, info.code, info.status, want_exit ? "exit" : "signal", want);
  } else {
    /* read() gives the same once, then end of file. */
    struct spawn_clonefd_info again;
    ssize_t n1 = read (slot, &again, sizeof again), n2 = read (slot, &again, sizeof again);

    if (n1 != (ssize_t) sizeof again || n2 != 0 || again.code != info.code)
      worker_fail (w, "%s child %ld: reads returned %zd then %zd", behaviour_name[b], pid, n1, n2);
  }
  if (!(flags & CLONE_AUTOREAP_) && !reaped) {
    int st;

    if (waitpid (pid, &st, __WALL) != pid)
      worker_fail (w, "waitpid(%ld) of a %s child: %s", pid, behaviour_name[b], strerror (errno));
  }
  pool_put (w, slot);
}

/* ---- autokill calls ---- */

/* Is @pidfd readable within @ms?  (The process has exited.) */
static int
pidfd_exited (int pidfd, int ms)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  int n;

  while ((n = poll (&p, 1, ms)) < 0 && errno == EINTR)
    ;
  return n == 1;
}

/* A CLONE_FD_AUTOKILL child that would wait a minute: it runs while any
 * copy of its clone fd exists (dup'ed, or in flight in an SCM_RIGHTS
 * message on a private socket pair) and dies once the last one is gone.
 * Nothing else signals it.  A chaos thread's forked reader may hold a copy
 * for a moment, which only delays the kill. */
static void
autokill_call (struct worker *w, struct rng *r)
{
  struct spawn_clone4_args a = { 0 };
  uint64_t flags = CLONE_FD_ | CLONE_AUTOREAP_ | CLONE_FD_AUTOKILL_;
  int slot = -1, pidfd, copies[4], n = 0, sv[2] = { -1, -1 };
  long pid;

  a.clonefd = (uintptr_t) &slot;
  a.clonefd_flags = (uint32_t[]){ 0, O_CLOEXEC, O_NONBLOCK, O_CLOEXEC | O_NONBLOCK }[below (r, 4)];
  pid = syscall (NR_CLONE4, (unsigned) (flags >> 32), (unsigned) flags, (unsigned long) ARGS_SIZE, &a);
  if (pid == 0)
    child_run (B_SIGNAL, 0, NULL);
  if (pid < 0) {
    if (errno != EAGAIN && errno != ENOMEM)
      worker_fail (w, "valid clone4(%#llx) for autokill: %s", (unsigned long long) flags,
                   strerror (errno));
    return;
  }
  w->created++;
  w->autokills++;
  pidfd = syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    worker_fail (w, "pidfd_open(%ld) of a running autokill child: %s", pid, strerror (errno));
    close (slot);
    return;
  }
  copies[n++] = slot;
  for (int i = below (r, 3); i > 0; i--) {
    int copy = chance (r, 50) ? dup (slot) : fcntl (slot, F_DUPFD_CLOEXEC, 3 + below (r, 100));

    if (copy >= 0)
      copies[n++] = copy;
  }
  /* Shuffle the order of the closes. */
  for (int i = n - 1; i > 0; i--) {
    int j = below (r, i + 1), t = copies[i];

    copies[i] = copies[j];
    copies[j] = t;
  }
  if (chance (r, 40) && socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0) {
    char byte = 'x', cbuf[CMSG_SPACE (sizeof (int))] = { 0 };
    struct iovec iov = { &byte, 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = sizeof cbuf };
    struct cmsghdr *c = CMSG_FIRSTHDR (&m);

    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN (sizeof (int));
    memcpy (CMSG_DATA (c), &slot, sizeof slot);
    if (sendmsg (sv[0], &m, MSG_DONTWAIT) != 1) {
      close (sv[0]);
      close (sv[1]);
      sv[0] = sv[1] = -1;
    }
  }
  for (int i = 0; i < n; i++) {
    if (pidfd_exited (pidfd, 0)) {
      worker_fail (w, "autokill child %ld died with %d of its %d clone fds still open%s", pid,
                   n - i, n, sv[0] >= 0 ? " and one in flight" : "");
      break;
    }
    close (copies[i]);
  }
  if (sv[0] >= 0) {
    if (!w->failure[0] && pidfd_exited (pidfd, 0))
      worker_fail (w, "autokill child %ld died with its clone fd in flight", pid);
    close (sv[0]);
    close (sv[1]); /* purges the message, and the file with it */
  }
  if (!w->failure[0] && !pidfd_exited (pidfd, REPORT_TIMEOUT_MS)) {
    worker_fail (w, "autokill child %ld still running %d ms after its last clone fd closed", pid,
                 REPORT_TIMEOUT_MS);
    kill (pid, SIGKILL);
  }
  close (pidfd);
}

/* ---- the chaos threads ---- */

static void
pass_fd (struct worker *w, struct rng *r, int fd)
{
  char byte = 'x', cbuf[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { &byte, 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                      .msg_controllen = sizeof cbuf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&m);
  int got = -1, lost = 0;

  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &fd, sizeof fd);
  pthread_mutex_lock (&w->lock); /* one message in flight at a time per thread pair */
  if (sendmsg (w->sock[0], &m, MSG_DONTWAIT) == 1) {
    atomic_fetch_add (&w->passed_fds, 1);
    close (fd); /* the copy in flight holds the file */
    fd = -1;
    if (chance (r, 90)) {
      memset (cbuf, 0, sizeof cbuf);
      m.msg_controllen = sizeof cbuf;
      errno = 0;
      if (recvmsg (w->sock[1], &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) == 1 &&
          (c = CMSG_FIRSTHDR (&m)) && c->cmsg_type == SCM_RIGHTS)
        memcpy (&got, CMSG_DATA (c), sizeof got);
      else
        lost = errno ? errno : EBADMSG;
    }
    /* else it stays in flight until the sockets close */
  }
  pthread_mutex_unlock (&w->lock);
  if (lost)
    worker_fail (w, "SCM_RIGHTS: sent a clone fd, received none: %s", strerror (lost));
  if (fd >= 0)
    close (fd);
  if (got >= 0)
    pool_put (w, got);
}

/* A forked process reads the report off the shared open file description;
 * the ioctl must still give it to us afterwards. */
static void
forked_read (struct worker *w, int fd)
{
  struct spawn_clonefd_info before, after;
  pid_t pid;
  int st;

  if (ioctl (fd, SPAWN_CLONEFD_GET_INFO, &before) < 0)
    return; /* still running, or a wild fd: nothing to compare */
  pid = fork ();
  if (pid == 0) {
    struct spawn_clonefd_info x;

    _exit (read (fd, &x, sizeof x) < 0 ? 1 : 0);
  }
  if (pid < 0)
    return;
  atomic_fetch_add (&w->forked_reads, 1);
  waitpid (pid, &st, 0);
  if (ioctl (fd, SPAWN_CLONEFD_GET_INFO, &after) < 0)
    worker_fail (w, "CLONEFD_GET_INFO after a forked reader: %s", strerror (errno));
  else if (after.code != before.code || after.status != before.status)
    worker_fail (w, "CLONEFD_GET_INFO changed after a forked reader: %u/%u then %u/%u",
                 before.code, before.status, after.code, after.status);
}

struct chaos_arg {
  struct worker *w;
  uint64_t seed;
};

static void *
chaos_thread (void *p)
{
  struct chaos_arg *ca = p;
  struct worker *w = ca->w;
  struct rng r = { ca->seed };

  while (!atomic_load (&w->stop)) {
    int fd = pool_take (w, &r), keep = 1;
    unsigned char buf[64];
    /* Unwritable, or straddling into a read-only page. Neither the args
     * page, where a partial copy would dirty the tail of the next call's
     * struct, nor ro_page, which the calling thread makes writable for a
     * moment to put a struct there: a report read into it then was the
     * struct the kernel read (its ptid the report's code and status, so
     * CLONE_PARENT_SETTID wrote nowhere: found on two CPUs). */
    void *bad[] = { NULL, w->guard, w->ro_bad, (void *) (uintptr_t) kernel_addr[0], w->ro_bad - 3 };
    ssize_t n;

    if (fd < 0) {
      sleep_ms (1);
      continue;
    }
    atomic_fetch_add (&w->chaos_ops, 1);
    switch (below (&r, 10)) {
    case 0: /* a read of any size, possibly of a running child (O_NONBLOCK or not) */
      if (fcntl (fd, F_GETFL) & O_NONBLOCK || poll (&(struct pollfd){ fd, POLLIN, 0 }, 1, 0) == 1) {
        n = read (fd, buf, (size_t[]){ 0, 1, 7, 8, 23, 24, 64 }[below (&r, 7)]);
        if (n < 0 && errno != EAGAIN)
          worker_fail (w, "read of a clone fd: %s", strerror (errno));
      }
      break;
    case 1: /* a read into memory we may not write */
      if (poll (&(struct pollfd){ fd, POLLIN, 0 }, 1, 0) == 1) {
        void *into = bad[below (&r, 5)];

        n = read (fd, into, 24);
        if (n < 0 && errno != EFAULT)
          worker_fail (w, "read of a clone fd into a bad buffer: %s, wanted EFAULT", strerror (errno));
        else if (n > 0) /* (0: end of file, nothing copied) */
          worker_fail (w, "read of a clone fd into unwritable %p gave %zd, wanted EFAULT", into, n);
      }
      break;
    case 2: /* the ioctl, into good and bad memory */
      if (ioctl (fd, SPAWN_CLONEFD_GET_INFO, chance (&r, 70) ? (void *) buf : bad[below (&r, 5)]) < 0 &&
          errno != EAGAIN && errno != EFAULT)
        worker_fail (w, "CLONEFD_GET_INFO: %s", strerror (errno));
      break;
    case 3: /* readable means the ioctl answers */
      if (poll (&(struct pollfd){ fd, POLLIN, 0 }, 1, 0) == 1 &&
          ioctl (fd, SPAWN_CLONEFD_GET_INFO, buf) < 0)
        worker_fail (w, "clone fd readable, CLONEFD_GET_INFO: %s", strerror (errno));
      break;
    case 4: {
      struct epoll_event ev = { .events = EPOLLIN | (chance (&r, 50) ? EPOLLET : 0) };

      if (epoll_ctl (w->epfd, EPOLL_CTL_ADD, fd, &ev) == 0) {
        epoll_wait (w->epfd, &ev, 1, 0);
        if (chance (&r, 50))
          epoll_ctl (w->epfd, EPOLL_CTL_DEL, fd, NULL);
        /* else closing the fd takes it out of the epoll set */
      }
      break;
    }
    case 5: {
      int copy = chance (&r, 50) ? dup (fd) : fcntl (fd, F_DUPFD_CLOEXEC, 3 + below (&r, 100));

      if (copy >= 0)
        pool_put (w, copy);
      break;
    }
    case 6:
      pass_fd (w, &r, fd);
      keep = 0;
      fd = -1;
      break;
    case 7:
      forked_read (w, fd);
      break;
    case 8: /* signal 0: alive, a zombie, or gone */
      if (syscall (SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0 && errno != ESRCH)
        worker_fail (w, "pidfd_send_signal(clone fd, 0): %s", strerror (errno));
      break;
    case 9:
      keep = 0;
      break;
    }
    if (fd >= 0) {
      if (keep && chance (&r, 70))
        pool_put (w, fd);
      else
        close (fd);
    }
  }
  return NULL;
}

/* ---- a worker process ---- */

static int
worker_main (struct worker *w)
{
  struct rng r = { w->seed };
  struct chaos_arg ca[2];
  pthread_t chaos[2];
  sigset_t all;
  int fds_before, left = -1;
  unsigned char *pages;

  /* Exit signals of wild children (SIGUSR1, SIGRTMIN+2...) and anything
   * else catchable stay pending: no handler ever runs on a stack a
   * CLONE_VM child shares. */
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, NULL);

  pages = mmap (NULL, 5 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED)
    return printf ("not ok %d worker %d: mmap: %s\n", w->index + 1, w->index, strerror (errno)), 1;
  w->args_page = pages;
  w->guard = pages + PAGE;
  w->scratch = pages + 2 * PAGE;
  w->ro_bad = pages + 3 * PAGE; /* right after scratch: ro_bad - 3 straddles */
  w->ro_page = pages + 4 * PAGE;
  mprotect (w->guard, PAGE, PROT_NONE);
  mprotect (w->ro_bad, 2 * PAGE, PROT_READ); /* ro_bad and ro_page */
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, w->sock) < 0 ||
      (w->epfd = epoll_create1 (EPOLL_CLOEXEC)) < 0)
    return printf ("not ok %d worker %d: socketpair/epoll: %s\n", w->index + 1, w->index,
                   strerror (errno)), 1;
  pthread_mutex_init (&w->lock, NULL);
  fds_before = proc_count_fds ();

  for (int i = 0; i < 2; i++) {
    ca[i] = (struct chaos_arg){ w, w->seed ^ (0x9E3779B97F4A7C15ULL * (i + 1)) };
    pthread_create (&chaos[i], NULL, chaos_thread, &ca[i]);
  }
  while (!atomic_load (&w->stop) && (w->count == 0 || w->calls < w->count) && now () < w->deadline) {
    w->calls++;
    if (chance (&r, 70))
      wild_call (w, &r);
    else if (chance (&r, 85))
      behaviour_call (w, &r);
    else
      autokill_call (w, &r);
  }
  atomic_store (&w->stop, 1);
  for (int i = 0; i < 2; i++)
    pthread_join (chaos[i], NULL);

  /* Nothing of ours may be left: the pool and the sockets (with the fds
   * in flight) closed, the descriptor table must be as it was. */
  for (int i = 0; i < w->pool_len; i++)
    close (w->pool[i]);
  w->pool_len = 0;
  close (w->sock[0]);
  close (w->sock[1]);
  close (w->epfd);
  if (!w->failure[0] && proc_count_fds () != fds_before - 3)
    worker_fail (w, "%d descriptors left, %d expected: a clone fd leaked", proc_count_fds (),
                 fds_before - 3);
  /* Autoreaped children go by themselves; give the slow guest time. */
  for (int i = 0; i < 1000 && (left = proc_count_children_of (getpid ())) > 0; i++)
    sleep_ms (10);
  if (!w->failure[0] && left != 0)
    worker_fail (w, "%d children or zombies left 10 s after the last call", left);

  /* A worker that made no process (a slow guest, a deadline already past,
   * every call refused) checked nothing: that is a failure, not a pass. */
  if (!w->failure[0] && w->created == 0)
    worker_fail (w, "made no process in %ld calls: nothing was checked", w->calls);

  printf ("# worker %d: %ld calls: %ld wild (%ld refused:", w->index, w->calls, w->wild,
          w->refused);
  for (int e = 0; e < 134; e++)
    if (w->by_errno[e])
      printf (" %s %ld", e ? strerrorname_np (e) : "other", w->by_errno[e]);
  /* Children made, not calls tried (EAGAIN and ENOMEM are tolerated). */
  printf ("), %ld processes made (%ld with CLONE_INTO_CGROUP); behaviour children:", w->created,
          w->into_cgroup);
  for (int b = 0; b < B_N; b++)
    printf (" %s %ld", behaviour_name[b], w->behaviours[b]);
  printf (" (%ld with CLONE_FD_AUTOKILL); autokill children %ld", w->autokill_flag, w->autokills);
  printf ("; chaos ops %ld (%ld fds passed, %ld forked reads)\n", atomic_load (&w->chaos_ops),
          atomic_load (&w->passed_fds), atomic_load (&w->forked_reads));
  if (w->failure[0]) {
    printf ("not ok %d worker %d: %s\n", w->index + 1, w->index, w->failure);
    return 1;
  }
  printf ("ok %d worker %d: %ld calls, every check held\n", w->index + 1, w->index, w->calls);
  return 0;
}

/* ---- what the children exec ---- */

static void *
idle_thread (void *p)
{
  (void) p;
  while (pause () < 0)
    ;
  return NULL;
}

static void *
child_thread (void *p)
{
  int status = (int) (intptr_t) p;

  sleep_ms (20);
  _exit (status); /* exit_group from a thread, after the leader has gone */
}

static int
child_main (const char *what, int status)
{
  if (!strcmp (what, "threads")) {
    pthread_t t;

    for (int i = 0; i < 3; i++)
      pthread_create (&t, NULL, i == 0 ? child_thread : idle_thread, (void *) (intptr_t) status);
    syscall (SYS_exit, 0); /* the leader exits first */
  } else if (!strcmp (what, "fork")) {
    pid_t pid = fork ();

    if (pid == 0) {
      sleep_ms (20);
      _exit (0); /* an orphan: reparented to the run's subreaper */
    }
  }
  _exit (status);
}

/* ---- the run ---- */

/* The cgroup v2 mount point, from /proc/self/mountinfo; 0 if none. */
static int
cgroup2_dir (char *dir, size_t len)
{
  char line[1024], mpoint[512], fstype[64];
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  int found = 0;

  if (!f)
    return 0;
  while (!found && fgets (line, sizeof line, f)) {
    char *sep = strstr (line, " - ");

    if (sep && sscanf (line, "%*d %*d %*s %*s %511s", mpoint) == 1 &&
        sscanf (sep + 3, "%63s", fstype) == 1 && strcmp (fstype, "cgroup2") == 0) {
      snprintf (dir, len, "%s", mpoint);
      found = 1;
    }
  }
  fclose (f);
  return found;
}

/* Learns whether the kernel has the cgroup field and makes the run's
 * cgroup in PATH; says what it found.  -1: the probe went wrong. */
static int
setup_cgroup (char *path, size_t len)
{
  struct fuzz_clone4_args probe = { .cgroup = 1 };
  char mnt[512];
  long ret;

  path[0] = '\0';
  notcg_fd = open ("/", O_PATH | O_CLOEXEC);
  /* A nonzero cgroup without the flag: EINVAL where the field exists,
   * E2BIG where it does not; never a child. */
  ret = clone4_exiting_child (SIGCHLD, ARGS_SIZE_V1, (uintptr_t) &probe, 0);
  if (ret > 0) {
    waitpid (ret, NULL, __WALL);
    printf ("Bail out! a cgroup without CLONE_INTO_CGROUP made process %ld\n", ret);
    return -1;
  }
  if (ret != -EINVAL && ret != -E2BIG) {
    printf ("Bail out! probing the cgroup field: %s\n", strerror ((int) -ret));
    return -1;
  }
  cgroup_field = ret == -EINVAL;
  if (!cgroup_field) {
    printf ("# no cgroup field in struct clone4_args (E2BIG): CLONE_INTO_CGROUP must be refused\n");
    return 0;
  }
  if (!cgroup2_dir (mnt, sizeof mnt) ||
      snprintf (path, len, "%s/clone4-fuzz.%d", mnt, (int) getpid ()) >= (int) len ||
      mkdir (path, 0755) < 0) {
    printf ("# cgroup field, but no cgroup2 to make a cgroup in: CLONE_INTO_CGROUP only with "
            "descriptors that are no cgroup\n");
    path[0] = '\0';
    return 0;
  }
  cgroup_fd = open (path, O_DIRECTORY | O_CLOEXEC);
  printf ("# cgroup field; children go into %s\n", path);
  return 0;
}

/* At the end: nobody left in the run's cgroup, and it can be removed. */
static int
check_cgroup (const char *path, int n)
{
  char procs[600], buf[64];
  ssize_t got = -1;
  int fd;

  snprintf (procs, sizeof procs, "%s/cgroup.procs", path);
  fd = open (procs, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    got = read (fd, buf, sizeof buf - 1);
    close (fd);
  }
  if (got != 0) {
    printf ("not ok %d cgroup: %s not empty at the end\n", n, procs);
    return 1;
  }
  if (rmdir (path) < 0) {
    printf ("not ok %d cgroup: rmdir %s: %s\n", n, path, strerror (errno));
    return 1;
  }
  printf ("ok %d cgroup: empty at the end, removed\n", n);
  return 0;
}

static int
skip_all (const char *why)
{
  printf ("ok 1 clone4-fuzz # SKIP %s\n1..1\n", why);
  return 0;
}

static void
usage (void)
{
  fprintf (stderr, "usage: clone4-fuzz [--seed N] [--count N] [--seconds N] [--workers N]\n");
  exit (2);
}

int
main (int argc, char **argv)
{
  uint64_t seed = 0;
  long count = 3000, seconds = 60;
  int workers = 2, failed = 0, left = -1, probe_fd = -1, tap_total;
  char cgroup_path[512];
  struct spawn_clone4_args probe = { 0 };
  double start, deadline;
  pid_t *pids;
  long ret;

  if (argc == 4 && !strcmp (argv[1], "--child"))
    return child_main (argv[2], atoi (argv[3]));
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc)
      usage ();
    if (!strcmp (argv[i], "--seed"))
      seed = strtoull (argv[++i], NULL, 0);
    else if (!strcmp (argv[i], "--count"))
      count = atol (argv[++i]);
    else if (!strcmp (argv[i], "--seconds"))
      seconds = atol (argv[++i]);
    else if (!strcmp (argv[i], "--workers"))
      workers = atoi (argv[++i]);
    else
      usage ();
  }
  if (workers < 1 || workers > 16 || seconds < 1 || count < 0)
    usage ();
  if (!seed)
    seed = ((uint64_t) time (NULL) << 20) ^ (uint64_t) getpid () ^ 0x5DEECE66DULL;
  setvbuf (stdout, NULL, _IOLBF, 0);

  /* Every bit set: EINVAL from a kernel with clone4, creating nothing. */
  ret = syscall (NR_CLONE4, ~0u, ~0u, 0UL, NULL);
  if (ret == 0)
    _exit (0);
  if (ret > 0)
    return printf ("Bail out! clone4 with every flag created process %ld\n", ret), 1;
  if (errno == ENOSYS || errno == EPERM)
    return skip_all ("no clone4 in this kernel (ENOSYS or a seccomp EPERM)");
  probe.clonefd = (uintptr_t) &probe_fd;
  ret = clone4_exiting_child (CLONE_FD_ | CLONE_AUTOREAP_, ARGS_SIZE, (uintptr_t) &probe, 0);
  if (ret == -EINVAL)
    return skip_all ("clone4 without CLONE_FD (CONFIG_CLONEFD off): the fuzzer needs clone fds");
  if (ret < 0)
    return printf ("Bail out! clone4(CLONE_FD|CLONE_AUTOREAP): %s\n", strerror ((int) -ret)), 1;
  close (probe_fd);
  if (setup_cgroup (cgroup_path, sizeof cgroup_path) < 0)
    return 1;

  printf ("# seed %llu (rerun: clone4-fuzz --seed %llu --count %ld --seconds %ld --workers %d)\n",
          (unsigned long long) seed, (unsigned long long) seed, count, seconds, workers);
  /* Orphans (a forking child's child, a CLONE_PARENT child of a worker)
   * come to us, not to init, so that we can tell whether any is left. */
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    return printf ("Bail out! PR_SET_CHILD_SUBREAPER: %s\n", strerror (errno)), 1;
  setrlimit (RLIMIT_CORE, &(struct rlimit){ 0, 0 });
  {
    sigset_t all;

    sigfillset (&all);
    sigprocmask (SIG_BLOCK, &all, NULL); /* the workers' exit signals, CLONE_PARENT ones */
  }

  start = now ();
  deadline = start + seconds;
  pids = calloc (workers, sizeof *pids);
  for (int i = 0; i < workers; i++) {
    struct worker *w = calloc (1, sizeof *w);

    w->index = i;
    w->seed = seed * (i + 1) + 0x632BE59BD9B4E019ULL;
    w->count = count ? (count + workers - 1) / workers : 0;
    w->deadline = deadline;
    fflush (stdout);
    if ((pids[i] = fork ()) == 0)
      _exit (worker_main (w));
    free (w);
    if (pids[i] < 0)
      return printf ("Bail out! fork: %s\n", strerror (errno)), 1;
  }

  /* Reap everything: workers, and whatever is reparented to us.  A worker
   * still there two minutes after the deadline is hung in the kernel or
   * in a check: kill it and fail. */
  for (int running = workers; running > 0;) {
    int st;
    pid_t got = waitpid (-1, &st, __WALL | WNOHANG);

    if (got == 0) {
      if (now () > deadline + 120) {
        for (int i = 0; i < workers; i++)
          if (pids[i] > 0) {
            printf ("not ok %d worker %d: still running 120 s after the deadline: killed\n", i + 1, i);
            kill (pids[i], SIGKILL);
            failed++;
          }
      }
      sleep_ms (10);
      continue;
    }
    if (got < 0)
      break;
    for (int i = 0; i < workers; i++)
      if (pids[i] == got) {
        pids[i] = 0;
        running--;
        if (WIFSIGNALED (st) && WTERMSIG (st) != SIGKILL)
          printf ("not ok %d worker %d: killed by signal %d\n", i + 1, i, WTERMSIG (st));
        if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
          failed++;
      }
  }
  /* The orphans have 20 ms to live; allow for a slow guest. */
  for (int i = 0; i < 1000; i++) {
    while (waitpid (-1, NULL, __WALL | WNOHANG) > 0)
      ;
    if ((left = proc_count_children_of (getpid ())) == 0)
      break;
    sleep_ms (10);
  }
  if (left != 0) {
    failed++;
    printf ("not ok %d nothing left behind: %d processes still ours 10 s after the run\n",
            workers + 1, left);
  } else {
    printf ("ok %d nothing left behind: no process, no zombie after %.0f s\n", workers + 1,
            now () - start);
  }
  tap_total = workers + 1;
  if (cgroup_path[0]) {
    close (cgroup_fd);
    failed += check_cgroup (cgroup_path, ++tap_total);
  }
  printf ("1..%d\n", tap_total);
  free (pids);
  return failed ? 1 : 0;
}
