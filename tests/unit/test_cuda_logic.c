/*
 * test_cuda_logic — the parts of the CUDA IPC transport that are pure logic,
 * on any machine (no GPU, no MPI communication):
 *   - the staging-slot ledger (collectives/src/cuda_logic.h): grants never
 *     exceed a receive's chunks, nor NSLOT outstanding, nor the peer's slots;
 *     a fill must name the slot its chunk was granted; 0-byte messages;
 *   - the peer-access matrix: the first pair of ranks that cannot reach
 *     each other;
 *   - ck_poll_bounded, the watchdog of a stream wait: ready, timeout, error;
 *   - the CUDA runtime's answers, against a fake runtime: a "not ready" poll
 *     leaves no error behind for the next launch check; a wait that timed
 *     out once polls once afterwards, and waits again once the stream
 *     drained; which cudaGetDeviceCount results skip a GPU test and which
 *     fail it; teardown frees only when every rank is idle; device buffers'
 *     alignment (checked before the ranks agree);
 *   - with CUDA built: the oneshot/twoshot launch grid (the same on every
 *     rank, capped, enough blocks, the cap shared out among ranks on one GPU), the 16-byte split of a range (every
 *     element once, vectors aligned), and their descriptors (bytes, no
 *     messages, cost).
 */
#include <stdio.h>
#include <string.h>
#include "collkit.h"
#include "transport.h"
#include "cuda_logic.h"
#include "check.h"
#ifdef COLLKIT_HAVE_CUDA
#include "symmetric.h"
#endif

#define NS CK_CUDA_NSLOT

static int popcount(unsigned x) { int n = 0; for (; x; x &= x - 1) n++; return n; }

/* One receive of `chunks` chunks: grants stop at NSLOT outstanding and at
 * the chunk count; fills in grant order free slots again. */
static void test_one_receive(size_t chunks)
{
    ck_slot_pool pool;
    ck_slot_req r;
    ck_slot_pool_init(&pool);
    ck_slot_req_init(&r, chunks * CK_CUDA_SLOT - 1);   /* the last chunk one byte short */
    CHECK(r.nchunks == chunks, "%zu chunks: nchunks %zu", chunks, r.nchunks);
    int order[64], k;
    size_t granted = 0, filled = 0;
    while (filled < chunks) {
        while (ck_slot_grant(&pool, &r, &k)) {
            CHECK(k >= 0 && k < NS, "slot %d in range", k);
            order[granted++ % 64] = k;
            CHECK(r.ngrant - r.nfill <= NS, "at most NSLOT outstanding (%zu)", r.ngrant - r.nfill);
            CHECK(r.ngrant <= r.nchunks, "never more grants than chunks (%zu of %zu)", r.ngrant, r.nchunks);
            CHECK(popcount(pool.free_mask) + (int)(r.ngrant - r.nfill) == NS, "slots are free or held, once");
        }
        CHECK(granted - filled == (chunks - filled < NS ? chunks - filled : NS),
              "%zu chunks: grants stop at min(chunks left, NSLOT) (%zu outstanding after %zu fills)",
              chunks, granted - filled, filled);
        /* A fill naming another slot is refused and changes nothing. */
        int wrong = (order[filled % 64] + 1) % NS;
        unsigned mask = pool.free_mask;
        CHECK(ck_slot_fill(&pool, &r, wrong) == -1 && pool.free_mask == mask && r.nfill == filled,
              "a fill of the wrong slot is refused");
        CHECK(ck_slot_fill(&pool, &r, order[filled % 64]) == 0, "fill of chunk %zu in its slot", filled);
        filled++;
    }
    CHECK(!ck_slot_grant(&pool, &r, &k), "no grant past the last chunk");
    CHECK(ck_slot_fill(&pool, &r, order[(filled - 1) % 64]) == -1, "no fill without a grant");
    CHECK(pool.free_mask == (1u << NS) - 1, "every slot free at the end");
}

/* Two receives from one peer share its NSLOT slots; a 0-byte receive takes
 * its one grant without a slot even when all slots are out. */
