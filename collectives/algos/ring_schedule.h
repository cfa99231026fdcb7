/*
 * ring_schedule.h — the ring's schedule, shared by ring.c and
 * ring_pipelined.c (which runs the same schedule in chunks).
 *
 * Rank r sends to r+1 and receives from r-1 (mod p); the buffer is cut into
 * p blocks by ck_block.
 *   reduce-scatter step s = 0 .. p-2: send block r-s, receive block r-s-1
 *   all-gather step s = 0 .. p-2:     send block r+1-s, receive block r-s
 * Read backwards, for the checker's diagnosis: block b meets rank q at
 * reduce-scatter step (q-b-1) mod p, where q adds its input (p-1 means q
 * starts the block: it sends its own input at step 0), and at all-gather
 * step (q-b) mod p, where q receives the finished block (p-1: q finished it
 * at the last reduce-scatter step).
 */
#ifndef COLLKIT_RING_SCHEDULE_H
#define COLLKIT_RING_SCHEDULE_H

#include "collkit_algo.h"

static inline int ring_mod(int a, int p) { return (a % p + p) % p; }
static inline int ring_rs_send(int p, int r, int s) { return ring_mod(r - s, p); }
static inline int ring_rs_recv(int p, int r, int s) { return ring_mod(r - s - 1, p); }
static inline int ring_ag_send(int p, int r, int s) { return ring_mod(r + 1 - s, p); }
static inline int ring_ag_recv(int p, int r, int s) { return ring_mod(r - s, p); }

/* Bytes rank r sends: every block but (r+1) in reduce-scatter, every block
 * but (r+2) in all-gather. */
static inline uint64_t ring_schedule_bytes(int p, int r, size_t count, size_t es)
{
    if (p == 1) return 0;
    size_t off, skip_rs, skip_ag;
    ck_block(count, p, (r + 1) % p, &off, &skip_rs);
    ck_block(count, p, (r + 2) % p, &off, &skip_ag);
    return (uint64_t)(2 * count - skip_rs - skip_ag) * es;
}

/* The block that holds element e. */
static inline int ring_block_of(int p, size_t count, size_t e, size_t *off, size_t *len)
{
    for (int b = 0; b < p; b++) {
        ck_block(count, p, b, off, len);
        if (e >= *off && e < *off + *len) return b;
    }
    return p - 1;
}

/* Where a fault in block blk points: the step where the missing rank adds
 * its input (when one is missing), then where f->rank gets the block. */
static inline void ring_schedule_where(const ck_fault *f, int blk, ck_sbuf *out)
{
    const int p = f->p, rs = ring_mod(f->missing - blk - 1, p), ag = ring_mod(f->rank - blk, p);
    if (f->missing >= 0 && rs == p - 1)
        ck_sbuf_add(out, "rank %d starts block %d (sends its own input at reduce-scatter step 0); ", f->missing, blk);
    else if (f->missing >= 0)
        ck_sbuf_add(out, "rank %d adds its input to block %d at reduce-scatter step %d; ", f->missing, blk, rs);
    if (ag == p - 1)
        ck_sbuf_add(out, "rank %d finishes block %d at the last reduce-scatter step", f->rank, blk);
    else
        ck_sbuf_add(out, "rank %d receives the finished block %d from rank %d at all-gather step %d",
                    f->rank, blk, ring_mod(f->rank - 1, p), ag);
}

#endif
