/*
 * test_groups — process groups (collkit_group.h).
 *
 *   test_groups mesh          no MPI: ck_mesh_2d for p = 1, 2, 4, 6 and T = 1, 2, 3:
 *                             every rank in exactly one model-parallel and one
 *                             data-parallel group, of sizes T and p / T, the
 *                             first consecutive, the second of stride T; a T
 *                             that does not divide p refused, with the reason
 *   test_groups TRANSPORT     at p = 4 (mpi or shm): ck_comm_split into two
 *                             groups of 2, into 3 + 1, and into 3 ordered by a
 *                             reversed key; on each group ring, rd,
 *                             rabenseifner, tree (and oneshot, twoshot on shm)
 *                             all-reduce exact integer-valued floats, in place
 *                             and out of place, counts 0, 1, < q, and 100003:
 *                             every element the sum over the group's ranks
 *                             only; the group's transport is the parent's; an
 *                             error message names the world's ranks too
 *   test_groups mpi failures  (COLLKIT_TIMEOUT=2) on the group of world ranks 2
 *                             and 3: a count that differs within it, and a rank
 *                             that never comes: both fail, their messages mapping
 *                             the group's ranks to the world's
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "collkit.h"
#include "collkit_algo.h"
#include "collkit_group.h"

static void test_mesh(void)
{
    const int ps[] = {1, 2, 4, 6}, Ts[] = {1, 2, 3};
    char why[256];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            const int p = ps[a], T = Ts[b];
            ck_mesh m;
            if (p % T) {
                CHECK(ck_mesh_2d(p, T, 0, &m, why, sizeof why) == -1 && strstr(why, "does not divide"),
                      "p = %d, T = %d refused with the reason (%s)", p, T, why);
                continue;
            }
            int seen_mp[6][6] = {{0}}, seen_dp[6][6] = {{0}};
            for (int w = 0; w < p; w++) {
                CHECK(ck_mesh_2d(p, T, w, &m, why, sizeof why) == 0, "p = %d, T = %d, rank %d: %s", p, T, w, why);
                CHECK(m.D == p / T && m.mp_rank < T && m.dp_rank < m.D, "p = %d, T = %d: sizes", p, T);
                CHECK(m.mp_color * T + m.mp_rank == w, "model-parallel groups are consecutive ranks (rank %d)", w);
                CHECK(m.dp_rank * T + m.dp_color == w, "data-parallel groups stride T (rank %d)", w);
                CHECK(m.mp_rank == m.dp_color && m.dp_rank == m.mp_color, "the two coordinates agree (rank %d)", w);
                seen_mp[m.mp_color][m.mp_rank]++;
                seen_dp[m.dp_color][m.dp_rank]++;
            }
            int once = 1;
            for (int g = 0; g < p / T; g++)
                for (int r = 0; r < T; r++) once = once && seen_mp[g][r] == 1 && seen_dp[r][g] == 1;
            CHECK(once, "p = %d, T = %d: every place of every group taken once", p, T);
        }
    ck_mesh m;
    CHECK(ck_mesh_2d(4, 0, 0, &m, why, sizeof why) == -1, "T = 0 refused");
    CHECK(ck_mesh_2d(4, 2, 4, &m, why, sizeof why) == -1, "a rank outside the job refused");
}

/* One all-reduce on a group, checked: rank q of the group gives q + 1 + (i % 7)
 * at element i, so the sum is q(q+1)/2 + q (i % 7), exact in float. */
static void check_allreduce(ck_comm *g, const char *algo, int inplace, size_t n, const char *split)
{
    const int q = ck_comm_size(g), r = ck_comm_rank(g);
    const ck_algo *a = ck_algo_find(algo);
    float *in = malloc((n + 1) * sizeof *in), *out = malloc((n + 1) * sizeof *out);
    for (size_t i = 0; i < n; i++) in[i] = (float)(r + 1 + (int)(i % 7));
    const int rc = ck_allreduce(g, a, inplace ? CK_IN_PLACE : in, inplace ? in : out, n, CK_F32, CK_SUM);
    const float *res = inplace ? in : out;
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (res[i] != (float)(q * (q + 1) / 2 + q * (int)(i % 7))) bad = i;
    CHECK(rc == CK_SUCCESS && bad == n, "%s: %s, %s, n = %zu on a group of %d: rc %d (%s), first wrong element %zu",
          split, algo, inplace ? "in place" : "out of place", n, q, rc, ck_comm_errmsg(g), bad);
    free(in);
    free(out);
}

