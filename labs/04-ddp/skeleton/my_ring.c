/*
 * Lab 04 — your all-reduce, inside the trainer.
 *
 * This lab starts from YOUR lab 01 ring: replace this whole file with your
 * labs/01-ring/my_ring.c (HANDOUT.md, step 0):
 *
 *     cp labs/01-ring/my_ring.c labs/04-ddp/my_ring.c
 *
 * (`make lab04` does it for you when that file exists and this one does
 * not.) Then `make lab04` builds it into one program that is collcheck,
 * collbench and tagtrain with `my_ring` registered, and grades it: the
 * checker, and tagtrain at p = 2 and 3 — blocking, and in buckets from the
 * async engine's thread — against one rank.
 *
 * Rules (the grader checks them): use only collkit_algo.h. No MPI calls, no
 * calls of the library's own algorithms.
 */
#include "collkit_algo.h"

static int my_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    (void)sendbuf; (void)recvbuf; (void)count; (void)dt; (void)op;
    return ck_fail(comm, CK_ERR_UNSUPPORTED,
                   "my_ring is not here yet: copy your lab 01 ring over labs/04-ddp/my_ring.c (HANDOUT step 0)");
}

/* The descriptor of a ring (as in lab 01): what the checker holds it to. */
static uint64_t my_ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, skip_rs, skip_ag;
    ck_block(count, p, (r + 1) % p, &off, &skip_rs);
    ck_block(count, p, (r + 2) % p, &off, &skip_ag);
    return (uint64_t)(2 * count - skip_rs - skip_ag) * es;
}

static uint64_t my_ring_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : 2 * (uint64_t)(p - 1);
}

const ck_algo my_ring = {
    .name = "my_ring",
    .summary = "lab 04: your lab 01 ring, in the trainer",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = my_ring_bytes,
    .msgs_sent = my_ring_msgs,
    .run = my_ring_run,
};
CK_REGISTER_ALGO(my_ring)
