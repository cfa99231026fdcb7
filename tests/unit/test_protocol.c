/*
 * test_protocol — the point-to-point engine that the CUDA IPC and the shm
 * transports share (collectives/src/protocol.c), on any machine: several
 * engines in one process over a fake transport whose control messages are
 * in-memory queues and whose slots are plain arrays. The fake also watches
 * the slots: a put into a slot whose chunk was not got yet, or a get of a
 * slot nobody put into, is a failure of the protocol.
 *
 *   - one message, every size from 0 to many times the slots (chunking,
 *     more chunks than slots, the last chunk short);
 *   - random traffic among 4 engines, several tags, 0-byte messages, sends
 *     and receives posted in random order and driven in random order: every
 *     message lands in the receive posted for it in order, intact;
 *   - a size mismatch is reported on both sides, and breaks both engines;
 *   - a cancelled request breaks the engine; a bad tag is refused.
 */
#include <stdlib.h>
#include <string.h>
#include "protocol.h"
#include "check.h"

#define MAXR  4
#define SLOTB 16
#define NS    3

typedef struct { int kind, tag; int64_t m[3]; } fmsg;
typedef struct { fmsg *v; size_t n, cap; } fqueue;

typedef struct world {
    int    n;
    fqueue q[MAXR][MAXR];                       /* [from][to] */
    unsigned char slot[MAXR][MAXR][NS][SLOTB];  /* [owner][sender][k] */
    int    full[MAXR][MAXR][NS];                /* a put not yet got */
    int    overwrites, empty_gets;
    struct node { struct world *w; int rank; ck_proto pr; } node[MAXR];
} world;

static int f_send(void *be, int kind, int peer, int tag, int64_t a, int64_t b, int64_t c)
{
    struct node *nd = be;
    fqueue *q = &nd->w->q[nd->rank][peer];
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 8;
        q->v = realloc(q->v, q->cap * sizeof *q->v);
    }
    q->v[q->n++] = (fmsg){kind, tag, {a, b, c}};
    return CK_SUCCESS;
}

static int f_take(void *be, int kind, ck_proto_op *o)
{
    struct node *nd = be;
    fqueue *q = &nd->w->q[o->peer][nd->rank];
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].kind == kind && q->v[i].tag == o->tag) {
            memcpy(o->msg, q->v[i].m, sizeof o->msg);
            memmove(q->v + i, q->v + i + 1, (q->n - i - 1) * sizeof *q->v);
            q->n--;
            return 1;
        }
    return 0;
}

static void f_forget(void *be, ck_proto_op *o) { (void)be; (void)o; }

static int f_put(void *be, int peer, int k, const void *src, size_t len)
{
    struct node *nd = be;
    if (nd->w->full[peer][nd->rank][k]) nd->w->overwrites++;
    nd->w->full[peer][nd->rank][k] = 1;
    memcpy(nd->w->slot[peer][nd->rank][k], src, len);
    return CK_SUCCESS;
}

static int f_get(void *be, int peer, int k, void *dst, size_t len)
{
    struct node *nd = be;
    if (!nd->w->full[nd->rank][peer][k]) nd->w->empty_gets++;
    nd->w->full[nd->rank][peer][k] = 0;
    memcpy(dst, nd->w->slot[nd->rank][peer][k], len);
    return CK_SUCCESS;
}

static const ck_proto_ops fake_ops = {
    .ctl_send = f_send, .ctl_take = f_take, .ctl_forget = f_forget, .put = f_put, .get = f_get,
};

static world *world_new(int n)
{
    world *w = calloc(1, sizeof *w);
    w->n = n;
    for (int r = 0; r < n; r++) {
        w->node[r].w = w;
        w->node[r].rank = r;
        ck_proto_init(&w->node[r].pr, &fake_ops, &w->node[r], "fake", r, n, 1000, SLOTB, NS);
    }
    return w;
}

static void world_free(world *w)
{
    for (int r = 0; r < w->n; r++) ck_proto_fini(&w->node[r].pr);
    for (int a = 0; a < MAXR; a++)
        for (int b = 0; b < MAXR; b++) free(w->q[a][b].v);
    free(w);
}

/* A request of one engine, with what the test expects of it. */
typedef struct {
    int rank, is_send, peer, tag, done, rc;
    size_t bytes;
    unsigned char *buf;
    ck_req req;
} treq;

static int post(world *w, treq *t)
{
    memset(&t->req, 0, sizeof t->req);
    t->req.kind = t->is_send ? CK_EV_SEND : CK_EV_RECV;
    t->req.peer = t->peer;
    t->req.tag = t->tag;
    t->req.bytes = t->bytes;
    return ck_proto_post(&w->node[t->rank].pr, t->is_send, t->buf, t->bytes, t->peer, t->tag, &t->req);
}

