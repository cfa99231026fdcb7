/*
 * heldout.c — a second set of broken all-reduce algorithms, written apart
 * from broken.c as a stand-in for the held-out set the checker is judged
 * on: each is a ring (or a reduce + broadcast) with one bug a student makes,
 * and tests/checker/CMakeLists.txt asserts the phrase of the diagnosis that
 * leads to the cause (checker.corpus.*). The names begin with broken_ring_
 * so that collcheck_broken lends them the ring's diagnose hook.
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_algo.h"

enum {
    H_LAST_ELEM = 1,  /* reduce-scatter moves each block one element short: its last element unreduced */
    H_NO_LAST_RS,     /* reduce-scatter stops a step early */
    H_OWN_TWICE,      /* step 0 adds its own input twice */
    H_NO_ALLGATHER,   /* the all-gather never runs */
    H_EVEN_BLOCKS,    /* blocks of count/p: the tail beyond p*(count/p) never handled */
    H_ODD_HANG,       /* at odd p, the last rank waits for a message no rank sends */
    H_STALE_COPY,     /* input copied once into a static buffer, never refreshed */
    H_MINMAX_SWAP,    /* min for max and max for min */
    H_INPLACE_ALIAS,  /* in place, the received block lands in recvbuf over the own input */
    H_TAG_MIX,        /* sends with tag s, receives with tag 0 */
    H_FIRST_ELEM,     /* the all-gather skips element 0 of block 0 */
    H_AG_REDUCE,      /* the all-gather reduces where it should copy: the reduction applied twice */
    H_SMALL_OWN,      /* below p elements, returns its own input */
    H_NEIGHBOUR,      /* rank r returns its left neighbour's input */
    H_STRIDE,         /* reduce_local skips every element with index = 0 mod p in the block loop */
    H_HALF_BLOCK,     /* reduce-scatter reduces only the first half of each block */
    H_CACHE,          /* a call with the same count returns the last result */
    H_SHORT_AG,       /* all-gather stops a step early */
    H_SKEW_HANG,      /* the last rank runs one all-gather step fewer: its left neighbour... its right one waits */
    H_DROP_TAIL,      /* the last partial chunk of 4 elements of each block never reduced */
    H_SHIFT_AG,       /* all-gather stores each block one element late */
    H_ROOT_SKIP,      /* reduce + broadcast: the root's reduction skips rank 1 */
    H_SCALE,          /* a final pass multiplies by p where avg was meant: every element p times the sum */
    H_LAST_RANK_ONLY, /* the last rank's result is its reduce-scatter partials */
    H_ODD_COUNT,      /* an odd count reduces one element too few (the last) */
};

