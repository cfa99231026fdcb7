/*
 * cuda_logic.h — the parts of the CUDA IPC transport that are pure logic,
 * kept free of CUDA and MPI so tests/unit/test_cuda_logic.c checks them on
 * any machine: the staging-slot ledger at the CUDA transport's sizes (the
 * ledger itself is protocol.h's, shared with the shm transport) and the
 * peer-access matrix check.
 *
 * A receiver owns NSLOT slots per sending peer (transport_cuda.c). It hands
 * them out ahead of time, as GRANTs, to the oldest receive from that peer
 * (per tag) that still has chunks without a grant; the sender copies chunk j
 * into the slot of the j-th grant it took and answers with a FILL naming it.
 * The caps on those speculative grants are protocol.h's (never more grants
 * than chunks, never more than NSLOT outstanding, a FILL must name the slot
 * its chunk was granted). A 0-byte message is one chunk that needs no slot:
 * its grant carries -1.
 */
#ifndef COLLKIT_CUDA_LOGIC_H
#define COLLKIT_CUDA_LOGIC_H

#include <stddef.h>
#include "protocol.h"

#define CK_CUDA_NSLOT 4                  /* slots per ordered pair of ranks */
#define CK_CUDA_SLOT  ((size_t)1 << 20)  /* bytes per slot: larger messages move in chunks */

/* The ledger at the CUDA transport's sizes. */
static inline void ck_slot_pool_init(ck_slot_pool *p) { ck_slot_pool_init_n(p, CK_CUDA_NSLOT); }
static inline size_t ck_slot_nchunks(size_t bytes) { return ck_slot_nchunks_of(bytes, CK_CUDA_SLOT); }
static inline void ck_slot_req_init(ck_slot_req *r, size_t bytes)
{
    ck_slot_req_init_n(r, bytes, CK_CUDA_SLOT, CK_CUDA_NSLOT);
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