/* Test the unfinished requests in random order until all are done or
 * nothing moves for a while. Returns the number still pending. */
static int drive(world *w, treq *t, int n, unsigned *seed)
{
    for (int idle = 0; idle < 50;) {
        int left = 0, moved = 0;
        for (int k = 0; k < n; k++) {
            int i = (int)(rand_r(seed) % (unsigned)n);
            if (t[i].done) continue;
            int done = 0;
            t[i].rc = ck_proto_test(&w->node[t[i].rank].pr, &t[i].req, &done);
            if (t[i].rc || done) { t[i].done = 1; moved = 1; }
        }
        for (int i = 0; i < n; i++) left += !t[i].done;
        if (!left) return 0;
        idle = moved ? 0 : idle + 1;
    }
    int left = 0;
    for (int i = 0; i < n; i++) left += !t[i].done;
    return left;
}

static void fill(unsigned char *b, size_t n, unsigned salt)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 31u + salt * 7u + 1u);
}

/* One message of every size up to 12 slots' worth, sender or receiver first. */
static void test_sizes(void)
{
    unsigned seed = 1;
    for (size_t bytes = 0; bytes <= 12 * SLOTB + 1; bytes++)
        for (int recv_first = 0; recv_first < 2; recv_first++) {
            world *w = world_new(2);
            unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
            fill(a, bytes, (unsigned)bytes);
            memset(b, 0, bytes + 1);
            treq t[2] = {{.rank = 0, .is_send = 1, .peer = 1, .tag = 7, .bytes = bytes, .buf = a},
                         {.rank = 1, .is_send = 0, .peer = 0, .tag = 7, .bytes = bytes, .buf = b}};
            int rc = post(w, &t[recv_first]) | post(w, &t[1 - recv_first]);
            CHECK(rc == CK_SUCCESS, "%zu B: posted", bytes);
            CHECK(drive(w, t, 2, &seed) == 0, "%zu B: both requests finish", bytes);
            CHECK(t[0].rc == 0 && t[1].rc == 0, "%zu B: no error (%d, %d)", bytes, t[0].rc, t[1].rc);
            CHECK(!memcmp(a, b, bytes), "%zu B (%s first): the data arrived intact", bytes, recv_first ? "recv" : "send");
            CHECK(!w->overwrites && !w->empty_gets, "%zu B: slots used one chunk at a time", bytes);
            CHECK(w->node[0].pr.pools[1].free_mask == (1u << NS) - 1 && w->node[1].pr.pools[0].free_mask == (1u << NS) - 1,
                  "%zu B: every slot free at the end", bytes);
            world_free(w);
            free(a);
            free(b);
        }
}

/* Random traffic: per (from, to, tag) the k-th send pairs with the k-th receive. */
static void test_random(unsigned seed0)
{
    enum { N = 4, MSGS = 120 };
    unsigned seed = seed0;
    world *w = world_new(N);
    treq *t = calloc(2 * MSGS, sizeof *t);
    int count[N][N][3];
    memset(count, 0, sizeof count);
    for (int m = 0; m < MSGS; m++) {
        int from = (int)(rand_r(&seed) % N), to = (int)(rand_r(&seed) % (N - 1));
        if (to >= from) to++;
        int tag = (int)(rand_r(&seed) % 3);
        size_t bytes = rand_r(&seed) % 4 == 0 ? 0 : rand_r(&seed) % (5 * SLOTB);
        unsigned salt = (unsigned)(from * 1000 + to * 100 + tag * 10) + (unsigned)count[from][to][tag]++;
        t[2 * m] = (treq){.rank = from, .is_send = 1, .peer = to, .tag = tag, .bytes = bytes, .buf = malloc(bytes + 1)};
        t[2 * m + 1] = (treq){.rank = to, .is_send = 0, .peer = from, .tag = tag, .bytes = bytes, .buf = calloc(1, bytes + 1)};
        fill(t[2 * m].buf, bytes, salt);
    }
    /* Post in a random order that keeps each stream's sends, and its receives, in message order. */
    int posted = 0, *next = calloc(2 * MSGS, sizeof *next), rc = 0;
    while (posted < 2 * MSGS) {
        int i = (int)(rand_r(&seed) % (2 * MSGS));
        if (next[i]) continue;
        int ok = 1;   /* an earlier message of the same stream and side must be posted first */
        for (int j = i - 2; j >= 0 && ok; j -= 2)
            if (!next[j] && t[j].rank == t[i].rank && t[j].peer == t[i].peer && t[j].tag == t[i].tag) ok = 0;
        if (!ok) continue;
        next[i] = 1;
        posted++;
        rc |= post(w, &t[i]);
        if (rand_r(&seed) % 3 == 0) ck_proto_progress(&w->node[rand_r(&seed) % N].pr);   /* some progress meanwhile */
    }
    CHECK(rc == 0, "seed %u: every request posted", seed0);
    CHECK(drive(w, t, 2 * MSGS, &seed) == 0, "seed %u: every request finishes", seed0);
    int bad = 0, errs = 0;
    for (int m = 0; m < MSGS; m++) {
        errs += t[2 * m].rc != 0 || t[2 * m + 1].rc != 0;
        bad += memcmp(t[2 * m].buf, t[2 * m + 1].buf, t[2 * m].bytes) != 0;
    }
    CHECK(!errs, "seed %u: no request failed (%d did)", seed0, errs);
    CHECK(!bad, "seed %u: every message landed in its own receive, intact (%d did not)", seed0, bad);
    CHECK(!w->overwrites && !w->empty_gets, "seed %u: no chunk overwrote another, no get of an empty slot", seed0);
    for (int r = 0; r < N; r++) CHECK(ck_proto_pending(&w->node[r].pr) == 0, "rank %d: nothing left pending", r);
    for (int i = 0; i < 2 * MSGS; i++) free(t[i].buf);
    free(t);
    free(next);
    world_free(w);
}

