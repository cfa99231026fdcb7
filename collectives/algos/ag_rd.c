/*
 * ag_rd — all-gather by recursive doubling (Thakur, Rabenseifner & Gropp
 * 2005; the second half of rabenseifner.c's all-reduce), with the
 * non-power-of-two fold of fold.h.
 *
 * Idea. With p a power of two, round k = 0 .. log2(p)-1 pairs rank r with
 * r XOR 2^k: each sends the blocks it has gathered so far (those of its
 * aligned group of 2^k ranks) and receives the partner's group's, so the
 * part it holds doubles every round: log2(p) messages instead of p-1.
 *
 *   p = 4, blocks A B C D     rank 0      rank 1      rank 2      rank 3
 *   round 0 (d = 1)           send A      send B      send C      send D
 *   round 1 (d = 2)           send AB     send AB     send CD     send CD
 *
 * Other p: p = p' + rem. The first 2·rem ranks pair up (fold.h): the even
 * one sends its block to the odd one, which plays one of the p' ranks in the
 * rounds with both blocks, and at the end sends the whole result back.
 *
 * Bytes sent per rank (p a power of two): (p-1)/p · n in log2(p) messages.
 * Cost: T = log2(p)·α + (p-1)/p·n·β, plus for the folded pairs
 * 2α + n/p·β + n·β.
 */
#include "collkit_algo.h"
#include "fold.h"

static int ag_rd_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    char *out = recvbuf;
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    int rc;
    if (sendbuf != out + off * es && (rc = ck_copy(comm, out + off * es, sendbuf, len * es))) return rc;
    if (p == 1) return CK_SUCCESS;

    const ck_fold f = ck_fold_make(p);
    const int v = ck_fold_to_virtual(&f, r), partner = ck_fold_partner(&f, r);
    if (partner >= 0) {   /* fold in: the even rank's block to the odd one */
        size_t poff, plen;
        ck_block(count, p, partner, &poff, &plen);
        ck_step(comm, 0, "fold");
        rc = v < 0 ? ck_sendrecv(comm, out + off * es, len * es, partner, NULL, 0, -1, CK_FOLD_TAG_IN)
                   : ck_sendrecv(comm, NULL, 0, -1, out + poff * es, plen * es, partner, CK_FOLD_TAG_IN);
        if (rc) return rc;
    }
    for (int k = 0; v >= 0 && k < f.rounds; k++) {
        ck_step(comm, 1 + k, "doubling");
        const int d = 1 << k, pv = v ^ d;
        size_t soff, slen, roff, rlen;
        ck_fold_vrange(&f, count, v & ~(d - 1), (v & ~(d - 1)) + d, &soff, &slen);
        ck_fold_vrange(&f, count, pv & ~(d - 1), (pv & ~(d - 1)) + d, &roff, &rlen);
        const int peer = ck_fold_to_real(&f, pv);
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, peer, out + roff * es, rlen * es, peer,
                              CK_FOLD_TAGS + k)))
            return rc;
    }
    return ck_fold_out(comm, &f, out, count * es, f.rounds + 1);
}

static uint64_t ag_rd_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    const ck_fold f = ck_fold_make(p);
    const int v = ck_fold_to_virtual(&f, r);
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    if (v < 0) return (uint64_t)len * es;
    uint64_t n = ck_fold_bytes(&f, r, count);   /* the whole result back to the even partner */
    for (int k = 0; k < f.rounds; k++) {
        const int d = 1 << k;
        size_t soff, slen;
        ck_fold_vrange(&f, count, v & ~(d - 1), (v & ~(d - 1)) + d, &soff, &slen);
        n += slen;
    }
    return n * es;
}

static uint64_t ag_rd_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es; (void)cfg;
    if (p == 1 || count == 0) return 0;
    const ck_fold f = ck_fold_make(p);
    if (ck_fold_to_virtual(&f, r) < 0) return 1;
    return (uint64_t)f.rounds + ck_fold_msgs(&f, r);
}

static double ag_rd_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    const ck_fold f = ck_fold_make(p);
    double t = f.rounds * m->alpha + (double)(f.pp - 1) / f.pp * n * m->beta;
    if (f.rem) t += 2 * m->alpha + (n / p + n) * m->beta;
    return t;
}

/* Block b reaches rank q's player in the round of the highest bit where
 * their virtual ranks differ, from the partner of that round. */
static void ag_rd_diagnose(const ck_fault *f, char *out, size_t cap)
{
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    if (f->missing < 0 || f->p == 1) return;
    const ck_fold fd = ck_fold_make(f->p);
    const int q = ck_fold_player(&fd, f->rank), b = f->missing;
    const int vq = ck_fold_to_virtual(&fd, q), vb = ck_fold_to_virtual(&fd, ck_fold_player(&fd, b));
    for (int k = fd.rounds - 1; k >= 0; k--)
        if ((vq ^ vb) & (1 << k)) {
            ck_sbuf_add(&sb, "rank %d receives the group holding block %d from rank %d at doubling round %d", q, b,
                        ck_fold_to_real(&fd, vq ^ (1 << k)), k);
            break;
        }
    if (ck_fold_player(&fd, b) != b) {
        ck_sbuf_sep(&sb, "; ");
        ck_sbuf_add(&sb, "rank %d sends its block to rank %d at the fold", b, b + 1);
    }
    if (q != f->rank) {
        ck_sbuf_sep(&sb, "; ");
        ck_sbuf_add(&sb, "rank %d gets the whole result from rank %d at the unfold", f->rank, q);
    }
    if (b == f->rank) {
        ck_sbuf_sep(&sb, "; ");
        ck_sbuf_add(&sb, "rank %d copies its own block %d into place before the rounds", b, b);
    }
}

const ck_algo ck_ag_rd = {
    .name = "rd",
    .coll = CK_COLL_ALLGATHER,
    .summary = "recursive doubling, log2(p) rounds (fold for other p)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1)/p * n (p = 2^k)",
    .bytes_sent = ag_rd_bytes,
    .msgs_sent = ag_rd_msgs,
    .cost_formula = "log2(p)α + (p-1)/p·nβ",
    .cost = ag_rd_cost,
    .diagnose = ag_rd_diagnose,
    .run = ag_rd_run,
};
