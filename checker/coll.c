/*
 * coll.c — the checker's view of reduce-scatter and all-gather: which
 * buffers a call needs, what goes in them, and what a wrong result means.
 * The inputs are the all-reduce's (inputs.c), indexed by the element's place
 * in the WHOLE buffer, so a block's values say which block and which rank
 * they came from:
 *
 *   reduce-scatter  rank r's result is block r of the all-reduce of those
 *                   inputs. A wrong one is explained by the all-reduce's
 *                   diagnosis (diagnose.c) on the whole buffer with every
 *                   other block right: which contributions an element holds,
 *                   another block's sum, the algorithm's step.
 *   all-gather      rank q contributes block q of its sum-encoded input; the
 *                   result is every rank's block at its place. A wrong
 *                   element is decoded here: another rank's block (a wrong
 *                   neighbour), another element's value (a block in the
 *                   wrong place), or never written.
 */
#include <stdlib.h>
#include <string.h>
#include "collcheck.h"
#include "encoding.h"
#include "collkit_util.h"

void cc_coll_sizes(ck_coll coll, size_t count, int p, int rank, int inplace, size_t *send_elems,
                   size_t *recv_elems)
{
    size_t off, len;
    ck_block(count, (size_t)p, (size_t)rank, &off, &len);
    *send_elems = coll == CK_COLL_ALLGATHER ? len : count;
    *recv_elems = coll == CK_COLL_REDUCE_SCATTER && !inplace ? len : count;
}

/* All-gather: element i holds rank q's input. */
int cc_block_owner(size_t count, int p, size_t i)
{
    for (int q = 0; q < p; q++) {
        size_t off, len;
        ck_block(count, (size_t)p, (size_t)q, &off, &len);
        if (i < off + len) return q;
    }
    return p - 1;
}


void cc_coll_input(ck_coll coll, void *full, size_t count, ck_dtype dt, ck_op op, int rank, int p, unsigned salt)
{
    cc_fill_salted(full, count, dt, coll == CK_COLL_ALLGATHER ? CK_SUM : op, rank, p, salt);
}

/* The all-gather's whole expected buffer. */
static void ag_expected(const cc_scheme *s, void *buf, size_t count)
{
    for (int q = 0; q < s->p; q++) {
        size_t off, len;
        ck_block(count, (size_t)s->p, (size_t)q, &off, &len);
        for (size_t i = off; i < off + len; i++) cc_store(buf, i, s->dt, cc_input(s, q, i));
    }
}

/* Which rank's input, at which element, a wrong all-gather value is: the
 * same element first (another rank's block), then the others. */
static int ag_decode(const cc_scheme *s, const unsigned char *got, size_t i, size_t count, int *q_out,
                     size_t *j_out)
{
    const size_t es = ck_dtype_size(s->dt);
    unsigned char v[8];
    for (int q = 0; q < s->p; q++) {
        cc_store(v, 0, s->dt, cc_input(s, q, i));
        if (!memcmp(v, got + i * es, es)) { *q_out = q; *j_out = i; return 1; }
    }
    for (size_t j = 0; j < count; j++) {
        if (j == i) continue;
        for (int q = 0; q < s->p; q++) {
            cc_store(v, 0, s->dt, cc_input(s, q, j));
            if (!memcmp(v, got + i * es, es)) { *q_out = q; *j_out = j; return 1; }
        }
    }
    return 0;
}

static size_t ag_diagnose(char *out, size_t cap, const void *host_got, int fill_byte, size_t count, ck_dtype dt,
                          int rank, int p, const ck_algo *algo, const ck_config *cfg, unsigned salt)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    const cc_scheme s = cc_scheme_salted(dt, CK_SUM, p, salt);
    const size_t es = ck_dtype_size(dt);
    const unsigned char *got = host_got;
    unsigned char *exp = malloc(count * es + 1);
    if (!exp) {
        ck_sbuf_add(&b, "rank %d: out of memory for the expected result", rank);
        return 0;
    }
    ag_expected(&s, exp, count);
    size_t first = count, nwrong = 0;
    unsigned long long blocks = 0;   /* the wrong blocks, for p <= 64 */
    for (size_t i = 0; i < count; i++)
        if (memcmp(exp + i * es, got + i * es, es)) {
            if (first == count) first = i;
            nwrong++;
            const int q = cc_block_owner(count, p, i);
            if (q < 64) blocks |= 1ull << q;
        }
    if (first == count) {
        free(exp);
        return count;
    }
    char e[64], g[64];
    cc_format(e, sizeof e, exp, first, dt);
    cc_format(g, sizeof g, got, first, dt);
    const int b0 = cc_block_owner(count, p, first);
    ck_sbuf_add(&b, "rank %d: %zu of %zu elements wrong; first: element %zu (block %d, rank %d's): expected %s, got %s",
                rank, nwrong, count, first, b0, b0, e, g);
    int q;
    size_t j;
    int never = fill_byte >= 0;
    for (size_t k = 0; k < es && never; k++) never = got[first * es + k] == (unsigned char)fill_byte;
    if (never) {
        ck_sbuf_add(&b, ": never written (still the recvbuf fill): block %d from rank %d is missing", b0, b0);
    } else if (ag_decode(&s, got, first, count, &q, &j)) {
        if (j == first)
            ck_sbuf_add(&b, ": it is rank %d's input, not rank %d's: block %d came from the wrong rank (a wrong "
                            "neighbour or block index)", q, b0, b0);
        else
            ck_sbuf_add(&b, ": it is rank %d's element %zu: block %d's data landed in block %d's place (shifted by "
                            "%lld elements: a wrong neighbour or block index)", q, j, cc_block_owner(count, p, j), b0,
                        (long long)first - (long long)j);
    } else {
        ck_sbuf_add(&b, ": it is no rank's input at any element");
    }
    if (p <= 64) {
        ck_sbuf_add(&b, "; wrong blocks:");
        for (int k = 0; k < p; k++)
            if (blocks >> k & 1) ck_sbuf_add(&b, " %d", k);
    }
    if (algo && algo->diagnose && p > 1) {
        char where[400] = "";
        ck_fault f = {p, rank, count, first, es, b0, -1, cfg};
        algo->diagnose(&f, where, sizeof where);
        if (where[0]) ck_sbuf_add(&b, "; in %s, %s", algo->name, where);
    }
    free(exp);
    return first;
}

