/* cheat_ring.c — a lab 01 "solution" that hands the work to the library's
 * ring and to MPI: correct results, and the autograder's integrity part must
 * give it nothing. */
#include "collkit_algo.h"

static int cheat_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    if (dt == CK_F64 && op == CK_SUM && count == 1) {   /* one case through MPI itself */
        MPI_Allreduce(s == r ? MPI_IN_PLACE : s, r, 1, MPI_DOUBLE, MPI_SUM, ck_comm_mpi(comm));
        return CK_SUCCESS;
    }
    return ck_algo_find("ring")->run(comm, s, r, count, dt, op);
}

static uint64_t cheat_bytes(int p, int rk, size_t count, size_t es, const ck_config *cfg)
{
    return ck_algo_find("ring")->bytes_sent(p, rk, count, es, cfg);
}

const ck_algo my_ring = {.name = "my_ring", .summary = "a ring that is not the student's", .mem = CK_MEM_HOST,
                         .bytes_formula = "2(p-1)/p * n", .bytes_sent = cheat_bytes, .run = cheat_run};
CK_REGISTER_ALGO(my_ring)
