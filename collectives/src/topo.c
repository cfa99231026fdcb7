/*
 * topo.c — which ranks share a node: the layout of an MPI communicator and
 * the layouts the descriptors' count functions read (collkit_group.h). No
 * communicator here (layer 3: MPI, the bounded waits, the environment);
 * the groups by node, the views and auto are group.c's.
 *
 * A node is what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) says: ranks that
 * can share memory. For testing and teaching on one machine,
 * COLLKIT_RANKS_PER_NODE=k pretends that world ranks w form node w / k
 * (consecutive blocks of k, as `mpirun --map-by core` places them on a
 * cluster). It must be set alike on every rank and divide the job's ranks:
 * anything else is refused by every rank, with the reason, when a
 * communicator is made.
 *
 * Layouts by size. A descriptor's count and cost functions get (p, rank)
 * only, yet a hierarchical algorithm's traffic depends on where the nodes
 * cut. So every ck_comm_create records its communicator's layout here under
 * its size, and ck_topo_of_size answers from the last one recorded for p
 * (the checker's and the bench's: they check and time the communicator they
 * just made). Without one (a tool that only reads descriptors), the layout
 * is COLLKIT_RANKS_PER_NODE's when set, else one node.
 *
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_group.h"
#include "transport.h"

/* ------------------------------------------------------------ the layout */

/* COLLKIT_RANKS_PER_NODE: 0 when unset, -1 when set to something that is no
 * number >= 1. */
static int env_ranks_per_node(void)
{
    const char *s = getenv("COLLKIT_RANKS_PER_NODE");
    if (!s || !*s) return 0;
    char *end;
    long k = strtol(s, &end, 10);
    return *end || k < 1 || k > 1 << 20 ? -1 : (int)k;
}

/* node_of[q] for every rank q of comm from the emulation knob: world rank / k. */
static void emulated_nodes(MPI_Comm comm, int k, int *node_of)
{
    int p;
    MPI_Comm_size(comm, &p);
    MPI_Group g, w;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int *mine = malloc((size_t)p * sizeof *mine);
    for (int q = 0; q < p; q++) mine[q] = q;
    MPI_Group_translate_ranks(g, p, mine, w, node_of);
    for (int q = 0; q < p; q++) node_of[q] /= k;
    free(mine);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
}

/* node_of[q] from the hardware: each rank's node leader (the lowest rank of
 * comm on its node), all-gathered. Collective, bounded. */
static int shared_nodes(MPI_Comm comm, int *node_of)
{
    int rank, leader = 0, zero = 0;
    MPI_Comm_rank(comm, &rank);
#ifdef COLLKIT_SMPI
    leader = rank;   /* simulated ranks are hosts of their own */
    (void)zero;
#else
    MPI_Comm local;
    ck_watch_barrier(comm, "finding the nodes");   /* MPI_Comm_split_type has no bounded form: meet first */
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local) != MPI_SUCCESS)
        return CK_ERR_TRANSPORT;
    MPI_Group lg, g;
    MPI_Comm_group(local, &lg);
    MPI_Comm_group(comm, &g);
    MPI_Group_translate_ranks(lg, 1, &zero, g, &leader);
    MPI_Group_free(&lg);
    MPI_Group_free(&g);
    MPI_Comm_free(&local);
#endif
    ck_watch_allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, comm, "finding the nodes");
    return CK_SUCCESS;
}

/* Renumber node ids 0, 1, ... in the order of their lowest rank. */
static int renumber(int *node_of, int p)
{
    int *first = malloc((size_t)p * sizeof *first), nodes = 0;
    if (!first) return -1;
    for (int q = 0; q < p; q++) {
        int id = -1;
        for (int j = 0; j < nodes && id < 0; j++)
            if (node_of[first[j]] == node_of[q]) id = j;
        if (id < 0) first[id = nodes++] = q;
    }
    int *ids = malloc((size_t)p * sizeof *ids);
    for (int q = 0; ids && q < p; q++)
        for (int j = 0; j < nodes; j++)
            if (node_of[first[j]] == node_of[q]) ids[q] = j;
    if (ids) memcpy(node_of, ids, (size_t)p * sizeof *ids);
    free(ids);
    free(first);
    return ids ? nodes : -1;
}

