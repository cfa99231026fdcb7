/*
 * test_allreduce_args — ck_allreduce refuses bad calls with a status and a
 * message instead of crashing or hanging:
 *   on every rank: avg on integers, unknown dtype/op, no algorithm, NULL
 *   buffers (and count 0 with NULL buffers is fine);
 *   with 2+ ranks: count, dtype, op or algorithm differing across ranks gives
 *   CK_ERR_MISMATCH on ALL ranks, and a rank that rejects its own arguments
 *   makes the others fail too rather than wait for it; so after a run of
 *   identical calls, when one rank changes one argument.
 * After all that the communicator still works.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "collcheck.h"
#include "check.h"

static int rank;

/* n calls with identical arguments on every rank (each must succeed and be
 * right), then one whose argument `what` differs on rank `odd` only: it must
 * still be caught on every rank, with its name in the message. However the
 * library may make a repeated signature cheaper to agree on, a mismatch
 * after a run of identical calls never goes through silently. */
static void mismatch_after_repeats(ck_comm *comm, int p, int n, int odd, const char *what)
{
    const ck_algo *ring = ck_algo_find("ring"), *rd = ck_algo_find("rd");
    float fs[64], fr[64];
    cc_fill(fs, 64, CK_F32, CK_SUM, rank, p);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int rc = ck_allreduce(comm, ring, fs, fr, 64, CK_F32, CK_SUM);
        if (rc != CK_SUCCESS || cc_count_wrong(fr, 64, CK_F32, CK_SUM, p) != 0) bad++;
    }
    CHECK(bad == 0, "%d of %d identical calls failed or were wrong before the %s mismatch", bad, n, what);
    const int me = rank == odd;
    size_t count = 64;
    ck_dtype dt = CK_F32;
    ck_op op = CK_SUM;
    const ck_algo *a = ring;
    if (me && !strcmp(what, "count")) count = 63;
    if (me && !strcmp(what, "dtype")) dt = CK_I32;
    if (me && !strcmp(what, "op")) op = CK_MAX;
    if (me && !strcmp(what, "algorithm")) a = rd;
    int rc = ck_allreduce(comm, a, fs, fr, count, dt, op);
    char want[64];
    snprintf(want, sizeof want, "%s differs", what);
    CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), want),
          "after %d identical calls, %s on rank %d only: rc %d '%s'", n, what, odd, rc, ck_comm_errmsg(comm));
    /* and the communicator goes on: the same call everywhere succeeds again */
    rc = ck_allreduce(comm, ring, fs, fr, 64, CK_F32, CK_SUM);
    CHECK(rc == CK_SUCCESS && cc_count_wrong(fr, 64, CK_F32, CK_SUM, p) == 0,
          "the call after the %s mismatch: rc %d '%s'", what, rc, ck_comm_errmsg(comm));
}