static void test_shared_pool(void)
{
    ck_slot_pool pool;
    ck_slot_req a, b, z;
    int k;
    ck_slot_pool_init(&pool);
    ck_slot_req_init(&a, 10 * CK_CUDA_SLOT);
    ck_slot_req_init(&b, 10 * CK_CUDA_SLOT);
    ck_slot_req_init(&z, 0);
    int ga = 0, gb = 0;
    for (int round = 0; round < 8; round++) {   /* round-robin, as the transport grants */
        ga += ck_slot_grant(&pool, &a, &k);
        gb += ck_slot_grant(&pool, &b, &k);
    }
    CHECK(ga + gb == NS && ga == NS / 2, "two receives share the peer's %d slots (%d + %d)", NS, ga, gb);
    CHECK(pool.free_mask == 0, "all slots out");
    CHECK(z.nchunks == 1 && ck_slot_grant(&pool, &z, &k) == 1 && k == -1, "0-byte receive: one slot-less grant");
    CHECK(!ck_slot_grant(&pool, &z, &k), "and only one");
    CHECK(ck_slot_fill(&pool, &z, 0) == -1, "its fill must name no slot");
    CHECK(ck_slot_fill(&pool, &z, -1) == 0 && pool.free_mask == 0, "a slot-less fill frees nothing");
}

static void test_peer_matrix(void)
{
    unsigned char ok[16];
    int a = -1, b = -1;
    memset(ok, 1, sizeof ok);
    CHECK(!ck_peer_first_unreachable(ok, 4, &a, &b), "all reachable");
    ok[2 * 4 + 1] = 0;   /* rank 2 cannot reach rank 1's GPU */
    CHECK(ck_peer_first_unreachable(ok, 4, &a, &b) && a == 1 && b == 2, "one direction missing: ranks %d, %d", a, b);
    ok[0 * 4 + 3] = 0;
    CHECK(ck_peer_first_unreachable(ok, 4, &a, &b) && a == 0 && b == 3, "first pair first: ranks %d, %d", a, b);
    CHECK(!ck_peer_first_unreachable(ok, 1, &a, &b), "one rank");
}

/* ------------------------------------------------------------ ck_poll_bounded */

static int after_n(void *arg) { int *n = arg; return --*n <= 0; }
static int never(void *arg) { (void)arg; return 0; }
static int broken(void *arg) { (void)arg; return -7; }

static void test_poll(void)
{
    double waited = -1;
    int n = 1000;
    CHECK(ck_poll_bounded(after_n, &n, 5.0, &waited) == 1 && n == 0, "ready after 1000 polls");
    n = 50;
    CHECK(ck_poll_bounded(after_n, &n, 0, NULL) == 1, "no bound: still returns when ready");
    double t0 = ck_now();
    CHECK(ck_poll_bounded(never, NULL, 0.05, &waited) == 0, "never ready: times out");
    double dt = ck_now() - t0;
    CHECK(waited >= 0.05 && dt < 2.0, "the timeout is kept: waited %.3f s (wall %.3f s)", waited, dt);
    CHECK(ck_poll_bounded(broken, NULL, 1.0, NULL) == -7, "an error comes back as is");
}

/* ------------------------------------------------------------ the CUDA runtime's answers */

/* A fake runtime: a stream that is busy for `busy` more queries, then done
 * (or failing with `fail`), and the thread's last error, which a "not ready"
 * answer sets as the real runtime does and get_last reads and resets. */
static struct { int busy, fail, last, queries; } rt;
static int fake_query(void *arg)
{
    (void)arg;
    rt.queries++;
    if (rt.busy > 0) { rt.busy--; rt.last = CK_CU_NOT_READY; return CK_CU_NOT_READY; }
    if (rt.fail) { rt.last = rt.fail; return rt.fail; }
    return CK_CU_SUCCESS;
}
static int fake_get_last(void) { int e = rt.last; rt.last = CK_CU_SUCCESS; return e; }
static int fake_ready(void *arg)
{
    int err = 0, r = ck_cu_poll(fake_query, fake_get_last, arg, &err);
    if (r < 0) CHECK(err == rt.fail, "the failure's code comes back (%d)", err);
    return r;
}

