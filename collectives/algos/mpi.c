/*
 * mpi — the reference: MPI_Allreduce on the communicator's MPI_Comm.
 *
 * Open MPI's tuned component picks among recursive doubling, ring,
 * segmented ring and Rabenseifner by message size and rank count; this is
 * the baseline every hand-written algorithm is measured against. It bypasses
 * the point-to-point layer, so it has no traffic count and no trace.
 * MPI has no bf16, so bf16 travels as 16-bit words with user-defined ops that
 * call collkit's host kernels.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        2.15        4.31        8.56        8.61
 *       1M      135.07      204.61      225.72      261.76
 *      64M     8392.61    12590.91    13437.77    15744.64
 */
#include <limits.h>
#include <math.h>
#include "collkit_algo.h"
#include "mpi_map.h"

#define DEFINE_BF16_OP(name, ckop)                                                   \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)              \
    {                                                                                \
        (void)dt;                                                                    \
        ck_reduce_host(inout, inout, in, (size_t)*len, CK_BF16, ckop);               \
    }
DEFINE_BF16_OP(bf16_sum, CK_SUM)
DEFINE_BF16_OP(bf16_prod, CK_PROD)
DEFINE_BF16_OP(bf16_min, CK_MIN)
DEFINE_BF16_OP(bf16_max, CK_MAX)

static MPI_Op bf16_op(ck_op op)
{
    static MPI_Op ops[4];
    static int made;
    if (!made) {
        MPI_Op_create(bf16_sum, 1, &ops[CK_SUM]);
        MPI_Op_create(bf16_prod, 1, &ops[CK_PROD]);
        MPI_Op_create(bf16_min, 1, &ops[CK_MIN]);
        MPI_Op_create(bf16_max, 1, &ops[CK_MAX]);
        made = 1;
    }
    return ops[op];
}

int ck_mpi_type_op(ck_dtype dt, ck_op op, MPI_Datatype *type, MPI_Op *mop)
{
    static const MPI_Op mpi_ops[] = {[CK_SUM] = MPI_SUM, [CK_PROD] = MPI_PROD,
                                     [CK_MIN] = MPI_MIN, [CK_MAX] = MPI_MAX};
    if ((unsigned)op > CK_MAX) return CK_ERR_INVALID_ARG;
    *mop = dt == CK_BF16 ? bf16_op(op) : mpi_ops[op];
    switch (dt) {
    case CK_F32: *type = MPI_FLOAT; break;
    case CK_F64: *type = MPI_DOUBLE; break;
    case CK_I32: *type = MPI_INT32_T; break;
    case CK_I64: *type = MPI_INT64_T; break;
    case CK_BF16: *type = MPI_UINT16_T; break;
    default: return CK_ERR_INVALID_ARG;
    }
    return CK_SUCCESS;
}

static int mpi_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                   size_t count, ck_dtype dt, ck_op op)
{
    MPI_Datatype type;
    MPI_Op mop;
    if (ck_mpi_type_op(dt, op, &type, &mop)) return CK_ERR_INVALID_ARG;
    const size_t es = ck_dtype_size(dt), max_part = INT_MAX / 8;   /* MPI counts are int */
    for (size_t off = 0; off < count; off += max_part) {
        size_t n = count - off < max_part ? count - off : max_part;
        const void *s = sendbuf == recvbuf ? MPI_IN_PLACE : (const char *)sendbuf + off * es;
        if (MPI_Allreduce(s, (char *)recvbuf + off * es, (int)n, type, mop, ck_comm_mpi(comm)) != MPI_SUCCESS)
            return CK_ERR_TRANSPORT;
    }
    return CK_SUCCESS;
}

double ck_coll_best_cost(ck_coll coll, const ck_cost_params *m, int p, double n)
{
    double best = -1;
    for (int i = 0; i < ck_coll_algo_count(coll); i++) {
        const ck_algo *a = ck_coll_algo_at(coll, i);
        if (a->flags & CK_ALGO_REFERENCE || !a->cost) continue;
        double t = a->cost(m, p, n);
        if (best < 0 || t < best) best = t;
    }
    return best;
}

/* Open MPI's tuned component picks among recursive doubling, the ring and
 * Rabenseifner by size; modelled as the best of the three, by their own
 * cost functions. */
static double mpi_cost(const ck_cost_params *m, int p, double n)
{
    static const char *const choices[] = {"rd", "ring", "rabenseifner"};
    double best = NAN;
    for (int i = 0; i < 3; i++) {
        const ck_algo *a = ck_algo_find(choices[i]);
        double t = a && a->cost ? a->cost(m, p, n) : NAN;
        if (!isnan(t) && (isnan(best) || t < best)) best = t;
    }
    return best;
}

const ck_algo ck_algo_mpi = {
    .name = "mpi",
    .summary = "MPI_Allreduce (reference; Open MPI chooses its own algorithm)",
    .mem = CK_MEM_HOST,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "min(rd, ring, rabenseifner)",
    .cost = mpi_cost,
    .run = mpi_run,
};
