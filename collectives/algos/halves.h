/*
 * halves.h — what the ring and pairwise reduce-scatters and all-gathers
 * declare alike (rs_ring.c, rs_direct.c, ag_ring.c, ag_direct.c): one message
 * per step, p-1 steps, and a reduce-scatter that sends every block but its
 * own. Not an algorithm.
 */
#ifndef COLLKIT_HALVES_H
#define COLLKIT_HALVES_H

#include "collkit_algo.h"

/* p-1 messages, empty blocks included. */
static inline uint64_t ck_halves_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : (uint64_t)(p - 1);
}

/* Every block but rank r's own: (p-1)/p of the buffer. */
static inline uint64_t ck_rs_bytes_but_own(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    return (uint64_t)(count - len) * es;
}

#endif
