/*
 * transport_shm.h — what the shm transport exposes inside the library: each
 * rank's shared segment as mapped here, and where a buffer lies in it (for
 * comm_shm.c, which turns them into the collkit_shm.h calls algorithm files
 * make). Private to collectives/src/; `self` is the transport's state
 * (ck_transport.self of a "shm" transport).
 */
#ifndef COLLKIT_TRANSPORT_SHM_H
#define COLLKIT_TRANSPORT_SHM_H

#include <stdint.h>
#include "transport.h"

/* Rank q's segment, mapped into this process (q == own rank: mine). Every
 * offset below is from the start of a segment. */
char   *ck_shm_tr_base(void *self, int q);
/* The offset of [p, p + bytes) in my segment when all of it lies in my
 * shared heap (ck_alloc), else -1. */
int64_t ck_shm_tr_offset(void *self, const void *p, size_t bytes);

/* Waiting for a peer. here: note the CPU this rank runs on (in its segment
 * header), at the start of a wait. pause: one pause of a wait on `peer`
 * (-1: unknown) that has lasted `waited` seconds so far — a yield when the
 * ranks outnumber the cores, when the peer last ran on this very CPU (it
 * cannot act while we spin) or after CK_SHM_SPIN_S, else a short spin. */
#define CK_SHM_SPIN_S 50e-6
void    ck_shm_tr_here(void *self);
void    ck_shm_tr_pause(void *self, int peer, double waited);

#endif
