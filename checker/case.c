/*
 * case.c — one call of one collcheck case on this rank: buffers with guard
 * bytes, the ck_allreduce call, and its checks:
 *
 *   result    exact inputs: bit-exact against cc_expected_salted (the call's
 *             own inputs: call k of a case has other inputs than call k-1),
 *             with a diagnosis when wrong; random-float inputs: within the
 *             rounding bound of the exact sum (random.c; the driver then
 *             compares the ranks' results bit for bit);
 *   guards    64 bytes before and after every buffer (recv and send) must be
 *             untouched, and an out-of-place send buffer must be unchanged.
 *             The guard bytes follow a pattern that depends on the position
 *             and differs between the send and the receive buffer, so an
 *             overrun that copies one buffer's guard into the other's (or
 *             shifts a guard) changes it;
 *   protocol  a request left posted or a send/receive size mismatch comes
 *             back from ck_allreduce as CK_ERR_PROTOCOL with the detail;
 *   traffic   bytes sent by this rank (counted by the point-to-point layer)
 *             must equal the algorithm's declared bytes_sent, exactly;
 *   messages  when the algorithm declares msgs_sent, the number of messages
 *             must equal it exactly too: the right bytes in many small
 *             messages pay the latency term many times over.
 *
 * Every problem found becomes a clause of one message, joined with "; ".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_cli.h"
#include "encoding.h"   /* cc_format */
#include "results.h"    /* cc_declared_messages */
#include "collkit_util.h"

#define GUARD      64      /* guard bytes before and after every buffer */
#define FILL_BYTE  0xA5    /* out-of-place recvbuf before the call: "never written" is recognisable */

enum { RECV_GUARD = 0, SEND_GUARD = 1 };

/* Guard byte at position t relative to the start of the data (negative
 * before it, >= the data's size after it): a hash of the position, XORed
 * with a different constant for each buffer, so the two never agree at the
 * same position and a copied or shifted guard shows. */
static unsigned char guard_byte(int which, long long t)
{
    uint32_t h = (uint32_t)(t * 2654435761ll) ^ (uint32_t)(t >> 5);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return (unsigned char)((h >> 8) ^ (which == RECV_GUARD ? 0x3C : 0xC3));
}

/* A buffer under test: host image (guards + data) and the device copy. */
typedef struct {
    size_t total, data_off, bytes;
    int which;                    /* RECV_GUARD or SEND_GUARD */
    unsigned char *host, *back;   /* before the call / read back after */
    void *dev;
} gbuf;

/* The buffers are kept from one call to the next (one set for recv, one for
 * send) and grown when a case needs more: a million-element case would
 * otherwise spend its time in page faults. cc_release_buffers gives them
 * back before the communicator goes. */
static struct pool {
    ck_comm *comm;
    size_t cap;
    unsigned char *host, *back;
    void *dev;
} pools[2];

static void pool_drop(struct pool *q)
{
    free(q->host);
    free(q->back);
    if (q->dev) ck_free(q->comm, q->dev);
    memset(q, 0, sizeof *q);
}

void cc_release_buffers(void)
{
    pool_drop(&pools[RECV_GUARD]);
    pool_drop(&pools[SEND_GUARD]);
}

static int gbuf_alloc(ck_comm *comm, gbuf *g, size_t bytes, size_t shift, int which)
{
    memset(g, 0, sizeof *g);
    g->data_off = GUARD + shift;
    g->bytes = bytes;
    g->which = which;
    g->total = g->data_off + bytes + GUARD;
    struct pool *q = &pools[which];
    if (q->comm != comm || q->cap < g->total || !q->host || !q->back || !q->dev) {
        if (q->comm == comm) pool_drop(q);
        else memset(q, 0, sizeof *q);   /* a communicator of the past: cc_release_buffers freed it */
        q->comm = comm;
        q->cap = g->total;
        q->host = malloc(q->cap);
        q->back = malloc(q->cap);
        q->dev = ck_alloc(comm, q->cap);
        if (!q->host || !q->back || !q->dev) return -1;
    }
    g->host = q->host;
    g->back = q->back;
    g->dev = q->dev;
    /* The guards; the data between them is filled by the caller. */
    for (size_t k = 0; k < g->data_off; k++) g->host[k] = guard_byte(which, (long long)k - (long long)g->data_off);
    for (size_t k = g->data_off + bytes; k < g->total; k++)
        g->host[k] = guard_byte(which, (long long)k - (long long)g->data_off);
    return 0;
}