static void test_sticky_not_ready(void)
{
    memset(&rt, 0, sizeof rt);
    rt.busy = 3;
    int err = 0;
    CHECK(ck_cu_poll(fake_query, fake_get_last, NULL, &err) == 0, "busy: not ready");
    CHECK(rt.last == CK_CU_SUCCESS, "a not-ready poll leaves no last error behind (left %d)", rt.last);
    double waited;
    CHECK(ck_poll_bounded(fake_ready, NULL, 5.0, &waited) == 1 && rt.queries == 4, "ready after the busy polls (%d)",
          rt.queries);
    /* What a launch check right after the wait reads: */
    CHECK(fake_get_last() == CK_CU_SUCCESS, "the launch check after a wait sees no error");
    rt.fail = 719;   /* cudaErrorLaunchFailure */
    CHECK(ck_cu_poll(fake_query, fake_get_last, NULL, &err) == -1 && err == 719, "a real failure is reported");
}

static void test_remembered_timeout(void)
{
    ck_cu_watch w = {0};
    double waited = -1;
    memset(&rt, 0, sizeof rt);
    rt.busy = 1 << 30;   /* a stream that never drains */
    double t0 = ck_now();
    CHECK(ck_cu_watch_wait(&w, fake_ready, NULL, 0.1, &waited) == 0 && w.stuck, "first wait times out");
    CHECK(ck_now() - t0 >= 0.1, "and waits the timeout");
    for (int i = 0; i < 5; i++) {
        int q = rt.queries;
        t0 = ck_now();
        CHECK(ck_cu_watch_wait(&w, fake_ready, NULL, 0.1, &waited) == 0, "later waits time out too");
        CHECK(rt.queries == q + 1 && ck_now() - t0 < 0.05 && waited == 0, "... at once, after one poll (%d polls)",
              rt.queries - q);
    }
    CHECK(rt.last == CK_CU_SUCCESS, "no not-ready left behind by the quick polls");
    rt.busy = 0;   /* it drained after all */
    CHECK(ck_cu_watch_wait(&w, fake_ready, NULL, 0.1, &waited) == 1 && !w.stuck, "a drained stream clears the memory");
    rt.busy = 1 << 30;
    t0 = ck_now();
    CHECK(ck_cu_watch_wait(&w, fake_ready, NULL, 0.1, &waited) == 0 && ck_now() - t0 >= 0.1,
          "then a wait is bounded by the timeout again");
    rt.busy = 0;
    rt.fail = 999;
    w.stuck = 1;
    CHECK(ck_cu_watch_wait(&w, fake_ready, NULL, 0.1, &waited) == -1, "an error while stuck is an error");
}

static void test_probe_exit(void)
{
    CHECK(ck_cu_probe_exit(CK_CU_SUCCESS, 2, 12040) == 0, "devices: run");
    CHECK(ck_cu_probe_exit(CK_CU_SUCCESS, 0, 12040) == CK_CU_SKIP, "zero devices: skip");
    CHECK(ck_cu_probe_exit(CK_CU_NO_DEVICE, 0, 12040) == CK_CU_SKIP, "cudaErrorNoDevice: skip");
    CHECK(ck_cu_probe_exit(CK_CU_NO_DRIVER, 0, 0) == CK_CU_SKIP, "no driver installed: skip");
    CHECK(ck_cu_probe_exit(CK_CU_NO_DRIVER, 0, 11040) == 1, "a driver older than the runtime: fail");
    CHECK(ck_cu_probe_exit(46, 0, 12040) == 1, "cudaErrorDevicesUnavailable (Exclusive_Process, busy): fail");
    CHECK(ck_cu_probe_exit(999, 0, 12040) == 1, "cudaErrorUnknown: fail");
    CHECK(ck_cu_probe_exit(3, 0, 12040) == 1, "cudaErrorInitializationError: fail");
}

static void test_teardown_rule(void)
{
    CHECK(ck_cu_teardown(1, 1) == (CK_TEAR_CLOSE | CK_TEAR_FREE), "all idle: close and free");
    CHECK(ck_cu_teardown(1, 0) == CK_TEAR_CLOSE, "a peer still busy: close my mappings, keep my memory");
    CHECK(ck_cu_teardown(0, 0) == 0, "my stream busy: touch nothing");
}

