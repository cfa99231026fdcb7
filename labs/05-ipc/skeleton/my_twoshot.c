/*
 * Lab 05 — your two-shot all-reduce on shared memory.
 *
 * This file defines `my_twoshot` and registers it. `make lab05` builds it
 * with collkit-cc (together with your lab 01 ring, labs/01-ring/my_ring.c)
 * and grades it. It runs only on the shm transport: every rank's ck_alloc
 * memory is mapped into every peer (collkit_shm.h), so no message is sent —
 * each rank loads what it needs straight out of its peers' memory.
 *
 * Given: the region every rank shares (flags, `in`, `red`), the launch loop,
 * the copy-in and the descriptor. Yours (HANDOUT.md, steps 3-5):
 *   TODO 1  the barrier: release stores to the peers' flags, acquire loads
 *           of yours, waited for with ck_shm_wait;
 *   TODO 2  reduce-scatter: your slice of every rank's `in`, in rank order;
 *   TODO 3  all-gather: every slice from its owner's `red`; count the bytes.
 *
 * Region (one per rank, every peer's mapped here: ck_shm_region_create):
 *
 *   [ flags: p cache lines ][ in: one launch of input ][ red: my reduced slice ]
 *
 * flags_at_r[q] is written by rank q only: "q reached barrier k". Per
 * launch of n elements, slices as ck_block cuts n:
 *   1. copy-in (given), 2. barrier, 3. reduce-scatter into my `red`,
 *   4. barrier, 5. all-gather from every rank's `red` into my output.
 *
 * Rules (the grader checks them): collkit_algo.h and collkit_shm.h only, C11
 * atomics for the flags. No MPI calls, no calls of the library's algorithms.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include "collkit_algo.h"
#include "collkit_shm.h"

#define MY_MAX_LAUNCH ((size_t)4 << 20)

typedef struct {
    _Alignas(64) _Atomic uint64_t seq;
} flag_line;

typedef struct {
    ck_shm_region *region;
    size_t   ctl;        /* bytes of the flags, rounded to a page */
    uint64_t seq;        /* barriers so far */
    int      broken;     /* a barrier failed: the ranks' counts may differ */
} my_state;

extern const ck_algo my_twoshot;

/* Elements per launch: the --chunk option (ck_config.chunk_bytes), at least one
 * element, at most MY_MAX_LAUNCH bytes. The descriptor's bytes use it too. */
static size_t my_launch_elems(size_t es, const ck_config *cfg)
{
    size_t b = cfg && cfg->chunk_bytes ? cfg->chunk_bytes : MY_MAX_LAUNCH;
    if (b > MY_MAX_LAUNCH) b = MY_MAX_LAUNCH;
    return b / es ? b / es : 1;
}

static flag_line *flag_at(char *region, int q) { return (flag_line *)region + q; }
static char *in_at(const my_state *s, char *region) { return region + s->ctl; }
static char *red_at(const my_state *s, char *region) { return region + s->ctl + MY_MAX_LAUNCH; }

/* ---------------------------------------------------------------- barrier */

typedef struct { const my_state *s; uint64_t k; } wait_arg;

/* The first peer whose flag here has not reached w->k, or -1 when none. */
static int barrier_pending(void *arg)
{
    const wait_arg *w = arg;
    (void)w;
    /* TODO 1b — for each peer q != rank: an acquire load of
     * flag_at(region->mine, q)->seq (atomic_load_explicit(..., memory_order_acquire));
     * return q if it is still below w->k. */
    return -1;
}

static int my_barrier(ck_comm *comm, my_state *s, const char *what)
{
    const uint64_t k = ++s->seq;
    (void)k; (void)comm; (void)what; (void)barrier_pending;
    /* TODO 1a — tell every peer q != rank that you reached barrier k: a
     * release store (atomic_store_explicit(..., memory_order_release)) of k
     * into YOUR flag in q's region, flag_at(region->peer[q], region->rank).
     * Then wait: wait_arg w = {s, k}; rc = ck_shm_wait(comm, barrier_pending, &w, what);
     * and on failure set s->broken (the ranks' counts may differ from then on). */
    return CK_SUCCESS;
}

/* ---------------------------------------------------------------- state */

static void my_state_destroy(void *state)
{
    my_state *s = state;
    ck_shm_region_destroy(s->region);   /* collective: waits for every rank */
    free(s);
}

/* Collective, on the first call: every rank's region. */
static int my_setup(ck_comm *comm, my_state **out)
{
    const int p = ck_comm_size(comm);
    const size_t ctl = ((size_t)p * sizeof(flag_line) + 4095) / 4096 * 4096;
    ck_shm_region *g;
    int rc = ck_shm_region_create(comm, ctl + 2 * MY_MAX_LAUNCH, &g);
    if (rc) return rc;
    my_state *s = calloc(1, sizeof *s);
    if (!s) { ck_shm_region_destroy(g); return ck_fail(comm, CK_ERR_NOMEM, "my_twoshot: out of memory"); }
    s->region = g;
    s->ctl = ctl;
    if ((rc = ck_algo_state_set(comm, &my_twoshot, s, my_state_destroy))) { my_state_destroy(s); return rc; }
    *out = s;
    return CK_SUCCESS;
}