static void add_guard(ck_sbuf *m, const char *where, const char *what, size_t bytes, size_t es, const char *side)
{
    size_t n = (bytes + es - 1) / es;
    ck_sbuf_sep(m, "; ");
    ck_sbuf_add(m, "guard %s %s overwritten: wrote %zu element%s %s", where, what, n, n == 1 ? "" : "s", side);
}

/* The guard bytes of an image of G (read back from the device, or the
 * checker's own host image) that differ from the pattern: how far past the
 * end and before the start, and the lowest and highest damaged offsets in
 * the image (-1: none). Compared with the pattern, not with the host image:
 * a write that lands in the checker's own memory must not pass for damage to
 * the buffer that memory describes. */
typedef struct { size_t after, before; long long lo, hi; } damage;
static damage guard_damage(const gbuf *g, const unsigned char *img)
{
    damage d = {0, 0, -1, -1};
    const size_t end = g->data_off + g->bytes;
    for (size_t k = 0; k < g->total; k = k + 1 == g->data_off ? end : k + 1) {
        if (k >= g->data_off && k < end) continue;   /* no data before the guard after it */
        if (img[k] == guard_byte(g->which, (long long)k - (long long)g->data_off)) continue;
        if (d.lo < 0) d.lo = (long long)k;
        d.hi = (long long)k;
        if (k >= end) d.after = k - end + 1;
        else if (!d.before) d.before = g->data_off - k;
    }
    return d;
}

/* Bytes written outside the data: the farthest one after the end and the
 * farthest one before the start, in elements. Damage to the guard before
 * sendbuf (or to the checker's own copies of the buffers) at addresses past
 * the end of recvbuf, which the algorithm writes, is a write past the end of
 * recvbuf that went beyond its guard: it is named as that (the same bytes
 * may be a write before sendbuf: both are said). Damage to the guard after
 * sendbuf is sendbuf's own: a write that ran on from recvbuf would have had
 * to cross sendbuf's data and guard before it first. */
static void check_guards(const gbuf *r, const gbuf *s, size_t es, ck_sbuf *m)
{
    const damage dr = guard_damage(r, r->back);
    if (dr.after) add_guard(m, "after", "recvbuf", dr.after, es, "past the end");
    if (dr.before) add_guard(m, "before", "recvbuf", dr.before, es, "before the start");
    const uintptr_t rend = (uintptr_t)r->dev + r->data_off + r->bytes;
    const uintptr_t far = (uintptr_t)64 << 20;   /* farther than this: not taken for one overrun */
    struct { const gbuf *g; const unsigned char *img; uintptr_t base; const char *where; } views[3] = {
        {s, s ? s->back : NULL, s ? (uintptr_t)s->dev : 0, "the guard %s sendbuf, which follows recvbuf in memory"},
        {s, s ? s->host : NULL, s ? (uintptr_t)s->host : 0, "the checker's own memory, which follows recvbuf"},
        {r, r->host, (uintptr_t)r->host, "the checker's own memory, which follows recvbuf"},
    };
    int past = 0;
    for (int v = 0; v < 3 && !past; v++) {
        if (!views[v].g || !views[v].img) continue;
        const damage d = guard_damage(views[v].g, views[v].img);
        if (d.lo < 0) continue;
        const uintptr_t lo = views[v].base + (uintptr_t)d.lo, hi = views[v].base + (uintptr_t)d.hi;
        if (lo >= rend && hi - rend < far && !(v == 0 && d.after)) {
            const size_t n = (size_t)(hi + 1 - rend + es - 1) / es;
            char where[160];
            snprintf(where, sizeof where, views[v].where, d.before ? "before" : "after");
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "write past the end of recvbuf: up to %zu element%s past its end, beyond its guard (the "
                           "bytes landed in %s)", n, n == 1 ? "" : "s", where);
            if (v == 0) ck_sbuf_add(m, ", or a write before the start of sendbuf");
            past = 1;
        } else if (v == 0) {
            if (d.after) add_guard(m, "after", "sendbuf", d.after, es, "past the end");
            if (d.before) add_guard(m, "before", "sendbuf", d.before, es, "before the start");
        }
    }
}