int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    ck_comm *comm;
    if (ck_comm_create(MPI_COMM_WORLD, CK_MEM_HOST, &comm) != CK_SUCCESS) {
        printf("cannot create a communicator\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ck_config cfg = *ck_comm_config(comm);
    cfg.timeout_s = 20;   /* a hang would fail the test, not block it */
    ck_comm_set_config(comm, &cfg);
    const ck_algo *ring = ck_algo_find("ring"), *naive = ck_algo_find("naive");
    float fs[64], fr[64];
    int32_t is[64], ir[64];
    cc_fill(fs, 64, CK_F32, CK_SUM, rank, p);
    cc_fill(is, 64, CK_I32, CK_SUM, rank, p);

    /* ---- the same bad call on every rank */
    int rc = ck_allreduce(comm, ring, is, ir, 64, CK_I32, CK_AVG);
    CHECK(rc == CK_ERR_INVALID_ARG && strstr(ck_comm_errmsg(comm), "avg"), "avg on i32: rc %d '%s'", rc,
          ck_comm_errmsg(comm));
    rc = ck_allreduce(comm, ring, fs, fr, 64, (ck_dtype)17, CK_SUM);
    CHECK(rc == CK_ERR_INVALID_ARG && strstr(ck_comm_errmsg(comm), "dtype"), "unknown dtype: rc %d '%s'", rc,
          ck_comm_errmsg(comm));
    rc = ck_allreduce(comm, ring, fs, fr, 64, CK_F32, (ck_op)9);
    CHECK(rc == CK_ERR_INVALID_ARG && strstr(ck_comm_errmsg(comm), "op"), "unknown op: rc %d", rc);
    rc = ck_allreduce(comm, NULL, fs, fr, 64, CK_F32, CK_SUM);
    CHECK(rc == CK_ERR_INVALID_ARG, "no algorithm: rc %d", rc);
    rc = ck_allreduce(comm, ring, fs, NULL, 64, CK_F32, CK_SUM);
    CHECK(rc == CK_ERR_INVALID_ARG && strstr(ck_comm_errmsg(comm), "null"), "NULL recvbuf: rc %d '%s'", rc,
          ck_comm_errmsg(comm));
    rc = ck_allreduce(comm, ring, NULL, NULL, 0, CK_F32, CK_SUM);
    CHECK(rc == CK_SUCCESS, "count 0 with NULL buffers: rc %d", rc);
    CHECK(ck_allreduce(NULL, ring, fs, fr, 64, CK_F32, CK_SUM) == CK_ERR_INVALID_ARG, "NULL communicator");

    /* ---- arguments that differ across ranks */
    if (p > 1) {
        rc = ck_allreduce(comm, ring, fs, fr, rank == 1 ? 11 : 10, CK_F32, CK_SUM);
        CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), "count differs"),
              "count differs: rc %d '%s'", rc, ck_comm_errmsg(comm));
        rc = ck_allreduce(comm, ring, fs, fr, 16, rank == 1 ? CK_I32 : CK_F32, CK_SUM);
        CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), "dtype differs"), "dtype differs: rc %d", rc);
        rc = ck_allreduce(comm, ring, fs, fr, 16, CK_F32, rank == 1 ? CK_MAX : CK_SUM);
        CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), "op differs"), "op differs: rc %d", rc);
        rc = ck_allreduce(comm, rank == 1 ? naive : ring, fs, fr, 16, CK_F32, CK_SUM);
        CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), "algorithm differs"), "algo differs: rc %d", rc);
        /* Only rank 1 asks for avg on integers: it says why, the others that it refused. */
        rc = ck_allreduce(comm, ring, is, ir, 16, CK_I32, rank == 1 ? CK_AVG : CK_SUM);
        if (rank == 1) CHECK(rc == CK_ERR_INVALID_ARG, "rank 1 rejects avg on i32: rc %d", rc);
        else CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), "another rank"),
                   "the others hear of it: rc %d '%s'", rc, ck_comm_errmsg(comm));
        /* The pipeline chunk (COLLKIT_CHUNK, per process) cuts the messages of
         * ring_pipelined and tree: ranks that differ are told so. */
        const size_t chunk = cfg.chunk_bytes;
        if (rank == 1) cfg.chunk_bytes = 64;
        ck_comm_set_config(comm, &cfg);
        rc = ck_allreduce(comm, ck_algo_find("ring_pipelined"), fs, fr, 64, CK_F32, CK_SUM);
        cfg.chunk_bytes = chunk;
        ck_comm_set_config(comm, &cfg);
        CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), "chunk size differs"), "chunk differs: rc %d '%s'", rc,
              ck_comm_errmsg(comm));
        /* A communicator asked for on different transports: refused on every rank, no hang. */
        ck_comm *mixed = NULL;
        rc = ck_comm_create(MPI_COMM_WORLD, rank == 1 ? CK_MEM_SHM : CK_MEM_HOST, &mixed);
        CHECK(rc == CK_ERR_MISMATCH && !mixed, "transports differ: rc %d", rc);
        /* The tools' agreement: the same command line, or the first rank that differs. */
        char *same[] = {(char *)"t", (char *)"--algo", (char *)"ring"};
        char *other[] = {(char *)"t", (char *)"--algo", (char *)"ring", (char *)"-n", (char *)"5"};
        CHECK(ck_same_command_line(MPI_COMM_WORLD, 3, same, "test") == CK_SUCCESS, "the same command line");
        CHECK(ck_same_command_line(MPI_COMM_WORLD, rank == p - 1 ? 5 : 3, rank == p - 1 ? other : same, "test") ==
              CK_ERR_MISMATCH, "another command line on the last rank");
        CHECK(ck_first_differing_rank(MPI_COMM_WORLD, rank >= 1 ? 7 : 3) == 1, "the first differing rank");
        /* The same call many times over, then one rank (the last, then the
         * first) changes one argument: caught like the first call's. */
        const char *fields[] = {"count", "dtype", "op", "algorithm"};
        for (int k = 0; k < 4; k++) mismatch_after_repeats(comm, p, 100, k % 2 ? 0 : p - 1, fields[k]);
        mismatch_after_repeats(comm, p, 1, p - 1, "count");
    }

    /* ---- the settings an algorithm reads are a copy: a write through the
     * pointer (a cast away from const) changes nothing the library uses */
    ((ck_config *)ck_comm_config(comm))->chunk_bytes = 1;
    CHECK(ck_comm_config(comm)->chunk_bytes == cfg.chunk_bytes, "a write into ck_comm_config's copy is not kept: %zu B",
          ck_comm_config(comm)->chunk_bytes);
    ck_config bad = cfg;
    bad.chunk_bytes = 0;
    CHECK(ck_comm_set_config(comm, &bad) == CK_ERR_INVALID_ARG, "a chunk of 0 B is refused");

    /* ---- a rank alone in a collective: the watchdog names the one it entered */
    if (p > 1) {
        const ck_algo *rs = ck_coll_algo_find(CK_COLL_REDUCE_SCATTER, "direct");
        ck_config quick = cfg;
        quick.timeout_s = 1;
        if (rank == 0) {
            ck_comm_set_config(comm, &quick);
            rc = ck_reduce_scatter(comm, rs, fs, fr, 0, CK_F32, CK_SUM);
            CHECK(rc == CK_ERR_TIMEOUT && strstr(ck_comm_errmsg(comm), "(entering ck_reduce_scatter)"),
                  "alone in a reduce-scatter: rc %d '%s'", rc, ck_comm_errmsg(comm));
            ck_comm_set_config(comm, &cfg);
        } else {
            struct timespec late = {2, 500000000};   /* the others come after rank 0's bound */
            nanosleep(&late, NULL);
            rc = ck_reduce_scatter(comm, rs, fs, fr, 0, CK_F32, CK_SUM);
            CHECK(rc == CK_SUCCESS, "the late ranks' reduce-scatter: rc %d '%s'", rc, ck_comm_errmsg(comm));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* ---- and the communicator still works */
    rc = ck_allreduce(comm, ring, fs, fr, 64, CK_F32, CK_SUM);
    CHECK(rc == CK_SUCCESS && cc_count_wrong(fr, 64, CK_F32, CK_SUM, p) == 0, "a good call afterwards: rc %d", rc);
    rc = ck_allreduce(comm, naive, CK_IN_PLACE, is, 64, CK_I32, CK_SUM);
    CHECK(rc == CK_SUCCESS && cc_count_wrong(is, 64, CK_I32, CK_SUM, p) == 0, "in place afterwards: rc %d", rc);

    int mine[2] = {passed, failed}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(tot, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", tot[0], tot[1]);
    ck_comm_destroy(comm);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
