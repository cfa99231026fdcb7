/*
 * symmetric_shm.c — oneshot and twoshot on host memory: the CPU twin of
 * cuda/symmetric.c. The shm transport maps every rank's shared heap into
 * every peer (collkit_shm.h), so a rank can load its peers' data straight
 * out of their memory, with no message and no staging copy on the peer's
 * side.
 *
 * Symmetric region. On the first call (collective) each rank takes one
 * region from its shared heap (ck_alloc) and the ranks all-gather where it
 * lies; the region is freed with the communicator. Layout:
 *
 *   [ flags: start[p] mid[p] end[p] (a cache line each) ][ desc[2] ][ half 0 ][ half 1 ]
 *
 * flags_at_r[which][q] is written by rank q only: "q reached barrier
 * `which` of launch g" (g, the launch number, is the same on every rank and
 * only grows). desc[h] says where this rank's data of the launch with parity
 * h is: its input (src) and, for twoshot, where its reduced slice goes (res),
 * both as offsets into its shared memory.
 *
 * Barrier (which, g), as the CUDA kernels do it:
 *     for each peer q: atomic store, release:  flags_at_q[which][me] = g
 *     wait (ck_shm_wait) until, for each q:     acquire load of flags_at_me[which][q] >= g
 * The release publishes everything this rank wrote before (its copy-in, its
 * desc, its reduced slice); the acquire makes it visible here. The wait
 * keeps the watchdog: a rank that never comes is a CK_ERR_TIMEOUT naming it.
 *
 * Zero copy. Where the caller's buffers lie in the shared heap (they came
 * from ck_alloc on this communicator) and the message is large enough for a
 * barrier to cost less than a copy (CK_SHM_DIRECT_MIN), peers load from the
 * caller's buffers themselves: src (and for twoshot res) point into them. A
 * peer may then still be loading when this rank's part is done, so the call
 * ends with one more barrier (end) before anyone returns. Otherwise the
 * input is first copied into a half (copy-in) and, as on the GPU, no end
 * barrier is needed: launch g+2 reuses the half of launch g only after this
 * rank passed the start barrier of launch g+1, which every peer reached
 * after it finished launch g. Both decisions are per rank; every rank reads
 * its peers' desc, so all of them know whether the end barrier comes.
 *
 * oneshot in place always copies in: it overwrites its buffer with the
 * result while the peers still load its input from there. twoshot in place
 * does not need to: rank r writes only slice r of its buffer, which no peer
 * loads in the reduce-scatter, and the peers load only slice r of it in the
 * all-gather, which r does not write then.
 *
 * The fold. Every rank folds in rank order 0, 1, ..., p-1 with the library's
 * reduce kernel (ck_reduce_local), so the results are bitwise those of the
 * device kernels and of naive. For p > 2 the fold goes in blocks that stay in
 * cache (the partial result of a block is read again p-2 times), and into a
 * private block first when the destination is one of the inputs (twoshot in
 * place), which a fold in place would overwrite before it is read.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_shm.h"
#include "single_copy.h"

/* Below this many bytes, copying the input in is cheaper than the end barrier. */
#define CK_SHM_DIRECT_MIN ((size_t)64 << 10)
/* Bytes per fold block for p > 2: the partial sums stay in L1/L2. */
#define FOLD_BLOCK ((size_t)32 << 10)

enum { B_START = 0, B_MID = 1, B_END = 2, NBARRIER = 3 };

typedef struct {
    _Alignas(64) _Atomic uint64_t gen;
} flag_line;

typedef struct {
    _Alignas(64) uint64_t gen;   /* the launch this describes (a check that the ranks are in step) */
    int64_t  src_off;            /* my input of the launch, in my shared memory */
    int64_t  res_off;            /* twoshot: element 0 of the launch's result (my slice at its ck_block offset) */
    uint32_t exposed;            /* src or res is the caller's buffer: the call ends with a barrier */
} desc_line;

typedef struct shm_sym {
    ck_comm  *comm;
    MPI_Comm  mpi;
    int       p, rank, broken;
    size_t    ctl_bytes, bytes;
    char     *mine;        /* my region (ck_alloc) */
    char    **peer;        /* [p]: each rank's region, mapped here */
    int64_t  *off;         /* [p]: its offset in that rank's shared memory */
    uint64_t  gen;         /* launches so far: the same on every rank */
} shm_sym;

/* The ck_algo_state key: a descriptor of its own (never registered), so
 * oneshot and twoshot share one region and one launch counter. */
static const ck_algo sym_key = {.name = "oneshot/twoshot shared regions"};

static flag_line *flag_at(char *region, int p, int which, int q)
{
    return (flag_line *)region + (size_t)which * (size_t)p + (size_t)q;
}
static desc_line *desc_at(char *region, int p, int h)
{
    return (desc_line *)(region + (size_t)NBARRIER * (size_t)p * sizeof(flag_line)) + h;
}
static size_t half_off(const shm_sym *s, int h) { return s->ctl_bytes + (size_t)h * CK_SYM_HALF; }

