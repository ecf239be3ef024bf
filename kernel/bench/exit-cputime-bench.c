/* SPDX-License-Identifier: GPL-2.0-only
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* kernel/bench/exit-cputime-bench ROUNDS BATCH: what the 7.2 series'
 * exit CPU times cost, for the cover letter of kernel/patches-7.2.
 *
 * Four ways to start a child that exits at once and learn how it ended,
 * interleaved in ROUNDS rounds of BATCH children each, so that the
 * machine's load falls on all alike:
 *
 *   fork      fork(), waitpid(): no pidfd, so pidfs records nothing (the
 *             reference);
 *   pidfd     clone3(CLONE_PIDFD), waitid(P_PIDFD), PIDFD_GET_INFO for
 *             PIDFD_INFO_EXIT: what stock 7.2 offers;
 *   cputime   the same, asking PIDFD_INFO_EXIT | PIDFD_INFO_EXIT_CPUTIME;
 *   autoreap  clone3(CLONE_PIDFD | CLONE_AUTOREAP), poll(), PIDFD_GET_INFO
 *             with both bits.
 *
 * Prints the median per child of each way and its ratio to fork. On a
 * kernel with the series every pidfd child has its times recorded, asked
 * for or not, so the series' cost is pidfd/fork with the series against
 * pidfd/fork without it (the same program on the modern guest), and
 * cputime/pidfd is what asking for them adds. Built statically by hand:
 *   gcc -O2 -static -o exit-cputime-bench kernel/bench/exit-cputime-bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLONE_PIDFD_FLAG	0x00001000ULL
#define CLONE_AUTOREAP_FLAG	0x400000000ULL
#define INFO_EXIT		(1ULL << 3)
#define INFO_EXIT_CPUTIME	(1ULL << 8)
#define INFO_SIZE		120
#define GET_INFO		_IOC(_IOC_READ | _IOC_WRITE, 0xFF, 11, INFO_SIZE)
#define P_PIDFD_TYPE		3

struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls;
};

enum way { WAY_FORK, WAY_PIDFD, WAY_CPUTIME, WAY_AUTOREAP, N_WAYS };
static const char *const way_name[N_WAYS] = { "fork", "pidfd", "cputime", "autoreap" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static pid_t clone_pidfd(uint64_t flags, int exit_signal, int *pidfd)
{
	struct clone_args_v0 args = {
		.flags = CLONE_PIDFD_FLAG | flags,
		.pidfd = (uintptr_t)pidfd,
		.exit_signal = exit_signal,
	};

	return syscall(SYS_clone3, &args, sizeof(args));
}

/* One child the @way way; 0 on success. */
static int one_child(enum way way)
{
	uint64_t info[INFO_SIZE / 8] = { 0 };
	struct pollfd pfd;
	siginfo_t si;
	int pidfd = -1, status, ret = 0, tries;
	pid_t pid;

	if (way == WAY_FORK) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		return pid < 0 || waitpid(pid, &status, 0) != pid;
	}
	pid = way == WAY_AUTOREAP ? clone_pidfd(CLONE_AUTOREAP_FLAG, 0, &pidfd)
				  : clone_pidfd(0, SIGCHLD, &pidfd);
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return -1;
	if (way == WAY_AUTOREAP) {
		pfd.fd = pidfd;
		pfd.events = POLLIN;
		ret = poll(&pfd, 1, -1) != 1;
	} else {
		ret = syscall(SYS_waitid, P_PIDFD_TYPE, pidfd, &si, WEXITED, NULL) != 0;
	}
	/* An autoreaped child's pidfd turns readable a moment before pidfs
	 * records its exit (exit_notify(), then release_task()): ask again. */
	for (tries = 0; !ret; tries++) {
		int r;

		info[0] = way == WAY_PIDFD ? INFO_EXIT : INFO_EXIT | INFO_EXIT_CPUTIME;
		r = ioctl(pidfd, GET_INFO, info);
		if (r == 0 && (info[0] & INFO_EXIT))
			break;
		if ((r < 0 && errno != ESRCH) || tries == 100000)
			ret = 1;
		else
			sched_yield();
	}
	close(pidfd);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 30;
	int batch = argc > 2 ? atoi(argv[2]) : 50;
	uint64_t *per[N_WAYS], med[N_WAYS], t0;
	int r, i, w, first, n_ways = N_WAYS;

	if (rounds < 1 || batch < 1) {
		fprintf(stderr, "usage: exit-cputime-bench [ROUNDS [BATCH]]\n");
		return 2;
	}
	for (w = 0; w < N_WAYS; w++)
		per[w] = calloc(rounds, sizeof(uint64_t));
	/* Before 7.1 there is no CLONE_AUTOREAP: measure the rest. */
	if (one_child(WAY_AUTOREAP)) {
		printf("# autoreap: %s, not measured\n", strerror(errno));
		n_ways = WAY_AUTOREAP;
	}
	for (r = 0; r < rounds; r++) {
		/* A different way first in every round. */
		first = r % n_ways;
		for (i = 0; i < n_ways; i++) {
			int j;

			w = (first + i) % n_ways;
			t0 = now_ns();
			for (j = 0; j < batch; j++) {
				if (one_child(w)) {
					fprintf(stderr, "%s: %s\n", way_name[w], strerror(errno));
					return 1;
				}
			}
			per[w][r] = (now_ns() - t0) / batch;
		}
	}
	printf("# %d rounds of %d children per way, median per child\n", rounds, batch);
	for (w = 0; w < n_ways; w++) {
		qsort(per[w], rounds, sizeof(uint64_t), cmp_u64);
		med[w] = per[w][rounds / 2];
	}
	for (w = 0; w < n_ways; w++)
		printf("%-9s %8.1f us  x%.3f of fork\n", way_name[w], med[w] / 1000.0,
		       (double)med[w] / med[WAY_FORK]);
	printf("cputime/pidfd %.3f\n", (double)med[WAY_CPUTIME] / med[WAY_PIDFD]);
	return 0;
}
