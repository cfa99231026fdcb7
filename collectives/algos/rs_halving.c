/*
 * rs_halving — reduce-scatter by recursive halving (Thakur, Rabenseifner &
 * Gropp 2005; the first half of rabenseifner.c's all-reduce), with the
 * non-power-of-two fold of fold.h.
 *
 * Idea. With p a power of two, round k = 0 .. log2(p)-1 pairs rank r with
 * r XOR d, d = p/2^(k+1): the pair splits the part of the buffer they are
 * both still responsible for in two, each sends the half the other keeps and
 * adds the half it receives. After the rounds each rank holds the full sum
 * of its own block. The halves follow the block partition (ck_block), so
 * the rounds cut between whole blocks: the part a group of ranks keeps is
 * exactly their blocks.
 *
 *   p = 4, blocks A B C D     rank 0      rank 1      rank 2      rank 3
 *   round 0 (d = 2)           send CD     send CD     send AB     send AB
 *                             keep AB     keep AB     keep CD     keep CD
 *   round 1 (d = 1)           send B      send A      send D      send C
 *   owns                      A           B           C           D
 *
 * Other p: p = p' + rem. The first 2·rem ranks pair up (fold.h); the even
 * one folds its whole input into the odd one, which then plays one rank of
 * the p' in the rounds, responsible for both their blocks; at the end it
 * sends the even one its block.
 *
 * Bytes sent per rank (p a power of two): (p-1)/p · n, in log2(p) messages.
 * Cost: T = log2(p)·α + (p-1)/p·n·β + (p-1)/p·n·γ, plus for the folded
 * pairs α + nβ + nγ before the rounds and α + n/p·β after them.
 */
#include "collkit_algo.h"
#include "fold.h"

/* Round k of virtual rank v: the partner, the part it keeps and the part it sends. */
static int round_of(const ck_fold *f, size_t count, int v, int k, size_t *koff, size_t *klen, size_t *soff,
                    size_t *slen)
{
    const int d = f->pp >> (k + 1), lo = v & ~(2 * d - 1);
    const int keep_lo = (v & d) ? lo + d : lo, send_lo = (v & d) ? lo : lo + d;
    ck_fold_vrange(f, count, keep_lo, keep_lo + d, koff, klen);
    ck_fold_vrange(f, count, send_lo, send_lo + d, soff, slen);
    return v ^ d;
}

static int rs_halving_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                          size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    if (p == 1) return recvbuf == sendbuf ? CK_SUCCESS : ck_copy(comm, recvbuf, sendbuf, len * es);

    const ck_fold f = ck_fold_make(p);
    const int v = ck_fold_to_virtual(&f, r), partner = ck_fold_partner(&f, r);
    int rc;
    const void *data;
    if (v < 0) {   /* the even rank of a folded pair: its input in, its block back */
        if ((rc = ck_fold_in(comm, &f, sendbuf, NULL, NULL, count, dt, op, &data))) return rc;
        ck_step(comm, f.rounds + 1, "unfold");
        return ck_sendrecv(comm, NULL, 0, -1, recvbuf, len * es, partner, CK_FOLD_TAG_OUT);
    }

    /* work: the partial sums, at the offsets of the input (in place the
     * buffer itself: its other blocks are ours to overwrite); tmp: what
     * arrives, at most the whole buffer at the fold, else the half kept in
     * round 0. */
    const int inplace = (const char *)recvbuf >= (const char *)sendbuf &&
                        (const char *)recvbuf < (const char *)sendbuf + count * es;
    size_t k0off, k0len, s0off, s0len;
    round_of(&f, count, v, 0, &k0off, &k0len, &s0off, &s0len);
    const size_t tmp_elems = partner >= 0 ? count : k0len;
    char *work = ck_scratch(comm, ((inplace ? 0 : count) + tmp_elems) * es);
    if (!work) return CK_ERR_NOMEM;
    char *tmp = work + (inplace ? 0 : count * es);
    if (inplace) work = (char *)sendbuf;
    if ((rc = ck_fold_in(comm, &f, sendbuf, work, tmp, count, dt, op, &data))) return rc;
    const int pair = partner >= 0;   /* responsible for the partner's block too */
    for (int k = 0; k < f.rounds; k++) {
        ck_step(comm, 1 + k, "halving");
        size_t koff, klen, soff, slen;
        const int peer = ck_fold_to_real(&f, round_of(&f, count, v, k, &koff, &klen, &soff, &slen));
        if ((rc = ck_sendrecv(comm, (const char *)data + soff * es, slen * es, peer, tmp, klen * es, peer,
                              CK_FOLD_TAGS + k)))
            return rc;
        /* A rank with one block adds the last round straight into recvbuf
         * (in place: its own input, read element by element as it is written). */
        char *dst = k == f.rounds - 1 && !pair ? recvbuf : work + koff * es;
        if ((rc = ck_reduce_local(comm, dst, (const char *)data + koff * es, tmp, klen, dt, op))) return rc;
        data = work;
    }
    if (!pair) return CK_SUCCESS;
    size_t poff, plen;
    ck_block(count, p, partner, &poff, &plen);
    ck_step(comm, f.rounds + 1, "unfold");
    if ((rc = ck_sendrecv(comm, work + poff * es, plen * es, partner, NULL, 0, -1, CK_FOLD_TAG_OUT))) return rc;
    return recvbuf == work + off * es ? CK_SUCCESS : ck_copy(comm, recvbuf, work + off * es, len * es);
}

