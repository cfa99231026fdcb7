/*
 * test_gpu — the CUDA IPC transport and the device-only algorithms, on
 * whatever GPUs the node has (ranks share them when there are fewer).
 * Without a CUDA device (cudaErrorNoDevice, or no driver installed) it prints
 * why and exits 77, which CTest reports as skipped; any other CUDA error (a
 * busy GPU in Exclusive_Process mode, a driver older than the runtime) is a
 * failure, with CUDA's own words. `test_gpu --probe` only does that check and
 * prints the device count (used by run_collcheck.sh, scripts/gpu-check.sh and
 * scripts/bench.sh: it honours CUDA_VISIBLE_DEVICES, as the ranks do).
 *
 *   1. point to point: several messages per pair, posted in one order and
 *      received in another (tags), a 0-byte one, one of several staging chunks,
 *      two with the same tag (must arrive in posting order);
 *   2. oneshot / twoshot repeated back to back with changing data (the barrier
 *      generations and the double-buffered halves), counts that span several
 *      4 MiB chunks, results bitwise identical on every rank;
 *   3. nccl, or its clear refusal when ranks share a GPU on NCCL < 2.30;
 *   4. a send/recv size mismatch is an error on both sides, not a hang; it
 *      ends a wait on several requests at once (the others, control receive
 *      posted, are cancelled before they are freed: run it under the
 *      sanitizer build), and the transport refuses later messages at once,
 *      naming the first failure;
 *   5. a rank alone in a oneshot: its barrier gives up after the timeout
 *      (CK_ERR_TIMEOUT saying so), and the buffers refuse later calls;
 *   6. one rank's receive buffer off its element alignment: every rank fails
 *      the call at once (the check is part of the argument agreement), and
 *      the next call with aligned buffers works.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "collkit_algo.h"

#define SKIP 77   /* CTest: skipped */

static int rank, size, failures;

/* A hang fails the test instead of blocking it. */
static void set_timeout(ck_comm *c, double s)
{
    ck_config cfg = *ck_comm_config(c);
    cfg.timeout_s = s;
    ck_comm_set_config(c, &cfg);
}

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__); \
                                              fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static unsigned char pattern(int src, int dst, int tag, int which, size_t i)
{
    return (unsigned char)(src * 31 + dst * 7 + tag * 3 + which * 101 + (int)(i % 251));
}

/* 1. Every rank sends three messages to every other rank: tag 5 (3 MiB + 17 B,
 * four chunks), tag 7 (0 B), tag 5 again (1000 B). The receiver posts tag 7
 * first and waits for it alone, then takes both tag 5s. */
static void test_p2p(ck_comm *c)
{
    const size_t big = (3u << 20) + 17, small = 1000;
    const int p = size;
    for (int d = 1; d < p; d++) {
        int to = (rank + d) % p, from = (rank - d + p) % p;
        unsigned char *h = malloc(big);
        void *sb0 = ck_alloc(c, big), *sb1 = ck_alloc(c, small), *rb0 = ck_alloc(c, big), *rb1 = ck_alloc(c, small);
        CHECK(h && sb0 && sb1 && rb0 && rb1, "allocation");
        if (!h || !sb0 || !sb1 || !rb0 || !rb1) return;
        for (size_t i = 0; i < big; i++) h[i] = pattern(rank, to, 5, 0, i);
        ck_upload(c, sb0, h, big);
        for (size_t i = 0; i < small; i++) h[i] = pattern(rank, to, 5, 1, i);
        ck_upload(c, sb1, h, small);

        ck_req s[3], r[3];
        CHECK(!ck_isend(c, sb0, big, to, 5, &s[0]), "isend big");
        CHECK(!ck_isend(c, NULL, 0, to, 7, &s[1]), "isend empty");
        CHECK(!ck_isend(c, sb1, small, to, 5, &s[2]), "isend small");
        CHECK(!ck_irecv(c, NULL, 0, from, 7, &r[0]), "irecv empty");
        CHECK(!ck_irecv(c, rb0, big, from, 5, &r[1]), "irecv big");
        CHECK(!ck_irecv(c, rb1, small, from, 5, &r[2]), "irecv small");
        CHECK(!ck_wait(c, &r[0]), "wait on the 0-byte message alone: %s", ck_comm_errmsg(c));
        CHECK(!ck_waitall(c, r + 1, 2), "wait recvs: %s", ck_comm_errmsg(c));
        CHECK(!ck_waitall(c, s, 3), "wait sends: %s", ck_comm_errmsg(c));

        CHECK(!ck_download(c, h, rb0, big), "download");
        size_t bad = big;
        for (size_t i = 0; i < big && bad == big; i++) if (h[i] != pattern(from, rank, 5, 0, i)) bad = i;
        CHECK(bad == big, "distance %d: big message wrong at byte %zu", d, bad);
        CHECK(!ck_download(c, h, rb1, small), "download");
        bad = small;
        for (size_t i = 0; i < small && bad == small; i++) if (h[i] != pattern(from, rank, 5, 1, i)) bad = i;
        CHECK(bad == small, "distance %d: second tag-5 message wrong at byte %zu", d, bad);
        ck_free(c, sb0); ck_free(c, sb1); ck_free(c, rb0); ck_free(c, rb1);
        free(h);
    }
}

