/*
 * test_split — the ring all-reduce is the ring reduce-scatter followed by the
 * ring all-gather: the same bytes in the result, the same traffic in all.
 *
 * For every dtype, op (sum, prod, max, avg), count (0, 1, p-1, p, p+1, 1021)
 * and both in place and out of place: ck_allreduce with "ring" against
 * ck_reduce_scatter "ring" then ck_allgather "ring", compared byte for byte,
 * on the checker's exact inputs (every partial result exact). On random
 * floats the two are compared byte for byte for max (exact in any order)
 * and, at p <= 2, for sum: from p = 3 on, the all-reduce adds block b's
 * inputs starting at rank b and the reduce-scatter starting at rank b+1 (so
 * that block b ends on rank b), and the last bits may round differently.
 * Traffic: summed over the ranks, the two halves send the all-reduce's bytes,
 * and every rank its 2(p-1) messages. Plus the registries and the errors of
 * calling one collective's algorithm as another's.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "collcheck.h"

static uint64_t sum_over_ranks(uint64_t v)
{
    uint64_t s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    check_rank = rank;
    const char *transport = argc > 1 ? argv[1] : "mpi";
    ck_comm *comm = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, strcmp(transport, "shm") ? CK_MEM_HOST : CK_MEM_SHM, &comm) != CK_SUCCESS) {
        printf("cannot create a %s communicator\n", transport);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    const ck_algo *ar = ck_algo_find("ring"), *rs = ck_coll_algo_find(CK_COLL_REDUCE_SCATTER, "ring"),
                  *ag = ck_coll_algo_find(CK_COLL_ALLGATHER, "ring");
    CHECK(ar && rs && ag && ar != rs && rs != ag, "one ring per registry");
    CHECK(rs && rs->coll == CK_COLL_REDUCE_SCATTER && ag && ag->coll == CK_COLL_ALLGATHER, "descriptors say their collective");
    ck_coll c;
    CHECK(ck_coll_parse("reduce_scatter", &c) == CK_SUCCESS && c == CK_COLL_REDUCE_SCATTER, "parse reduce_scatter");
    CHECK(ck_coll_parse("gather", &c) == CK_ERR_INVALID_ARG, "unknown collective refused");
    CHECK(ck_coll_algo_find(CK_COLL_ALLGATHER, "halving") == NULL && ck_coll_algo_find(CK_NUM_COLLS, "ring") == NULL,
          "names are per registry");

    const size_t counts[] = {0, 1, (size_t)p - 1, (size_t)p, (size_t)p + 1, 1021};
    const ck_op ops[] = {CK_SUM, CK_PROD, CK_MAX, CK_AVG};
    size_t max_bytes = 1021 * 8;
    unsigned char *in = malloc(max_bytes), *a = malloc(max_bytes), *b = malloc(max_bytes), *blk = malloc(max_bytes);
    for (int dt = 0; dt < CK_NUM_DTYPES; dt++)
        for (int k = 0; k < 4; k++)
            for (int random = 0; random < 2; random++) {
                const ck_op op = ops[k];
                if (op == CK_AVG && !ck_dtype_is_float((ck_dtype)dt)) continue;
                if (random && (!ck_dtype_is_float((ck_dtype)dt) || op == CK_PROD)) continue;
                const int exact_order = !random || op == CK_MAX || p <= 2;
                for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        const size_t n = counts[ci], es = ck_dtype_size((ck_dtype)dt);
                        size_t off, len;
                        ck_block(n, p, rank, &off, &len);
                        if (random) cc_fill_random(in, n, (ck_dtype)dt, rank, (unsigned)ci);
                        else cc_fill_salted(in, n, (ck_dtype)dt, op, rank, p, (unsigned)ci);
                        ck_counters c1, c2, c3;
                        ck_counters_reset(comm);
                        int rc = ck_allreduce(comm, ar, in, a, n, (ck_dtype)dt, op);
                        ck_counters_get(comm, &c1);
                        memcpy(b, in, n * es);
                        ck_counters_reset(comm);
                        int rc2 = inplace ? ck_reduce_scatter(comm, rs, CK_IN_PLACE, b, n, (ck_dtype)dt, op)
                                          : ck_reduce_scatter(comm, rs, in, blk, n, (ck_dtype)dt, op);
                        ck_counters_get(comm, &c2);
                        ck_counters_reset(comm);
                        int rc3 = inplace ? ck_allgather(comm, ag, CK_IN_PLACE, b, n, (ck_dtype)dt)
                                          : ck_allgather(comm, ag, blk, b, n, (ck_dtype)dt);
                        ck_counters_get(comm, &c3);
                        CHECK(!rc && !rc2 && !rc3, "%s %s n=%zu: statuses %d %d %d (%s)", ck_dtype_name((ck_dtype)dt),
                              ck_op_name(op), n, rc, rc2, rc3, ck_comm_errmsg(comm));
                        if (exact_order)
                            CHECK(!memcmp(a, b, n * es), "%s %s n=%zu %s%s: all-reduce differs from reduce-scatter + "
                                  "all-gather", ck_dtype_name((ck_dtype)dt), ck_op_name(op), n,
                                  inplace ? "in place" : "out of place", random ? " random" : "");
                        else   /* the block's own sum: every rank agrees on it after the all-gather */
                            CHECK(!memcmp(blk, b + off * es, len * es) || inplace, "all-gather keeps the block");
                        const uint64_t sent = sum_over_ranks(c1.bytes_sent), halves =
                            sum_over_ranks(c2.bytes_sent + c3.bytes_sent);
                        CHECK(sent == halves, "n=%zu: the all-reduce sends %llu B, the two halves %llu B", n,
                              (unsigned long long)sent, (unsigned long long)halves);
                        CHECK(c1.msgs_sent == c2.msgs_sent + c3.msgs_sent, "n=%zu: messages %llu vs %llu + %llu", n,
                              (unsigned long long)c1.msgs_sent, (unsigned long long)c2.msgs_sent,
                              (unsigned long long)c3.msgs_sent);
                    }
            }

    /* collbench's #wrong column: 0 on a right result, 1 with one element changed. */
    {
        const size_t n = 1021;
        size_t off, len;
        ck_block(n, p, rank, &off, &len);
        cc_coll_input(CK_COLL_REDUCE_SCATTER, in, n, CK_F32, CK_SUM, rank, p, 0);
        int rc = ck_reduce_scatter(comm, rs, in, blk, n, CK_F32, CK_SUM);
        size_t w0 = cc_coll_count_wrong(CK_COLL_REDUCE_SCATTER, blk, n, CK_F32, CK_SUM, rank, p, 0, 0);
        ((float *)blk)[len / 2] += 1.0f;
        size_t w1 = cc_coll_count_wrong(CK_COLL_REDUCE_SCATTER, blk, n, CK_F32, CK_SUM, rank, p, 0, 0);
        CHECK(!rc && w0 == 0 && w1 == 1, "reduce-scatter #wrong: %zu then %zu (status %d)", w0, w1, rc);
        cc_coll_input(CK_COLL_ALLGATHER, a, n, CK_I64, CK_SUM, rank, p, 0);
        rc = ck_allgather(comm, ag, (char *)a + off * 8, b, n, CK_I64);
        w0 = cc_coll_count_wrong(CK_COLL_ALLGATHER, b, n, CK_I64, CK_SUM, rank, p, 0, 0);
        ((int64_t *)b)[n - 1] ^= 4;
        w1 = cc_coll_count_wrong(CK_COLL_ALLGATHER, b, n, CK_I64, CK_SUM, rank, p, 0, 0);
        CHECK(!rc && w0 == 0 && w1 == 1, "all-gather #wrong: %zu then %zu (status %d)", w0, w1, rc);
    }

    /* Every diagnose hook places every fault somewhere, at every p up to 9
     * (the checker's tests reach only the ring's through broken algorithms). */
    for (int coll = CK_COLL_REDUCE_SCATTER; coll <= CK_COLL_ALLGATHER && rank == 0; coll++)
        for (int k = 0; k < ck_coll_algo_count((ck_coll)coll); k++) {
            const ck_algo *d = ck_coll_algo_at((ck_coll)coll, k);
            if (!d->diagnose) continue;
            for (int q = 2; q <= 9; q++)
                for (int fr = 0; fr < q; fr++)
                    for (int mi = 0; mi < q; mi++) {
                        if (mi == fr && coll == CK_COLL_REDUCE_SCATTER) continue;
                        size_t off, len;
                        ck_block(100, q, fr, &off, &len);
                        ck_fault f = {q, fr, 100, off, 4, mi, -1, NULL};
                        char where[400] = "";
                        d->diagnose(&f, where, sizeof where);
                        CHECK(where[0] && strstr(where, "rank"), "%s %s p=%d rank %d fault of rank %d: '%s'",
                              ck_coll_name((ck_coll)coll), d->name, q, fr, mi, where);
                    }
        }

    /* One collective's algorithm is no other's: a clear error on every rank. */
    int rc = ck_allreduce(comm, rs, in, a, 4, CK_F32, CK_SUM);
    CHECK(rc == CK_ERR_INVALID_ARG && strstr(ck_comm_errmsg(comm), "is a reduce_scatter algorithm"),
          "a reduce-scatter algorithm given to ck_allreduce: %d %s", rc, ck_comm_errmsg(comm));
    rc = ck_allgather(comm, rs, in, a, 4, CK_F32);
    CHECK(rc == CK_ERR_INVALID_ARG, "a reduce-scatter algorithm given to ck_allgather: %d", rc);
    rc = ck_reduce_scatter(comm, ar, in, a, 4, CK_I32, CK_AVG);
    CHECK(rc == CK_ERR_INVALID_ARG, "an all-reduce algorithm given to ck_reduce_scatter: %d", rc);
    rc = ck_reduce_scatter(comm, rs, in, a, 4, CK_I32, CK_AVG);
    CHECK(rc == CK_ERR_INVALID_ARG && strstr(ck_comm_errmsg(comm), "avg"), "avg on i32 refused: %d", rc);

    free(in); free(a); free(b); free(blk);
    ck_comm_destroy(comm);
    int fails = 0;
    MPI_Allreduce(&failed, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", passed, fails);
    MPI_Finalize();
    return fails ? 1 : 0;
}