static void test_alignment_rule(void)
{
    _Alignas(16) static char buf[64];
    CHECK(ck_cu_aligned(buf, buf + 8, 8), "aligned pair");
    CHECK(!ck_cu_aligned(buf, buf + 4, 8), "recvbuf off by half an element");
    CHECK(!ck_cu_aligned(buf + 1, buf, 4), "sendbuf off by a byte");
    CHECK(ck_cu_aligned(buf + 2, buf + 6, 2), "bf16 on 2-byte boundaries");
    CHECK(ck_cu_aligned(NULL, NULL, 4), "no buffers (count 0)");
}

#ifdef COLLKIT_HAVE_CUDA
/* ------------------------------------------------------------ oneshot/twoshot */

/* The grid cap: ranks that share a GPU share its SMs, so their grids fit at once. */
static void test_grid_cap(void)
{
    const char *one[] = {"0000:3b:00.0", "0000:3b:00.0", "0000:3b:00.0"};
    const char *two[] = {"0000:3b:00.0", "0000:5e:00.0", "0000:3b:00.0", "0000:3b:00.0", "0000:5e:00.0"};
    const char *own[] = {"0000:3b:00.0", "0000:5e:00.0"};
    CHECK(ck_sym_max_sharing(one, 3) == 3, "three ranks on one GPU");
    CHECK(ck_sym_max_sharing(two, 5) == 3, "the most crowded GPU counts (3 of 5 ranks)");
    CHECK(ck_sym_max_sharing(own, 2) == 1 && ck_sym_max_sharing(own, 1) == 1, "a GPU each");
    CHECK(ck_sym_max_blocks(132, 1) == 264, "one rank per H100: the whole GPU");
    for (int k = 1; k <= 8; k++)
        CHECK(ck_sym_max_blocks(132, k) * (unsigned)k <= 264 && ck_sym_max_blocks(132, k) >= 264 / (unsigned)k,
              "%d ranks on one H100: their grids fit together (%u blocks each)", k, ck_sym_max_blocks(132, k));
    CHECK(ck_sym_max_blocks(1, 8) == 1, "never below one block");
}

static void test_grid(void)
{
    const size_t es[] = {2, 4, 8};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++)
            for (int p = 1; p <= 8; p++) {
                const size_t counts[] = {1, 7, 4097, 100003, ck_sym_launch_elems(es[k])};
                for (int c = 0; c < 5; c++) {
                    size_t n = counts[c];
                    unsigned g = ck_sym_grid(n, p, es[k], t, 264);
                    size_t work = t ? (n + (size_t)p - 1) / (size_t)p : n;
                    size_t vecs = (work * es[k] + CK_SYM_VEC - 1) / CK_SYM_VEC;
                    CHECK(g >= 1 && g <= 264, "grid %u within 1..max", g);
                    CHECK(g == 264 || (size_t)g * CK_SYM_THREADS >= vecs,
                          "%s p=%d n=%zu es=%zu: %u blocks give a thread per vector (%zu vectors)",
                          t ? "twoshot" : "oneshot", p, n, es[k], g, vecs);
                    CHECK(g == 1 || (size_t)(g - 1) * CK_SYM_THREADS < vecs, "no block without work (%u)", g);
                }
            }
    /* The largest launch fills the cap: 4 MiB is 262144 vectors, 512 blocks' worth. */
    CHECK(ck_sym_grid(ck_sym_launch_elems(4), 2, 4, 0, 264) == 264, "a full launch uses every block allowed");
    CHECK(ck_sym_grid(ck_sym_launch_elems(4), 8, 4, 1, 264) == 64, "twoshot p=8: its slice needs 64 blocks");
}

/* Simulate the kernels' item map over a range: every element exactly once,
 * every vector starting on a 16-byte offset. */