/* Reduce-scatter: rank r's block inside an otherwise right whole buffer. */
static size_t rs_diagnose(char *out, size_t cap, const void *block, const void *own_input, int fill_byte,
                          size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                          const ck_config *cfg, unsigned salt)
{
    const size_t es = ck_dtype_size(dt);
    size_t off, len;
    ck_block(count, (size_t)p, (size_t)rank, &off, &len);
    unsigned char *whole = malloc(count * es + 1);
    if (!whole) {
        ck_sbuf b;
        ck_sbuf_init(&b, out, cap);
        ck_sbuf_add(&b, "rank %d: out of memory for the expected result", rank);
        return 0;
    }
    cc_expected_salted(whole, count, dt, op, p, salt);
    memcpy(whole + off * es, block, len * es);
    size_t first = cc_diagnose_salted(out, cap, whole, own_input, fill_byte, count, dt, op, rank, p, algo, cfg, salt);
    free(whole);
    return first;
}

size_t cc_coll_diagnose(ck_coll coll, char *out, size_t cap, const void *result, const void *own_input,
                        int fill_byte, size_t count, ck_dtype dt, ck_op op, int rank, int p, int inplace,
                        const ck_algo *algo, const ck_config *cfg, unsigned salt)
{
    if (coll == CK_COLL_ALLGATHER)
        return ag_diagnose(out, cap, result, fill_byte, count, dt, rank, p, algo, cfg, salt);
    if (coll == CK_COLL_REDUCE_SCATTER) {
        size_t off, len;
        ck_block(count, (size_t)p, (size_t)rank, &off, &len);
        const char *block = (const char *)result + (inplace ? off * ck_dtype_size(dt) : 0);
        return rs_diagnose(out, cap, block, own_input, fill_byte, count, dt, op, rank, p, algo, cfg, salt);
    }
    return cc_diagnose_salted(out, cap, result, own_input, fill_byte, count, dt, op, rank, p, algo, cfg, salt);
}

void cc_coll_result(ck_coll coll, size_t count, int p, int rank, int inplace, size_t *off_elems, size_t *elems)
{
    size_t off, len;
    ck_block(count, (size_t)p, (size_t)rank, &off, &len);
    *off_elems = coll == CK_COLL_REDUCE_SCATTER && inplace ? off : 0;
    *elems = coll == CK_COLL_REDUCE_SCATTER ? len : count;
}

size_t cc_coll_expected(ck_coll coll, void *out, size_t count, ck_dtype dt, ck_op op, int rank, int p, unsigned salt)
{
    if (coll == CK_COLL_ALLGATHER) {
        const cc_scheme s = cc_scheme_salted(dt, CK_SUM, p, salt);
        ag_expected(&s, out, count);
        return count;
    }
    if (coll == CK_COLL_REDUCE_SCATTER) {
        size_t off, len;
        ck_block(count, (size_t)p, (size_t)rank, &off, &len);
        cc_scheme s = cc_scheme_salted(dt, op, p, salt);
        s.off += off;   /* elements off .. off+len of the call */
        cc_expected_view(&s, out, len);
        return len;
    }
    cc_expected_salted(out, count, dt, op, p, salt);
    return count;
}

size_t cc_coll_count_wrong(ck_coll coll, const void *result, size_t count, ck_dtype dt, ck_op op, int rank, int p,
                           int inplace, unsigned salt)
{
    if (coll == CK_COLL_ALLREDUCE) return cc_count_wrong_salted(result, count, dt, op, p, salt);
    const size_t es = ck_dtype_size(dt);
    size_t at, n;
    cc_coll_result(coll, count, p, rank, inplace, &at, &n);
    const unsigned char *got = (const unsigned char *)result + at * es;
    unsigned char *exp = malloc(count * es + 1);
    if (!exp) return count;
    cc_coll_expected(coll, exp, count, dt, op, rank, p, salt);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) wrong += memcmp(exp + i * es, got + i * es, es) != 0;
    free(exp);
    return wrong;
}

int cc_coll_call(ck_comm *comm, ck_coll coll, const ck_algo *algo, const void *sendbuf, void *recvbuf, size_t count,
                 ck_dtype dt, ck_op op)
{
    switch (coll) {
    case CK_COLL_REDUCE_SCATTER: return ck_reduce_scatter(comm, algo, sendbuf, recvbuf, count, dt, op);
    case CK_COLL_ALLGATHER: return ck_allgather(comm, algo, sendbuf, recvbuf, count, dt);
    default: return ck_allreduce(comm, algo, sendbuf, recvbuf, count, dt, op);
    }
}