static void check_sendbuf(const gbuf *s, const cc_case *cs, size_t es, ck_sbuf *m)
{
    if (!memcmp(s->back + s->data_off, s->host + s->data_off, s->bytes)) return;
    for (size_t i = 0; i < s->bytes / es; i++)
        if (memcmp(s->back + s->data_off + i * es, s->host + s->data_off + i * es, es)) {
            char was[64], now[64];
            cc_format(was, sizeof was, s->host + s->data_off, i, cs->dt);
            cc_format(now, sizeof now, s->back + s->data_off, i, cs->dt);
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "send buffer modified: element %zu changed from %s to %s "
                           "(an out-of-place %s must not write sendbuf)", i, was, now, ck_coll_name(cs->coll));
            return;
        }
}

/* ": 6124 B more than declared, 2x the declared volume". The ratio gets as
 * many digits as it takes not to read as 1 when the counts differ (a
 * shortfall of 4 B in 6128 is 0.9993x, not "1.00x"). */
static void add_difference(ck_sbuf *m, uint64_t got, uint64_t want, const char *unit, const char *less,
                           const char *what)
{
    ck_sbuf_add(m, ": %llu%s %s than declared", (unsigned long long)(got > want ? got - want : want - got), unit,
                got > want ? "more" : less);
    if (!want || !got) return;   /* 0x and infinity say nothing the counts do not */
    const double r = (double)got / (double)want;
    char t[32];
    for (int digits = 3; digits <= 17; digits++) {
        snprintf(t, sizeof t, "%.*g", digits, r);
        if (strtod(t, NULL) != 1.0) break;
    }
    ck_sbuf_add(m, ", %sx the declared %s", t, what);
}

/* The per-message checks, where the descriptor declares the largest message
 * (max_msg_bytes): none above it (a schedule that lumps what it declares to
 * send in chunks), and no more empty messages than declared (empty_msgs;
 * none when it declares no formula): empty messages that make up a message
 * count pad it. Only the transport's own sends are counted. */
static void check_messages(const ck_algo *algo, const ck_counters *ctr, int p, int rank, size_t count, size_t es,
                           const ck_config *cfg, ck_sbuf *m)
{
    if (!algo->max_msg_bytes) return;
    const uint64_t bound = algo->max_msg_bytes(p, rank, count, es, cfg);
    if (ctr->msgs_over) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "messages: rank %d sent %llu message%s above the %llu B '%s' declares as its largest "
                       "(max_msg_bytes; the largest was %llu B, p = %d, n = %zu B): a schedule that lumps what it "
                       "should send in pieces", rank, (unsigned long long)ctr->msgs_over, ctr->msgs_over == 1 ? "" : "s",
                    (unsigned long long)bound, algo->name, (unsigned long long)ctr->msg_largest, p, count * es);
    }
    const uint64_t empty = algo->empty_msgs ? algo->empty_msgs(p, rank, count, es, cfg) : 0;
    if (ctr->msgs_empty > empty) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "messages: rank %d sent %llu empty (0-byte) message%s where '%s' declares %llu (%s; p = %d, "
                       "n = %zu B): empty messages that carry nothing pad the message count", rank,
                    (unsigned long long)ctr->msgs_empty, ctr->msgs_empty == 1 ? "" : "s", algo->name,
                    (unsigned long long)empty, algo->empty_msgs ? "empty_msgs" : "no empty_msgs formula: none", p,
                    count * es);
    }
}

/* Bytes and messages this rank sent against what the descriptor declares.
 * Reference algorithms (a library's own collective) bypass the counters. */
void cc_check_traffic(const ck_algo *algo, const ck_counters *ctr, int p, int rank, size_t count, size_t es,
                      const ck_config *cfg, ck_sbuf *m)
{
    if (algo->flags & CK_ALGO_REFERENCE) return;
    int bytes_right = 0;
    if (!algo->bytes_sent) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "traffic: '%s' declares no bytes_sent formula", algo->name);
    } else {
        uint64_t want = algo->bytes_sent(p, rank, count, es, cfg);
        bytes_right = want == ctr->bytes_sent;
        if (!bytes_right) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "traffic: rank %d sent %llu B in %llu messages, but '%s' declares %llu B (%s)", rank,
                        (unsigned long long)ctr->bytes_sent, (unsigned long long)ctr->msgs_sent, algo->name,
                        (unsigned long long)want, algo->bytes_formula ? algo->bytes_formula : "no formula text");
            add_difference(m, ctr->bytes_sent, want, " B", "less", "volume");
        }
    }
    check_messages(algo, ctr, p, rank, count, es, cfg, m);
    if (!algo->msgs_sent) return;   /* not declared: not checked (the driver says so once) */
    uint64_t want = algo->msgs_sent(p, rank, count, es, cfg);
    if (want == ctr->msgs_sent) return;
    ck_sbuf_sep(m, "; ");
    ck_sbuf_add(m, "messages: rank %d sent %llu message%s, but '%s' declares %llu (p = %d, n = %zu B)", rank,
                (unsigned long long)ctr->msgs_sent, ctr->msgs_sent == 1 ? "" : "s", algo->name,
                (unsigned long long)want, p, count * es);
    add_difference(m, ctr->msgs_sent, want, "", "fewer", "count");
    if (bytes_right && ctr->msgs_sent > want)
        ck_sbuf_add(m, " (the bytes are right: the data goes out in more, smaller messages than the schedule says)");
}

