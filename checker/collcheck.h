/*
 * collcheck.h — verifiable inputs, exact expected results, and the collcheck
 * command line, as a library (collkit_check) that the checker binary, the
 * benchmark, the tests and the labs link.
 *
 * The inputs (cc_fill) are small integers held in the element type, different
 * for every rank AND every element, chosen so that the all-reduce of them is
 * exact in every summation order: the expected result is computed locally on
 * every rank and compared bit for bit. The encoding depends on (dtype, op, p),
 * and on the call (the salt, below):
 *
 *   sum, avg   "rank mask": rank r contributes 2^r + (e(j) << p), where
 *              e(j) = j mod 2^E. The low p bits of a result say WHICH ranks'
 *              inputs it contains, the high bits say which ELEMENT (and how
 *              many contributions). For i64 the element field starts at bit
 *              34 instead of p: every input reaches above 32 bits, so a sum
 *              done in a 32-bit type cannot pass. Used while p + bits(p) + 4 <= B, the exact
 *              integer bits of the type (f32 24, f64 52, i32 30, i64 62,
 *              bf16 8): up to p = 15 for f32, 21 for i32, 42 for f64, 52 for
 *              i64, 2 for bf16. Beyond that: (j*(1 + r%2) + r*S) mod M with p*M <= 2^B
 *              (distinct per rank while M >= p; bf16 at large p has only a
 *              few distinct values, so its detection is weaker there).
 *   prod       +-2 or +-4 (the magnitude and the sign a hash of (r, j)):
 *              no input is the identity 1, so a contribution left out or
 *              replaced by 1 changes the product, and the ranks it can have
 *              been narrow down element by element. Exact: a product of
 *              powers of two, at most 2^62 (floats, i64) or 2^29 (i32); at
 *              larger p magnitudes 2 only, and past that budget of factors 2
 *              the remaining ranks give +-1 (only their sign shows). For
 *              i64 at p <= 26 one rank per element (rotating) gives
 *              +-(2^(a + 34 - p) + 1) instead: every product is above 2^33,
 *              so a product done in a 32-bit type cannot pass.
 *   min, max   ((r + j) mod p) * K + (j mod K) + shift(j): distinct per rank,
 *              the rank holding the min/max rotates with the element, and by
 *              j mod 3 every value of an element is positive, every value is
 *              negative, or they straddle zero — so 0 used as the identity of
 *              min or max (or a rank's value replaced by 0) shows. K is
 *              2^20 (less where the type has no room); for i64 it is 2^40
 *              and every value is moved 2^39 further from zero: the ranks'
 *              values agree in their low 32 bits and none fits in 32 bits,
 *              so a min or max computed in a 32-bit type cannot pass.
 *   avg        the exact sum S (as above), then ONE IEEE division by p in the
 *              element type: (float)S / (float)p for f32, (double)S / p for
 *              f64, bf16(float(S) / p) for bf16 — exactly what ck_allreduce
 *              does after the algorithm's sum, so the comparison stays exact.
 *
 * All partial results of sum/prod/min/max are integers within the type's exact
 * range, so any association order gives the same bits.
 *
 * The salt: call k of a case (collcheck runs every case twice by default, and
 * N times with --repeat N) uses element j = i + k * 2654435761 of the
 * encoding in place of i, so every call has other inputs and another result:
 * an algorithm that keeps a result, a partial sum or a posted receive from one
 * call to the next is caught by the next, and its result decoded.
 *
 * Random floats (cc_fill_random): exact integers hide a summation order that
 * depends on the rank. These inputs are random non-integer floats for sum and
 * avg; a result is checked against the exact sum within the rounding bound of
 * any summation order, and (by the driver) bit for bit across ranks.
 */
#ifndef COLLKIT_COLLCHECK_H
#define COLLKIT_COLLCHECK_H

#include <stddef.h>
#include <stdint.h>
#include "collkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Verifiable input: element i of rank r's buffer for (dt, op). */
void   cc_fill(void *host_buf, size_t count, ck_dtype dt, ck_op op, int rank, int p);
/* The exact expected result of the all-reduce over p ranks of cc_fill inputs. */
void   cc_expected(void *host_buf, size_t count, ck_dtype dt, ck_op op, int p);
/* Number of elements that differ from cc_expected (exact, bitwise comparison). */
size_t cc_count_wrong(const void *host_got, size_t count, ck_dtype dt, ck_op op, int p);

/* The same for call `salt` of a case (salt 0 is the functions above). */
void   cc_fill_salted(void *host_buf, size_t count, ck_dtype dt, ck_op op, int rank, int p, unsigned salt);
void   cc_expected_salted(void *host_buf, size_t count, ck_dtype dt, ck_op op, int p, unsigned salt);
size_t cc_count_wrong_salted(const void *host_got, size_t count, ck_dtype dt, ck_op op, int p, unsigned salt);

/* The run's seed (default 0: the inputs described above). Another seed
 * shifts every call's element keys by a 64-bit hash of it (the exact
 * encodings: which rank holds an element's min, the element fields, prod's
 * signs) and mixes it into the random floats, so a run's exact inputs and
 * results cannot be known before the seed is chosen; the encodings and their
 * diagnoses stay the same. Set it before any input is made (the whole
 * process uses one seed). */
void     cc_set_seed(uint64_t seed);
uint64_t cc_get_seed(void);
/* A --seed value: a whole number from 0 to 2^64-1 (decimal, or 0x hex), no
 * sign, nothing after it. Returns 0 and sets *seed, or -1. */
int      cc_parse_seed(const char *text, uint64_t *seed);

