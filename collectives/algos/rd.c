/*
 * rd — recursive doubling: log2(p) rounds of whole-buffer exchange, with a
 * fold for rank counts that are not a power of two (Thakur, Rabenseifner &
 * Gropp 2005; Open MPI's allreduce_intra_recursivedoubling).
 *
 * Idea. With p a power of two: in round k every rank swaps its whole
 * (partial) result with the rank whose number differs in bit k, and both
 * combine the two. After round k each rank holds the reduction over a group
 * of 2^(k+1) ranks; after log2 p rounds, over everyone. Few rounds, but every
 * round moves the whole buffer: the algorithm for small messages.
 *
 * The fold (fold.h, shared with rabenseifner.c), for p = p' + rem with p'
 * the largest power of two <= p: the first 2·rem ranks pair up (2i, 2i+1).
 * Before the rounds, the even one sends its input to the odd one, which
 * combines it and takes part in the rounds as "virtual rank" i; the even one
 * sits the rounds out. Ranks >= 2·rem are virtual rank r - rem. After the
 * rounds each odd one sends the result back to its even partner. Cost of the
 * fold: 2 extra whole-buffer messages.
 *
 * Combining order: the lower virtual rank's data always goes first
 * (a op b with a from the lower group), and a folded pair combines as
 * even op odd, so all ranks compute the same expression and hold the same bits.
 *
 * Worked example, p = 4 (no fold), X = the whole buffer, XR = rank R's input.
 * Each cell: what the rank SENDS.
 *
 *   round      rank 0      rank 1      rank 2          rank 3
 *   0 (^1)     X0 -> 1     X1 -> 0     X2 -> 3         X3 -> 2
 *   1 (^2)     X01 -> 2    X01 -> 3    X23 -> 0        X23 -> 1
 *   (X01 = X0+X1; after round 1 everyone holds X01+X23)
 * p = 3: p' = 2, rem = 1: rank 0 sends X0 to rank 1 (fold), ranks 1 and 2
 * (virtual 0 and 1) swap X01 and X2, rank 1 sends the result to rank 0.
 *
 * Bytes sent per rank: log2(p')·n in log2(p') messages; in the fold the even
 * rank sends n (its input, 1 message) and the odd one log2(p')·n + n
 * (log2(p') + 1 messages).
 * Cost: T = log2(p')·(α + n·β + n·γ), plus 2(α + n·β) + n·γ when p is not a
 * power of two: the table's 2 rounds at p = 4, fold + 1 round + unfold at
 * p = 3. Latency-optimal (log p rounds), but n per round: for large n the
 * ring's 2(p-1)/p·n wins.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        2.15        4.31        8.56        8.61
 *       1M      159.29      318.57      584.72      637.15
 *      64M    10068.33    20136.66    36917.88    40273.32
 */
#include <stdio.h>
#include "fold.h"

static int rd_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                  size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), bytes = count * es;
    const ck_fold f = ck_fold_make(p);
    const int v = ck_fold_to_virtual(&f, r);
    int rc;

    if (p == 1) return ck_copy(comm, recvbuf, sendbuf, bytes);
    void *tmp = ck_scratch(comm, bytes);
    if (!tmp) return CK_ERR_NOMEM;

    /* Steps: 0 fold, 1..rounds exchanges, rounds+1 unfold. */
    const void *data;   /* this rank's input, or the folded pair's */
    if ((rc = ck_fold_in(comm, &f, sendbuf, recvbuf, tmp, count, dt, op, &data))) return rc;

    /* Rounds (not for the even rank of a folded pair): swap with the virtual
     * rank across bit k, combine lower first. */
    for (int k = 0; v >= 0 && k < f.rounds; k++) {
        ck_step(comm, 1 + k, "exchange");
        const int vpeer = v ^ (1 << k), peer = ck_fold_to_real(&f, vpeer);
        if ((rc = ck_sendrecv(comm, data, bytes, peer, tmp, bytes, peer, CK_FOLD_TAGS + k))) return rc;
        rc = vpeer < v ? ck_reduce_local(comm, recvbuf, tmp, data, count, dt, op)
                       : ck_reduce_local(comm, recvbuf, data, tmp, count, dt, op);
        if (rc) return rc;
        data = recvbuf;
    }
    return ck_fold_out(comm, &f, recvbuf, bytes, f.rounds + 1);
}

/* The whole buffer once per round, plus the fold. */
static uint64_t rd_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    const ck_fold f = ck_fold_make(p);
    const uint64_t n = (uint64_t)count * es, rounds = ck_fold_to_virtual(&f, r) >= 0 ? (uint64_t)f.rounds : 0;
    return rounds * n + ck_fold_bytes(&f, r, n);
}

static uint64_t rd_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es, (void)cfg;
    const ck_fold f = ck_fold_make(p);
    if (count == 0) return 0;
    return (ck_fold_to_virtual(&f, r) >= 0 ? (uint64_t)f.rounds : 0) + ck_fold_msgs(&f, r);
}

static double rd_cost(const ck_cost_params *m, int p, double n)
{
    const ck_fold f = ck_fold_make(p);
    const double fold = f.rem ? 2 * (m->alpha + n * m->beta) + n * m->gamma : 0;
    return f.rounds * (m->alpha + n * m->beta + n * m->gamma) + fold;
}

/* The round in which the missing (or doubled) rank's data reaches f->rank:
 * in round k a rank receives everything its partner across bit k has
 * gathered, so data moves between virtual ranks in the round of the highest
 * bit where they differ. */
static void rd_diagnose(const ck_fault *fl, char *out, size_t cap)
{
    const ck_fold f = ck_fold_make(fl->p);
    const int who = fl->missing >= 0 ? fl->missing : fl->doubled;
    if (fl->p < 2 || who < 0 || who >= fl->p || fl->rank < 0 || fl->rank >= fl->p || cap == 0) return;
    const int src = ck_fold_player(&f, who), dst = ck_fold_player(&f, fl->rank);
    const int vs = ck_fold_to_virtual(&f, src), vd = ck_fold_to_virtual(&f, dst);
    int k = 0;
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    while ((vs ^ vd) >> (k + 1)) k++;
    if (vs != vd)
        ck_sbuf_add(&sb, "rank %d's data should reach rank %d %sin round %d (virtual ranks %d and %d "
                    "differ in bit %d), from rank %d", src, dst, fl->missing >= 0 ? "" : "only once, ",
                    k, vs, vd, k, ck_fold_to_real(&f, vd ^ (1 << k)));
    else if (src == who)
        ck_sbuf_add(&sb, "rank %d's own input starts its sum, before round 0", who);
    ck_fold_explain(&f, who, fl->rank, &sb);
}

const ck_algo ck_algo_rd = {
    .name = "rd",
    .summary = "recursive doubling: log2 p whole-buffer exchanges (+ fold for non-power-of-two p)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "log2(p') * n (+n fold)",
    .bytes_sent = rd_bytes,
    .msgs_sent = rd_msgs,
    .cost_formula = "log2(p')(α + nβ + nγ) [+ 2(α + nβ) + nγ fold, p not a power of two]",
    .cost = rd_cost,
    .diagnose = rd_diagnose,
    .run = rd_run,
};
