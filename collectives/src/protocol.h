/*
 * protocol.h — the point-to-point protocol of the transports whose ranks
 * write into each other's memory: the CUDA IPC transport (device buffers,
 * transport_cuda.c) and the shared-memory transport (host buffers,
 * transport_shm.c). One engine (protocol.c) does the matching, the staging
 * slots, the grants and fills, their checks and the failure rules; each
 * transport plugs in how a control message travels and how a chunk is copied
 * (ck_proto_ops). So the shm transport, which runs on every machine, runs
 * the very code the GPU path runs.
 *
 * The protocol. A receiver owns `nslot` staging slots of `slot_bytes` for
 * each peer that sends to it (ring s of its staging area receives from rank
 * s). One message of n bytes from s to d, tag t, moves in chunks of at most
 * slot_bytes (a 0-byte message is one empty chunk that uses no slot):
 *
 *   rank s (sender)                          rank d (receiver)
 *   isend: queue op                          irecv: queue op
 *                                    <-----  GRANT{k, n}   (k free; one per chunk)
 *   put: chunk -> d's slot k of ring s
 *   FILL{k, len, n} -------------------->
 *                                            get: slot k -> buf; k is free again
 *   send done when every chunk is put        recv done when every chunk is got
 *
 * "put" and "get" are the transport's: a device copy ordered by
 * interprocess events (CUDA, where "done" means queued on the stream), or a
 * memcpy ordered by the control message's release/acquire (shm).
 *
 * Why it is correct
 *   - Matching: control messages of one (peer, tag) arrive in order (MPI's
 *     rule, which the shm queues keep too), so requests with equal (peer,
 *     tag) pair up in posting order as in MPI. Only the oldest such request
 *     may take control messages or grants, which keeps the k-th GRANT/FILL
 *     of a tag with the k-th chunk.
 *   - Grants are speculative (sent before the sender has posted) and capped
 *     by the slot ledger below: never more than a receive has chunks, never
 *     more than nslot outstanding, and a FILL must name the slot its chunk
 *     was granted. A slot is granted again only after the FILL for its last
 *     chunk was handled, i.e. after that chunk was got out of it.
 *   - Progress: every test drives every pending request (a wait on a recv
 *     also moves the sends the peer needs first), and never blocks.
 *   - Slots are granted round-robin over the posted receives from a peer, so
 *     a receive posted early cannot starve a later one with another tag.
 *   - Sizes must match exactly; a mismatch is reported on both sides (the
 *     sender answers a GRANT of the wrong size with a FILL naming its size).
 *
 * Failures. A control message, once sent, commits both sides to the rest of
 * the exchange. So any failure after that point (a copy failing, a control
 * channel error, a size mismatch, a request abandoned after a timeout)
 * breaks the engine: every later call fails at once with the first
 * failure's text instead of waiting on a peer that is out of step.
 */
#ifndef COLLKIT_PROTOCOL_H
#define COLLKIT_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include "transport.h"

/* ------------------------------------------------------------ the slot ledger
 *
 * Pure logic, no I/O (tests/unit/test_cuda_logic.c and test_protocol.c):
 * which of a receiver's slots for one peer are free, and which slot each
 * chunk of a receive was granted.
 *   - never more grants to one receive than it has chunks (ngrant <= nchunks):
 *     a GRANT is matched to the oldest send of that (peer, tag), so a grant
 *     past a message's last chunk would be taken by the NEXT message with the
 *     same tag, and a slot would go to a chunk the receiver does not expect;
 *   - never more than nslot outstanding (granted, not yet filled) for one
 *     receive, and the peer's free mask bounds all its receives together to
 *     nslot: a slot is granted to one chunk at a time;
 *   - a FILL must name exactly the slot its chunk was granted; only then is
 *     the slot free again (an unexpected one is an error, not a second owner).
 * A 0-byte message is one chunk that needs no slot: its grant carries -1. */

#define CK_PROTO_MAXSLOT 8               /* slots per ordered pair, at most */

typedef struct ck_slot_pool {            /* per sending peer, on the receiver */
    unsigned free_mask;                  /* bit k: slot k is not granted */
} ck_slot_pool;

typedef struct ck_slot_req {             /* per receive */
    size_t      nchunks;                 /* chunks of the message (1 for 0 bytes) */
    size_t      ngrant, nfill;           /* grants handed out, fills taken */
    int         empty;                   /* 0-byte message: grants carry no slot */
    int         nslot;                   /* slots per peer (the cap on outstanding grants) */
    signed char slot[CK_PROTO_MAXSLOT];  /* slot of chunk j at j % nslot, for the outstanding j */
} ck_slot_req;

static inline void ck_slot_pool_init_n(ck_slot_pool *p, int nslot) { p->free_mask = (1u << nslot) - 1; }

static inline size_t ck_slot_nchunks_of(size_t bytes, size_t slot_bytes)
{
    return bytes ? (bytes + slot_bytes - 1) / slot_bytes : 1;
}

static inline void ck_slot_req_init_n(ck_slot_req *r, size_t bytes, size_t slot_bytes, int nslot)
{
    r->nchunks = ck_slot_nchunks_of(bytes, slot_bytes);
    r->ngrant = r->nfill = 0;
    r->empty = bytes == 0;
    r->nslot = nslot;
    for (int k = 0; k < CK_PROTO_MAXSLOT; k++) r->slot[k] = -1;
}

