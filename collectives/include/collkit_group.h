/*
 * collkit_group.h — process groups: a communicator split into smaller ones
 * (by colour and key, as MPI_Comm_split), and the 2-D mesh of a job that is
 * both model-parallel and data-parallel.
 *
 * A group's communicator is a communicator like any other: every algorithm,
 * transport, checker and bench run works on it, its ranks numbered 0..q-1 in
 * the group. The shm transport maps only the group's own ranks; the watchdog
 * and the agreement of every call run over the group. Messages name the
 * group's ranks and, since a reader thinks in the job's ranks, end with the
 * map between the two ("[group ranks 0-1 are world ranks 2,3]").
 *
 * The mesh (Megatron's and DeviceMesh's layout): p = T x D ranks, T the
 * model-parallel (tensor) width. Rank w is model-parallel rank w % T of
 * data-parallel replica w / T:
 *
 *     T = 2, p = 6     model-parallel groups  {0,1} {2,3} {4,5}   (consecutive: the
 *                                                                  chattiest group on one node)
 *                      data-parallel groups   {0,2,4} {1,3,5}     (stride T: the ranks that
 *                                                                  hold the same shard)
 */
#ifndef COLLKIT_GROUP_H
#define COLLKIT_GROUP_H

#include "collkit.h"

/* No group: a rank passing it gets *out == NULL (MPI_UNDEFINED). */
#define CK_GROUP_NONE (-1)

/* Collective over parent: the ranks that give the same color form one
 * communicator, ordered by key (ties by their rank in parent), on the same
 * transport kind as parent (shm: mapped among the group's ranks only).
 * color CK_GROUP_NONE: this rank joins none, *out = NULL. Bounded by the
 * watchdog like ck_comm_create. CK_SUCCESS, or an error with the reason in
 * ck_comm_errmsg(parent). */
int ck_comm_split(ck_comm *parent, int color, int key, ck_comm **out);

/* The same over a plain MPI communicator (a program's own groups, e.g. the
 * trainer's plan): the sub-communicator in *out (free it with
 * MPI_Comm_free), MPI_COMM_NULL for CK_GROUP_NONE. The ranks meet first,
 * bounded (`what` names the wait), since MPI_Comm_split has no bounded form. */
int ck_mpi_split(MPI_Comm parent, int color, int key, MPI_Comm *out, const char *what);

/* One rank's place in a T-wide mesh of p ranks. */
typedef struct ck_mesh {
    int p, T, D;           /* ranks, model-parallel width, data-parallel replicas (p / T) */
    int mp_color, mp_rank; /* the model-parallel group (its ranks w with w / T == mp_color), rank in it */
    int dp_color, dp_rank; /* the data-parallel group (w % T == dp_color), rank in it */
} ck_mesh;

/* Pure arithmetic, no MPI: 0 with *m filled, or -1 with the reason in why
 * (T < 1, T not dividing p, rank out of range). */
int ck_mesh_2d(int p, int T, int rank, ck_mesh *m, char *why, size_t cap);

/* ------------------------------------------------------------ nodes
 *
 * Ranks that share a node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED), or for
 * testing and teaching on one machine the emulated nodes of
 * COLLKIT_RANKS_PER_NODE=k: world ranks w form node w / k. The knob must be
 * set alike on every rank (mpirun -x) and divide the job's ranks; otherwise
 * every rank refuses it with the reason (ck_comm_create fails with
 * CK_ERR_INVALID_ARG). Nodes are numbered 0.. in the order of their lowest
 * rank; the ranks of a node in rank order.
 *
 *   p = 6, COLLKIT_RANKS_PER_NODE=2   node groups   {0,1} {2,3} {4,5}
 *                                     cross groups  {0,2,4} {1,3,5}   (same local rank on every node)
 */
typedef struct ck_topo {
    int p, nodes;        /* ranks, nodes */
    int per_node;        /* ranks on every node when all nodes hold as many; 0: uneven nodes */
    int node;            /* this rank's node */
    int local_rank;      /* its rank among its node's ranks ... */
    int local_size;      /* ... and how many they are */
    int cross_rank;      /* its rank among the ranks of its local rank on every node (its cross group) */
    int emulated;        /* 1: the nodes are COLLKIT_RANKS_PER_NODE's */
} ck_topo;

/* Collective over comm: this rank's place (and, when node_of is not NULL,
 * the node of every rank: p entries). CK_SUCCESS, or an error with the
 * reason in why (the knob refused, MPI failed). */
int ck_mpi_topo(MPI_Comm comm, ck_topo *t, int *node_of, char *why, size_t cap);
/* Collective: comm split into this rank's node group (ordered by rank) and
 * its cross group (the ranks of the same local rank on every node, ordered
 * by rank); free both with MPI_Comm_free. */
int ck_mpi_split_nodes(MPI_Comm comm, MPI_Comm *node, MPI_Comm *cross, ck_topo *t, char *why, size_t cap);
/* The same for a collkit communicator: two communicators of the parent's
 * transport kind (the node group's on shared memory where the parent's is
 * shm or mixed). Destroy both with ck_comm_destroy. */
int ck_comm_split_nodes(ck_comm *comm, ck_comm **node, ck_comm **cross);
/* The layout found when comm was made (local, no communication). */
int ck_comm_topo(ck_comm *comm, ck_topo *t);

/* For functions that know only the number of ranks (a descriptor's count
 * and cost functions): rank's place in the layout of the communicator of p
 * ranks this process made last; without one, COLLKIT_RANKS_PER_NODE's
 * layout when it divides p, else one node. */
void ck_topo_of_size(int p, int rank, ck_topo *t);
/* rank's place in a layout given as the node of every rank (0.., p entries). */
void ck_topo_fill(int p, const int *node_of, int rank, ck_topo *t);

/* Views, for algorithms composed of others (hier.c): this rank's node group
 * and cross group as communicators that move their bytes on comm's own
 * transport (shared memory inside a node on a mixed or shm communicator) and
 * count them as comm's traffic. Collective over comm; freed with
 * ck_comm_destroy. A collective called on a view runs its algorithm without
 * agreeing again (the caller's call agreed). */
int ck_comm_node_views(ck_comm *comm, ck_comm **node, ck_comm **cross);

/* A hierarchical all-reduce's parts (hier.c), for tools that model it per
 * link class: the reduce-scatter and all-gather inside each node and the
 * all-reduce across nodes. 0, or -1 when algo is no hierarchical one. */
int ck_hier_parts(const ck_algo *algo, const ck_algo **rs, const ck_algo **ar, const ck_algo **ag);
/* Its cost with one link model inside a node and another between nodes, on
 * `nodes` nodes of `per_node` ranks, n bytes. */
double ck_hier_cost2(const ck_algo *algo, const ck_cost_params *intra, const ck_cost_params *inter, int nodes,
                     int per_node, double n);

#endif