/* ------------------------------------------------------------ setup and teardown */

static void sym_destroy(void *state)
{
    shm_sym *s = state;
    /* A peer may still be loading from my halves (a call without an end
     * barrier): every rank is past its last call once all are here. */
    MPI_Barrier(s->mpi);
    ck_free(s->comm, s->mine);
    free(s->peer);
    free(s->off);
    free(s);
}

/* Collective: take a region from the shared heap, zero its flags, agree,
 * all-gather where the regions are. On failure every rank releases its part
 * and the next call tries again. */
static int setup(ck_comm *comm, const char *name, shm_sym **out)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    shm_sym *s = calloc(1, sizeof *s);
    int bad = !s, anybad = 0;
    int64_t mine_off = -1;
    if (s) {
        s->comm = comm;
        s->mpi = ck_comm_mpi(comm);
        s->p = p;
        s->rank = rank;
        s->ctl_bytes = ((size_t)NBARRIER * (size_t)p * sizeof(flag_line) + 2 * sizeof(desc_line) + 4095) / 4096 * 4096;
        s->bytes = s->ctl_bytes + 2 * CK_SYM_HALF;
        s->peer = calloc((size_t)p, sizeof *s->peer);
        s->off = calloc((size_t)p, sizeof *s->off);
        s->mine = ck_alloc(comm, s->bytes);
        mine_off = s->mine ? ck_shm_offset(comm, s->mine, s->bytes) : -1;
        bad = !s->peer || !s->off || !s->mine || mine_off < 0;
        /* Zeroed before any peer can write a flag: the agreement below orders it. */
        if (!bad) memset(s->mine, 0, s->ctl_bytes);
    }
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ck_comm_mpi(comm));
    if (anybad) {
        if (s) {
            if (s->mine) ck_free(comm, s->mine);
            free(s->peer);
            free(s->off);
            free(s);
        }
        return ck_fail(comm, CK_ERR_NOMEM, "%s: could not take its region of %zu B from the shared heap%s", name,
                       (size_t)(NBARRIER * 64 * p) + 2 * CK_SYM_HALF, bad ? "" : " (on another rank)");
    }
    MPI_Allgather(&mine_off, 1, MPI_INT64_T, s->off, 1, MPI_INT64_T, s->mpi);
    for (int q = 0; q < p; q++) s->peer[q] = q == rank ? s->mine : ck_shm_peer(comm, q, s->off[q]);
    int rc = ck_algo_state_set(comm, &sym_key, s, sym_destroy);
    if (rc) { sym_destroy(s); return rc; }
    *out = s;
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ the barrier */

typedef struct { shm_sym *s; int which; uint64_t gen; } barrier_arg;

/* The first rank whose flag has not reached gen, or -1. */
static int barrier_pending(void *arg)
{
    const barrier_arg *b = arg;
    for (int q = 0; q < b->s->p; q++)
        if (q != b->s->rank &&
            atomic_load_explicit(&flag_at(b->s->mine, b->s->p, b->which, q)->gen, memory_order_acquire) < b->gen)
            return q;
    return -1;
}

static int barrier(shm_sym *s, int which, uint64_t gen)
{
    static const char *const what[NBARRIER] = {"its start of the launch", "its reduced slice",
                                               "it to finish loading from this rank"};
    for (int q = 0; q < s->p; q++)
        if (q != s->rank) atomic_store_explicit(&flag_at(s->peer[q], s->p, which, s->rank)->gen, gen, memory_order_release);
    barrier_arg b = {s, which, gen};
    int rc = ck_shm_wait(s->comm, barrier_pending, &b, what[which]);
    if (rc) s->broken = 1;   /* the ranks' launch counters may differ from here on */
    return rc;
}

/* ------------------------------------------------------------ the fold */