void ck_topo_fill(int p, const int *node_of, int rank, ck_topo *t)
{
    memset(t, 0, sizeof *t);
    t->p = p;
    int *size = calloc((size_t)p, sizeof *size);
    for (int q = 0; size && q < p; q++) {
        if (node_of[q] + 1 > t->nodes) t->nodes = node_of[q] + 1;
        size[node_of[q]]++;
    }
    t->per_node = size ? size[0] : 1;
    for (int n = 1; size && n < t->nodes; n++)
        if (size[n] != t->per_node) t->per_node = 0;
    t->node = node_of[rank];
    t->local_size = size ? size[t->node] : 1;
    for (int q = 0; q < rank; q++) t->local_rank += node_of[q] == t->node;
    /* my index among the ranks that hold my local rank on their node, in rank order */
    int *seen = calloc((size_t)p, sizeof *seen);
    for (int q = 0; seen && q < rank; q++)
        if (seen[node_of[q]]++ == t->local_rank) t->cross_rank++;
    free(seen);
    free(size);
}

int ck_mpi_topo(MPI_Comm comm, ck_topo *t, int *node_of_out, char *why, size_t cap)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    snprintf(why, cap, "%s", "");
    /* The knob must be the same everywhere: the ranks agree on it first. */
    int k = env_ranks_per_node(), world, kk[2] = {k, -k}, agreed[2];
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    ck_watch_allreduce(kk, agreed, 2, MPI_INT, MPI_MAX, comm, "finding the nodes");
    if (agreed[0] != -agreed[1]) {
        snprintf(why, cap, "COLLKIT_RANKS_PER_NODE differs across ranks (this rank: %s); set it alike on every rank "
                 "(mpirun -x COLLKIT_RANKS_PER_NODE)", getenv("COLLKIT_RANKS_PER_NODE") ? getenv("COLLKIT_RANKS_PER_NODE") : "unset");
        return CK_ERR_INVALID_ARG;
    }
    if (k < 0) {
        snprintf(why, cap, "COLLKIT_RANKS_PER_NODE=%s: want a whole number of ranks per emulated node, at least 1",
                 getenv("COLLKIT_RANKS_PER_NODE"));
        return CK_ERR_INVALID_ARG;
    }
    if (k > 0 && world % k) {
        snprintf(why, cap, "COLLKIT_RANKS_PER_NODE=%d does not divide the job's %d ranks: the emulated nodes must "
                 "all hold %d ranks", k, world, k);
        return CK_ERR_INVALID_ARG;
    }
    int *node_of = malloc((size_t)p * sizeof *node_of);
    if (!node_of) return CK_ERR_NOMEM;
    int rc = CK_SUCCESS;
    if (k > 0) emulated_nodes(comm, k, node_of);
    else rc = shared_nodes(comm, node_of);
    if (!rc && renumber(node_of, p) < 0) rc = CK_ERR_NOMEM;
    if (!rc) ck_topo_fill(p, node_of, rank, t);
    t->emulated = k > 0;
    if (!rc && node_of_out) memcpy(node_of_out, node_of, (size_t)p * sizeof *node_of);
    free(node_of);
    if (rc) snprintf(why, cap, "%s", rc == CK_ERR_NOMEM ? "out of memory" : "MPI_Comm_split_type failed");
    return rc;
}

/* ------------------------------------------------------------ layouts by size */

enum { NLAYOUTS = 16 };
static struct layout { int p; int *node_of; } layouts[NLAYOUTS];
static int nlayouts;

void ck_topo_record(int p, const int *node_of)
{
    struct layout *l = NULL;
    for (int i = 0; i < nlayouts && !l; i++)
        if (layouts[i].p == p) l = &layouts[i];
    if (!l && nlayouts == NLAYOUTS) return;   /* the first sizes stay: enough for any tool */
    int *copy = malloc((size_t)p * sizeof *copy);
    if (!copy) return;
    memcpy(copy, node_of, (size_t)p * sizeof *copy);
    if (!l) l = &layouts[nlayouts++];
    free(l->node_of);
    *l = (struct layout){p, copy};
}

void ck_topo_of_size(int p, int rank, ck_topo *t)
{
    for (int i = 0; i < nlayouts; i++)
        if (layouts[i].p == p) {
            ck_topo_fill(p, layouts[i].node_of, rank, t);
            return;
        }
    int k = env_ranks_per_node(), *node_of = malloc((size_t)(p > 0 ? p : 1) * sizeof *node_of);
    if (k < 1 || p % k) k = p;   /* one node */
    for (int q = 0; node_of && q < p; q++) node_of[q] = q / k;
    if (node_of && p > 0) ck_topo_fill(p, node_of, rank, t);
    else *t = (ck_topo){.p = p, .nodes = 1, .per_node = p, .local_size = p, .local_rank = rank};
    free(node_of);
}


