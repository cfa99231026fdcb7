/*
 * test_traffic — the tree and fold algorithms send exactly what their
 * descriptors declare: after one all-reduce, each rank's counters equal
 * bytes_sent() and msgs_sent() for that rank, over counts around p (0, 1,
 * p-1, p, p+1), an odd 1021 and 300000 (many segments), at the default chunk
 * and a 4 KiB one; and over all ranks, what was sent was received. The result
 * is checked too, so a count that matches by accident does not pass. Where
 * the descriptor declares its largest message, no message is larger, the
 * largest is exactly that (the bound is tight), and the empty messages are
 * exactly empty_msgs (none without it). And ck_count_traffic adds to the
 * transport's counts, apart from them: a "negative" count saturates instead
 * of taking anything back.
 *
 * Usage: test_traffic [ALGO...]   (default: tree tree2 rd rabenseifner ring_pipelined)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collcheck.h"
#include "collkit_algo.h"   /* ck_count_traffic */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    check_rank = rank;
    ck_comm *comm;
    if (ck_comm_create(MPI_COMM_WORLD, CK_MEM_HOST, &comm) != CK_SUCCESS) {
        printf("cannot create a communicator\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ck_config conf = *ck_comm_config(comm), *cfg = &conf;
    cfg->timeout_s = 20;   /* a hang fails the test instead of blocking it */
    ck_comm_set_config(comm, cfg);

    static const char *const defaults[] = {"tree", "tree2", "rd", "rabenseifner", "ring_pipelined"};
    const char *const *names = argc > 1 ? (const char *const *)argv + 1 : defaults;
    const int nalgos = argc > 1 ? argc - 1 : 5;
    const size_t counts[] = {0, 1, (size_t)p - 1, (size_t)p, (size_t)p + 1, 1021, 300000};
    const size_t chunks[] = {cfg->chunk_bytes, 4096};
    const ck_dtype dts[] = {CK_F32, CK_F64};
    void *in = malloc(300000 * 8), *out = malloc(300000 * 8);
    if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 1);

    for (int a = 0; a < nalgos; a++) {
        const ck_algo *algo = ck_algo_find(names[a]);
        CHECK(algo && algo->bytes_sent && algo->msgs_sent, "%s: known, with bytes_sent and msgs_sent", names[a]);
        if (!algo || !algo->bytes_sent || !algo->msgs_sent) continue;
        for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++)
            for (size_t di = 0; di < sizeof dts / sizeof *dts; di++)
                for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
                    const size_t n = counts[i], es = ck_dtype_size(dts[di]);
                    cfg->chunk_bytes = chunks[ci];
                    ck_comm_set_config(comm, cfg);
                    cc_fill(in, n, dts[di], CK_SUM, rank, p);
                    ck_counters_reset(comm);
                    int rc = ck_allreduce(comm, algo, in, out, n, dts[di], CK_SUM);
                    ck_counters c;
                    ck_counters_get(comm, &c);
                    const uint64_t wb = algo->bytes_sent(p, rank, n, es, cfg);
                    const uint64_t wm = algo->msgs_sent(p, rank, n, es, cfg);
                    CHECK(rc == CK_SUCCESS && cc_count_wrong(out, n, dts[di], CK_SUM, p) == 0,
                          "%s p=%d n=%zu %s chunk=%zu: rc %d, %zu wrong", algo->name, p, n,
                          ck_dtype_name(dts[di]), chunks[ci], rc, cc_count_wrong(out, n, dts[di], CK_SUM, p));
                    CHECK(c.bytes_sent == wb && c.msgs_sent == wm,
                          "%s p=%d rank %d n=%zu %s chunk=%zu: sent %llu B in %llu messages, declared %llu B in %llu",
                          algo->name, p, rank, n, ck_dtype_name(dts[di]), chunks[ci],
                          (unsigned long long)c.bytes_sent, (unsigned long long)c.msgs_sent,
                          (unsigned long long)wb, (unsigned long long)wm);
                    if (algo->max_msg_bytes) {
                        const uint64_t big = algo->max_msg_bytes(p, rank, n, es, cfg);
                        const uint64_t empty = algo->empty_msgs ? algo->empty_msgs(p, rank, n, es, cfg) : 0;
                        CHECK(c.msgs_over == 0 && (c.msgs_sent == c.msgs_empty || c.msg_largest == big) &&
                              c.msgs_empty == empty,
                              "%s p=%d rank %d n=%zu %s chunk=%zu: largest message %llu B (%llu above), declared %llu B; "
                              "%llu empty, declared %llu", algo->name, p, rank, n, ck_dtype_name(dts[di]), chunks[ci],
                              (unsigned long long)c.msg_largest, (unsigned long long)c.msgs_over,
                              (unsigned long long)big, (unsigned long long)c.msgs_empty, (unsigned long long)empty);
                    }
                    uint64_t mine[4] = {c.bytes_sent, c.bytes_recv, c.msgs_sent, c.msgs_recv}, all[4];
                    MPI_Allreduce(mine, all, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
                    CHECK(all[0] == all[1] && all[2] == all[3],
                          "%s p=%d n=%zu: %llu B / %llu messages sent, %llu B / %llu received", algo->name, p, n,
                          (unsigned long long)all[0], (unsigned long long)all[2],
                          (unsigned long long)all[1], (unsigned long long)all[3]);
                }
    }

    /* ck_count_traffic: added apart from the transport's counts, saturating. */
    {
        const ck_algo *ring = ck_algo_find("ring");
        cc_fill(in, 1021, CK_F32, CK_SUM, rank, p);
        ck_counters_reset(comm);
        int rc = ck_allreduce(comm, ring, in, out, 1021, CK_F32, CK_SUM);
        ck_counters t, c;
        ck_counters_get(comm, &t);
        ck_count_traffic(comm, 100, 2, 0, 0);
        ck_counters_get(comm, &c);
        CHECK(rc == CK_SUCCESS && c.bytes_sent == t.bytes_sent + 100 && c.msgs_sent == t.msgs_sent + 2 &&
              c.bytes_sent_self == 100 && c.msgs_sent_self == 2 && t.bytes_sent_self == 0,
              "ck_count_traffic adds apart: %llu B then %llu B (%llu self)", (unsigned long long)t.bytes_sent,
              (unsigned long long)c.bytes_sent, (unsigned long long)c.bytes_sent_self);
        /* "minus 200 B and 1 message" as wrapping arithmetic would read it */
        ck_count_traffic(comm, (uint64_t)0 - 200, (uint64_t)0 - 1, 0, 0);
        ck_counters_get(comm, &c);
        const uint64_t self = (uint64_t)0 - 100;   /* 100 - 200, no wrap below the self count's 0 */
        const uint64_t want = t.bytes_sent > UINT64_MAX - self ? UINT64_MAX : t.bytes_sent + self;
        CHECK(c.bytes_sent_self == self && c.bytes_sent == want && c.bytes_sent >= t.bytes_sent &&
              c.msgs_sent >= t.msgs_sent,
              "a negative count cannot lower the transport's: %llu B, %llu messages after %llu B, %llu messages",
              (unsigned long long)c.bytes_sent, (unsigned long long)c.msgs_sent, (unsigned long long)t.bytes_sent,
              (unsigned long long)t.msgs_sent);
        ck_counters_reset(comm);
        ck_counters_get(comm, &c);
        CHECK(c.bytes_sent == 0 && c.bytes_sent_self == 0, "reset clears both");
    }

    int mine[2] = {passed, failed}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(tot, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", tot[0], tot[1]);
    free(in);
    free(out);
    ck_comm_destroy(comm);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
