/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* job-systemd-private.h - what job.c asks of job-systemd.c
 *
 * One question: below which cgroup directory may this process make the
 * cgroups of its jobs?  Calls go job.c -> job-systemd.c -> job-cgroup.c.
 */
#pragma once

#include <glib.h>

/* 0 with *@parent NULL: make job cgroups below our own cgroup, as before
 * (we are not in a unit of our own user's systemd instance, or that unit
 * is delegated to us).  0 with *@parent set (owned here, valid for the
 * life of the process): below that directory, a transient scope with
 * Delegate=yes that our user's systemd instance made for us.  -errno with
 * *@failed_what (allocated, in words) when we run in a unit of our user's
 * systemd instance and could not have such a scope.  The first call asks
 * systemd over D-Bus and may block for up to a few seconds; the answer is
 * kept.  LIBSPAWN_JOB_SYSTEMD=0 in the environment answers "own cgroup". */
int _spawn_job_systemd_parent (const char **parent, char **failed_what);