/* 2. i32 sums are exact, so every element can be checked; f32 results are
 * compared across ranks bit for bit. */
static void test_peer_algos(ck_comm *c)
{
    const char *names[] = {"oneshot", "twoshot"};
    const size_t counts[] = {1, (size_t)size - 1 ? (size_t)size - 1 : 1, 4097, 2500000};  /* the last spans 3 chunks */
    const size_t maxc = 2500000;
    int32_t *h = malloc(maxc * sizeof *h);
    void *in = ck_alloc(c, maxc * 4), *out = ck_alloc(c, maxc * 4);
    CHECK(h && in && out, "allocation");
    if (!h || !in || !out) return;
    for (int it = 0; it < 24; it++) {
        const ck_algo *a = ck_algo_find(names[it % 2]);
        size_t n = counts[(it / 2) % 4];
        int inplace = (it / 8) % 2;
        CHECK(a != NULL, "algorithm %s not registered", names[it % 2]);
        if (!a) break;
        for (size_t i = 0; i < n; i++) h[i] = (int32_t)((i * 7 + (size_t)rank * 13 + (size_t)it) % 1000) - 500;
        ck_upload(c, inplace ? out : in, h, n * 4);
        int rc = ck_allreduce(c, a, inplace ? CK_IN_PLACE : in, out, n, CK_I32, CK_SUM);
        CHECK(rc == CK_SUCCESS, "%s n=%zu: %s (%s)", a->name, n, ck_strerror(rc), ck_comm_errmsg(c));
        ck_download(c, h, out, n * 4);
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++) {
            long long want = 0;
            for (int q = 0; q < size; q++) want += (long long)((i * 7 + (size_t)q * 13 + (size_t)it) % 1000) - 500;
            if (h[i] != want) bad = i;
        }
        CHECK(bad == n, "%s n=%zu iteration %d: wrong at element %zu", a->name, n, it, bad);
    }
    /* f32 with fractions: rank-order fold means identical bits everywhere. */
    float *f = (float *)h;
    const size_t n = 100003;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < n; i++) f[i] = 1.0f / (float)(1 + (i + (size_t)rank * 17) % 97);
        ck_upload(c, in, f, n * 4);
        CHECK(!ck_allreduce(c, ck_algo_find(names[k]), in, out, n, CK_F32, CK_SUM), "%s f32", names[k]);
        ck_download(c, f, out, n * 4);
        unsigned long long sum = 0, mn, mx;
        for (size_t i = 0; i < n; i++) { uint32_t u; memcpy(&u, &f[i], 4); sum = sum * 1000003ull + u; }
        MPI_Allreduce(&sum, &mn, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&sum, &mx, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        CHECK(mn == mx, "%s f32 results differ across ranks", names[k]);
    }
    ck_free(c, in); ck_free(c, out);
    free(h);
}