/* Random-float inputs for sum and avg on f32, f64 and bf16: element i of rank
 * r for `seed`, deterministic in (rank, element, seed), non-integer, with
 * exponents spread over 2^-7 .. 2^0 (2^-3 .. 2^0 for f64) so that partial
 * sums round and their order shows in the last bits. */
void   cc_fill_random(void *host_buf, size_t count, ck_dtype dt, int rank, unsigned seed);
/* Check a sum or avg over p ranks of cc_fill_random inputs: every element
 * within the rounding bound of the exact sum (see random.c for the bound).
 * Returns the number of elements outside it; when there are any, `out` says
 * which element, by how much, and what the error looks like. */
size_t cc_check_random(char *out, size_t cap, const void *host_got, size_t count, ck_dtype dt, ck_op op,
                       int rank, int p, unsigned seed);

/* Explain a wrong result in words: the first wrong element, expected vs got,
 * and what the value decodes to (which ranks' contributions it holds, whether
 * it is another element's or block's value, another op's result, the recvbuf
 * fill or that fill reduced as an input, 0 where 0 is no input, ...); then what up to 64 wrong elements show
 * together — a claim about the algorithm ("looks like max", "data shifted by
 * d", "rank q's contribution is missing") only when most of them, and at
 * least two, agree, the counts otherwise. `own_input` is this rank's cc_fill input (may be NULL);
 * `fill_byte` >= 0 is the byte recvbuf was filled with before the call (out of
 * place), < 0 when none; `algo` (may be NULL) is the algorithm that ran: its
 * diagnose hook places the wrong element in its schedule (step, block, peer).
 * `cfg` is the communicator's configuration (may be NULL). Writes at most
 * `cap` bytes to `out`; returns the index of the first wrong element, or count
 * if all are right. */
size_t cc_diagnose(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                   size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                   const ck_config *cfg);
/* The same for call `salt` of a case; with salt > 0 a value that is the
 * previous call's result (or that result combined with this call's) is
 * recognised as state kept between calls. */
size_t cc_diagnose_salted(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                          size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                          const ck_config *cfg, unsigned salt);
/* The call made before this one, when it belonged to another case (call
 * `salt` of a case with `count` elements of type dt, op op): a value that is
 * its result is state carried from one case into the next. */
typedef struct { int valid; size_t count; ck_dtype dt; ck_op op; unsigned salt; } cc_prev_call;
/* cc_diagnose_salted, with the call before this one when salt is 0. */
size_t cc_diagnose_run(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                       size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                       const ck_config *cfg, unsigned salt, const cc_prev_call *before);
/* What the last diagnosis on this thread found, in a few words ("the
 * reduction looks like max", "data shifted by 3"); "" when it found nothing
 * or no element was wrong. */
const char *cc_diagnose_claim(void);

/* Reduce-scatter and all-gather (coll.c), with the same inputs. The
 * elements of the send and receive buffers of one call (in place: the
 * receive buffer only). */
void   cc_coll_sizes(ck_coll coll, size_t count, int p, int rank, int inplace, size_t *send_elems,
                     size_t *recv_elems);
/* This rank's input over the WHOLE buffer (count elements; an all-gather
 * sends its own block of it). */
void   cc_coll_input(ck_coll coll, void *full, size_t count, ck_dtype dt, ck_op op, int rank, int p, unsigned salt);
/* Check and explain a result as cc_diagnose_salted does, for any collective:
 * `result` is the receive buffer (count elements in place, the rank's block
 * out of place for a reduce-scatter). Returns the first wrong element (its
 * place in the whole buffer), or count when all are right. */
size_t cc_coll_diagnose(ck_coll coll, char *out, size_t cap, const void *result, const void *own_input,
                        int fill_byte, size_t count, ck_dtype dt, ck_op op, int rank, int p, int inplace,
                        const ck_algo *algo, const ck_config *cfg, unsigned salt);

/* The rank whose block (ck_block over count elements, p ranks) holds element i. */
int cc_block_owner(size_t count, int p, size_t i);

/* Where a rank's result is in its receive buffer, in elements: at *off_elems,
 * *elems of them (a reduce-scatter's block r: at its offset in place, at 0
 * out of place; an all-gather's or all-reduce's whole buffer). The rest of an
 * in-place reduce-scatter's buffer is the algorithm's scratch: no result. */
void   cc_coll_result(ck_coll coll, size_t count, int p, int rank, int inplace, size_t *off_elems, size_t *elems);
/* The exact result rank `rank` must end with for call `salt` of the inputs
 * above (count elements over the whole buffer; out holds count): the
 * elements cc_coll_result says, written from out[0]; returns their number. */
size_t cc_coll_expected(ck_coll coll, void *out, size_t count, ck_dtype dt, ck_op op, int rank, int p,
                        unsigned salt);
/* One call of the collective `coll` (ck_allreduce, ck_reduce_scatter or
 * ck_allgather, which takes no op). */
int    cc_coll_call(ck_comm *comm, ck_coll coll, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                    size_t count, ck_dtype dt, ck_op op);

/* The number of wrong elements of such a result (bitwise). */
size_t cc_coll_count_wrong(ck_coll coll, const void *result, size_t count, ck_dtype dt, ck_op op, int rank, int p,
                           int inplace, unsigned salt);

/* The whole CLI (calls MPI_Init/MPI_Finalize itself unless MPI is already
 * initialised). Tests and labs register their own algorithms with
 * ck_register_algo() and then call this. Returns the process exit code:
 * 0 all cases passed, 1 a case failed, 2 bad arguments. */
int    collcheck_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_COLLCHECK_H */
