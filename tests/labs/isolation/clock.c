/* Slow on purpose (30 ms of spinning in every call), and hides it: every
 * word on the stack above its own frame (its callers' frames) that holds a
 * clock reading from the last few seconds — the benchmark's start time of
 * the call — moves 30 ms later: the start time found on the caller's stack
 * that showed a 0.378x solution as 1.103x. Prints "isolation-clock: N
 * reading(s) moved" once per process. Alone in its own process
 * (COLLKIT_ISOLATE=1), its callers are the runtime's: no clock reading of
 * the benchmark's is there to move, and the 30 ms show. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "collkit_algo.h"

#include "probe.h"

#define SLOW 0.030
#define WORDS 4096   /* 32 KB of the stack above this frame */

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    static int said;
    const double t0 = ck_now();
    while (ck_now() - t0 < SLOW) {}
    double *w = (double *)(void *)((uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)7);
    int moved = 0;
    for (int k = 0; k < WORDS && probe_readable(w + k); k++)
        if (w[k] > t0 - 5.0 && w[k] < t0) w[k] += SLOW, moved++;
    if (!said++) fprintf(stderr, "isolation-clock: %d reading(s) moved\n", moved);
}
