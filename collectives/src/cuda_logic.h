/*
 * cuda_logic.h — the parts of the CUDA IPC transport that are pure logic,
 * kept free of CUDA and MPI so tests/unit/test_cuda_logic.c checks them on
 * any machine: the staging-slot ledger (which of a receiver's slots are free,
 * which slot each chunk of a receive was granted) and the peer-access matrix
 * check.
 *
 * A receiver owns NSLOT slots per sending peer (transport_cuda.c). It hands
 * them out ahead of time, as GRANTs, to the oldest receive from that peer
 * (per tag) that still has chunks without a grant; the sender copies chunk j
 * into the slot of the j-th grant it took and answers with a FILL naming it.
 *
 * The caps on those speculative grants:
 *   - never more grants to one receive than it has chunks (ngrant <= nchunks):
 *     MPI matches a GRANT to the oldest send of that (peer, tag), so a grant
 *     past a message's last chunk would be taken by the NEXT message with the
 *     same tag, and a slot would go to a chunk the receiver does not expect;
 *   - never more than NSLOT outstanding (granted, not yet filled) for one
 *     receive, and the peer's free mask bounds all its receives together to
 *     NSLOT: a slot is granted to one chunk at a time;
 *   - a FILL must name exactly the slot its chunk was granted; only then is
 *     the slot free again (and an unexpected one is an error, not a second
 *     owner for a slot).
 * A 0-byte message is one chunk that needs no slot: its grant carries -1.
 */
#ifndef COLLKIT_CUDA_LOGIC_H
#define COLLKIT_CUDA_LOGIC_H

#include <stddef.h>

#define CK_CUDA_NSLOT 4                  /* slots per ordered pair of ranks */
#define CK_CUDA_SLOT  ((size_t)1 << 20)  /* bytes per slot: larger messages move in chunks */

typedef struct ck_slot_pool {            /* per sending peer, on the receiver */
    unsigned free_mask;                  /* bit k: slot k is not granted */
} ck_slot_pool;

typedef struct ck_slot_req {             /* per receive */
    size_t      nchunks;                 /* chunks of the message (1 for 0 bytes) */
    size_t      ngrant, nfill;           /* grants handed out, fills taken */
    int         empty;                   /* 0-byte message: grants carry no slot */
    signed char slot[CK_CUDA_NSLOT];     /* slot of chunk j at j % NSLOT, for the outstanding j */
} ck_slot_req;

static inline void ck_slot_pool_init(ck_slot_pool *p) { p->free_mask = (1u << CK_CUDA_NSLOT) - 1; }

static inline size_t ck_slot_nchunks(size_t bytes)
{
    return bytes ? (bytes + CK_CUDA_SLOT - 1) / CK_CUDA_SLOT : 1;
}

static inline void ck_slot_req_init(ck_slot_req *r, size_t bytes)
{
    r->nchunks = ck_slot_nchunks(bytes);
    r->ngrant = r->nfill = 0;
    r->empty = bytes == 0;
    for (int k = 0; k < CK_CUDA_NSLOT; k++) r->slot[k] = -1;
}

/* Hand r its next grant if the caps allow: returns 1 and the slot in *slot
 * (-1 for a 0-byte message), or 0 when r must wait (or needs no more). */
static inline int ck_slot_grant(ck_slot_pool *p, ck_slot_req *r, int *slot)
{
    if (r->ngrant >= r->nchunks) return 0;                 /* every chunk has its grant */
    if (r->ngrant - r->nfill >= CK_CUDA_NSLOT) return 0;   /* NSLOT in flight: wait for a fill */
    int k = -1;
    if (!r->empty) {
        if (!p->free_mask) return 0;                       /* the peer's slots are all out */
        k = __builtin_ctz(p->free_mask);
        p->free_mask &= ~(1u << k);
    }
    r->slot[r->ngrant % CK_CUDA_NSLOT] = (signed char)k;
    r->ngrant++;
    *slot = k;
    return 1;
}

/* A FILL for r's next chunk named slot k. Returns 0 and frees the slot when
 * it is the one that chunk was granted; -1 (nothing changed) otherwise. */
static inline int ck_slot_fill(ck_slot_pool *p, ck_slot_req *r, int k)
{
    if (r->nfill >= r->ngrant) return -1;                  /* no grant outstanding */
    if (k != r->slot[r->nfill % CK_CUDA_NSLOT]) return -1;
    if (k >= 0) p->free_mask |= 1u << k;
    r->nfill++;
    return 0;
}

/* Peer access. ok[a * p + b] is 1 when rank a's GPU can load from and
 * store to rank b's (same GPU, cudaDeviceCanAccessPeer, or b's GPU not
 * visible to a, where cudaIpcOpenMemHandle decides). Finds the first pair
 * (a < b) where either direction fails: returns 1 and the pair, 0 if none. */
static inline int ck_peer_first_unreachable(const unsigned char *ok, int p, int *a, int *b)
{
    for (int i = 0; i < p; i++)
        for (int j = i + 1; j < p; j++)
            if (!ok[(size_t)i * (size_t)p + (size_t)j] || !ok[(size_t)j * (size_t)p + (size_t)i]) {
                *a = i;
                *b = j;
                return 1;
            }
    return 0;
}

#endif