/* Hand r its next grant if the caps allow: returns 1 and the slot in *slot
 * (-1 for a 0-byte message), or 0 when r must wait (or needs no more). */
static inline int ck_slot_grant(ck_slot_pool *p, ck_slot_req *r, int *slot)
{
    if (r->ngrant >= r->nchunks) return 0;                      /* every chunk has its grant */
    if (r->ngrant - r->nfill >= (size_t)r->nslot) return 0;     /* nslot in flight: wait for a fill */
    int k = -1;
    if (!r->empty) {
        if (!p->free_mask) return 0;                            /* the peer's slots are all out */
        k = __builtin_ctz(p->free_mask);
        p->free_mask &= ~(1u << k);
    }
    r->slot[r->ngrant % (size_t)r->nslot] = (signed char)k;
    r->ngrant++;
    *slot = k;
    return 1;
}

/* A FILL for r's next chunk named slot k. Returns 0 and frees the slot when
 * it is the one that chunk was granted; -1 (nothing changed) otherwise. */
static inline int ck_slot_fill(ck_slot_pool *p, ck_slot_req *r, int k)
{
    if (r->nfill >= r->ngrant) return -1;                       /* no grant outstanding */
    if (k != r->slot[r->nfill % (size_t)r->nslot]) return -1;
    if (k >= 0) p->free_mask |= 1u << k;
    r->nfill++;
    return 0;
}

/* ------------------------------------------------------------ the engine */

enum { CK_CTL_GRANT = 0, CK_CTL_FILL = 1 };

/* One posted send or receive. */
typedef struct ck_proto_op {
    struct ck_proto_op *next, *prev;
    int         is_send, peer, tag;
    char       *buf;
    size_t      bytes, nchunks;
    size_t      nsent;         /* send: chunks put (one per grant taken) */
    ck_slot_req slots;         /* recv: grants handed out and fills taken */
    int64_t     msg[3];        /* the control message ctl_take delivered */
    int         failed;
    /* the transport's own state for this request (a posted MPI receive) */
    union { uint64_t u[6]; void *ptr; } be;
} ck_proto_op;

/* What a transport plugs in. `be` is the transport's state. Every function
 * returns a CK_* status; on a failure it records the detail with
 * ck_proto_break first (a failure in the middle of an exchange). */
typedef struct ck_proto_ops {
    /* Send control message `kind` {m0, m1, m2} to peer with the request's tag.
     * Never blocks: it may queue the message and finish it in ctl_progress. */
    int  (*ctl_send)(void *be, int kind, int peer, int tag, int64_t m0, int64_t m1, int64_t m2);
    /* The next control message of `kind` from o->peer with o->tag, in the
     * order they were sent: 1 and the message in o->msg, 0 when none has
     * arrived yet, or a negative status. Called only for the oldest request
     * of its (direction, peer, tag). */
    int  (*ctl_take)(void *be, int kind, ck_proto_op *o);
    /* o is about to be freed: let go of anything posted for it (never fails). */
    void (*ctl_forget)(void *be, ck_proto_op *o);
    /* Once per progress pass, first: finish queued control messages. May be NULL. */
    int  (*ctl_progress)(void *be);
    /* Sender: len bytes at src into slot k of the ring `peer` keeps for me. */
    int  (*put)(void *be, int peer, int slot, const void *src, size_t len);
    /* Receiver: slot k of my ring for `peer` into dst (len bytes). */
    int  (*get)(void *be, int peer, int slot, void *dst, size_t len);
} ck_proto_ops;

typedef struct ck_proto {
    const ck_proto_ops *ops;
    void         *be;
    const char   *name;        /* "cuda-ipc", "shm": how stderr lines start */
    int           rank, size, tag_ub, nslot;
    size_t        slot_bytes;
    ck_slot_pool *pools;       /* [size]: my slots of each peer's ring */
    ck_proto_op  *head, *tail; /* pending requests, oldest first */
    unsigned long progressed;  /* control messages handled so far (a cheap "did anything move") */
    int           broken;      /* out of step with the peers: every call fails */
    char          err[384];    /* the last failure (ck_transport.error) */
    char          first[384];  /* the failure that broke the engine */
} ck_proto;

/* Set up an engine for `size` ranks (allocates the slot pools). */
int  ck_proto_init(ck_proto *pr, const ck_proto_ops *ops, void *be, const char *name, int rank, int size,
                   int tag_ub, size_t slot_bytes, int nslot);
/* Drop every pending request (their control receives are forgotten first)
 * and free the pools. */
void ck_proto_fini(ck_proto *pr);

/* The ck_transport entry points, for a transport to call with its engine. */
int  ck_proto_post(ck_proto *pr, int is_send, void *buf, size_t bytes, int peer, int tag, ck_req *r);
int  ck_proto_test(ck_proto *pr, ck_req *r, int *done);
void ck_proto_cancel(ck_proto *pr, ck_req *r);
/* Drive every pending request once (what test does first). */
int  ck_proto_progress(ck_proto *pr);
/* Requests still pending (for a transport's teardown and the tests). */
int  ck_proto_pending(const ck_proto *pr);

/* Failures. fail records the detail (pr->err, and a line on stderr) and
 * returns status; break does the same and marks the engine out of step
 * (keeping the first such failure); dead is what every call returns after. */
int  ck_proto_fail(ck_proto *pr, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int  ck_proto_break(ck_proto *pr, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int  ck_proto_dead(ck_proto *pr);

#endif