/* The last call made on this rank (any algorithm, any case): what a case's
 * first call may have been handed as state. */
static cc_prev_call last_call;

/* One call's buffers: the guarded receive and send buffers, the pointers
 * handed to the call, and this rank's input. */
typedef struct {
    gbuf r, s;
    void *rdev;                 /* NULL: not set up (the call is rejected on this rank) */
    const void *sdev;           /* CK_IN_PLACE in place */
    const unsigned char *own;   /* this rank's input (NULL for an all-gather: its block of `whole`) */
    unsigned char *whole;       /* an all-gather's input over the whole buffer, its block sent */
    size_t es, bytes;           /* element size; recvbuf's bytes */
    int fill;                   /* the byte recvbuf starts as, or -1 (in place: the input) */
} call_bufs;

/* This rank's input for call `call` into the send buffer (in place: the
 * receive buffer), and the fill of a receive buffer that is not the input. */
static void fill_inputs(const cc_case *cs, unsigned call, int rank, int p, call_bufs *cb)
{
    unsigned char *in = cs->inplace ? cb->r.host + cb->r.data_off : cb->s.host + cb->s.data_off;
    const size_t es = cb->es;
    if (cs->random) cc_fill_random(in, cs->count, cs->dt, rank, call);
    else if (cb->whole) {
        size_t off, len;
        ck_block(cs->count, (size_t)p, (size_t)rank, &off, &len);
        cc_coll_input(cs->coll, cb->whole, cs->count, cs->dt, cs->op, rank, p, call);
        memset(cb->r.host + cb->r.data_off, FILL_BYTE, cb->bytes);
        memcpy(cs->inplace ? in + off * es : in, cb->whole + off * es, len * es);
    } else cc_fill_salted(in, cs->count, cs->dt, cs->op, rank, p, call);
    cb->own = cb->whole ? NULL : in;
    if (!cs->inplace) memset(cb->r.host + cb->r.data_off, FILL_BYTE, cb->bytes);
}

/* The buffers of call `call` of the case, filled and uploaded. Returns 1, or
 * 0 when they could not be allocated or uploaded. */
static int set_up_buffers(ck_comm *comm, const cc_case *cs, unsigned call, call_bufs *cb)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    memset(cb, 0, sizeof *cb);
    cb->es = ck_dtype_size(cs->dt);
    size_t send_elems, recv_elems;
    cc_coll_sizes(cs->coll, cs->count, p, rank, cs->inplace, &send_elems, &recv_elems);
    cb->bytes = recv_elems * cb->es;
    /* Out of place the receive buffer starts as the fill; an all-gather's
     * does in place too, but for this rank's block. */
    cb->fill = cs->inplace && cs->coll != CK_COLL_ALLGATHER ? -1 : FILL_BYTE;
    /* Misaligned: one element past 64-byte alignment for recv, three for send,
     * so the two buffers are also misaligned relative to each other. Offsets
     * stay whole elements: a double at a 4-byte address is undefined
     * behaviour in C (and UBSan says so), not a case an algorithm must handle. */
    const size_t rshift = cs->misaligned ? cb->es : 0, sshift = cs->misaligned ? 3 * cb->es : 0;
    int ok = gbuf_alloc(comm, &cb->r, cb->bytes, rshift, RECV_GUARD) == 0;
    if (!cs->inplace) ok &= gbuf_alloc(comm, &cb->s, send_elems * cb->es, sshift, SEND_GUARD) == 0;
    if (ok && cs->coll == CK_COLL_ALLGATHER) ok = (cb->whole = malloc(cs->count * cb->es + 1)) != NULL;
    if (!ok) return 0;
    fill_inputs(cs, call, rank, p, cb);
    cb->sdev = CK_IN_PLACE;
    if (!cs->inplace) {
        ok &= ck_upload(comm, cb->s.dev, cb->s.host, cb->s.total) == CK_SUCCESS;
        cb->sdev = (char *)cb->s.dev + cb->s.data_off;
    }
    ok &= ck_upload(comm, cb->r.dev, cb->r.host, cb->r.total) == CK_SUCCESS;
    cb->rdev = (char *)cb->r.dev + cb->r.data_off;
    return ok;
}

