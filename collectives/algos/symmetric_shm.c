/*
 * symmetric_shm.c — oneshot and twoshot on host memory: the CPU twin of
 * cuda/symmetric.c. The shm transport maps every rank's shared heap into
 * every peer (collkit_shm.h), so a rank can load its peers' data straight
 * out of their memory, with no message and no staging copy on the peer's
 * side.
 *
 * Symmetric region. On the first call (collective) each rank takes one
 * region from its shared heap, every peer's mapped here
 * (ck_shm_region_create, the call any algorithm file can make); the region
 * is freed with the communicator. Layout:
 *
 *   [ flags[p] (a cache line each) ][ desc[2] ][ half 0 ][ half 1 ][ staging 0 ][ staging 1 ]
 *
 * flags_at_r[q] is written by rank q only: "q reached barrier k" (k counts
 * the barriers of the communicator, the same sequence on every rank, so it
 * only grows). desc[h] says where this rank's input of the launch with
 * parity h is, as an offset into its shared memory.
 *
 * Barrier k, as the CUDA kernels do it:
 *     for each peer q: atomic store, release:  flags_at_q[me] = k
 *     wait (ck_shm_wait) until, for each q:     acquire load of flags_at_me[q] >= k
 * The release publishes everything this rank wrote before (its copy-in, its
 * desc, its reduced slice); the acquire makes it visible here. The wait
 * keeps the watchdog: a rank that never comes is a CK_ERR_TIMEOUT naming it.
 *
 * Inputs. Where the caller's send buffer lies in the shared heap (it came
 * from ck_alloc on this communicator) and the message is large enough for a
 * barrier to cost less than a copy (CK_SHM_DIRECT_MIN), the peers load from
 * it where it is. Otherwise the input is first copied into a half
 * (copy-in): launch g+2 reuses the half of launch g only after this rank
 * passed the start barrier of launch g+1, which every peer reached after it
 * finished launch g. oneshot in place always copies in: it overwrites its
 * buffer with the result while the peers still load its input from there.
 *
 * oneshot, per launch: start barrier; fold all p inputs into the output.
 * Where a peer loads the caller's buffer, one more barrier (end) before
 * anyone returns: the caller may reuse its buffer then.
 *
 * twoshot, per launch: start barrier; then rounds over sub-chunks of the
 * slices (CK_SHM_SUB bytes of each): fold my sub-chunk from every rank's
 * input into my staging buffer, barrier, copy every rank's staging buffer
 * into my output. The staging buffers are small enough to stay in cache, so
 * a reduced slice travels from its owner's cache to the readers' caches
 * instead of through memory: per rank, memory sees the inputs read once and
 * the output written once, which is what an all-reduce cannot do without.
 * Staging buffer j % 2 is written again in round j + 2, after the barrier
 * of round j + 1, which every peer reaches after it copied round j's. The
 * last barrier comes after every rank's last load of a peer's input, so
 * twoshot needs no end barrier, in place or not: rank r writes sub-chunk j
 * of its output only after the barrier of round j, by which every peer has
 * folded sub-chunk j of its slice of r's input.
 *
 * Large outputs (CK_SHM_NT_MIN) are written with streaming stores
 * (ck_shm_copy_nt): a result nobody reads soon should not cost a read of the
 * line before its write, nor evict the inputs still to come.
 *
 * A drawing tool (colldraw) sees the regions and the loads through
 * ck_show_shared and ck_show_load: with no message posted, they are what
 * moves the data.
 *
 * The fold. Every rank folds in rank order 0, 1, ..., p-1 with the library's
 * reduce kernel (ck_reduce_local), so the results are bitwise those of the
 * device kernels and of naive. For p > 2 the fold goes in blocks that stay in
 * cache (the partial result of a block is read again p-2 times).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_shm.h"
#include "single_copy.h"

/* Below this many bytes, copying the input in is cheaper than the end barrier. */
#define CK_SHM_DIRECT_MIN ((size_t)64 << 10)
/* twoshot: bytes of each slice per round (a staging buffer): small enough
 * that the staging buffers of all ranks stay in the last-level cache, large
 * enough that a rank preempted by the OS holds the others up at few barriers. */
#define CK_SHM_SUB ((size_t)512 << 10)
/* From this many bytes of output on, it is written with streaming stores. */
#define CK_SHM_NT_MIN ((size_t)8 << 20)
/* Bytes per fold block: the partial result stays in L1/L2. */
#define FOLD_BLOCK ((size_t)32 << 10)

typedef struct {
    _Alignas(64) _Atomic uint64_t seq;
} flag_line;

