/*
 * rs_mpi — the reference reduce-scatter: MPI_Reduce_scatter_block when the
 * blocks are equal (count a multiple of p), MPI_Reduce_scatter with collkit's
 * block sizes otherwise. Open MPI chooses its own algorithm (recursive
 * halving, pairwise, ring); it bypasses the point-to-point layer, so it has
 * no traffic count and no trace.
 */
#include <limits.h>
#include <stdlib.h>
#include "collkit_algo.h"
#include "mpi_map.h"

static int rs_mpi_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                      size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    MPI_Datatype type;
    MPI_Op mop;
    if (ck_mpi_type_op(dt, op, &type, &mop)) return CK_ERR_INVALID_ARG;
    if (count > INT_MAX)
        return ck_fail(comm, CK_ERR_UNSUPPORTED, "rs mpi: %zu elements exceed MPI's int count", count);
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    /* In place the result belongs inside the input, which MPI does not allow
     * (its MPI_IN_PLACE leaves it at the start): receive aside, then copy. */
    const int alias = (const char *)recvbuf >= (const char *)sendbuf &&
                      (const char *)recvbuf < (const char *)sendbuf + count * es;
    void *dst = alias ? ck_scratch(comm, len * es) : recvbuf;
    if (!dst) return CK_ERR_NOMEM;
    int mrc;
    if (count % p == 0) {
        mrc = MPI_Reduce_scatter_block(sendbuf, dst, (int)len, type, mop, ck_comm_mpi(comm));
    } else {
        int *counts = malloc((size_t)p * sizeof *counts);
        if (!counts) return CK_ERR_NOMEM;
        for (int q = 0; q < p; q++) {
            size_t o, l;
            ck_block(count, p, q, &o, &l);
            counts[q] = (int)l;
        }
        mrc = MPI_Reduce_scatter(sendbuf, dst, counts, type, mop, ck_comm_mpi(comm));
        free(counts);
    }
    if (mrc != MPI_SUCCESS) return ck_fail(comm, CK_ERR_TRANSPORT, "MPI_Reduce_scatter failed");
    return alias ? ck_copy(comm, recvbuf, dst, len * es) : CK_SUCCESS;
}

/* Modelled as the best of the hand-written ones, by their own cost functions. */
static double rs_mpi_cost(const ck_cost_params *m, int p, double n) { return ck_coll_best_cost(CK_COLL_REDUCE_SCATTER, m, p, n); }

const ck_algo ck_rs_mpi = {
    .name = "mpi",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "MPI_Reduce_scatter(_block) (reference; Open MPI chooses its own algorithm)",
    .mem = CK_MEM_HOST,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "min(ring, halving, direct)",
    .cost = rs_mpi_cost,
    .run = rs_mpi_run,
};