static void test_failures(void)
{
    unsigned seed = 3;
    unsigned char a[64], b[64];
    fill(a, sizeof a, 1);
    /* Size mismatch: both sides fail, with the sizes, and stay broken. */
    world *w = world_new(2);
    treq t[2] = {{.rank = 0, .is_send = 1, .peer = 1, .tag = 1, .bytes = 50, .buf = a},
                 {.rank = 1, .is_send = 0, .peer = 0, .tag = 1, .bytes = 40, .buf = b}};
    post(w, &t[1]);
    post(w, &t[0]);
    drive(w, t, 2, &seed);
    CHECK(t[0].rc == CK_ERR_TRANSPORT && strstr(w->node[0].pr.err, "message size mismatch: sending 50 B, the receive is 40 B"),
          "the sender reports the mismatch: %s", w->node[0].pr.err);
    CHECK(t[1].rc == CK_ERR_TRANSPORT && strstr(w->node[1].pr.err, "message size mismatch: receiving 40 B, the sender sent 50 B"),
          "the receiver reports it too: %s", w->node[1].pr.err);
    treq again = {.rank = 0, .is_send = 1, .peer = 1, .tag = 2, .bytes = 1, .buf = a};
    CHECK(post(w, &again) == CK_ERR_TRANSPORT && strstr(w->node[0].pr.err, "unusable after an earlier failure"),
          "a broken engine refuses new requests: %s", w->node[0].pr.err);
    CHECK(ck_proto_pending(&w->node[0].pr) == 0 && ck_proto_pending(&w->node[1].pr) == 0, "failed requests are dropped");
    world_free(w);

    /* Cancel: the engine breaks, and says why. */
    w = world_new(2);
    treq c = {.rank = 1, .is_send = 0, .peer = 0, .tag = 3, .bytes = 8, .buf = b};
    post(w, &c);
    ck_proto_cancel(&w->node[1].pr, &c.req);
    CHECK(w->node[1].pr.broken && strstr(w->node[1].pr.first, "receive from rank 0 (tag 3) was abandoned half-way"),
          "a cancelled request breaks the engine: %s", w->node[1].pr.first);
    CHECK(ck_proto_pending(&w->node[1].pr) == 0, "and is dropped");
    int done = 0;
    CHECK(ck_proto_test(&w->node[1].pr, &c.req, &done) == CK_ERR_TRANSPORT && !done, "testing it afterwards fails");
    world_free(w);

    /* A tag outside 0..tag_ub. */
    w = world_new(2);
    treq bad = {.rank = 0, .is_send = 1, .peer = 1, .tag = 1001, .bytes = 1, .buf = a};
    CHECK(post(w, &bad) == CK_ERR_INVALID_ARG && strstr(w->node[0].pr.err, "tag 1001 is outside 0..1000"),
          "a bad tag is refused: %s", w->node[0].pr.err);
    CHECK(!w->node[0].pr.broken, "without breaking the engine");
    world_free(w);
}

int main(void)
{
    test_sizes();
    for (unsigned s = 1; s <= 20; s++) test_random(s);
    test_failures();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