typedef struct {
    _Alignas(64) uint64_t gen;   /* the launch this describes (a check that the ranks are in step) */
    int64_t  src_off;            /* my input of the launch, in my shared memory */
    uint32_t exposed;            /* it is the caller's buffer: a peer loads from it */
} desc_line;

typedef struct shm_sym {
    ck_comm       *comm;
    ck_shm_region *region;  /* every rank's region, mapped here (ck_shm_region_create) */
    int       p, rank, broken;
    size_t    ctl_bytes, bytes;
    char     *mine;        /* my region */
    char    **peer;        /* [p]: each rank's region, mapped here */
    int64_t   mine_off;    /* my region's offset in my shared memory */
    uint64_t  gen;         /* launches so far: the same on every rank */
    uint64_t  seq;         /* barriers so far: the same on every rank */
    uint64_t  round;       /* twoshot rounds so far: which staging buffer */
} shm_sym;

/* The ck_algo_state key: a descriptor of its own (never registered), so
 * oneshot and twoshot share one region and one barrier sequence. */
static const ck_algo sym_key = {.name = "oneshot/twoshot shared regions"};

static flag_line *flag_at(char *region, int q) { return (flag_line *)region + q; }
static desc_line *desc_at(char *region, int p, int h)
{
    return (desc_line *)(region + (size_t)p * sizeof(flag_line)) + h;
}
static size_t half_off(const shm_sym *s, int h) { return s->ctl_bytes + (size_t)h * CK_SYM_HALF; }
static size_t staging_off(const shm_sym *s, int k) { return s->ctl_bytes + 2 * CK_SYM_HALF + (size_t)k * CK_SHM_SUB; }

/* ------------------------------------------------------------ setup and teardown */

static void sym_destroy(void *state)
{
    shm_sym *s = state;
    /* A peer may still be loading from my region (a call without an end
     * barrier): the region's destroy waits until every rank is here. */
    ck_shm_region_destroy(s->region);
    free(s);
}

/* Collective: take the regions (zeroed, every peer's mapped here). On
 * failure every rank gets the error and the next call tries again. */
static int setup(ck_comm *comm, const char *name, shm_sym **out)
{
    const int p = ck_comm_size(comm);
    const size_t ctl = ((size_t)p * sizeof(flag_line) + 2 * sizeof(desc_line) + 4095) / 4096 * 4096;
    const size_t want = ctl + 2 * CK_SYM_HALF + 2 * CK_SHM_SUB;
    ck_shm_region *g = NULL;
    int rc = ck_shm_region_create(comm, want, &g);
    if (rc) {
        char why[256];
        snprintf(why, sizeof why, "%s", ck_comm_errmsg(comm));
        return ck_fail(comm, rc, "%s: %s", name, why);
    }
    shm_sym *s = calloc(1, sizeof *s);
    if (!s) { ck_shm_region_destroy(g); return ck_fail(comm, CK_ERR_NOMEM, "%s: out of memory", name); }
    *s = (shm_sym){.comm = comm, .region = g, .p = p, .rank = ck_comm_rank(comm), .ctl_bytes = ctl, .bytes = want,
                   .mine = g->mine, .peer = g->peer, .mine_off = ck_shm_offset(comm, g->mine, want)};
    if ((rc = ck_algo_state_set(comm, &sym_key, s, sym_destroy))) { sym_destroy(s); return rc; }
    *out = s;
    return CK_SUCCESS;
}

/* Shared memory that runs short (the heap full, COLLKIT_SHM_HEAP too small,
 * the node's memory or cgroup limit): the region could not be taken, and
 * every rank knows it (ck_shm_region_create agrees across ranks), so every
 * rank runs this call as ring over the transport's staging slots instead, and
 * the next call tries again. Said once per process, by rank 0. */
static int fallback(ck_comm *comm, const char *name, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt,
                    ck_op op)
{
    static int said;
    const ck_algo *ring = ck_algo_find("ring");
    if (!ring) return CK_ERR_NOMEM;
    if (ck_comm_rank(comm) == 0 && !said++) {
        fprintf(stderr, "collkit: %s; shared memory runs short, so %s calls that cannot take it run ring over the "
                "shm transport instead (COLLKIT_SHM_HEAP sets the heap)\n", ck_comm_errmsg(comm), name);
        fflush(stderr);
    }
    return ring->run(comm, sendbuf, recvbuf, count, dt, op);
}

/* ------------------------------------------------------------ the barrier */

typedef struct { shm_sym *s; uint64_t seq; } barrier_arg;

