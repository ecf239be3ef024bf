/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* proc-scan.c - see proc-scan.h */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc-scan.h"

int
proc_count_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *e;
  int n = 0;

  if (!d)
    return -1;
  while ((e = readdir (d)))
    if (e->d_name[0] != '.')
      n++;
  closedir (d);
  return n - 1; /* the directory's own descriptor */
}

int
proc_count_children_of (pid_t parent)
{
  DIR *d = opendir ("/proc");
  struct dirent *e;
  int n = 0;

  if (!d)
    return -1;
  while ((e = readdir (d))) {
    char path[300], buf[512], *p;
    ssize_t len;
    int fd, ppid;

    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    snprintf (path, sizeof path, "/proc/%s/stat", e->d_name);
    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
      continue;
    len = read (fd, buf, sizeof buf - 1);
    close (fd);
    if (len <= 0)
      continue;
    buf[len] = '\0';
    p = strrchr (buf, ')');
    if (p && sscanf (p + 1, " %*c %d", &ppid) == 1 && ppid == parent)
      n++;
  }
  closedir (d);
  return n;
}
