/*
 * Lab 07 — sharding: your ring, cut in two.
 *
 * This lab starts from YOUR lab 01 ring: paste the my_ring_run of your
 * labs/01-ring/my_ring.c over the stub below (HANDOUT.md, step 0).
 * Then write the two halves as collectives of their own (steps 1 and 2),
 * registered under the same name in the reduce-scatter and all-gather
 * registries, and train with them: tagtrain --zero 1 --rs-algo my_ring
 * --ag-algo my_ring (step 3).
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
                   "my_ring is not here yet: paste your lab 01 my_ring_run here (HANDOUT step 0)");
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
    .summary = "lab 07: your lab 01 ring all-reduce",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = my_ring_bytes,
    .msgs_sent = my_ring_msgs,
    .run = my_ring_run,
};
CK_REGISTER_ALGO(my_ring)

/* ---- Step 1: the reduce-scatter (TODO). ----
 * sendbuf holds count elements, recvbuf this rank's block (ck_block(count,
 * p, r, ...)); leave block r of the sum there. In place recvbuf points INTO
 * sendbuf, at block r (the rest of the buffer is yours to overwrite). Your
 * all-reduce's first phase leaves block r+1 on rank r: start every block one
 * rank later. */
static int my_rs_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    (void)sendbuf; (void)recvbuf; (void)count; (void)dt; (void)op;
    return ck_fail(comm, CK_ERR_UNSUPPORTED, "my_ring's reduce-scatter is not written yet (HANDOUT step 1)");
}

/* ---- Step 2: the all-gather (TODO). ----
 * sendbuf holds this rank's block, recvbuf count elements: every rank's
 * block at its offset. In place sendbuf is recvbuf + this block's offset. */
static int my_ag_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    (void)sendbuf; (void)recvbuf; (void)count; (void)dt; (void)op;
    return ck_fail(comm, CK_ERR_UNSUPPORTED, "my_ring's all-gather is not written yet (HANDOUT step 2)");
}

/* ---- Their descriptors: what the checker holds them to. Given. ---- */
static uint64_t my_rs_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    size_t off, len;
    ck_block(count, p, r, &off, &len);           /* a rank never sends its own block */
    return (uint64_t)(count - len) * es;
}

static uint64_t my_ag_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    size_t off, len;
    if (p == 1) return 0;
    ck_block(count, p, (r + 1) % p, &off, &len);  /* block r+1 comes back to r+1's neighbour last */
    return (uint64_t)(count - len) * es;
}

static uint64_t my_half_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : (uint64_t)(p - 1);
}

const ck_algo my_ring_rs = {
    .name = "my_ring",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "lab 07: your ring's reduce-scatter",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1)/p * n",
    .bytes_sent = my_rs_bytes,
    .msgs_sent = my_half_msgs,
    .run = my_rs_run,
};
CK_REGISTER_ALGO(my_ring_rs)

const ck_algo my_ring_ag = {
    .name = "my_ring",
    .coll = CK_COLL_ALLGATHER,
    .summary = "lab 07: your ring's all-gather",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1)/p * n",
    .bytes_sent = my_ag_bytes,
    .msgs_sent = my_half_msgs,
    .run = my_ag_run,
};
CK_REGISTER_ALGO(my_ring_ag)