static uint64_t rs_halving_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    const ck_fold f = ck_fold_make(p);
    const int v = ck_fold_to_virtual(&f, r), partner = ck_fold_partner(&f, r);
    if (v < 0) return (uint64_t)count * es;
    uint64_t n = 0;
    for (int k = 0; k < f.rounds; k++) {
        size_t koff, klen, soff, slen;
        round_of(&f, count, v, k, &koff, &klen, &soff, &slen);
        n += slen;
    }
    if (partner >= 0) {
        size_t poff, plen;
        ck_block(count, p, partner, &poff, &plen);
        n += plen;
    }
    return n * es;
}

static uint64_t rs_halving_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es; (void)cfg;
    if (p == 1 || count == 0) return 0;
    const ck_fold f = ck_fold_make(p);
    if (ck_fold_to_virtual(&f, r) < 0) return 1;
    return (uint64_t)f.rounds + (ck_fold_partner(&f, r) >= 0);
}

static double rs_halving_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    const ck_fold f = ck_fold_make(p);
    const double g = (double)(f.pp - 1) / f.pp;
    double t = f.rounds * m->alpha + g * n * (m->beta + m->gamma);
    if (f.rem) t += 2 * m->alpha + n * (m->beta + m->gamma) + n / p * m->beta;
    return t;
}

/* A missing input: the round where the missing rank's data for block b
 * first leaves it (the highest bit where it and the owner differ); then the
 * fold's part. */
static void rs_halving_diagnose(const ck_fault *f, char *out, size_t cap)
{
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    if (f->p == 1) return;
    const ck_fold fd = ck_fold_make(f->p);
    const int b = f->rank, vo = ck_fold_to_virtual(&fd, ck_fold_player(&fd, b));
    if (f->missing >= 0) {
        const int m = ck_fold_player(&fd, f->missing), vm = ck_fold_to_virtual(&fd, m);
        for (int k = 0; k < fd.rounds; k++) {
            const int d = fd.pp >> (k + 1);
            if ((vm ^ vo) & d) {
                ck_sbuf_add(&sb, "rank %d sends the part holding block %d to rank %d at halving round %d", m, b,
                            ck_fold_to_real(&fd, vm ^ d), k);
                break;
            }
        }
    }
    ck_fold_explain(&fd, f->missing, b, &sb);
    if (!sb.len) ck_sbuf_add(&sb, "rank %d adds the last half it receives at halving round %d", b, fd.rounds - 1);
}

const ck_algo ck_rs_halving = {
    .name = "halving",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "recursive halving, log2(p) rounds (fold for other p)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1)/p * n (p = 2^k)",
    .bytes_sent = rs_halving_bytes,
    .msgs_sent = rs_halving_msgs,
    .cost_formula = "log2(p)α + (p-1)/p·nβ + (p-1)/p·nγ",
    .cost = rs_halving_cost,
    .diagnose = rs_halving_diagnose,
    .run = rs_halving_run,
};
