/*
 * broken_hier — collcheck with a broken copy of the hierarchical all-reduce
 * registered (collectives/algos/hier.c), to prove that the hier tests can
 * fail: "broken_hier_shard" runs the same three phases on the same views, but
 * its all-reduce across nodes takes local rank 0's shard on every rank, so
 * the other shards never get the other nodes' sums. It counts its traffic
 * with hier's own formula. Where there is one node (nothing crosses) or one
 * rank a node (shard 0 is the whole buffer) it is right; at 2 nodes x 2
 * ranks it must fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include "collcheck.h"
#include "collkit_algo.h"
#include "collkit_group.h"

static ck_algo broken;

typedef struct { ck_comm *node, *cross; } views;

static void views_destroy(void *s)
{
    views *v = s;
    ck_comm_destroy(v->node);
    ck_comm_destroy(v->cross);
    free(v);
}

static int shard_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const ck_algo *ring_rs = ck_coll_algo_find(CK_COLL_REDUCE_SCATTER, "ring");
    const ck_algo *ring_ag = ck_coll_algo_find(CK_COLL_ALLGATHER, "ring"), *ring = ck_algo_find("ring");
    ck_topo t;
    ck_comm_topo(comm, &t);
    views *v = ck_algo_state(comm, &broken);
    int rc;
    if (!v) {
        if (!(v = calloc(1, sizeof *v))) return CK_ERR_NOMEM;
        if ((rc = ck_comm_node_views(comm, &v->node, &v->cross))) { free(v); return rc; }
        ck_algo_state_set(comm, &broken, v, views_destroy);
    }
    const int L = t.per_node, inplace = sendbuf == recvbuf;
    const size_t es = ck_dtype_size(dt);
    size_t off, len, off0, len0;
    ck_block(count, (size_t)L, (size_t)t.local_rank, &off, &len);
    ck_block(count, (size_t)L, 0, &off0, &len0);   /* THE BUG: every rank's shard should be its own */
    if (L > 1) rc = ck_reduce_scatter(v->node, ring_rs, inplace ? CK_IN_PLACE : sendbuf,
                                      inplace ? recvbuf : (char *)recvbuf + off * es, count, dt, op);
    else rc = inplace ? CK_SUCCESS : ck_copy(comm, recvbuf, sendbuf, count * es);
    if (!rc && t.nodes > 1 && len0) rc = ck_allreduce(v->cross, ring, CK_IN_PLACE, (char *)recvbuf + off0 * es, len0, dt, op);
    if (!rc && L > 1) rc = ck_allgather(v->node, ring_ag, CK_IN_PLACE, recvbuf, count, dt);
    return rc;
}

int main(int argc, char **argv)
{
    broken = *ck_algo_find("hier");
    broken.name = "broken_hier_shard";
    broken.summary = "hier with local rank 0's shard all-reduced across nodes on every rank";
    broken.run = shard_run;
    if (ck_register_algo(&broken) != CK_SUCCESS) {
        fprintf(stderr, "broken_hier: cannot register '%s'\n", broken.name);
        return 2;
    }
    return collcheck_main(argc, argv);
}
