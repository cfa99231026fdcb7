/*
 * test_extrapolate.c — collbench --extrapolate when no algorithm has a
 * finite predicted time (a cost function that gives NaN or inf, as a model
 * file's NaN once did): a message and exit status 2, never algos[-1]; with
 * one finite cost among them, the table as usual. No MPI.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "collbench.h"
#include "check.h"

static int no_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    (void)c; (void)s; (void)r; (void)n; (void)dt; (void)op;
    return CK_SUCCESS;
}
static double nan_cost(const ck_cost_params *m, int p, double n) { (void)m; (void)p; (void)n; return NAN; }
static double inf_cost(const ck_cost_params *m, int p, double n) { (void)m; (void)p; (void)n; return INFINITY; }
static double lin_cost(const ck_cost_params *m, int p, double n) { return (p - 1) * (m->alpha + n * m->beta); }
static const ck_algo nanc = {.name = "nanc", .mem = CK_MEM_HOST, .cost = nan_cost, .run = no_run};
static const ck_algo infc = {.name = "infc", .mem = CK_MEM_HOST, .cost = inf_cost, .run = no_run};
static const ck_algo lin = {.name = "lin", .mem = CK_MEM_HOST, .cost = lin_cost, .run = no_run};

int main(void)
{
    const bm_params m = {.alpha = 2e-6, .beta = 0.1e-9, .gamma = 0.05e-9, .chunk = 1 << 18};
    bm_opts o;
    memset(&o, 0, sizeof o);
    o.mode = BM_MODE_EXTRAPOLATE;
    o.extrap_pmax = 4;
    o.algos[0] = &nanc;
    o.algos[1] = &infc;
    o.nalgos = 2;
    int rc = bm_run_extrapolate(&o, &m);
    fflush(stdout);
    CHECK(rc == 2, "no finite time: exit 2 (got %d)", rc);
    o.algos[2] = &lin;
    o.nalgos = 3;
    rc = bm_run_extrapolate(&o, &m);
    fflush(stdout);
    CHECK(rc == 0, "one finite cost: the table (got %d)", rc);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
