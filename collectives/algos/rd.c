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
 * The fold, for p = p' + rem with p' the largest power of two <= p: the first
 * 2·rem ranks pair up (2i, 2i+1). Before the rounds, the even one sends its
 * input to the odd one, which combines it and takes part in the rounds as
 * "virtual rank" i; the even one sits the rounds out. Ranks >= 2·rem are
 * virtual rank r - rem. After the rounds each odd one sends the result back to
 * its even partner. Cost of the fold: 2 extra whole-buffer messages.
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
 * Bytes sent per rank: log2(p')·n; in the fold the even rank sends n (its
 * input) and the odd one log2(p')·n + n.
 * Cost: T = log2(p')·(α + n·β + n·γ), plus 2(α + n·β) + n·γ when p is not a
 * power of two. Latency-optimal (log p rounds), but n per round: for large n
 * the ring's 2(p-1)/p·n wins.
 */
#include "collkit_algo.h"

/* Virtual rank of r (-1 for the even half of a folded pair) and back. */
static int to_virtual(int r, int rem) { return r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem; }
static int to_real(int v, int rem) { return v < rem ? 2 * v + 1 : v + rem; }

static int rd_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                  size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), bytes = count * es;
    int pp = 1, rounds = 0, rc;
    while (2 * pp <= p) { pp *= 2; rounds++; }
    const int rem = p - pp, v = to_virtual(r, rem);

    if (p == 1) return ck_copy(comm, recvbuf, sendbuf, bytes);
    void *tmp = ck_scratch(comm, bytes);
    if (!tmp) return CK_ERR_NOMEM;

    /* Fold: the even rank of a pair hands its input over and waits. */
    /* Steps: 0 fold, 1..rounds exchanges, rounds+1 unfold. Tags likewise
     * (fold 0, unfold 1, round k 2+k). */
    ck_step(comm, 0, "fold");
    if (v < 0) {
        if ((rc = ck_sendrecv(comm, sendbuf, bytes, r + 1, NULL, 0, -1, 0))) return rc;
        ck_step(comm, rounds + 1, "unfold");
        return ck_sendrecv(comm, NULL, 0, -1, recvbuf, bytes, r + 1, 1);
    }
    if (r < 2 * rem) {
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, bytes, r - 1, 0))) return rc;
        if ((rc = ck_reduce_local(comm, recvbuf, tmp, sendbuf, count, dt, op))) return rc;
    } else if ((rc = ck_copy(comm, recvbuf, sendbuf, bytes))) {
        return rc;
    }

    /* Rounds: swap with the virtual rank across bit k, combine lower first. */
    for (int k = 0; k < rounds; k++) {
        ck_step(comm, 1 + k, "exchange");
        const int vpeer = v ^ (1 << k), peer = to_real(vpeer, rem);
        if ((rc = ck_sendrecv(comm, recvbuf, bytes, peer, tmp, bytes, peer, 2 + k))) return rc;
        rc = vpeer < v ? ck_reduce_local(comm, recvbuf, tmp, recvbuf, count, dt, op)
                       : ck_reduce_local(comm, recvbuf, recvbuf, tmp, count, dt, op);
        if (rc) return rc;
    }

    if (r < 2 * rem) {
        ck_step(comm, rounds + 1, "unfold");
        if ((rc = ck_sendrecv(comm, recvbuf, bytes, r - 1, NULL, 0, -1, 1))) return rc;
    }
    return CK_SUCCESS;
}

static uint64_t rd_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    int pp = 1, rounds = 0;
    while (2 * pp <= p) { pp *= 2; rounds++; }
    const int rem = p - pp;
    const uint64_t n = (uint64_t)count * es;
    if (r < 2 * rem) return r % 2 ? (uint64_t)(rounds + 1) * n : n;
    return (uint64_t)rounds * n;
}

const ck_algo ck_algo_rd = {
    .name = "rd",
    .summary = "recursive doubling: log2 p whole-buffer exchanges (+ fold for non-power-of-two p)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "log2(p') * n (+n fold)",
    .bytes_sent = rd_bytes,
    .run = rd_run,
};