/* The first rank whose flag has not reached seq, or -1. */
static int barrier_pending(void *arg)
{
    const barrier_arg *b = arg;
    for (int q = 0; q < b->s->p; q++)
        if (q != b->s->rank && atomic_load_explicit(&flag_at(b->s->mine, q)->seq, memory_order_acquire) < b->seq)
            return q;
    return -1;
}

static int barrier(shm_sym *s, const char *what)
{
    const uint64_t k = ++s->seq;
    for (int q = 0; q < s->p; q++)
        if (q != s->rank) atomic_store_explicit(&flag_at(s->peer[q], s->rank)->seq, k, memory_order_release);
    barrier_arg b = {s, k};
    int rc = ck_shm_wait(s->comm, barrier_pending, &b, what);
    if (rc) s->broken = 1;   /* the ranks' barrier counts may differ from here on */
    return rc;
}

/* ------------------------------------------------------------ the fold */

/* y[i] = x[0][i] op x[1][i] op ... op x[p-1][i], i < n, in rank order; y
 * is none of the x. With nt, y is written with streaming stores (through a
 * private block). */
static int fold(ck_comm *comm, char *y, char *const *x, int p, size_t n, size_t es, ck_dtype dt, ck_op op, int nt)
{
    int rc;
    if (p == 2 && !nt) return ck_reduce_local(comm, y, x[0], x[1], n, dt, op);
    const size_t blk = FOLD_BLOCK / es;
    char *tmp = nt ? ck_scratch(comm, FOLD_BLOCK) : NULL;
    if (nt && !tmp) return ck_fail(comm, CK_ERR_NOMEM, "out of memory for a fold block");
    for (size_t i = 0; i < n; i += blk) {
        const size_t m = n - i < blk ? n - i : blk, o = i * es;
        char *acc = nt ? tmp : y + o;
        if ((rc = ck_reduce_local(comm, acc, x[0] + o, x[1] + o, m, dt, op))) return rc;
        for (int q = 2; q < p; q++)
            if ((rc = ck_reduce_local(comm, acc, acc, x[q] + o, m, dt, op))) return rc;
        if (nt && (rc = ck_shm_copy_nt(comm, y + o, acc, m * es))) return rc;
    }
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ the algorithms */

int ck_shm_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                         size_t count, ck_dtype dt, ck_op op, int two_shot)
{
    const char *name = two_shot ? "twoshot" : "oneshot";
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), bytes = count * es, per = ck_sym_launch_elems(es);
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;

    if (!ck_shm_active(comm))
        return ck_fail(comm, CK_ERR_UNSUPPORTED, "%s on host buffers needs the shm transport (this is %s)", name,
                       ck_comm_transport_name(comm));
    if (p == 1) return ck_copy(comm, out, in, bytes);
    shm_sym *s = ck_algo_state(comm, &sym_key);
    if (!s && (rc = setup(comm, name, &s))) {
        if (rc != CK_ERR_NOMEM) return rc;
        return fallback(comm, name, sendbuf, recvbuf, count, dt, op);
    }
    if (s->broken)
        return ck_fail(comm, CK_ERR_TRANSPORT, "%s: the shared regions are unusable after an earlier failure "
                       "(the ranks' barrier counts may differ)", name);

    /* Where the peers load my input from: the caller's buffer when it is shared and large enough. */
    const int64_t soff = bytes >= CK_SHM_DIRECT_MIN && (two_shot || in != out) ? ck_shm_offset(comm, in, bytes) : -1;
    const int nt = bytes >= CK_SHM_NT_MIN;
    const size_t sub = CK_SHM_SUB / es;
    int any_exposed = 0;
    uint64_t loaded = 0;
    char *x[64], **xs = p <= 64 ? x : malloc((size_t)p * sizeof *xs);
    if (!xs) return ck_fail(comm, CK_ERR_NOMEM, "%s: out of memory", name);

    rc = CK_SUCCESS;
    int step = 0;
    for (size_t off = 0; off < count && !rc; off += per) {
        const uint64_t g = ++s->gen;
        const int h = (int)(g & 1);
        const size_t n = count - off < per ? count - off : per;

        /* 1. my input where the peers can load it, and where it is */
        desc_line *d = desc_at(s->mine, p, h);
        if (soff < 0) ck_show_shared(comm, "input copy", s->mine + half_off(s, h), n * es);
        ck_step(comm, step, "copy-in");
        if (soff < 0 && (rc = ck_copy(comm, s->mine + half_off(s, h), in + off * es, n * es))) break;
        d->gen = g;
        d->src_off = soff >= 0 ? soff + (int64_t)(off * es) : s->mine_off + (int64_t)half_off(s, h);
        d->exposed = soff >= 0;
        ck_step(comm, step, "barrier");
        if ((rc = barrier(s, "its input of the launch"))) break;

        /* 2. every rank's input of this launch, mapped here */
        for (int q = 0; q < p && !rc; q++) {
            const desc_line *e = desc_at(s->peer[q], p, h);
            if (e->gen != g) {
                s->broken = 1;
                rc = ck_fail(comm, CK_ERR_INTERNAL, "%s: rank %d describes launch %llu, rank %d is at launch %llu", name,
                             q, (unsigned long long)e->gen, r, (unsigned long long)g);
            }
            any_exposed |= (int)e->exposed;
            xs[q] = q == r ? (char *)(soff >= 0 ? in + off * es : s->mine + half_off(s, h))
                           : ck_shm_peer(comm, q, e->src_off);
        }
        if (rc) break;
        step++;

        if (!two_shot) {
            /* 3. oneshot: fold all p inputs myself */
            ck_step(comm, step++, "reduce");
            for (int q = 0; q < p; q++)
                if (q != r) ck_show_load(comm, q, desc_at(s->peer[q], p, h)->exposed ? NULL : "input copy", out + off * es, n * es);
            rc = fold(comm, out + off * es, xs, p, n, es, dt, op, nt);
            loaded += (uint64_t)(p - 1) * n * es;
            continue;
        }

        /* 3. twoshot, in rounds of `sub` elements of every slice:
         *    reduce-scatter my sub-chunk into my staging buffer, barrier,
         *    all-gather every rank's staging buffer into my output */
        size_t o_r, len_r, o0, len0;
        ck_block(n, (size_t)p, (size_t)r, &o_r, &len_r);
        ck_block(n, (size_t)p, 0, &o0, &len0);   /* slice 0 is the longest */
        const size_t rounds = len0 ? (len0 + sub - 1) / sub : 1;
        for (size_t j = 0; j < rounds && !rc; j++) {
            const int k = (int)(s->round++ & 1);
            const size_t jo = j * sub, jl = jo < len_r ? (len_r - jo < sub ? len_r - jo : sub) : 0;
            char *stage = s->mine + staging_off(s, k), *y[64], **ys = p <= 64 ? y : malloc((size_t)p * sizeof *ys);
            if (!ys) { rc = ck_fail(comm, CK_ERR_NOMEM, "%s: out of memory", name); break; }
            for (int q = 0; q < p; q++) ys[q] = xs[q] + (o_r + jo) * es;
            ck_show_shared(comm, "staging", stage, jl * es);
            ck_step(comm, step, "reduce-scatter");
            for (int q = 0; q < p && jl; q++)
                if (q != r) ck_show_load(comm, q, desc_at(s->peer[q], p, h)->exposed ? NULL : "input copy", stage, jl * es);
            if (jl && (rc = fold(comm, stage, ys, p, jl, es, dt, op, 0))) { if (ys != y) free(ys); break; }
            if (ys != y) free(ys);
            loaded += (uint64_t)(p - 1) * jl * es;
            ck_step(comm, step, "barrier");
            if ((rc = barrier(s, "its reduced slice"))) break;
            ck_step(comm, step + 1, "all-gather");
            for (int i = 0; i < p && !rc; i++) {
                const int q = (r + i) % p;   /* mine first, then the next ranks: the readers spread over the owners */
                size_t o_q, len_q;
                ck_block(n, (size_t)p, (size_t)q, &o_q, &len_q);
                const size_t ql = jo < len_q ? (len_q - jo < sub ? len_q - jo : sub) : 0;
                const char *src = s->peer[q] + staging_off(s, k);
                char *dst = out + (off + o_q + jo) * es;
                if (!ql) continue;
                if (q != r) ck_show_load(comm, q, "staging", dst, ql * es);
                rc = nt ? ck_shm_copy_nt(comm, dst, src, ql * es) : ck_copy(comm, dst, src, ql * es);
                if (q != r) loaded += ql * es;
            }
        }
        step += 2;
    }
    /* 4. oneshot: a peer loads my caller's buffer: nobody returns before all are done */
    if (!rc && !two_shot && any_exposed) {
        ck_step(comm, step, "end barrier");
        rc = barrier(s, "it to finish loading from this rank");
    }
    if (xs != x) free(xs);
    /* What I loaded from my peers; by symmetry what they loaded from me. */
    ck_count_traffic(comm, loaded, 0, loaded, 0);
    return rc;
}
