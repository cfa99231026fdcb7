/*
 * A test file for the grader: lab 00's reference naive all-reduce, right in
 * every case, with a cost function that is not a finite number where
 * GRADE_TEST_COST says (read at run time, so one file serves every test):
 *
 *   nan        NaN everywhere (awk reads "nan" as NaN, and no comparison
 *              with NaN is true: this once scored full marks)
 *   nan_at_64  the right model, except NaN at p = 64 only
 *   inf_at_64  the right model, except +inf at p = 64 only
 *   pow2_only  a finite model, right at the powers of two only (twice the
 *              time at every other p): the cost part must compare those too
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_algo.h"

static int my_naive_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                        size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t bytes = count * ck_dtype_size(dt);
    int rc;

    if (r != 0) {
        ck_step(comm, r, "reduce");
        if ((rc = ck_sendrecv(comm, sendbuf, bytes, 0, NULL, 0, -1, 0))) return rc;
        ck_step(comm, p - 1 + r, "broadcast");
        return ck_sendrecv(comm, NULL, 0, -1, recvbuf, bytes, 0, 1);
    }
    if ((rc = ck_copy(comm, recvbuf, sendbuf, bytes))) return rc;
    void *tmp = p > 1 ? ck_scratch(comm, bytes) : NULL;
    if (p > 1 && !tmp) return CK_ERR_NOMEM;
    for (int src = 1; src < p; src++) {
        ck_step(comm, src, "reduce");
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, bytes, src, 0))) return rc;
        if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, tmp, count, dt, op))) return rc;
    }
    for (int dst = 1; dst < p; dst++) {
        ck_step(comm, p - 1 + dst, "broadcast");
        if ((rc = ck_sendrecv(comm, recvbuf, bytes, dst, NULL, 0, -1, 1))) return rc;
    }
    return CK_SUCCESS;
}

static double my_naive_cost(const ck_cost_params *m, int p, double n)
{
    const char *how = getenv("GRADE_TEST_COST");
    if (how && !strcmp(how, "nan_at_64") && p == 64) return NAN;
    if (how && !strcmp(how, "inf_at_64") && p == 64) return INFINITY;
    if (how && !strcmp(how, "nan")) return NAN;
    const double t = 2 * (p - 1) * (m->alpha + n * m->beta) + (p - 1) * n * m->gamma;
    if (how && !strcmp(how, "pow2_only") && (p & (p - 1))) return 2 * t;
    return t;
}

static uint64_t my_naive_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return p == 1 ? 0 : (uint64_t)count * es * (r == 0 ? (uint64_t)(p - 1) : 1);
}

static uint64_t my_naive_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : (r == 0 ? (uint64_t)(p - 1) : 1);
}

const ck_algo my_naive = {.name = "my_naive", .summary = "a naive all-reduce whose cost is not a number",
                          .mem = CK_MEM_HOST, .bytes_formula = "root (p-1)n, others n", .bytes_sent = my_naive_bytes,
                          .msgs_sent = my_naive_msgs, .cost_formula = "not a number", .cost = my_naive_cost,
                          .run = my_naive_run};
CK_REGISTER_ALGO(my_naive)
