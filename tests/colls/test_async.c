/*
 * test_async — the nonblocking halves (ck_reduce_scatter_async,
 * ck_allgather_async) on the progress thread give what the blocking calls
 * give, byte for byte, for every reduce-scatter and all-gather algorithm that
 * runs on the transport, in place and out of place, at counts 0, 1, p + 1,
 * 1021 and 64 Ki; queued together with an all-reduce, the three run in the
 * order they were made while the caller's thread keeps working. A call whose
 * count differs across ranks is reported through the wait on every rank,
 * an all-reduce algorithm given to a half is refused, a null handle is an
 * error, and the engine goes on working after all of them.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "collcheck.h"

enum { NMAX = 65536 };

typedef struct {
    ck_comm *comm;
    int rank, p;
    unsigned mem;
    float *in, *ref, *got, *arin, *arout;
} run;

/* Some work for the caller's thread while the progress thread communicates. */
static double busy(const float *v, size_t n)
{
    double s = 0;
    for (int k = 0; k < 50; k++)
        for (size_t i = 0; i < n; i++) s += v[i] * (double)(k + 1);
    return s;
}

/* One case: the blocking half into r->ref, the nonblocking one into r->got
 * with an all-reduce queued behind it; the two compared byte for byte, the
 * all-reduce checked. */
static void one_case(run *r, const ck_algo *a, size_t n, int inplace)
{
    const ck_dtype dt = CK_F32;
    const ck_op op = CK_SUM;
    size_t off, len;
    ck_block(n, (size_t)r->p, (size_t)r->rank, &off, &len);
    cc_fill_salted(r->in, n, dt, op, r->rank, r->p, (unsigned)n);
    const int rs = a->coll == CK_COLL_REDUCE_SCATTER;
    /* the result's place and size: a reduce-scatter's block, an all-gather's whole buffer */
    const size_t at = rs && inplace ? off : 0, cnt = rs ? len : n;
    float *bufs[2] = {r->ref, r->got};
    int rc[2];
    ck_async *h = NULL, *har = NULL;
    for (int k = 0; k < 2; k++) {
        float *b = bufs[k];
        memset(b, 0xff, NMAX * sizeof *b);
        if (inplace) memcpy(b, r->in, n * sizeof *b);
        const void *send = inplace ? CK_IN_PLACE : rs ? (const void *)r->in : (const void *)(r->in + off);
        if (k == 0) {
            rc[0] = rs ? ck_reduce_scatter(r->comm, a, send, b, n, dt, op) : ck_allgather(r->comm, a, send, b, n, dt);
            continue;
        }
        int q = rs ? ck_reduce_scatter_async(r->comm, a, send, b, n, dt, op, &h)
                   : ck_allgather_async(r->comm, a, send, b, n, dt, &h);
        cc_fill(r->arin, 1021, dt, CK_SUM, r->rank, r->p);
        int q2 = ck_allreduce_async(r->comm, ck_algo_find("ring"), r->arin, r->arout, 1021, dt, CK_SUM, &har);
        volatile double sink = busy(r->in, n < 4096 ? n : 4096);
        (void)sink;
        rc[1] = q ? q : ck_allreduce_wait(h);
        int rc3 = q2 ? q2 : ck_allreduce_wait(har);
        CHECK(rc3 == CK_SUCCESS && cc_count_wrong(r->arout, 1021, dt, CK_SUM, r->p) == 0,
              "%s %s n=%zu: the all-reduce queued behind it: rc %d", ck_coll_name(a->coll), a->name, n, rc3);
    }
    CHECK(rc[0] == CK_SUCCESS && rc[1] == CK_SUCCESS, "%s %s n=%zu %s: blocking rc %d, async rc %d (%s)",
          ck_coll_name(a->coll), a->name, n, inplace ? "in place" : "out of place", rc[0], rc[1],
          ck_comm_errmsg(r->comm));
    CHECK(!memcmp(r->ref + at, r->got + at, cnt * sizeof(float)), "%s %s n=%zu %s: async differs from blocking",
          ck_coll_name(a->coll), a->name, n, inplace ? "in place" : "out of place");
}