/* y[i] = x[0][i] op x[1][i] op ... op x[p-1][i], i < n, in rank order. */
static int fold(ck_comm *comm, char *y, char *const *x, int p, size_t n, size_t es, ck_dtype dt, ck_op op)
{
    int rc;
    if (p == 2) return ck_reduce_local(comm, y, x[0], x[1], n, dt, op);
    /* A fold straight into y would overwrite x[q] (q >= 2) before reading it if y is x[q]. */
    int alias = 0;
    for (int q = 2; q < p; q++) alias |= x[q] == y;
    const size_t blk = FOLD_BLOCK / es;
    char *tmp = alias ? ck_scratch(comm, FOLD_BLOCK) : NULL;
    if (alias && !tmp) return ck_fail(comm, CK_ERR_NOMEM, "out of memory for a fold block");
    for (size_t i = 0; i < n; i += blk) {
        const size_t m = n - i < blk ? n - i : blk, o = i * es;
        char *acc = alias ? tmp : y + o;
        if ((rc = ck_reduce_local(comm, acc, x[0] + o, x[1] + o, m, dt, op))) return rc;
        for (int q = 2; q < p; q++)
            if ((rc = ck_reduce_local(comm, acc, acc, x[q] + o, m, dt, op))) return rc;
        if (alias && (rc = ck_copy(comm, y + o, acc, m * es))) return rc;
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
    if (!s && (rc = setup(comm, name, &s))) return rc;
    if (s->broken)
        return ck_fail(comm, CK_ERR_TRANSPORT, "%s: the shared regions are unusable after an earlier failure "
                       "(the ranks' launch counters may differ)", name);

    /* Where the peers load from: the caller's buffers when they are shared and large enough. */
    const int big = bytes >= CK_SHM_DIRECT_MIN;
    const int64_t soff = big && (two_shot || in != out) ? ck_shm_offset(comm, in, bytes) : -1;
    const int64_t roff = big && two_shot ? ck_shm_offset(comm, out, bytes) : -1;
    const int exposed = soff >= 0 || roff >= 0;
    int any_exposed = 0;
    uint64_t loaded = 0;
    char *x[64], **xs = p <= 64 ? x : malloc((size_t)p * sizeof *xs);
    if (!xs) return ck_fail(comm, CK_ERR_NOMEM, "%s: out of memory", name);

    rc = CK_SUCCESS;
    for (size_t off = 0, l = 0; off < count && !rc; off += per, l++) {
        const uint64_t g = ++s->gen;
        const int h = (int)(g & 1);
        const size_t n = count - off < per ? count - off : per;
        const int step = (int)l * (two_shot ? 3 : 2);

        /* 1. my input where the peers can load it, and where it is */
        desc_line *d = desc_at(s->mine, p, h);
        ck_step(comm, step, "copy-in");
        if (soff < 0 && (rc = ck_copy(comm, s->mine + half_off(s, h), in + off * es, n * es))) break;
        d->gen = g;
        d->src_off = soff >= 0 ? soff + (int64_t)(off * es) : s->off[r] + (int64_t)half_off(s, h);
        d->res_off = roff >= 0 ? roff + (int64_t)(off * es) : s->off[r] + (int64_t)half_off(s, h);
        d->exposed = (uint32_t)exposed;
        ck_step(comm, step, "barrier");
        if ((rc = barrier(s, B_START, g))) break;

        /* 2. every rank's input of this launch, mapped here */
        for (int q = 0; q < p; q++) {
            desc_line *e = desc_at(s->peer[q], p, h);
            if (e->gen != g) {
                s->broken = 1;
                rc = ck_fail(comm, CK_ERR_INTERNAL, "%s: rank %d describes launch %llu, rank %d is at launch %llu", name,
                             q, (unsigned long long)e->gen, r, (unsigned long long)g);
                break;
            }
            any_exposed |= (int)e->exposed;
            xs[q] = q == r ? (char *)(soff >= 0 ? in + off * es : s->mine + half_off(s, h))
                           : ck_shm_peer(comm, q, e->src_off);
        }
        if (rc) break;

        if (!two_shot) {
            /* 3. oneshot: fold all p inputs myself */
            ck_step(comm, step + 1, "reduce");
            rc = fold(comm, out + off * es, xs, p, n, es, dt, op);
            loaded += (uint64_t)(p - 1) * n * es;
            continue;
        }

        /* 3. twoshot, reduce-scatter: my slice of the launch from every rank */
        size_t o_r, len_r;
        ck_block(n, (size_t)p, (size_t)r, &o_r, &len_r);
        ck_step(comm, step + 1, "reduce-scatter");
        char *res = roff >= 0 ? out + (off + o_r) * es : s->mine + half_off(s, h) + o_r * es;
        for (int q = 0; q < p; q++) xs[q] += o_r * es;
        if (len_r && (rc = fold(comm, res, xs, p, len_r, es, dt, op))) break;
        if (roff < 0 && (rc = ck_copy(comm, out + (off + o_r) * es, res, len_r * es))) break;
        loaded += (uint64_t)(p - 1) * len_r * es;
        ck_step(comm, step + 1, "barrier");
        if ((rc = barrier(s, B_MID, g))) break;

        /* 4. twoshot, all-gather: every other slice from its owner */
        ck_step(comm, step + 2, "all-gather");
        for (int k = 1; k < p && !rc; k++) {
            const int q = (r + k) % p;   /* start at the next rank: the ranks spread over the owners */
            size_t o_q, len_q;
            ck_block(n, (size_t)p, (size_t)q, &o_q, &len_q);
            const char *src = (const char *)ck_shm_peer(comm, q, desc_at(s->peer[q], p, h)->res_off) + o_q * es;
            rc = ck_copy(comm, out + (off + o_q) * es, src, len_q * es);
            loaded += len_q * es;
        }
    }
    /* 5. the caller's buffers are loaded from: nobody returns before all are done */
    if (!rc && any_exposed) {
        ck_step(comm, (int)((count + per - 1) / per) * (two_shot ? 3 : 2), "end barrier");
        rc = barrier(s, B_END, s->gen);
    }
    if (xs != x) free(xs);
    /* What I loaded from my peers; by symmetry what they loaded from me. */
    ck_count_traffic(comm, loaded, 0, loaded, 0);
    return rc;
}