static void test_split(void)
{
    static unsigned char seen[4096];
    const size_t pers[] = {2, 4, 8};
    int bad_cover = 0, bad_align = 0, bad_sizes = 0;
    for (int k = 0; k < 3; k++)
        for (size_t off = 0; off < 40; off++)
            for (size_t len = 0; len < 70; len++) {
                size_t per = pers[k], head, nvec, tail;
                ck_sym_split(off, len, per, &head, &nvec, &tail);
                memset(seen, 0, off + len + 1);
                if (head >= per || tail >= per || head + nvec * per + tail != len) bad_sizes++;
                for (size_t i = 0; i < head + nvec + tail; i++) {
                    if (i < head) seen[off + i]++;
                    else if (i < head + nvec) {
                        size_t e = off + head + (i - head) * per;
                        if (e % per) bad_align++;
                        for (size_t j = 0; j < per; j++) seen[e + j]++;
                    } else seen[off + head + nvec * per + (i - head - nvec)]++;
                }
                for (size_t e = 0; e < off + len + 1; e++)
                    if (seen[e] != (e >= off && e < off + len)) { bad_cover++; break; }
            }
    CHECK(!bad_sizes, "head and tail shorter than a vector, parts add up (%d bad)", bad_sizes);
    CHECK(!bad_align, "vectors start on a 16-byte offset (%d bad)", bad_align);
    CHECK(!bad_cover, "every element of the range exactly once (%d ranges bad)", bad_cover);
}

static void test_descriptors(void)
{
    const char *names[] = {"oneshot", "twoshot"};
    ck_config cfg = {256 * 1024, 30.0, 1, 0};
    ck_cost_params m = {5e-6, 1e-11, 1e-11, 256 * 1024};
    for (int i = 0; i < 2; i++) {
        const ck_algo *a = ck_algo_find(names[i]);
        CHECK(a && a->bytes_sent && a->msgs_sent && a->cost && a->cost_formula && a->diagnose,
              "%s fills its descriptor", names[i]);
        if (!a || !a->bytes_sent || !a->msgs_sent || !a->cost) continue;
        for (int p = 1; p <= 8; p++) {
            const size_t counts[] = {1, 5, 1000003, 3 * ck_sym_launch_elems(4) + 11};
            for (int c = 0; c < 4; c++) {
                uint64_t total = 0, n = counts[c];
                for (int r = 0; r < p; r++) {
                    total += a->bytes_sent(p, r, n, 4, &cfg);
                    CHECK(a->msgs_sent(p, r, n, 4, &cfg) == 0, "%s sends no messages", names[i]);
                }
                /* oneshot: every buffer read p-1 times; twoshot: every byte twice minus the owner's share */
                uint64_t want = i == 0 ? (uint64_t)p * (p - 1) * n * 4 : 2 * (uint64_t)(p - 1) * n * 4;
                CHECK(total == want, "%s p=%d n=%llu: ranks send %llu B in all, expected %llu",
                      names[i], p, (unsigned long long)n, (unsigned long long)total, (unsigned long long)want);
            }
            CHECK(p > 1 || a->cost(&m, p, 1e6) == 0, "%s costs nothing at p = 1", names[i]);
        }
        CHECK(a->cost(&m, 4, 64e6) > a->cost(&m, 4, 8e6) && a->cost(&m, 8, 8e6) > a->cost(&m, 4, 8e6),
              "%s costs more for more bytes and ranks", names[i]);
    }
    const ck_algo *o = ck_algo_find("oneshot"), *t = ck_algo_find("twoshot");
    if (o && t && o->cost && t->cost)
        CHECK(o->cost(&m, 8, 1024) < t->cost(&m, 8, 1024) && o->cost(&m, 8, 64e6) > t->cost(&m, 8, 64e6),
              "the model has oneshot ahead for small messages and twoshot for large ones");
}
#endif

int main(void)
{
    for (size_t c = 1; c <= 11; c++) test_one_receive(c);
    test_shared_pool();
    test_peer_matrix();
    test_poll();
    test_sticky_not_ready();
    test_remembered_timeout();
    test_probe_exit();
    test_teardown_rule();
    test_alignment_rule();
#ifdef COLLKIT_HAVE_CUDA
    test_grid_cap();
    test_grid();
    test_split();
    test_descriptors();
#endif
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