/* What the call returned and counted, and what the descriptor declares,
 * for --results. */
static void record(ck_comm *comm, const ck_algo *algo, const cc_case *cs, int rc, cc_result *res)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(cs->dt);
    const ck_config *cfg = ck_comm_config(comm);
    res->status = rc;
    res->rec.status = rc;
    ck_counters_get(comm, &res->rec.ctr);
    res->rec.reference = (algo->flags & CK_ALGO_REFERENCE) != 0;
    res->rec.declared_bytes = algo->bytes_sent ? algo->bytes_sent(p, rank, cs->count, es, cfg) : UINT64_MAX;
    res->rec.declared_msgs = algo->msgs_sent ? algo->msgs_sent(p, rank, cs->count, es, cfg) : UINT64_MAX;
    cc_declared_messages(algo, p, rank, cs->count, es, cfg, &res->rec);
    res->rec.digest = CK_FNV1A64_INIT;   /* no result read back (yet): the digest of nothing */
    if (rc == CK_ERR_TIMEOUT || rc == CK_ERR_TRANSPORT) res->poisoned = 1;
}

/* The call returned a failure. One the algorithm reported itself (not the
 * watchdog's, not a broken rule the library found, not arguments the ranks
 * disagreed on): when its result is right anyway, the status is the bug. */
static void status_failed(ck_comm *comm, const ck_algo *algo, const cc_case *cs, unsigned call, int rc,
                          call_bufs *cb, cc_result *res, ck_sbuf *m)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    res->fail = 1;
    ck_sbuf_add(m, "rank %d: ck_%s returned '%s': %s", rank, ck_coll_name(cs->coll), ck_strerror(rc),
                ck_comm_errmsg(comm));
    if (!cs->count || res->poisoned || rc == CK_ERR_PROTOCOL || rc == CK_ERR_MISMATCH || cs->random ||
        ck_download(comm, cb->r.back, cb->r.dev, cb->r.total) != CK_SUCCESS)
        return;
    char diag[1200];
    if (cc_coll_diagnose(cs->coll, diag, sizeof diag, cb->r.back + cb->r.data_off, cb->own, cb->fill, cs->count,
                         cs->dt, cs->op, rank, p, cs->inplace, algo, ck_comm_config(comm), call) >= cs->count)
        ck_sbuf_add(m, " (yet its result on rank %d is right: the algorithm did the work and then returned a "
                       "failure status; it must return CK_SUCCESS, 0, when it succeeds)", rank);
}

/* The values read back: exact inputs decoded (cc_diagnose_run for an
 * all-reduce, cc_coll_diagnose for the others), random floats against the
 * rounding bound. A clause for m, and the claim for the pattern line. */
static int check_values(ck_comm *comm, const ck_algo *algo, const cc_case *cs, unsigned call,
                        const cc_prev_call *before, const call_bufs *cb, cc_result *res, ck_sbuf *m)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    const ck_config *cfg = ck_comm_config(comm);
    const unsigned char *got = cb->r.back + cb->r.data_off;
    char diag[1200];
    size_t first = cs->random
        ? cc_check_random(diag, sizeof diag, got, cs->count, cs->dt, cs->op, rank, p, call)
        : cs->coll == CK_COLL_ALLREDUCE
            ? cc_diagnose_run(diag, sizeof diag, got, cb->own, cs->inplace ? -1 : FILL_BYTE, cs->count, cs->dt,
                              cs->op, rank, p, algo, cfg, call, before)
            : cc_coll_diagnose(cs->coll, diag, sizeof diag, got, cb->own, cb->fill, cs->count, cs->dt, cs->op, rank,
                               p, cs->inplace, algo, cfg, call);
    if (first >= cs->count) return 0;
    ck_sbuf_sep(m, "; ");
    ck_sbuf_add(m, "%s", diag);
    if (!cs->random) snprintf(res->claim, sizeof res->claim, "%s", cc_diagnose_claim());
    return 1;
}