static int hring(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op, int bug)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;
    static char *stale;
    static size_t stale_n;
    static size_t cache_n;
    if (bug == H_STALE_COPY) {   /* BUG: the copy is made once, for the first call's input */
        if (!stale || stale_n < count * es) {
            free(stale);
            stale = malloc(count * es + 1);
            if (!stale) return CK_ERR_NOMEM;
            memcpy(stale, in, count * es);
            stale_n = count * es;
        }
        in = stale;
    }
    if (bug == H_CACHE && cache_n == count && count) return CK_SUCCESS;   /* BUG: recvbuf's last result */
    if (bug == H_SMALL_OWN && count < (size_t)p) return in == out ? CK_SUCCESS : ck_copy(comm, out, in, count * es);
    if (p == 1) return in == out ? CK_SUCCESS : ck_copy(comm, out, in, count * es);
    ck_op rop = op;
    if (bug == H_MINMAX_SWAP && (op == CK_MIN || op == CK_MAX)) rop = op == CK_MIN ? CK_MAX : CK_MIN;
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, (max_len + 1) * es);
    if (!tmp) return CK_ERR_NOMEM;
    if (bug == H_ODD_HANG && p % 2 == 1 && r == p - 1) {   /* BUG: pairs r^1; the odd one out waits */
        ck_step(comm, 0, "pair exchange");
        return ck_sendrecv(comm, in, es, r - 1, tmp, es, r - 1, 7);
    }
    const int rs_steps = bug == H_NO_LAST_RS ? p - 2 : p - 1;
    for (int s = 0; s < rs_steps; s++) {
        ck_step(comm, s, "reduce-scatter");
        int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if (bug == H_EVEN_BLOCKS) { slen = rlen = count / (size_t)p; soff = sb * slen; roff = rb * rlen; }
        if (bug == H_LAST_ELEM) { slen -= slen > 0; rlen -= rlen > 0; }
        if (bug == H_DROP_TAIL) { slen -= slen % 4; rlen -= rlen % 4; }
        if (bug == H_HALF_BLOCK) { slen = (slen + 1) / 2; rlen = (rlen + 1) / 2; }
        if (bug == H_ODD_COUNT && count % 2 && rb == p - 1) rlen -= rlen > 0;
        if (bug == H_ODD_COUNT && count % 2 && sb == p - 1) slen -= slen > 0;
        char *rtmp = bug == H_INPLACE_ALIAS && in == out ? out + roff * es : tmp;
        const int stag = bug == H_TAG_MIX ? s : 0;
        ck_req rq[2];
        if ((rc = ck_irecv(comm, rtmp, rlen * es, left, 0, &rq[0]))) return rc;
        if ((rc = ck_isend(comm, (s == 0 ? in : out) + soff * es, slen * es, right, stag, &rq[1]))) return rc;
        if ((rc = ck_waitall(comm, rq, 2))) return rc;
        if (bug == H_STRIDE) {
            for (size_t i = 0; i < rlen; i++)
                if ((roff + i) % (size_t)p != 0 &&
                    (rc = ck_reduce_local(comm, out + (roff + i) * es, in + (roff + i) * es, rtmp + i * es, 1, dt, rop)))
                    return rc;
                else if ((roff + i) % (size_t)p == 0 && (rc = ck_copy(comm, out + (roff + i) * es, in + (roff + i) * es, es)))
                    return rc;
            continue;
        }
        if ((rc = ck_reduce_local(comm, out + roff * es, in + roff * es, rtmp, rlen, dt, rop))) return rc;
        if (bug == H_OWN_TWICE && s == 0 &&
            (rc = ck_reduce_local(comm, out + roff * es, out + roff * es, in + roff * es, rlen, dt, rop))) return rc;
    }
    if (bug == H_NO_ALLGATHER || (bug == H_LAST_RANK_ONLY && r == p - 1)) return CK_SUCCESS;
    const int ag_steps = bug == H_SHORT_AG || (bug == H_SKEW_HANG && r == p - 1) ? p - 2 : p - 1;
    for (int s = 0; s < ag_steps; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        int sb = ((r + 1 - s) % p + p) % p, rb = ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if (bug == H_EVEN_BLOCKS) { slen = rlen = count / (size_t)p; soff = sb * slen; roff = rb * rlen; }
        char *dst = out + roff * es;
        if (bug == H_AG_REDUCE || (bug == H_FIRST_ELEM && rb == 0) || (bug == H_SHIFT_AG && rlen > 1)) dst = tmp;
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, right, dst, rlen * es, left, p - 1 + s))) return rc;
        if (bug == H_AG_REDUCE && (rc = ck_reduce_local(comm, out + roff * es, out + roff * es, tmp, rlen, dt, op)))
            return rc;
        if (bug == H_FIRST_ELEM && rb == 0 && rlen > 1 && (rc = ck_copy(comm, out + es, tmp + es, (rlen - 1) * es)))
            return rc;
        if (bug == H_SHIFT_AG && rlen > 1 && (rc = ck_copy(comm, out + (roff + 1) * es, tmp, (rlen - 1) * es)))
            return rc;
    }
    if (bug == H_SCALE && op == CK_SUM && dt == CK_I64)
        for (size_t i = 0; i < count; i++) ((int64_t *)out)[i] *= 2;
    cache_n = count;
    return CK_SUCCESS;
}

/* Left neighbour's input, from a ring that forwards and never reduces. */
static int neighbour_run(ck_comm *comm, const void *in, void *out, size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    if (p == 1) return in == out ? CK_SUCCESS : ck_copy(comm, out, in, count * es);
    char *tmp = ck_scratch(comm, count * es + 1);
    if (!tmp) return CK_ERR_NOMEM;
    ck_step(comm, 0, "shift");
    int rc = ck_sendrecv(comm, in, count * es, (r + 1) % p, tmp, count * es, (r - 1 + p) % p, 0);
    return rc ? rc : ck_copy(comm, out, tmp, count * es);
}

/* Reduce to rank 0, then broadcast; the root's loop starts at rank 2. */
static int root_skip_run(ck_comm *comm, const void *in, void *out, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    int rc;
    if (in != out && (rc = ck_copy(comm, out, in, count * es))) return rc;
    if (p == 1) return CK_SUCCESS;
    char *tmp = ck_scratch(comm, count * es + 1);
    if (!tmp) return CK_ERR_NOMEM;
    ck_step(comm, 0, "reduce");
    if (r == 0) {
        for (int q = 1; q < p; q++) {
            if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, count * es, q, 0))) return rc;
            if (q == 1 && p > 2) continue;   /* BUG: rank 1's contribution received, never added */
            if ((rc = ck_reduce_local(comm, out, out, tmp, count, dt, op))) return rc;
        }
    } else if ((rc = ck_sendrecv(comm, in, count * es, 0, NULL, 0, -1, 0))) return rc;
    ck_step(comm, 1, "broadcast");
    if (r == 0) {
        for (int q = 1; q < p; q++)
            if ((rc = ck_sendrecv(comm, out, count * es, q, NULL, 0, -1, 1))) return rc;
        return CK_SUCCESS;
    }
    return ck_sendrecv(comm, NULL, 0, -1, out, count * es, 0, 1);
}

