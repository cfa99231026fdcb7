/*
 * test_bounded.c — the bounded collectives (ck_bounded_*, collkit.h) at two
 * ranks: with a bound and without one they compute what MPI's do; with a
 * returning bound, a rank that does not come makes the wait return
 * CK_ERR_TIMEOUT within the bound, naming that rank, instead of ending the
 * job. And the back-off policy (ck_backoff) goes through its stages in
 * order: spin, yield, nap, each as long as its polls or its seconds say.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collkit.h"
#include "check.h"

static int yields;
static void count_yield(void *arg) { (void)arg; yields++; }

static void test_backoff(void)
{
    /* By polls: 10 spins, yields up to 25 polls in all, then naps of 1 ms. */
    const ck_backoff_policy p = {.spin_polls = 10, .spin_s = 1e9, .yield_polls = 25, .yield_s = 1e9, .nap_ns = 1000000};
    ck_backoff b;
    ck_backoff_start(&b, &p, 0);
    b.yield = count_yield;
    yields = 0;
    for (int i = 0; i < 25; i++) ck_backoff_pause(&b);
    CHECK(yields == 15, "polls 10..24 yield, the first 10 spin: %d yields", yields);
    const double t0 = ck_now();
    for (int i = 0; i < 20; i++) ck_backoff_pause(&b);
    const double napped = ck_now() - t0;
    CHECK(yields == 15 && napped >= 0.019, "then 20 naps of 1 ms, no yield: %d yields, %.4f s", yields, napped);
    /* By time: spin for 300 ms, no yield stage, then (nap_ns 0) yield for
     * ever. Checked well inside the stages: a loaded machine may hold this
     * process off the core for a while between two polls. */
    const ck_backoff_policy q = {.spin_polls = ULONG_MAX, .spin_s = 0.3, .yield_polls = 0, .nap_ns = 0};
    ck_backoff_start(&b, &q, 0);
    b.yield = count_yield;
    yields = 0;
    while (ck_now() - b.t0 < 0.01) ck_backoff_pause(&b);
    CHECK(yields == 0, "spinning for the first 300 ms: %d yields", yields);
    while (ck_now() - b.t0 < 0.4) ck_backoff_pause(&b);
    CHECK(yields > 0, "after 300 ms, with no nap, it yields");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ck_watch_init("test_bounded");
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    check_rank = rank;
    test_backoff();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    char why[1536] = "";

    /* The values: bounded, unbounded (the blocking form), each ending kind. */
    const ck_bound bounds[] = {ck_bound_job(), ck_bound_return(5, why, sizeof why), ck_bound_return(0, why, sizeof why)};
    for (int k = 0; k < 3; k++) {
        int in[2] = {rank + 1, 10 * rank}, sum[2] = {0, 0}, all[2 * 16] = {0}, root = rank == 0 ? 7 : 0;
        CHECK(ck_bounded_allreduce(bounds[k], in, sum, 2, MPI_INT, MPI_SUM, comm, "the sum") == CK_SUCCESS &&
                  sum[0] == p * (p + 1) / 2 && sum[1] == 10 * p * (p - 1) / 2, "bound %d: the sum", k);
        CHECK(ck_bounded_bcast(bounds[k], &root, 1, MPI_INT, 0, comm, "the root") == CK_SUCCESS && root == 7,
              "bound %d: the broadcast", k);
        CHECK(ck_bounded_allgather(bounds[k], &in[0], 1, MPI_INT, all, 1, MPI_INT, comm, "the ranks") == CK_SUCCESS &&
                  all[p - 1] == p, "bound %d: the all-gather", k);
        CHECK(ck_bounded_barrier(bounds[k], comm, "the barrier") == CK_SUCCESS, "bound %d: the barrier", k);
    }

    /* Rank 1 is late (asleep: it answers no roll call): rank 0's returning
     * wait gives up within its bound and names it. */
    if (p >= 2) {
        MPI_Comm late;
        MPI_Comm_dup(MPI_COMM_WORLD, &late);
        if (rank == 1) {
            sleep(3);
            ck_bounded_barrier(ck_bound_job(), late, "the late barrier");
        } else {
            const double t0 = ck_now();
            int rc = ck_bounded_barrier(ck_bound_return(1.0, why, sizeof why), late, "the late barrier");
            const double took = ck_now() - t0;
            CHECK(rc == CK_ERR_TIMEOUT, "a late rank: CK_ERR_TIMEOUT, not %d", rc);
            CHECK(took < 2.5, "returned within the bound (%.1f s)", took);
            CHECK(strstr(why, "rank 1 did not answer") && strstr(why, "the late barrier"), "names rank 1: %s", why);
        }
        ck_bounded_barrier(ck_bound_job(), comm, "after the late barrier");
    }
    int total_failed = 0;
    MPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", passed, total_failed);
    ck_watch_finalize();
    return total_failed ? 1 : 0;
}
