/*
 * rabenseifner — recursive-halving reduce-scatter, then recursive-doubling
 * all-gather (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005; Open MPI's
 * allreduce_intra_redscat_allgather), with the same fold as rd.c for rank
 * counts that are not a power of two (fold.h).
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
 * round), in 2·log2(p') messages (0-byte ones too when count < p').
 * Folded: the even rank sends n in 1 message, the odd one its share + n in
 * 2·log2(p') + 1.
 * Cost: T = 2·log2(p')·α + 2(p'-1)/p'·n·β + (p'-1)/p'·n·γ,
 *   plus 2(α + n·β) + n·γ for the fold when p is not a power of two.
 *   The table at p = 4: 4 rounds (4α), 3/4·n sent in each phase.
 *   The ring's bandwidth with rd's log p latency; the fold is its weak spot.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.13        8.19       12.45       16.24
 *       1M      135.07      204.61      470.75      261.76
 *      64M     8392.61    12590.91    29372.13    15744.64
 */
#include <stdarg.h>
#include <stdio.h>
#include "fold.h"

/* First element of block b of p' (b = p' gives count). */
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
    const ck_fold f = ck_fold_make(p);
    const int pp = f.pp, rounds = f.rounds, v = ck_fold_to_virtual(&f, r);
    char *out = recvbuf;
    int rc;

    if (p == 1) return ck_copy(comm, out, sendbuf, bytes);
    /* The biggest message received is the first kept half: the lower one;
     * the fold receives a whole buffer. */
    const size_t tmp_elems = ck_fold_partner(&f, r) >= 0 ? count : block_start(count, pp, pp / 2);
    char *tmp = ck_scratch(comm, tmp_elems * es);
    if (!tmp) return CK_ERR_NOMEM;

    /* Steps: 0 fold, 1..rounds reduce-scatter, rounds+1..2·rounds all-gather,
     * 2·rounds+1 unfold. Tags: CK_FOLD_TAGS + step. */
    const void *data;   /* where the data we still reduce lives */
    if ((rc = ck_fold_in(comm, &f, sendbuf, recvbuf, tmp, count, dt, op, &data))) return rc;
    const char *src = data;

    /* Reduce-scatter by recursive halving over the run [lo, lo + 2m) of blocks. */
    for (int k = 0, lo = 0; v >= 0 && k < rounds; k++) {
        const int m = pp >> (k + 1), mid = lo + m, vpeer = v ^ m, peer = ck_fold_to_real(&f, vpeer);
        const int keep_lo = (v & m) ? mid : lo, give_lo = (v & m) ? lo : mid;
        const size_t ks = block_start(count, pp, keep_lo), ke = block_start(count, pp, keep_lo + m);
        const size_t gs = block_start(count, pp, give_lo), ge = block_start(count, pp, give_lo + m);
        ck_step(comm, 1 + k, "reduce-scatter");
        if ((rc = ck_sendrecv(comm, src + gs * es, (ge - gs) * es, peer,
                              tmp, (ke - ks) * es, peer, CK_FOLD_TAGS + 1 + k))) return rc;
        rc = vpeer < v ? ck_reduce_local(comm, out + ks * es, tmp, src + ks * es, ke - ks, dt, op)
                       : ck_reduce_local(comm, out + ks * es, src + ks * es, tmp, ke - ks, dt, op);
        if (rc) return rc;
        src = out;
        lo = keep_lo;
    }

    /* All-gather by recursive doubling: swap runs of m blocks with the sibling. */
    for (int k = 0; v >= 0 && k < rounds; k++) {
        const int m = 1 << k, own = (v / m) * m, sib = own ^ m, peer = ck_fold_to_real(&f, v ^ m);
        const size_t os = block_start(count, pp, own), oe = block_start(count, pp, own + m);
        const size_t ss = block_start(count, pp, sib), se = block_start(count, pp, sib + m);
        ck_step(comm, 1 + rounds + k, "all-gather");
        if ((rc = ck_sendrecv(comm, out + os * es, (oe - os) * es, peer,
                              out + ss * es, (se - ss) * es, peer, CK_FOLD_TAGS + 1 + rounds + k))) return rc;
    }
    return ck_fold_out(comm, &f, out, bytes, 2 * rounds + 1);
}

