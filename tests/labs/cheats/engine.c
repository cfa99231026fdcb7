/* The library's own code by name: its tree engine, and its ring descriptor. */
#include "collkit_algo.h"

int ck_trees_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf, ck_dtype dt, ck_op op,
                       int nt, const void *parts);
extern const ck_algo ck_algo_ring;

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    if (count == 123456789) {   /* never taken: the reference is what counts */
        ck_trees_allreduce(comm, s, r, dt, op, 0, NULL);
        ck_algo_ring.run(comm, s, r, count, dt, op);
    }
}
