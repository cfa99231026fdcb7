/*
 * test_shm — the shm transport on P ranks of this node:
 *   - a CK_MEM_SHM communicator is the shm transport, host memory + shm;
 *   - ck_alloc hands out shared memory: a rank reads what its peers wrote
 *     into their buffers through ck_shm_peer; a heap that is full (here
 *     COLLKIT_SHM_HEAP=64M) falls back to plain memory, and freed memory is
 *     handed out again;
 *   - point to point between every pair: sizes around the slot (0 B up to
 *     many chunks), two tags posted in opposite orders, buffers inside and
 *     outside the shared heap;
 *   - a size mismatch fails on both sides with the sizes named, and the
 *     next communicator works;
 *   - oneshot and twoshot on buffers outside the heap (copy-in) and inside
 *     it (zero copy), in place and not; refused on the mpi transport;
 *   - the async engine runs them on its own clone of a shm communicator.
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_shm.h"
#include "check.h"

static int rank, p;

static void pattern(unsigned char *b, size_t n, int from, int to, int tag)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 13u + (unsigned)from * 7u + (unsigned)to * 3u + (unsigned)tag);
}

static void test_basics(void)
{
    ck_comm *c = NULL;
    CHECK(ck_comm_create(MPI_COMM_WORLD, CK_MEM_SHM, &c) == CK_SUCCESS && c, "create a shm communicator");
    if (!c) return;
    CHECK(!strcmp(ck_comm_transport_name(c), "shm"), "transport shm (got %s)", ck_comm_transport_name(c));
    CHECK(ck_comm_mem(c) == (CK_MEM_HOST | CK_MEM_SHM), "memory host + shm (got %u)", ck_comm_mem(c));
    CHECK(ck_shm_active(c), "ck_shm_active");

    /* Shared heap: each rank fills a buffer, every rank reads every buffer. */
    const size_t n = 100000;
    unsigned char *mine = ck_alloc(c, n);
    int64_t off = mine ? ck_shm_offset(c, mine, n) : -1, *offs = malloc((size_t)p * sizeof *offs);
    CHECK(off >= 0, "ck_alloc is in the shared heap");
    CHECK(ck_shm_offset(c, mine, 1ull << 40) == -1, "a range past the heap has no offset");
    unsigned char stack_byte = 0;
    CHECK(ck_shm_offset(c, &stack_byte, 1) == -1, "the stack has no offset");
    pattern(mine, n, rank, 0, 0);
    MPI_Allgather(&off, 1, MPI_INT64_T, offs, 1, MPI_INT64_T, MPI_COMM_WORLD);   /* also orders the writes */
    int bad = 0;
    unsigned char *want = malloc(n);
    for (int q = 0; q < p; q++) {
        const unsigned char *theirs = ck_shm_peer(c, q, offs[q]);
        pattern(want, n, q, 0, 0);
        bad += !theirs || memcmp(theirs, want, n) != 0;
    }
    CHECK(!bad, "every rank's buffer is readable from here (%d not)", bad);
    CHECK(ck_shm_peer(c, p, 0) == NULL && ck_shm_peer(c, -1, 0) == NULL, "no peer out of range");
    MPI_Barrier(MPI_COMM_WORLD);   /* nobody frees before all have read */
    ck_free(c, mine);
    free(want);
    free(offs);

    /* The heap is 64 MB here (COLLKIT_SHM_HEAP): what does not fit is plain memory. */
    void *a = ck_alloc(c, 40 << 20), *b = ck_alloc(c, 40 << 20);
    CHECK(a && ck_shm_offset(c, a, 40 << 20) >= 0, "40 MB fit in the 64 MB heap");
    CHECK(b && ck_shm_offset(c, b, 40 << 20) == -1, "40 MB more do not: plain memory");
    if (b) memset(b, 1, 40 << 20);
    ck_free(c, a);
    ck_free(c, b);
    void *again = ck_alloc(c, 60 << 20);
    CHECK(again && ck_shm_offset(c, again, 60 << 20) >= 0, "freed heap memory is handed out again");
    ck_free(c, again);
    ck_comm_destroy(c);

    ck_comm *m = NULL;
    ck_comm_create(MPI_COMM_WORLD, CK_MEM_HOST, &m);
    CHECK(m && !ck_shm_active(m) && ck_shm_offset(m, &stack_byte, 1) == -1 && !ck_shm_peer(m, 0, 0),
          "an mpi communicator has no shared memory");
    ck_comm_destroy(m);
}

