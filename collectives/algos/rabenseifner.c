/*
 * rabenseifner — recursive-halving reduce-scatter, then recursive-doubling
 * all-gather (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005; Open MPI's
 * allreduce_intra_redscat_allgather), with the same fold as rd.c for rank
 * counts that are not a power of two.
 *
 * Idea. Like rd, log2 rounds of pairwise exchange, but each round moves only
 * half of what the rank is still responsible for, so the bytes add up to the
 * ring's 2(p-1)/p·n while the rounds stay logarithmic.
 *   Fold (p = p' + rem, p' the largest power of two <= p): the first 2·rem
 *     ranks pair up (2i, 2i+1); the even one sends its input to the odd one,
 *     which combines it and plays virtual rank i; ranks >= 2·rem are virtual
 *     rank r - rem. The even ones sit out and get the result at the end.
 *   Blocks: the buffer is cut into p' blocks by ck_block (the first count%p'
 *     blocks one element longer). Every "half" below is half of a run of
 *     blocks, so uneven counts just make the lower half up to p'/2 elements
 *     longer than the upper, and every rank agrees on every message size.
 *   Reduce-scatter, masks m = p'/2, p'/4, ..., 1: the rank's current run of
 *     blocks splits in two; the rank with bit m clear keeps the lower half,
 *     its partner (virtual rank ^ m) the upper. Each sends the half it gives
 *     up and combines the half it keeps. At the end virtual rank v holds the
 *     full reduction of block v.
 *   All-gather, masks m = 1, 2, ..., p'/2: swap the run of blocks held with
 *     the partner's (the sibling run), doubling it, until all p' are held.
 *   Unfold: each odd rank of a pair sends the result to its even partner.
 * Combining order: the lower virtual rank's data goes first, and a folded
 * pair combines even op odd; each block is finished on one rank and copied
 * from there, so every rank holds the same bits.
 *
 * Worked example, p = 4 (no fold), blocks A B C D, xR = rank R's input.
 * Each cell: what the rank SENDS.
 *
 *   reduce-scatter  rank 0          rank 1          rank 2          rank 3
 *   m = 2           C0 D0 -> 2      C1 D1 -> 3      A2 B2 -> 0      A3 B3 -> 1
 *   m = 1           B02 -> 1        A13 -> 0        D02 -> 3        C13 -> 2
 *   holds           A (all 4)       B (all 4)       C (all 4)       D (all 4)
 *   all-gather
 *   m = 1           A -> 1          B -> 0          C -> 3          D -> 2
 *   m = 2           A B -> 2        A B -> 3        C D -> 0        C D -> 1
 *   (B02 = B0+B2; after m = 1 of reduce-scatter rank 0 holds A0+A2+A1+A3)
 *
 * Bytes sent per rank (p a power of two): (p-1)/p·n in each phase, 2(p-1)/p·n
 * in all (exactly: the blocks given away, then the blocks held, summed per
 * round). Folded: the even rank sends n, the odd one its share + n.
 * Cost: T = 2·log2(p')·α + 2(p'-1)/p'·n·β + (p'-1)/p'·n·γ,
 *   plus 2(α + n·β) + n·γ for the fold when p is not a power of two.
 *   The ring's bandwidth with rd's log p latency; the fold is its weak spot.
 */
#include "collkit_algo.h"

static int to_virtual(int r, int rem) { return r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem; }
static int to_real(int v, int rem) { return v < rem ? 2 * v + 1 : v + rem; }

/* First element of block b (b = p' gives count). */
static size_t block_start(size_t count, int pp, int b)
{
    size_t off, len;
    if (b >= pp) return count;
    ck_block(count, pp, b, &off, &len);
    return off;
}

