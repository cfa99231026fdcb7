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
/* 1 when the node has fewer cores this process may run on than ranks of the
 * communicator: a rank that waits should give its core away at once. */
int     ck_shm_tr_oversubscribed(void *self);

#endif
