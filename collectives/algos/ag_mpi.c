/*
 * ag_mpi — the reference all-gather: MPI_Allgather when the blocks are
 * equal (count a multiple of p), MPI_Allgatherv with collkit's block sizes
 * otherwise. Open MPI chooses its own algorithm; it bypasses the
 * point-to-point layer, so it has no traffic count and no trace.
 */
#include <limits.h>
#include <stdlib.h>
#include "collkit_algo.h"
#include "mpi_map.h"

static int ag_mpi_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                      size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    MPI_Datatype type;
    MPI_Op mop;
    if (ck_mpi_type_op(dt, CK_SUM, &type, &mop)) return CK_ERR_INVALID_ARG;
    (void)op;
    if (count > INT_MAX)
        return ck_fail(comm, CK_ERR_UNSUPPORTED, "ag mpi: %zu elements exceed MPI's int count", count);
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    /* collkit's in place is MPI's: this rank's block already at its offset. */
    const void *s = sendbuf == (char *)recvbuf + off * es ? MPI_IN_PLACE : sendbuf;
    int mrc;
    if (count % p == 0) {
        mrc = MPI_Allgather(s, (int)len, type, recvbuf, (int)len, type, ck_comm_mpi(comm));
    } else {
        int *counts = malloc(2 * (size_t)p * sizeof *counts), *displs = counts + p;
        if (!counts) return CK_ERR_NOMEM;
        for (int q = 0; q < p; q++) {
            size_t o, l;
            ck_block(count, p, q, &o, &l);
            counts[q] = (int)l;
            displs[q] = (int)o;
        }
        mrc = MPI_Allgatherv(s, (int)len, type, recvbuf, counts, displs, type, ck_comm_mpi(comm));
        free(counts);
    }
    return mrc == MPI_SUCCESS ? CK_SUCCESS : ck_fail(comm, CK_ERR_TRANSPORT, "MPI_Allgather failed");
}

/* Modelled as the best of the hand-written ones, by their own cost functions. */
static double ag_mpi_cost(const ck_cost_params *m, int p, double n) { return ck_coll_best_cost(CK_COLL_ALLGATHER, m, p, n); }

const ck_algo ck_ag_mpi = {
    .name = "mpi",
    .coll = CK_COLL_ALLGATHER,
    .summary = "MPI_Allgather(v) (reference; Open MPI chooses its own algorithm)",
    .mem = CK_MEM_HOST,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "min(ring, rd, direct)",
    .cost = ag_mpi_cost,
    .run = ag_mpi_run,
};