/* 3. nccl: correct, or refused with a message naming the shared GPU. */
static void test_nccl(ck_comm *c, int ndev)
{
    const ck_algo *a = ck_algo_find("nccl");
    if (!a) { if (rank == 0) printf("nccl not built: skipped that part\n"); return; }
    const size_t n = 12345;
    double *h = malloc(n * sizeof *h);
    void *buf = ck_alloc(c, n * sizeof *h);
    if (!h || !buf) { CHECK(0, "allocation"); return; }
    for (size_t i = 0; i < n; i++) h[i] = (double)(rank + 1) * (double)(i % 10);
    ck_upload(c, buf, h, n * sizeof *h);
    int rc = ck_allreduce(c, a, CK_IN_PLACE, buf, n, CK_F64, CK_AVG);
    if (size > ndev && rc != CK_SUCCESS) {
        CHECK(rc == CK_ERR_UNSUPPORTED && strstr(ck_comm_errmsg(c), "share"),
              "nccl with a shared GPU: expected a clear refusal, got %s (%s)", ck_strerror(rc), ck_comm_errmsg(c));
        if (rank == 0) printf("nccl refused a shared GPU as expected: %s\n", ck_comm_errmsg(c));
    } else {
        CHECK(rc == CK_SUCCESS, "nccl: %s (%s)", ck_strerror(rc), ck_comm_errmsg(c));
        ck_download(c, h, buf, n * sizeof *h);
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
            if (h[i] != (double)(size + 1) / 2.0 * (double)(i % 10)) bad = i;
        CHECK(bad == n, "nccl avg wrong at element %zu", bad);
    }
    ck_free(c, buf);
    free(h);
}

/* 4. Rank 0 sends 100 B to rank 1, which expects 200 B and also waits, in
 * the same ck_waitall, for a message that never comes. */
static void test_mismatch(void)
{
    ck_comm *c;
    if (size < 2 || ck_comm_create(MPI_COMM_WORLD, CK_MEM_CUDA, &c)) return;
    set_timeout(c, 20);
    void *buf = ck_alloc(c, 256);
    int rc = CK_SUCCESS;
    double t0 = ck_now();
    if (rank == 0) rc = ck_sendrecv(c, buf, 100, 1, NULL, 0, -1, 3);
    if (rank == 1) {
        ck_req r[2];
        r[0].active = r[1].active = 0;
        CHECK(!ck_irecv(c, (char *)buf + 200, 8, 0, 9, &r[0]), "irecv that nobody sends");
        CHECK(!ck_irecv(c, buf, 200, 0, 3, &r[1]), "irecv of the wrong size");
        rc = ck_waitall(c, r, 2);
    }
    if (rank < 2) {
        double dt = ck_now() - t0;
        CHECK(rc == CK_ERR_TRANSPORT && dt < 10, "size mismatch: expected a transport error at once, got %s after %.1f s",
              ck_strerror(rc), dt);
        CHECK(strstr(ck_comm_errmsg(c), "mismatch") != NULL, "the error names the mismatch: %s", ck_comm_errmsg(c));
        ck_req s;
        int rc2 = ck_isend(c, buf, 4, 1 - rank, 5, &s);
        CHECK(rc2 == CK_ERR_TRANSPORT && strstr(ck_comm_errmsg(c), "unusable") && strstr(ck_comm_errmsg(c), "mismatch"),
              "a later send fails at once, naming the first failure: %s (%s)", ck_strerror(rc2), ck_comm_errmsg(c));
    }
    ck_free(c, buf);
    MPI_Barrier(MPI_COMM_WORLD);
    ck_comm_destroy(c);
}

/* 5. Every rank sets the symmetric buffers up with one oneshot, then rank 0
 * calls it alone (validation off, so nothing stops it before the kernel). */