/* Every ordered pair exchanges messages of every size, on two tags whose
 * receives are posted in opposite orders. */
static void test_p2p(int heap_bufs)
{
    static const size_t sizes[] = {0, 1, 4095, 256 << 10, (256 << 10) + 1, 4 * (256 << 10) + 5, 3 << 20};
    enum { NSZ = sizeof sizes / sizeof sizes[0] };
    ck_comm *c = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, CK_MEM_SHM, &c)) { CHECK(0, "create"); return; }
    int bad = 0, errs = 0;
    for (int k = 0; k < NSZ; k++) {
        const size_t n = sizes[k];
        /* [peer][tag] send and receive buffers */
        unsigned char **sb = calloc((size_t)(2 * p), sizeof *sb), **rb = calloc((size_t)(2 * p), sizeof *rb);
        ck_req *rq = calloc((size_t)(4 * p), sizeof *rq);
        for (int i = 0; i < 2 * p; i++) {
            sb[i] = heap_bufs ? ck_alloc(c, n + 1) : malloc(n + 1);
            rb[i] = heap_bufs ? ck_alloc(c, n + 1) : malloc(n + 1);
            pattern(sb[i], n, rank, i / 2, i % 2);
            memset(rb[i], 0, n + 1);
        }
        int nr = 0;
        for (int q = 0; q < p; q++) {
            if (q == rank) continue;
            for (int t = 0; t < 2; t++) {
                const int tag = (q + t) % 2 ? 5 : 9;   /* peers differ in which tag they post first */
                errs += ck_irecv(c, rb[2 * q + (tag == 9)], n, q, tag, &rq[nr++]) != 0;
            }
        }
        for (int q = 0; q < p; q++) {
            if (q == rank) continue;
            errs += ck_isend(c, sb[2 * q], n, q, 5, &rq[nr++]) != 0;
            errs += ck_isend(c, sb[2 * q + 1], n, q, 9, &rq[nr++]) != 0;
        }
        errs += ck_waitall(c, rq, nr) != 0;
        unsigned char *want = malloc(n + 1);
        for (int q = 0; q < p; q++) {
            if (q == rank) continue;
            for (int t = 0; t < 2; t++) {
                pattern(want, n, q, rank, t);
                bad += memcmp(rb[2 * q + t], want, n) != 0 || rb[2 * q + t][n] != 0;
            }
        }
        free(want);
        for (int i = 0; i < 2 * p; i++) {
            if (heap_bufs) { ck_free(c, sb[i]); ck_free(c, rb[i]); }
            else { free(sb[i]); free(rb[i]); }
        }
        free(sb); free(rb); free(rq);
    }
    CHECK(!errs, "%s buffers: every send and receive completes (%d failed): %s", heap_bufs ? "heap" : "malloc'd",
          errs, ck_comm_errmsg(c));
    CHECK(!bad, "%s buffers: every message arrives intact, in its own receive (%d did not)",
          heap_bufs ? "heap" : "malloc'd", bad);
    ck_comm_destroy(c);
}

static void test_mismatch(void)
{
    if (p < 2) return;
    ck_comm *c = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, CK_MEM_SHM, &c)) { CHECK(0, "create"); return; }
    char buf[128] = {0};
    int rc = CK_SUCCESS;
    if (rank == 0) rc = ck_sendrecv(c, buf, 100, 1, NULL, 0, -1, 3);
    if (rank == 1) rc = ck_sendrecv(c, NULL, 0, -1, buf, 80, 0, 3);
    if (rank == 0)
        CHECK(rc == CK_ERR_TRANSPORT && strstr(ck_comm_errmsg(c), "message size mismatch: sending 100 B, the receive is 80 B"),
              "the sender sees the mismatch: %s", ck_comm_errmsg(c));
    if (rank == 1)
        CHECK(rc == CK_ERR_TRANSPORT && strstr(ck_comm_errmsg(c), "message size mismatch: receiving 80 B, the sender sent 100 B"),
              "the receiver sees it: %s", ck_comm_errmsg(c));
    ck_comm_destroy(c);
    c = NULL;
    ck_comm_create(MPI_COMM_WORLD, CK_MEM_SHM, &c);
    if (rank < 2) {
        rc = rank == 0 ? ck_sendrecv(c, buf, 64, 1, NULL, 0, -1, 3) : ck_sendrecv(c, NULL, 0, -1, buf, 64, 0, 3);
        CHECK(rc == CK_SUCCESS, "a new communicator works again (%s)", ck_comm_errmsg(c));
    }
    ck_comm_destroy(c);
}