/* Every algorithm of the collective that runs on the transport, at every count. */
static void every_algo(run *r, ck_coll coll)
{
    const size_t counts[] = {0, 1, (size_t)r->p + 1, 1021, NMAX};
    int tried = 0;
    for (int i = 0; i < ck_coll_algo_count(coll); i++) {
        const ck_algo *a = ck_coll_algo_at(coll, i);
        if (!(a->mem & (r->mem | CK_MEM_HOST))) continue;   /* the shm transport runs host algorithms too */
        tried++;
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            for (int inplace = 0; inplace < 2; inplace++) one_case(r, a, counts[c], inplace);
    }
    CHECK(tried > 0, "no %s algorithm runs here", ck_coll_name(coll));
}

/* What goes wrong is reported through the wait, and the engine goes on. */
static void errors(run *r)
{
    const ck_algo *rs = ck_coll_algo_find(CK_COLL_REDUCE_SCATTER, "ring"), *ag = ck_coll_algo_find(CK_COLL_ALLGATHER, "ring");
    ck_async *h = NULL;
    CHECK(ck_reduce_scatter_async(r->comm, rs, r->in, r->got, 16, CK_F32, CK_SUM, NULL) == CK_ERR_INVALID_ARG,
          "a null handle");
    int rc = ck_reduce_scatter_async(r->comm, ck_algo_find("ring"), r->in, r->got, 16, CK_F32, CK_SUM, &h);
    rc = rc ? rc : ck_allreduce_wait(h);
    CHECK(rc == CK_ERR_INVALID_ARG && strstr(ck_comm_errmsg(r->comm), "not a reduce_scatter"),
          "an all-reduce algorithm as a reduce-scatter: rc %d '%s'", rc, ck_comm_errmsg(r->comm));
    if (r->p > 1) {
        rc = ck_allgather_async(r->comm, ag, r->in, r->got, r->rank == 1 ? 33 : 32, CK_F32, &h);
        rc = rc ? rc : ck_allreduce_wait(h);
        CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(r->comm), "count differs"),
              "an all-gather whose count differs on rank 1: rc %d '%s'", rc, ck_comm_errmsg(r->comm));
    }
    one_case(r, rs, 1021, 0);   /* and the engine still works */
    one_case(r, ag, 1021, 1);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    run r = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.p);
    check_rank = r.rank;
    if (provided < MPI_THREAD_MULTIPLE) {
        if (r.rank == 0) printf("SKIP: MPI provides no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    const int shm = argc > 1 && !strcmp(argv[1], "shm");
    r.mem = shm ? CK_MEM_SHM : CK_MEM_HOST;   /* what ck_comm_create asks for */
    if (ck_comm_create(MPI_COMM_WORLD, r.mem, &r.comm) != CK_SUCCESS) {
        printf("cannot create a %s communicator\n", shm ? "shm" : "mpi");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ck_config cfg = *ck_comm_config(r.comm);
    cfg.timeout_s = 30;   /* a hang fails the test instead of blocking it */
    ck_comm_set_config(r.comm, &cfg);
    r.in = malloc(NMAX * sizeof *r.in);
    r.ref = malloc(NMAX * sizeof *r.ref);
    r.got = malloc(NMAX * sizeof *r.got);
    r.arin = malloc(1021 * sizeof *r.arin);
    r.arout = malloc(1021 * sizeof *r.arout);
    every_algo(&r, CK_COLL_REDUCE_SCATTER);
    every_algo(&r, CK_COLL_ALLGATHER);
    errors(&r);
    ck_comm_destroy(r.comm);
    free(r.in); free(r.ref); free(r.got); free(r.arin); free(r.arout);
    int bad = failed, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (r.rank == 0) printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return any ? 1 : 0;
}