static void test_lonely_barrier(void)
{
    ck_comm *c;
    const ck_algo *a = ck_algo_find("oneshot");
    if (size < 2 || !a || ck_comm_create(MPI_COMM_WORLD, CK_MEM_CUDA, &c)) return;
    const size_t n = 1024;
    float *h = calloc(n, sizeof *h);
    void *buf = ck_alloc(c, n * sizeof *h);
    CHECK(h && buf, "allocation");
    if (h && buf) {
        ck_upload(c, buf, h, n * sizeof *h);
        int rc = ck_allreduce(c, a, CK_IN_PLACE, buf, n, CK_F32, CK_SUM);
        CHECK(rc == CK_SUCCESS, "oneshot on every rank: %s (%s)", ck_strerror(rc), ck_comm_errmsg(c));
        ck_config cfg = *ck_comm_config(c);
        cfg.timeout_s = 2;
        cfg.validate = 0;
        ck_comm_set_config(c, &cfg);
        if (rank == 0) {
            double t0 = ck_now();
            rc = ck_allreduce(c, a, CK_IN_PLACE, buf, n, CK_F32, CK_SUM);
            double dt = ck_now() - t0;
            CHECK(rc == CK_ERR_TIMEOUT && strstr(ck_comm_errmsg(c), "barrier"),
                  "alone in oneshot: expected a barrier timeout, got %s (%s)", ck_strerror(rc), ck_comm_errmsg(c));
            CHECK(dt >= 1.5 && dt < 30, "the timeout is the communicator's (2 s): %.1f s", dt);
            rc = ck_allreduce(c, a, CK_IN_PLACE, buf, n, CK_F32, CK_SUM);
            CHECK(rc != CK_SUCCESS && strstr(ck_comm_errmsg(c), "unusable"),
                  "after that, oneshot refuses at once: %s (%s)", ck_strerror(rc), ck_comm_errmsg(c));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ck_free(c, buf);
    free(h);
    ck_comm_destroy(c);
}

/* 6. Rank size-1 passes a receive buffer 2 bytes past alignment for f32. */
static void test_misaligned(void)
{
    ck_comm *c;
    const ck_algo *names[] = {ck_algo_find("oneshot"), ck_algo_find("ring")};
    if (ck_comm_create(MPI_COMM_WORLD, CK_MEM_CUDA, &c)) return;
    set_timeout(c, 20);
    const size_t n = 1000;
    char *buf = ck_alloc(c, n * 4 + 16);
    CHECK(buf != NULL, "allocation");
    for (int k = 0; buf && k < 2; k++) {
        if (!names[k]) continue;
        char *recv = buf + (rank == size - 1 ? 2 : 0);
        double t0 = ck_now();
        int rc = ck_allreduce(c, names[k], CK_IN_PLACE, recv, n, CK_F32, CK_SUM);
        double dt = ck_now() - t0;
        CHECK(rc == (rank == size - 1 ? CK_ERR_INVALID_ARG : CK_ERR_MISMATCH) && dt < 10,
              "%s with rank %d's buffer misaligned: every rank fails at once, got %s after %.1f s (%s)",
              names[k]->name, size - 1, ck_strerror(rc), dt, ck_comm_errmsg(c));
        CHECK(rank != size - 1 || strstr(ck_comm_errmsg(c), "aligned"), "the error says why: %s", ck_comm_errmsg(c));
        rc = ck_allreduce(c, names[k], CK_IN_PLACE, buf, n, CK_F32, CK_SUM);
        CHECK(rc == CK_SUCCESS, "%s: the next call, aligned, works: %s (%s)", names[k]->name, ck_strerror(rc),
              ck_comm_errmsg(c));
    }
    ck_free(c, buf);
    ck_comm_destroy(c);
}

int main(int argc, char **argv)
{
    int ndev = 0;
    char why[256];
    switch (ck_gpu_count(&ndev, why, sizeof why)) {
    case CK_SUCCESS: break;
    case CK_ERR_UNSUPPORTED: printf("SKIP: %s\n", why); return SKIP;
    default: printf("FAIL: %s\n", why); return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "--probe")) { printf("%d\n", ndev); return 0; }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ck_comm *c = NULL;
    int rc = ck_comm_create(MPI_COMM_WORLD, CK_MEM_CUDA, &c);
    CHECK(rc == CK_SUCCESS, "ck_comm_create(CK_MEM_CUDA): %s", ck_strerror(rc));
    if (c) {
        CHECK(!strcmp(ck_comm_transport_name(c), "cuda-ipc"), "transport name %s", ck_comm_transport_name(c));
        if (size > 1) test_p2p(c);
        test_peer_algos(c);
        test_nccl(c, ndev);
        ck_comm_destroy(c);
        test_mismatch();
        test_lonely_barrier();
        test_misaligned();
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_gpu p=%d, %d device(s): %s (%d failures)\n", size, ndev, total ? "FAIL" : "PASS", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