/* A wrong result from a call in which this rank sent, received and reduced
 * nothing: it did no work at all, whatever its values read as (never
 * written, its own input, the previous result): an early return. */
static void say_idle(const cc_case *cs, int p, cc_result *res, ck_sbuf *m)
{
    const ck_counters *k = &res->rec.ctr;
    if (p < 2 || !cs->count || k->msgs_sent || k->msgs_recv || k->elems_reduced) return;
    ck_sbuf_add(m, "; this rank sent, received and reduced nothing in the call: it returned before doing any work "
                   "(a condition that skips the algorithm, or state kept from an earlier call?)");
    snprintf(res->claim, sizeof res->claim, "the call did no work (nothing sent, received or reduced): an early return?");
}

/* A call that returned success: its result read back (its digest, a copy
 * in keep), the guards, the send buffer, the values and the traffic. */
static void check_call(ck_comm *comm, const ck_algo *algo, const cc_case *cs, unsigned call,
                       const cc_prev_call *before, call_bufs *cb, cc_result *res, void *keep, ck_sbuf *m)
{
    const int p = ck_comm_size(comm);
    const size_t es = cb->es;
    ck_download(comm, cb->r.back, cb->r.dev, cb->r.total);
    size_t at, n;   /* the digest of the result (an in-place reduce-scatter's block, not its scratch) */
    cc_coll_result(cs->coll, cs->count, p, ck_comm_rank(comm), cs->inplace, &at, &n);
    res->hash = res->rec.digest = ck_fnv1a64(cb->r.back + cb->r.data_off + at * es, n * es);
    if (keep) memcpy(keep, cb->r.back + cb->r.data_off, cb->bytes);
    if (!cs->inplace) ck_download(comm, cb->s.back, cb->s.dev, cb->s.total);
    check_guards(&cb->r, cs->inplace ? NULL : &cb->s, es, m);
    if (!cs->inplace) check_sendbuf(&cb->s, cs, es, m);
    if (check_values(comm, algo, cs, call, before, cb, res, m) && cs->coll == CK_COLL_ALLREDUCE) say_idle(cs, p, res, m);
    cc_check_traffic(algo, &res->rec.ctr, p, ck_comm_rank(comm), cs->count, es, ck_comm_config(comm), m);
    res->fail = m->len > 0;
    if (res->fail && !res->claim[0]) {   /* not the values: the first check that failed, in its own words */
        size_t k = strcspn(res->msg, ":;(");
        snprintf(res->claim, sizeof res->claim, "%.*s", (int)(k < 60 ? k : 60), res->msg);
    }
}

void cc_run_case(ck_comm *comm, const ck_algo *algo, const cc_case *cs, unsigned call, cc_result *res,
                 void *keep)
{
    const cc_prev_call before = last_call;
    last_call = (cc_prev_call){1, cs->count, cs->dt, cs->op, call};
    if (cs->random) last_call.valid = 0;   /* random inputs have no expected value per element */
    ck_sbuf m;
    memset(res, 0, sizeof *res);
    res->call = call;
    ck_sbuf_init(&m, res->msg, sizeof res->msg);
    call_bufs cb;
    const int ok = set_up_buffers(comm, cs, call, &cb);
    if (!ok) {
        /* A NULL buffer makes ck_allreduce reject the call on this rank and
         * tell the others, so no rank is left waiting. */
        ck_sbuf_add(&m, "rank %d: could not allocate or upload %zu B buffers", ck_comm_rank(comm), cb.bytes);
        res->fail = 1;
        cb.rdev = NULL;
        cb.sdev = NULL;
    }
    ck_counters_reset(comm);
    const int rc = cc_coll_call(comm, cs->coll, algo, cb.sdev, cb.rdev, cs->count, cs->dt, cs->op);
    record(comm, algo, cs, rc, res);
    if (ok && rc != CK_SUCCESS) status_failed(comm, algo, cs, call, rc, &cb, res, &m);
    else if (ok) check_call(comm, algo, cs, call, &before, &cb, res, keep, &m);
    res->rec.local_fail = res->fail;
    free(cb.whole);
}