static void run_split(ck_comm *world, const char *transport, const char *split, int color, int key)
{
    ck_comm *g = NULL;
    CHECK(ck_comm_split(world, color, key, &g) == CK_SUCCESS && g, "%s: split (%s)", split, ck_comm_errmsg(world));
    if (!g) return;
    CHECK(!strcmp(ck_comm_transport_name(g), transport), "%s: the group is on %s (got %s)", split, transport,
          ck_comm_transport_name(g));
    const char *algos[] = {"ring", "rd", "rabenseifner", "tree", "oneshot", "twoshot"};
    const int nalgo = strcmp(transport, "shm") ? 4 : 6;
    const size_t q = (size_t)ck_comm_size(g), counts[] = {0, 1, q > 1 ? q - 1 : 1, 100003};
    for (int k = 0; k < nalgo; k++)
        for (int c = 0; c < 4; c++)
            for (int inplace = 0; inplace < 2; inplace++) check_allreduce(g, algos[k], inplace, counts[c], split);
    ck_comm_destroy(g);
}

/* On the group of world ranks 2 and 3 (the others idle): a call whose count
 * differs between the two (the agreement), then one that rank 3 never joins
 * (the watchdog, COLLKIT_TIMEOUT=1 from the test): each fails on rank 2 with
 * a message that maps the group's ranks to the world's. */
static void test_group_failures(ck_comm *world, int rank)
{
    ck_comm *g = NULL;
    CHECK(ck_comm_split(world, rank >= 2 ? 1 : 0, rank, &g) == CK_SUCCESS && g, "split");
    if (rank >= 2) {
        float buf[16] = {0};
        const ck_algo *ring = ck_algo_find("ring");
        int rc = ck_allreduce(g, ring, CK_IN_PLACE, buf, rank == 2 ? 10 : 11, CK_F32, CK_SUM);
        CHECK(rc != CK_SUCCESS && strstr(ck_comm_errmsg(g), "[group ranks 0-1 are world ranks 2,3]"),
              "a count that differs within the group: rc %d, '%s'", rc, ck_comm_errmsg(g));
        if (rank == 2) {
            rc = ck_allreduce(g, ring, CK_IN_PLACE, buf, 16, CK_F32, CK_SUM);
            CHECK(rc == CK_ERR_TIMEOUT && strstr(ck_comm_errmsg(g), "[group ranks 0-1 are world ranks 2,3]"),
                  "a rank of the group that never comes: rc %d, '%s'", rc, ck_comm_errmsg(g));
        }
    }
    /* Rank 3 waits out rank 2's watchdog before the group goes away: a bound of its own, long beside 2 s. */
    ck_bounded_barrier((ck_bound){.seconds = 60}, MPI_COMM_WORLD, "the end of the failures");
    ck_comm_destroy(g);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "mesh")) {
        test_mesh();
        printf("%d passed, %d failed\n", passed, failed);
        return failed != 0;
    }
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    check_rank = rank;
    const char *transport = argc > 1 ? argv[1] : "mpi";
    ck_comm *world = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, strcmp(transport, "shm") ? CK_MEM_HOST : CK_MEM_HOST | CK_MEM_SHM, &world)) {
        printf("cannot create a %s communicator\n", transport);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (argc > 2 && !strcmp(argv[2], "failures")) {
        test_group_failures(world, rank);
        ck_comm_destroy(world);
        int f = failed, all = 0;
        MPI_Allreduce(&f, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) printf("%d passed, %d failed (all ranks: %d failed)\n", passed, failed, all);
        MPI_Finalize();
        return all != 0;
    }
    run_split(world, transport, "two groups of p/2", rank < p / 2 ? 0 : 1, rank);
    run_split(world, transport, "p-1 and 1", rank < p - 1 ? 0 : 1, rank);
    run_split(world, transport, "p-1, reversed key", rank < p - 1 ? 0 : 1, -rank);

    /* The group's ranks in its order: a reversed key puts world rank p-2 first. */
    ck_comm *g = NULL;
    CHECK(ck_comm_split(world, rank == 0 ? CK_GROUP_NONE : 0, -rank, &g) == CK_SUCCESS, "a split leaving rank 0 out");
    CHECK(rank == 0 ? g == NULL : g && ck_comm_rank(g) == p - 1 - rank, "rank 0 in no group; the others reversed");
    if (g && p > 2) {
        /* A bad call's message names the group's ranks and the world's. */
        ck_req rq;
        int rc = ck_isend(g, NULL, 0, p + 5, 0, &rq);
        CHECK(rc != CK_SUCCESS && strstr(ck_comm_errmsg(g), "are world ranks"),
              "a group's message maps its ranks to the world's: '%s'", ck_comm_errmsg(g));
    }
    ck_comm_destroy(g);
    CHECK(ck_comm_split(world, -5, 0, &g) == CK_ERR_INVALID_ARG, "a negative colour other than CK_GROUP_NONE refused");
    ck_comm_destroy(world);
    int f = failed, all = 0;
    MPI_Allreduce(&f, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed (all ranks: %d failed)\n", passed, failed, all);
    MPI_Finalize();
    return all != 0;
}