static int rab_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                   size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), bytes = count * es;
    const char *in = sendbuf;
    char *out = recvbuf;
    int pp = 1, rounds = 0, rc;
    while (2 * pp <= p) { pp *= 2; rounds++; }
    const int rem = p - pp, v = to_virtual(r, rem);

    if (p == 1) return ck_copy(comm, out, in, bytes);
    /* The biggest message received is the first kept half: the lower one. */
    size_t tmp_elems = block_start(count, pp, pp / 2);
    if (r < 2 * rem) tmp_elems = count;   /* the fold receives a whole buffer */
    char *tmp = ck_scratch(comm, tmp_elems * es);
    if (!tmp) return CK_ERR_NOMEM;

    /* Steps: 0 fold, 1..rounds reduce-scatter, rounds+1..2·rounds all-gather,
     * 2·rounds+1 unfold. Tags: fold 0, unfold 1, then 2 + step. */
    ck_step(comm, 0, "fold");
    if (v < 0) {
        if ((rc = ck_sendrecv(comm, in, bytes, r + 1, NULL, 0, -1, 0))) return rc;
        ck_step(comm, 2 * rounds + 1, "unfold");
        return ck_sendrecv(comm, NULL, 0, -1, out, bytes, r + 1, 1);
    }
    const char *src = in;   /* where the data we still reduce lives */
    if (r < 2 * rem) {
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, bytes, r - 1, 0))) return rc;
        if ((rc = ck_reduce_local(comm, out, tmp, in, count, dt, op))) return rc;
        src = out;
    }

    /* Reduce-scatter by recursive halving over the run [lo, hi) of blocks. */
    int lo = 0;
    for (int k = 0; k < rounds; k++) {
        const int m = pp >> (k + 1), mid = lo + m, vpeer = v ^ m, peer = to_real(vpeer, rem);
        const int keep_lo = (v & m) ? mid : lo, give_lo = (v & m) ? lo : mid;
        const size_t ks = block_start(count, pp, keep_lo), ke = block_start(count, pp, keep_lo + m);
        const size_t gs = block_start(count, pp, give_lo), ge = block_start(count, pp, give_lo + m);
        ck_step(comm, 1 + k, "reduce-scatter");
        if ((rc = ck_sendrecv(comm, src + gs * es, (ge - gs) * es, peer,
                              tmp, (ke - ks) * es, peer, 2 + (1 + k)))) return rc;
        rc = vpeer < v ? ck_reduce_local(comm, out + ks * es, tmp, src + ks * es, ke - ks, dt, op)
                       : ck_reduce_local(comm, out + ks * es, src + ks * es, tmp, ke - ks, dt, op);
        if (rc) return rc;
        src = out;
        lo = keep_lo;
    }

    /* All-gather by recursive doubling: swap runs of m blocks with the sibling. */
    for (int k = 0; k < rounds; k++) {
        const int m = 1 << k, own = (v / m) * m, sib = own ^ m, peer = to_real(v ^ m, rem);
        const size_t os = block_start(count, pp, own), oe = block_start(count, pp, own + m);
        const size_t ss = block_start(count, pp, sib), se = block_start(count, pp, sib + m);
        ck_step(comm, 1 + rounds + k, "all-gather");
        if ((rc = ck_sendrecv(comm, out + os * es, (oe - os) * es, peer,
                              out + ss * es, (se - ss) * es, peer, 2 + (1 + rounds + k)))) return rc;
    }

    if (r < 2 * rem) {
        ck_step(comm, 2 * rounds + 1, "unfold");
        if ((rc = ck_sendrecv(comm, out, bytes, r - 1, NULL, 0, -1, 1))) return rc;
    }
    return CK_SUCCESS;
}

static uint64_t rab_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    int pp = 1, rounds = 0;
    while (2 * pp <= p) { pp *= 2; rounds++; }
    const int rem = p - pp, v = to_virtual(r, rem);
    const uint64_t n = (uint64_t)count * es;
    if (p == 1) return 0;
    if (v < 0) return n;
    uint64_t elems = 0;
    int lo = 0;
    for (int k = 0; k < rounds; k++) {          /* the half given away */
        const int m = pp >> (k + 1), give_lo = (v & m) ? lo : lo + m;
        elems += block_start(count, pp, give_lo + m) - block_start(count, pp, give_lo);
        lo = (v & m) ? lo + m : lo;
    }
    for (int k = 0; k < rounds; k++) {          /* the run held */
        const int m = 1 << k, own = (v / m) * m;
        elems += block_start(count, pp, own + m) - block_start(count, pp, own);
    }
    return elems * es + (r < 2 * rem ? n : 0);
}

const ck_algo ck_algo_rabenseifner = {
    .name = "rabenseifner",
    .summary = "recursive-halving reduce-scatter + recursive-doubling all-gather (+ fold)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p'-1)/p' * n (+n fold)",
    .bytes_sent = rab_bytes,
    .run = rab_run,
};
