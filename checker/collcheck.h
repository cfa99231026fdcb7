/*
 * collcheck.h — verifiable inputs, exact expected results, and the collcheck
 * command line, as a library (collkit_check) that the checker binary, the
 * benchmark, the tests and the labs link.
 *
 * The inputs (cc_fill) are small integers held in the element type, different
 * for every rank AND every element, chosen so that the all-reduce of them is
 * exact in every summation order: the expected result is computed locally on
 * every rank and compared bit for bit. The encoding depends on (dtype, op, p):
 *
 *   sum, avg   "rank mask": rank r contributes 2^r + (e(i) << p), where
 *              e(i) = i mod 2^E. The low p bits of a result say WHICH ranks'
 *              inputs it contains, the high bits say which ELEMENT (and how
 *              many contributions). Used while p + bits(p) + 4 <= B, the exact
 *              integer bits of the type (f32 24, f64 52, i32 30, i64 62,
 *              bf16 8): up to p = 15 for f32, 21 for i32, 42 for f64, 52 for
 *              i64, 2 for bf16. Beyond that: (i*(1 + r%2) + r*S) mod M with p*M <= 2^B
 *              (distinct per rank while M >= p; bf16 at large p has only a
 *              few distinct values, so its detection is weaker there).
 *   prod       +-1 or +-2: the magnitude is 2 when (i + r) % 8 == 0, so an
 *              element has at most ceil(p/8) factors of 2 (2^8 at p = 64,
 *              exact even in bf16); the sign is a hash of (r, i), so a shifted
 *              or missing contribution flips the sign of about half the
 *              elements. Rule: the exact product of the p integers.
 *   min, max   ((r + i) mod p) * K + (i mod K) - Z: distinct per rank, the
 *              rank holding the min/max rotates with the element, half the
 *              values are negative.
 *   avg        the exact sum S (as above), then ONE IEEE division by p in the
 *              element type: (float)S / (float)p for f32, (double)S / p for
 *              f64, bf16(float(S) / p) for bf16 — exactly what ck_allreduce
 *              does after the algorithm's sum, so the comparison stays exact.
 *
 * All partial results of sum/prod/min/max are integers within the type's exact
 * range, so any association order gives the same bits.
 */
#ifndef COLLKIT_COLLCHECK_H
#define COLLKIT_COLLCHECK_H

#include <stddef.h>
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

/* Explain a wrong result in words: the first wrong element, expected vs got,
 * and what the value decodes to (which ranks' contributions it holds, whether
 * it is another element's or block's value, another op's result, the recvbuf
 * fill, ...). `own_input` is this rank's cc_fill input (may be NULL);
 * `fill_byte` >= 0 is the byte recvbuf was filled with before the call (out of
 * place), < 0 when none; `algo` (may be NULL) is the algorithm that ran: its
 * diagnose hook places the wrong element in its schedule (step, block, peer).
 * `cfg` is the communicator's configuration (may be NULL). Writes at most
 * `cap` bytes to `out`; returns the index of the first wrong element, or count
 * if all are right. */
size_t cc_diagnose(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                   size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                   const ck_config *cfg);

/* The whole CLI (calls MPI_Init/MPI_Finalize itself unless MPI is already
 * initialised). Tests and labs register their own algorithms with
 * ck_register_algo() and then call this. Returns the process exit code:
 * 0 all cases passed, 1 a case failed, 2 bad arguments. */
int    collcheck_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_COLLCHECK_H */