/* The sum of ranks+1 times (i % 7 + 1): exact in f32. */
static int check_sum(const float *y, size_t n)
{
    const float s = (float)p * (float)(p + 1) / 2;
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad += y[i] != s * (float)(i % 7 + 1);
    return bad;
}

static void input(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = (float)(rank + 1) * (float)(i % 7 + 1);
}

static void test_single_copy(void)
{
    ck_comm *c = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, CK_MEM_SHM, &c)) { CHECK(0, "create"); return; }
    const char *names[] = {"oneshot", "twoshot"};
    const size_t counts[] = {3, 1000, 300000, 2500000};   /* 2.5 M f32: 3 launches */
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < 4; k++)
            for (int heap = 0; heap < 2; heap++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    const size_t n = counts[k], b = n * sizeof(float);
                    float *x = heap ? ck_alloc(c, b) : malloc(b), *y = heap ? ck_alloc(c, b) : malloc(b);
                    input(inplace ? y : x, n);
                    int rc = ck_allreduce(c, ck_algo_find(names[a]), inplace ? CK_IN_PLACE : x, y, n, CK_F32, CK_SUM);
                    CHECK(rc == CK_SUCCESS && !check_sum(y, n), "%s n=%zu %s %s: %s", names[a], n,
                          heap ? "shared heap" : "malloc'd", inplace ? "in place" : "out of place", ck_comm_errmsg(c));
                    if (heap) { ck_free(c, x); ck_free(c, y); } else { free(x); free(y); }
                }
    ck_comm_destroy(c);

    ck_comm *m = NULL;
    ck_comm_create(MPI_COMM_WORLD, CK_MEM_HOST, &m);
    float v = 1, w = 0;
    int rc = ck_allreduce(m, ck_algo_find("oneshot"), &v, &w, 1, CK_F32, CK_SUM);
    CHECK(rc == CK_ERR_UNSUPPORTED && strstr(ck_comm_errmsg(m), "does not run on the mpi transport"),
          "oneshot is refused on the mpi transport: %s", ck_comm_errmsg(m));
    ck_comm_destroy(m);
}

static void test_async(void)
{
    int level = 0;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) return;
    ck_comm *c = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, CK_MEM_SHM, &c)) { CHECK(0, "create"); return; }
    const char *names[] = {"twoshot", "ring", "oneshot"};
    enum { N = 3, COUNT = 200000 };
    float *x[N], *y[N];
    ck_async *h[N];
    for (int i = 0; i < N; i++) {
        x[i] = ck_alloc(c, COUNT * sizeof(float));
        y[i] = ck_alloc(c, COUNT * sizeof(float));
        input(x[i], COUNT);
        CHECK(ck_allreduce_async(c, ck_algo_find(names[i]), x[i], y[i], COUNT, CK_F32, CK_SUM, &h[i]) == CK_SUCCESS,
              "async %s posted: %s", names[i], ck_comm_errmsg(c));
    }
    for (int i = 0; i < N; i++) {
        int rc = ck_allreduce_wait(h[i]);
        CHECK(rc == CK_SUCCESS && !check_sum(y[i], COUNT), "async %s on the clone: %s", names[i], ck_comm_errmsg(c));
        ck_free(c, x[i]);
        ck_free(c, y[i]);
    }
    ck_comm_destroy(c);
}

int main(int argc, char **argv)
{
    int provided;
    setenv("COLLKIT_SHM_HEAP", "64M", 1);   /* before the first communicator: a small heap, to fill it */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    check_rank = rank;
    test_basics();
    test_p2p(1);
    test_p2p(0);
    test_mismatch();
    test_single_copy();
    test_async();
    int f = failed, anyf = 0;
    MPI_Allreduce(&f, &anyf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", passed, anyf);
    MPI_Finalize();
    return anyf ? 1 : 0;
}
