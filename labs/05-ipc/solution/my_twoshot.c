/*
 * Lab 05 — two-shot all-reduce on shared memory (reference solution).
 *
 * On the shm transport every rank's ck_alloc memory is mapped into every
 * peer (collkit_shm.h). Two-shot uses that: no message is sent, each rank
 * loads what it needs straight out of its peers' memory.
 *
 * Region (one per rank, every peer's mapped here: ck_shm_region_create):
 *
 *   [ flags: p cache lines ][ in: one launch of input ][ red: my reduced slice ]
 *
 * flags_at_r[q] is written by rank q only: "q reached barrier k". The input
 * is cut into launches of at most launch_bytes (the --chunk option, at most
 * MY_MAX_LAUNCH); per launch of n elements, slices as ck_block cuts n:
 *   1. copy-in:        my input of the launch into my `in`;
 *   2. barrier:        every peer's `in` is complete;
 *   3. reduce-scatter: red = slice r of every rank's `in`, folded in rank
 *                      order 0, 1, ..., p-1 (the same order on every rank,
 *                      so every rank ends with the same bits);
 *   4. barrier:        every peer's `red` is complete;
 *   5. all-gather:     slice q of my output = rank q's `red`.
 * Reuse: the next launch overwrites my `in` (step 1) after barrier 4, when
 * every peer has finished loading it (step 3), and my `red` (step 3) after
 * the next barrier 2, when every peer has finished copying it (step 5). So
 * two barriers per launch, and none at the end: what peers may still read
 * after I return is in my region, never in the caller's buffers.
 *
 * Barrier k: for each peer q, a release store of k into flags_at_q[me]
 * (publishes everything I wrote before: my `in`, my `red`); then wait until
 * an acquire load of flags_at_me[q] reads >= k for every q (makes what q
 * wrote before its store visible here). k counts barriers on this
 * communicator, the same sequence on every rank, so flags only grow and
 * never need resetting.
 *
 * Bytes loaded by rank r per launch: (p-1)·n_r in step 3 and n - n_r in
 * step 5, n_r = its slice; counted with ck_count_traffic. Messages: none.
 * Cost, L launches: T = 3L·α + 2(p-1)/p·n·β + (p-1)/p·n·γ.
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

/* The first peer whose flag here has not reached k, or -1. */
static int barrier_pending(void *arg)
{
    const wait_arg *w = arg;
    const ck_shm_region *g = w->s->region;
    for (int q = 0; q < g->p; q++)
        if (q != g->rank && atomic_load_explicit(&flag_at(g->mine, q)->seq, memory_order_acquire) < w->k) return q;
    return -1;
}

static int my_barrier(ck_comm *comm, my_state *s, const char *what)
{
    const ck_shm_region *g = s->region;
    const uint64_t k = ++s->seq;
    for (int q = 0; q < g->p; q++)
        if (q != g->rank) atomic_store_explicit(&flag_at(g->peer[q], g->rank)->seq, k, memory_order_release);
    wait_arg w = {s, k};
    int rc = ck_shm_wait(comm, barrier_pending, &w, what);
    if (rc) s->broken = 1;
    return rc;
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
        if (len_r) {
            rc = ck_reduce_local(comm, red, in_at(s, peer[0]) + o_r * es, in_at(s, peer[1]) + o_r * es, len_r, dt, op);
            for (int q = 2; q < p && !rc; q++)
                rc = ck_reduce_local(comm, red, red, in_at(s, peer[q]) + o_r * es, len_r, dt, op);
            if (rc) break;
            for (int q = 0; q < p; q++)
                if (q != r) ck_show_load(comm, q, "in", red, len_r * es);
        }
        loaded += (uint64_t)(p - 1) * len_r * es;
        if ((rc = my_barrier(comm, s, "its reduced slice"))) break;

        /* 5. all-gather: slice q from its owner, starting with mine */
        ck_step(comm, step + 1, "all-gather");
        for (int i = 0; i < p && !rc; i++) {
            const int q = (r + i) % p;
            size_t o_q, len_q;
            ck_block(n, (size_t)p, (size_t)q, &o_q, &len_q);
            rc = ck_copy(comm, out + (off + o_q) * es, red_at(s, peer[q]), len_q * es);
            if (q != r && len_q) ck_show_load(comm, q, "red", out + (off + o_q) * es, len_q * es);
            if (q != r) loaded += len_q * es;
        }
    }
    ck_count_traffic(comm, loaded, 0, loaded, 0);
    return rc;
}

/* ---------------------------------------------------------------- the descriptor */

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
