/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/* fuzz-rng.h - what clone4-fuzz and pidfd-fuzz share: a seeded random
 * sequence (xorshift64*), so that a seed repeats a run's calls, and a
 * monotonic clock for --seconds.
 */
#pragma once

#include <stdint.h>
#include <time.h>

struct rng {
  uint64_t s;
};

static inline uint64_t
rnd (struct rng *r)
{
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1DULL;
}

/* 0 to @n - 1; @n must not be 0. */
static inline unsigned
below (struct rng *r, unsigned n)
{
  return (unsigned) (rnd (r) % n);
}

static inline int
chance (struct rng *r, unsigned percent)
{
  return below (r, 100) < percent;
}

static inline double
now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}