#define HRUN(fn, bug) \
    static int fn(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op) { return hring(c, s, d, n, dt, op, bug); }
HRUN(h_last_elem, H_LAST_ELEM)
HRUN(h_no_last_rs, H_NO_LAST_RS)
HRUN(h_own_twice, H_OWN_TWICE)
HRUN(h_no_allgather, H_NO_ALLGATHER)
HRUN(h_even_blocks, H_EVEN_BLOCKS)
HRUN(h_odd_hang, H_ODD_HANG)
HRUN(h_stale_copy, H_STALE_COPY)
HRUN(h_minmax_swap, H_MINMAX_SWAP)
HRUN(h_inplace_alias, H_INPLACE_ALIAS)
HRUN(h_tag_mix, H_TAG_MIX)
HRUN(h_first_elem, H_FIRST_ELEM)
HRUN(h_ag_reduce, H_AG_REDUCE)
HRUN(h_small_own, H_SMALL_OWN)
HRUN(h_stride, H_STRIDE)
HRUN(h_half_block, H_HALF_BLOCK)
HRUN(h_cache, H_CACHE)
HRUN(h_short_ag, H_SHORT_AG)
HRUN(h_skew_hang, H_SKEW_HANG)
HRUN(h_drop_tail, H_DROP_TAIL)
HRUN(h_shift_ag, H_SHIFT_AG)
HRUN(h_scale, H_SCALE)
HRUN(h_last_rank_only, H_LAST_RANK_ONLY)
HRUN(h_odd_count, H_ODD_COUNT)

/* What a correct ring sends: every block but (r+1), then every block but
 * (r+2): the formula a student's ring declares, bug or not. */
static uint64_t ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, l1, l2;
    ck_block(count, p, (r + 1) % p, &off, &l1);
    ck_block(count, p, (r + 2) % p, &off, &l2);
    return (uint64_t)(2 * count - l1 - l2) * es;
}
static uint64_t whole_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)cfg;
    return p == 1 ? 0 : count * es;
}
static uint64_t naive_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return p == 1 ? 0 : r == 0 ? (uint64_t)(p - 1) * count * es : count * es;
}

#define HB(nm, fn, what, formula, bytes) \
    {.name = "broken_ring_" nm, .summary = what, .mem = CK_MEM_HOST, .bytes_formula = formula, .bytes_sent = bytes, .run = fn}
#define H(nm, fn, what) HB(nm, fn, what, "2(p-1)/p * n", ring_bytes)
const ck_algo heldout_algos[] = {
    H("h_last_elem", h_last_elem, "each block's last element never reduced"),
    H("h_no_last_rs", h_no_last_rs, "reduce-scatter one step short"),
    H("h_own_twice", h_own_twice, "own input added twice at step 0"),
    H("h_no_allgather", h_no_allgather, "no all-gather"),
    H("h_even_blocks", h_even_blocks, "blocks of count/p, the tail dropped"),
    H("h_odd_hang", h_odd_hang, "pairs r^1: at odd p the last rank waits"),
    H("h_stale_copy", h_stale_copy, "input copied once, never refreshed"),
    H("h_minmax_swap", h_minmax_swap, "min and max swapped"),
    H("h_inplace_alias", h_inplace_alias, "in place, receives over its own input"),
    H("h_tag_mix", h_tag_mix, "sends tag s, receives tag 0"),
    H("h_first_elem", h_first_elem, "element 0 never gathered"),
    H("h_ag_reduce", h_ag_reduce, "all-gather reduces instead of copying"),
    H("h_small_own", h_small_own, "below p elements, its own input"),
    HB("h_neighbour", neighbour_run, "the left neighbour's input", "n", whole_bytes),
    H("h_stride", h_stride, "elements = 0 mod p never reduced"),
    H("h_half_block", h_half_block, "half of each block reduced"),
    H("h_cache", h_cache, "the last result for the same count"),
    H("h_short_ag", h_short_ag, "all-gather one step short"),
    H("h_skew_hang", h_skew_hang, "the last rank's all-gather one step short"),
    H("h_drop_tail", h_drop_tail, "each block's partial chunk of 4 dropped"),
    H("h_shift_ag", h_shift_ag, "all-gather stores one element late"),
    HB("h_root_skip", root_skip_run, "reduce + broadcast, rank 1 never added", "root (p-1)n, others n", naive_bytes),
    H("h_scale", h_scale, "i64 sums doubled"),
    H("h_last_rank_only", h_last_rank_only, "the last rank skips the all-gather"),
    H("h_odd_count", h_odd_count, "odd counts: the last element unreduced"),
};
const int heldout_algos_count = sizeof heldout_algos / sizeof heldout_algos[0];