/* ---------------------------------------------------------------- the algorithm */

static int my_twoshot_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                          size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), per = my_launch_elems(es, ck_comm_config(comm));
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc = CK_SUCCESS;

    if (!ck_shm_active(comm))
        return ck_fail(comm, CK_ERR_UNSUPPORTED, "my_twoshot needs the shm transport (--transport shm)");
    if (p == 1) return ck_copy(comm, out, in, count * es);
    my_state *s = ck_algo_state(comm, &my_twoshot);
    if (!s && (rc = my_setup(comm, &s))) return rc;
    if (s->broken) return ck_fail(comm, CK_ERR_TRANSPORT, "my_twoshot: unusable after an earlier failed barrier");
    char *const *peer = s->region->peer;
    uint64_t loaded = 0;
    int step = 0;
    (void)peer;

    /* The skeleton only copies the input: the checker will tell you what is
     * missing. Delete this line once TODO 3 writes every slice. */
    if ((rc = ck_copy(comm, out, in, count * es))) return rc;

    for (size_t off = 0; off < count && !rc; off += per, step += 2) {
        const size_t n = count - off < per ? count - off : per;
        size_t o_r, len_r;
        ck_block(n, (size_t)p, (size_t)r, &o_r, &len_r);

        /* 1-2. my input where the peers can load it; wait for theirs */
        /* (ck_show_*: what colldraw draws as each rank's shared rows and loads; nothing otherwise) */
        ck_show_shared(comm, "in", in_at(s, s->region->mine), n * es);
        ck_step(comm, step, "copy-in");
        if ((rc = ck_copy(comm, in_at(s, s->region->mine), in + off * es, n * es))) break;
        if ((rc = my_barrier(comm, s, "its input"))) break;

        /* 3. reduce-scatter: my slice of every rank's input, in rank order */
        ck_step(comm, step, "reduce-scatter");
        char *red = red_at(s, s->region->mine);
        ck_show_shared(comm, "red", red, len_r * es);
        (void)red; (void)o_r; (void)len_r;
        /* TODO 2 — red[0 .. len_r) = slice r (elements o_r .. o_r+len_r) of
         * every rank's `in` (in_at(s, peer[q])), folded in rank order:
         * ck_reduce_local(comm, red, <rank 0's>, <rank 1's>, len_r, dt, op), then
         * red = red op <rank q's> for q = 2 .. p-1. Nothing to do when len_r = 0.
         * Add what you loaded from peers to `loaded`. For the drawing, name each
         * load: ck_show_load(comm, q, "in", red, len_r * es) for every q != r. */
        if ((rc = my_barrier(comm, s, "its reduced slice"))) break;

        /* 5. all-gather: slice q from its owner */
        ck_step(comm, step + 1, "all-gather");
        /* TODO 3 — for every rank q (start with your own, r, then r+1, ...:
         * the readers spread over the owners): its slice (ck_block(n, p, q, ...))
         * from red_at(s, peer[q]) into out + (off + o_q) * es with ck_copy.
         * Add the bytes loaded from peers (q != r) to `loaded`, and name each such
         * load for the drawing: ck_show_load(comm, q, "red", <where it went>, <bytes>). */
    }
    ck_count_traffic(comm, loaded, 0, loaded, 0);
    return rc;
}

/* ---------------------------------------------------------------- the descriptor (given) */

/* Bytes rank r loads from its peers: per launch (p-1)·n_r + (n - n_r). */
static uint64_t my_twoshot_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    const size_t per = my_launch_elems(es, cfg);
    uint64_t total = 0;
    if (p == 1) return 0;
    for (size_t off = 0; off < count; off += per) {
        size_t n = count - off < per ? count - off : per, o, len;
        ck_block(n, (size_t)p, (size_t)r, &o, &len);
        total += (uint64_t)((size_t)(p - 1) * len + n - len) * es;
    }
    return total;
}

static uint64_t my_twoshot_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)p; (void)r; (void)count; (void)es; (void)cfg;
    return 0;
}

static double my_twoshot_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    double launch = m->chunk > 0 && m->chunk < (double)MY_MAX_LAUNCH ? m->chunk : (double)MY_MAX_LAUNCH;
    double L = n > 0 ? (double)(size_t)((n + launch - 1) / launch) : 1, f = (double)(p - 1) / p;
    return 3 * L * m->alpha + 2 * f * n * m->beta + f * n * m->gamma;
}

const ck_algo my_twoshot = {
    .name = "my_twoshot",
    .summary = "lab 05: two-shot on shared memory (reduce-scatter + all-gather by loads)",
    .mem = CK_MEM_SHM,
    .bytes_formula = "2(p-1)/p * n (loaded from peers)",
    .bytes_sent = my_twoshot_bytes,
    .msgs_sent = my_twoshot_msgs,
    .cost_formula = "3L·α + 2(p-1)/p·n·β + (p-1)/p·n·γ, L = ⌈n / launch⌉",
    .cost = my_twoshot_cost,
    .run = my_twoshot_run,
};
CK_REGISTER_ALGO(my_twoshot)
