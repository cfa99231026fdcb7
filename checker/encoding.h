/*
 * encoding.h — the input encoding shared by inputs.c (fill, expected)
 * and diagnose.c (which decodes wrong values). Not part of the public API.
 */
#ifndef COLLKIT_CHECK_ENCODING_H
#define COLLKIT_CHECK_ENCODING_H

#include <stdint.h>
#include "collcheck.h"

/* The encodings below take element i of call `salt` as element
 * j = i + salt * CC_SALT_STEP of call 0 (cc_key): every call of a case gets
 * other inputs and another result, and a wrong value decodes the same way. */
enum {
    CC_MASK,     /* sum/avg: 2^r + (e(j) << eshift), eshift = p, or
                    above bit 32 for i64 (so a sum done in 32 bits shows) */
    CC_MOD,      /* sum/avg at large p: (j*(1+(r&1)) + r*S) mod M      */
    CC_PROD,     /* +-2^a, a in {1,2} (or 1, or 0 past the type's room) */
    CC_MINMAX    /* ((r+j) mod M)*K + (j mod K) + shift(j), shift by j mod 3:
                    all positive, all negative, or straddling zero     */
};

#define CC_SALT_STEP ((size_t)2654435761u)   /* odd: never 0 modulo a power of two */

typedef struct cc_scheme {
    ck_dtype dt;
    ck_op    op;
    int      p;
    int      kind;    /* CC_* */
    int      bits;    /* exact integer bits of the type */
    int      ebits;   /* CC_MASK: width of the element field */
    int      eshift;  /* CC_MASK: where the element field starts (>= p) */
    int      pexp;    /* CC_PROD: 2 (magnitudes 2 or 4), 1 (2 for ranks < budget), see cc_input */
    int      budget;  /* CC_PROD: the number of factors 2 a product may hold */
    int      lift;    /* CC_PROD, i64, p <= 26: one rank's factor is 2^(a + lift) + 1 (see cc_input) */
    unsigned salt;    /* which call of the case */
    size_t   off;     /* salt * CC_SALT_STEP, plus the run's seed offset (cc_set_seed) */
    int64_t  M, K, S, Z;
    int64_t  H;       /* CC_MINMAX, i64: 2^39 added away from zero (no value fits in 32 bits) */
} cc_scheme;

cc_scheme cc_scheme_of(ck_dtype dt, ck_op op, int p);
cc_scheme cc_scheme_salted(ck_dtype dt, ck_op op, int p, unsigned salt);
/* Element i of this call as the encodings see it. */
static inline size_t cc_key(const cc_scheme *s, size_t i) { return i + s->off; }
/* CC_MINMAX: what is added to element j's values, and the sign class
 * (1 all positive, -1 all negative, 0 both signs). */
int64_t   cc_minmax_shift(const cc_scheme *s, size_t j, int *sign);
/* Rank r's input for element i, as the integer it represents. */
int64_t   cc_input(const cc_scheme *s, int r, size_t i);
/* The exact all-reduce of element i (for avg: the sum, before the division). */
int64_t   cc_reduce_value(const cc_scheme *s, size_t i);
/* Store an integer in element i of a buffer of type dt (exact by design). */
void      cc_store(void *buf, size_t i, ck_dtype dt, int64_t v);
/* The expected elements 0..count-1 of s (avg division applied) into buf. A
 * copy of s with off increased by k gives elements k, k+1, ... of s. */
void      cc_expected_view(const cc_scheme *s, void *buf, size_t count);
/* Write the expected element i (avg division applied) to the one element at dst. */
void      cc_expected_at(const cc_scheme *s, size_t i, void *dst);
/* Element i as an exact integer: returns 1 and sets *v when it is one. */
int       cc_load_int(const void *buf, size_t i, ck_dtype dt, int64_t *v);
/* Element i as a double (NAN for an unknown type). */
double    cc_load_double(const void *buf, size_t i, ck_dtype dt);
/* Element i printed in its natural form ("17", "-3.5", "nan"). */
void      cc_format(char *out, size_t cap, const void *buf, size_t i, ck_dtype dt);

#endif
