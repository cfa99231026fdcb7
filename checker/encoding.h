/*
 * encoding.h — the input encoding shared by inputs.c (fill, expected)
 * and diagnose.c (which decodes wrong values). Not part of the public API.
 */
#ifndef COLLKIT_CHECK_ENCODING_H
#define COLLKIT_CHECK_ENCODING_H

#include <stdint.h>
#include "collcheck.h"

enum {
    CC_MASK,     /* sum/avg: 2^r + (e(i) << p)              */
    CC_MOD,      /* sum/avg at large p: (i*(1+(r&1)) + r*S) mod M */
    CC_PROD,     /* +-1, +-2                                 */
    CC_MINMAX    /* ((r+i) mod M)*K + (i mod K) - Z          */
};

typedef struct cc_scheme {
    ck_dtype dt;
    ck_op    op;
    int      p;
    int      kind;    /* CC_* */
    int      bits;    /* exact integer bits of the type */
    int      ebits;   /* CC_MASK: width of the element field */
    int64_t  M, K, S, Z;
} cc_scheme;

cc_scheme cc_scheme_of(ck_dtype dt, ck_op op, int p);
/* Rank r's input for element i, as the integer it represents. */
int64_t   cc_input(const cc_scheme *s, int r, size_t i);
/* The exact all-reduce of element i (for avg: the sum, before the division). */
int64_t   cc_reduce_value(const cc_scheme *s, size_t i);
/* Store an integer in element i of a buffer of type dt (exact by design). */
void      cc_store(void *buf, size_t i, ck_dtype dt, int64_t v);
/* Write the expected element i (avg division applied) to the one element at dst. */
void      cc_expected_at(const cc_scheme *s, size_t i, void *dst);
/* Element i as an exact integer: returns 1 and sets *v when it is one. */
int       cc_load_int(const void *buf, size_t i, ck_dtype dt, int64_t *v);
/* Element i printed in its natural form ("17", "-3.5", "nan"). */
void      cc_format(char *out, size_t cap, const void *buf, size_t i, ck_dtype dt);

#endif
