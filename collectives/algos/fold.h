/*
 * fold.h — the non-power-of-two fold shared by rd.c and rabenseifner.c
 * (Thakur, Rabenseifner & Gropp 2005; Open MPI's recursive doubling and
 * Rabenseifner all-reduce). Not an algorithm: algos.def does not list it.
 *
 * Recursive doubling and halving pair ranks across bit k, which needs a
 * power of two. With p = p' + rem, p' the largest power of two <= p:
 *   - the first 2·rem ranks pair up (2i, 2i+1);
 *   - fold in: the even one sends its input to the odd one, which combines
 *     them (even op odd) and plays virtual rank i in the rounds;
 *   - ranks r >= 2·rem play virtual rank r - rem;
 *   - fold out: after the rounds each odd one sends the result to its even
 *     partner, which sat the rounds out.
 * Cost: two extra whole-buffer messages and one reduction, 2(α + nβ) + nγ,
 * on the folded pairs, and none when p is a power of two.
 *
 *   p = 6: p' = 4, rem = 2     rank     0   1   2   3   4   5
 *                              virtual  -   0   -   1   2   3
 */
#ifndef COLLKIT_FOLD_H
#define COLLKIT_FOLD_H

#include "collkit_algo.h"

typedef struct ck_fold {
    int p;        /* ranks */
    int pp;       /* p': the largest power of two <= p, the ranks in the rounds */
    int rem;      /* p - p': the number of folded pairs */
    int rounds;   /* log2 p' */
} ck_fold;

/* Tags: the fold takes 0 (in) and 1 (out); an algorithm's rounds use tags
 * from CK_FOLD_TAGS on. */
enum { CK_FOLD_TAG_IN = 0, CK_FOLD_TAG_OUT = 1, CK_FOLD_TAGS = 2 };

ck_fold ck_fold_make(int p);
/* Virtual rank of r, or -1 for the even rank of a folded pair. */
int ck_fold_to_virtual(const ck_fold *f, int r);
/* The real rank that plays virtual rank v (the odd one of a pair). */
int ck_fold_to_real(const ck_fold *f, int v);
/* r's partner in its folded pair, or -1 when r is not folded. */
int ck_fold_partner(const ck_fold *f, int r);

/* Fold in (step 0). Even rank of a pair: send the input to the partner.
 * Odd rank: receive the partner's input into tmp (count elements) and set
 * recvbuf = partner op own. *data is where this rank's data for the rounds
 * now lives: recvbuf on an odd rank, sendbuf on the others. */
int ck_fold_in(ck_comm *comm, const ck_fold *f, const void *sendbuf, void *recvbuf, void *tmp,
               size_t count, ck_dtype dt, ck_op op, const void **data);
/* Fold out (at `step`): the odd rank of a pair sends recvbuf to its partner,
 * the even one receives the result into recvbuf; the others do nothing. */
int ck_fold_out(ck_comm *comm, const ck_fold *f, void *recvbuf, size_t bytes, int step);

/* The elements that virtual ranks [a, b) are responsible for, in ck_block's
 * partition over the p real ranks: a virtual rank its real rank's block, the
 * odd rank of a folded pair both blocks of the pair (contiguous). For the
 * reduce-scatter and all-gather rounds, which split and join whole blocks. */
void ck_fold_vrange(const ck_fold *f, size_t count, int a, int b, size_t *off, size_t *len);

/* Bytes and messages the fold adds to rank r's sends: n and 1 on both ranks
 * of a pair (the even one sends nothing else), 0 on the others. */
uint64_t ck_fold_bytes(const ck_fold *f, int r, uint64_t n);
uint64_t ck_fold_msgs(const ck_fold *f, int r);

/* For diagnoses: the rank that plays r in the rounds (r, or the odd partner
 * of an even folded r), and the fold's part of a fault's story: appends
 * "; rank W folds its input into rank W+1 at the fold" when `who` is folded
 * and "; rank R gets the result from rank R+1 at the unfold" when `rank` is. */
int    ck_fold_player(const ck_fold *f, int r);
void   ck_fold_explain(const ck_fold *f, int who, int rank, ck_sbuf *out);

#endif /* COLLKIT_FOLD_H */