static uint64_t rab_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    const ck_fold f = ck_fold_make(p);
    const int pp = f.pp, v = ck_fold_to_virtual(&f, r);
    uint64_t elems = 0;
    for (int k = 0, lo = 0; v >= 0 && k < f.rounds; k++) {   /* the half given away */
        const int m = pp >> (k + 1), give_lo = (v & m) ? lo : lo + m;
        elems += block_start(count, pp, give_lo + m) - block_start(count, pp, give_lo);
        lo = (v & m) ? lo + m : lo;
    }
    for (int k = 0; v >= 0 && k < f.rounds; k++) {           /* the run held */
        const int m = 1 << k, own = (v / m) * m;
        elems += block_start(count, pp, own + m) - block_start(count, pp, own);
    }
    return elems * es + ck_fold_bytes(&f, r, (uint64_t)count * es);
}

/* One message per round per phase, even when its run of blocks is empty. */
static uint64_t rab_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es, (void)cfg;
    const ck_fold f = ck_fold_make(p);
    if (count == 0) return 0;
    return (ck_fold_to_virtual(&f, r) >= 0 ? 2 * (uint64_t)f.rounds : 0) + ck_fold_msgs(&f, r);
}

static double rab_cost(const ck_cost_params *m, int p, double n)
{
    const ck_fold f = ck_fold_make(p);
    const double share = (double)(f.pp - 1) / f.pp;
    const double fold = f.rem ? 2 * (m->alpha + n * m->beta) + n * m->gamma : 0;
    return 2 * f.rounds * m->alpha + 2 * share * n * m->beta + share * n * m->gamma + fold;
}

/* The highest set bit of x > 0: where two virtual ranks differ. */
static int top_bit(int x)
{
    int k = 0;
    while (x >> (k + 1)) k++;
    return k;
}

/* The element's block, the rank that finishes it, the reduce-scatter round in
 * which the missing (or doubled) rank's share of it leaves that rank, and the
 * all-gather round that brings the block to f->rank. Data moves between
 * virtual ranks across the highest bit where they differ: the first such
 * reduce-scatter round (masks p'/2 down to 1) and the last such all-gather
 * round (masks 1 up to p'/2). */
static void rab_diagnose(const ck_fault *fl, char *out, size_t cap)
{
    const ck_fold f = ck_fold_make(fl->p);
    const int who = fl->missing >= 0 ? fl->missing : fl->doubled;
    if (fl->p < 2 || fl->elem >= fl->count || who >= fl->p || fl->rank < 0 || fl->rank >= fl->p || cap == 0) return;
    int b = 0;
    while (b + 1 < f.pp && block_start(fl->count, f.pp, b + 1) <= fl->elem) b++;
    const int dst = ck_fold_player(&f, fl->rank), vd = ck_fold_to_virtual(&f, dst);
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    ck_sbuf_add(&sb, "element %zu is in block %d of %d (elements %zu..%zu), finished by rank %d",
                   fl->elem, b, f.pp, block_start(fl->count, f.pp, b),
                   block_start(fl->count, f.pp, b + 1) - 1, ck_fold_to_real(&f, b));
    if (who >= 0) {
        const int src = ck_fold_player(&f, who), vs = ck_fold_to_virtual(&f, src), k = top_bit(vs ^ b);
        if (vs == b)
            ck_sbuf_add(&sb, "; rank %d adds the others' shares to its own", src);
        else
            ck_sbuf_add(&sb, "; rank %d sends its share of it%s at reduce-scatter round %d (mask %d) to rank %d",
                    src, fl->missing >= 0 ? "" : " (once)", f.rounds - 1 - k, 1 << k,
                    ck_fold_to_real(&f, vs ^ (1 << k)));
    }
    if (vd != b)
        ck_sbuf_add(&sb, "; rank %d receives block %d at all-gather round %d from rank %d", dst, b,
                top_bit(vd ^ b), ck_fold_to_real(&f, vd ^ (1 << top_bit(vd ^ b))));
    ck_fold_explain(&f, who, fl->rank, &sb);
}

const ck_algo ck_algo_rabenseifner = {
    .name = "rabenseifner",
    .summary = "recursive-halving reduce-scatter + recursive-doubling all-gather (+ fold)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p'-1)/p' * n (+n fold)",
    .bytes_sent = rab_bytes,
    .msgs_sent = rab_msgs,
    .cost_formula = "2log2(p')α + 2(p'-1)/p'·nβ + (p'-1)/p'·nγ [+ 2(α + nβ) + nγ fold, p not a power of two]",
    .cost = rab_cost,
    .diagnose = rab_diagnose,
    .run = rab_run,
};
