/*
 * group.c — process groups (collkit_group.h): a communicator split by colour
 * and key, the note that maps a group's ranks to the job's in its messages,
 * and the 2-D mesh of model- and data-parallel groups.
 *
 * A group needs nothing new of the layers below: ck_comm_create already
 * takes any MPI communicator, and everything it sets up (the shm segments,
 * the agreement of each call, the bound of each wait) runs over the
 * communicator it is given. What a group adds is the split itself, met
 * first and bounded like every collective of the kit, and the names: a
 * watchdog message saying "rank 1 waited for rank 0" in a group of world
 * ranks 2 and 3 would send its reader to the wrong processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_group.h"
#include "internal.h"

int ck_mpi_split(MPI_Comm parent, int color, int key, MPI_Comm *out, const char *what)
{
    *out = MPI_COMM_NULL;
    /* MPI_Comm_split has no nonblocking form: meet first, bounded (a rank
     * that never comes ends the job, named), then split. */
    ck_watch_barrier(parent, what ? what : "ck_comm_split");
    return MPI_Comm_split(parent, color == CK_GROUP_NONE ? MPI_UNDEFINED : color, key, out) == MPI_SUCCESS
               ? CK_SUCCESS : CK_ERR_TRANSPORT;
}

int ck_comm_split(ck_comm *parent, int color, int key, ck_comm **out)
{
    if (!parent || !out || (color < 0 && color != CK_GROUP_NONE)) return CK_ERR_INVALID_ARG;
    *out = NULL;
    MPI_Comm sub;
    if (ck_mpi_split(parent->mpi, color, key, &sub, "ck_comm_split"))
        return ck_fail(parent, CK_ERR_TRANSPORT, "ck_comm_split: MPI_Comm_split failed (colour %d, key %d)", color, key);
    if (sub == MPI_COMM_NULL) return CK_SUCCESS;
    /* ck_comm_create duplicates it: the group's own communicator is freed here. */
    const int rc = ck_comm_create(sub, parent->tr.mem, out);
    MPI_Comm_free(&sub);
    if (rc) return ck_fail(parent, rc, "ck_comm_split: the group's communicator (colour %d): %s", color, ck_strerror(rc));
    return CK_SUCCESS;
}

/* " [group ranks 0-1 are world ranks 2,3]" for a communicator whose ranks are
 * not the job's own, else "". Local: no communication. */
void ck_group_note(MPI_Comm comm, char *out, size_t cap)
{
    int q, world_size;
    out[0] = '\0';
    MPI_Comm_size(comm, &q);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Group g, w;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    enum { SHOWN = 16 };
    int mine[SHOWN], theirs[SHOWN], n = q < SHOWN ? q : SHOWN, same = q == world_size;
    for (int i = 0; i < n; i++) mine[i] = i;
    MPI_Group_translate_ranks(g, n, mine, w, theirs);
    for (int i = 0; i < n; i++) same = same && theirs[i] == i;
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    if (same) return;
    size_t len = (size_t)snprintf(out, cap, " [group ranks 0-%d are world ranks ", q - 1);
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d", i ? "," : "", theirs[i]);
    if (len < cap) snprintf(out + len, cap - len, "%s]", q > n ? ",..." : "");
}

int ck_mesh_2d(int p, int T, int rank, ck_mesh *m, char *why, size_t cap)
{
    if (p < 1 || T < 1 || rank < 0 || rank >= p) {
        snprintf(why, cap, "a mesh of %d ranks, width %d: rank %d is not in it", p, T, rank);
        return -1;
    }
    if (p % T) {
        snprintf(why, cap, "a model-parallel width of %d does not divide the %d ranks (want p = %d x replicas)", T, p, T);
        return -1;
    }
    *m = (ck_mesh){.p = p, .T = T, .D = p / T, .mp_color = rank / T, .mp_rank = rank % T, .dp_color = rank % T,
                   .dp_rank = rank / T};
    return 0;
}

/* ------------------------------------------------------------ nodes
 *
 * The layout itself is topo.c's (found when the communicator is made). Here:
 * the groups by node, and views — a communicator over some ranks of a
 * parent (its node group, its cross-node group) that moves its bytes on the
 * PARENT's transport (transport_mixed.c's router maps the view's ranks to
 * the parent's): a message between two ranks of one node goes over shared
 * memory where the parent's transport is mixed or shm, over MPI otherwise,
 * and every byte a part sends is credited to the parent's counters when the
 * part returns (collective.c), so the checker's traffic check and
 * collbench's counters see a composed algorithm (hier.c) like any other.
 */

int ck_comm_topo(ck_comm *c, ck_topo *t)
{
    if (!c || !t) return CK_ERR_INVALID_ARG;
    *t = c->topo;
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ groups by node */

int ck_mpi_split_nodes(MPI_Comm comm, MPI_Comm *node, MPI_Comm *cross, ck_topo *t, char *why, size_t cap)
{
    *node = *cross = MPI_COMM_NULL;
    int rc = ck_mpi_topo(comm, t, NULL, why, cap);
    if (!rc) rc = ck_mpi_split(comm, t->node, t->local_rank, node, "splitting by node");
    if (!rc) rc = ck_mpi_split(comm, t->local_rank, t->cross_rank, cross, "splitting by node");
    if (rc && !why[0]) snprintf(why, cap, "MPI_Comm_split failed");
    return rc;
}

int ck_comm_split_nodes(ck_comm *c, ck_comm **node, ck_comm **cross)
{
    if (!c || !node || !cross) return CK_ERR_INVALID_ARG;
    *node = *cross = NULL;
    const ck_topo *t = &c->topo;
    int rc = ck_comm_split(c, t->node, t->local_rank, node);
    if (!rc) rc = ck_comm_split(c, t->local_rank, t->cross_rank, cross);
    if (rc) {
        ck_comm_destroy(*node);
        *node = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------ views */

/* out[i]: rank i of sub's rank in parent. Local. */
static int ranks_in_parent(MPI_Comm sub, MPI_Comm parent, int *out)
{
    int q;
    MPI_Comm_size(sub, &q);
    int *mine = malloc((size_t)q * sizeof *mine);
    if (!mine) return CK_ERR_NOMEM;
    MPI_Group g, pg;
    MPI_Comm_group(sub, &g);
    MPI_Comm_group(parent, &pg);
    for (int i = 0; i < q; i++) mine[i] = i;
    MPI_Group_translate_ranks(g, q, mine, pg, out);
    MPI_Group_free(&g);
    MPI_Group_free(&pg);
    free(mine);
    return CK_SUCCESS;
}

/* A view over `sub` (a split of the parent's MPI communicator, owned by the
 * view from here on): the parent's settings, the parent's transport. */
static int view_make(ck_comm *parent, MPI_Comm sub, ck_comm **out)
{
    ck_comm *v = calloc(1, sizeof *v);
    int rc = v ? CK_SUCCESS : CK_ERR_NOMEM;
    if (v) {
        v->cfg_view = malloc(sizeof *v->cfg_view);
        v->agree = malloc(AGREE_WORDS * sizeof *v->agree);
        v->mpi = sub;
        MPI_Comm_rank(sub, &v->rank);
        MPI_Comm_size(sub, &v->size);
        v->cfg = parent->cfg;
        v->cfg.validate = 0;   /* the parent's call agreed already */
        v->msg_bound = UINT64_MAX;
        v->parent = parent;
        ck_group_note(sub, v->group_note, sizeof v->group_note);
        v->to_parent = malloc((size_t)v->size * sizeof *v->to_parent);
        rc = v->cfg_view && v->agree && v->to_parent ? CK_SUCCESS : CK_ERR_NOMEM;
        if (!rc) rc = ranks_in_parent(sub, parent->mpi, v->to_parent);
        if (!rc) rc = ck_transport_view_create(&parent->tr, v->to_parent, v->size, &v->tr);
    }
    if (rc) {
        if (v) { free(v->cfg_view); free(v->agree); free(v->to_parent); free(v); }
        MPI_Comm_free(&sub);
        return rc;
    }
    *out = v;
    return CK_SUCCESS;
}

int ck_comm_node_views(ck_comm *c, ck_comm **node, ck_comm **cross)
{
    *node = *cross = NULL;
    MPI_Comm n, x;
    int rc = ck_mpi_split(c->mpi, c->topo.node, c->topo.local_rank, &n, "the node groups");
    if (rc) return ck_fail(c, rc, "splitting by node failed");
    if ((rc = ck_mpi_split(c->mpi, c->topo.local_rank, c->topo.cross_rank, &x, "the node groups"))) {
        MPI_Comm_free(&n);
        return ck_fail(c, rc, "splitting across nodes failed");
    }
    if ((rc = view_make(c, n, node))) {
        MPI_Comm_free(&x);
        return ck_fail(c, rc, "out of memory for the node group");
    }
    if ((rc = view_make(c, x, cross))) {
        ck_comm_destroy(*node);
        *node = NULL;
        return ck_fail(c, rc, "out of memory for the cross-node group");
    }
    return CK_SUCCESS;
}

/* After a part ran on a view: what it sent went over the parent's transport,
 * so it is the parent's traffic (collective.c calls this). */
void ck_view_credit(ck_comm *v)
{
    ck_comm *c = v->parent;
    c->ctr.bytes_sent += v->ctr.bytes_sent;
    c->ctr.bytes_recv += v->ctr.bytes_recv;
    c->ctr.msgs_sent += v->ctr.msgs_sent;
    c->ctr.msgs_recv += v->ctr.msgs_recv;
    c->ctr.elems_reduced += v->ctr.elems_reduced;
    c->ctr.msgs_empty += v->ctr.msgs_empty;
    c->ctr.msgs_over += v->ctr.msgs_over;
    if (v->ctr.msg_largest > c->ctr.msg_largest) c->ctr.msg_largest = v->ctr.msg_largest;
    c->self.bytes_sent += v->self.bytes_sent;
    c->self.msgs_sent += v->self.msgs_sent;
    c->self.bytes_recv += v->self.bytes_recv;
    c->self.msgs_recv += v->self.msgs_recv;
    memset(&v->ctr, 0, sizeof v->ctr);
    memset(&v->self, 0, sizeof v->self);
}

/* ------------------------------------------------------------ auto */

/* Below this many bytes a message across nodes is latency-bound: the log p
 * steps of recursive doubling beat the halving and doubling of Rabenseifner. */
#define AUTO_SMALL ((size_t)64 << 10)

const ck_algo *ck_algo_auto(ck_comm *c, size_t bytes, char *why, size_t cap)
{
    const ck_topo *t = &c->topo;
    const char *name, *size_note = bytes ? "" : " (size not known: taken as large)";
#ifdef COLLKIT_SMPI
    /* Simulated ranks are hosts of their own, and the platform, not a
     * placement, decides which links are dear: make sim-bench measures it. */
    if (t->nodes > 1) {
        snprintf(why, cap, "auto: ring: %d simulated ranks (SimGrid SMPI), each a host of its own", c->size);
        return ck_algo_find("ring");
    }
#endif
    if (t->nodes <= 1) {
        name = c->tr.mem & CK_MEM_SHM ? "twoshot" : "ring";
        snprintf(why, cap, "auto: %s: the %d ranks share one node%s", name, c->size,
                 c->tr.mem & CK_MEM_SHM ? " and map each other's memory (shm transport)" : "");
    } else if (t->per_node > 1) {
        const int small = bytes && bytes / (size_t)t->per_node < AUTO_SMALL;
        name = small ? "hier.ring.rd" : "hier.ring.rabenseifner";
        snprintf(why, cap, "auto: %s: %d %snodes of %d ranks: ring inside each node (%s), and across nodes %s on "
                 "shards of %zu B%s", name, t->nodes, t->emulated ? "emulated " : "", t->per_node, c->tr.name,
                 small ? "recursive doubling (a shard under 64 KiB is latency-bound)" : "Rabenseifner (2 log N steps, "
                 "the ring's bytes)", bytes / (size_t)t->per_node, size_note);
    } else {
        const int small = bytes && bytes < AUTO_SMALL;
        name = small ? "rd" : "rabenseifner";
        snprintf(why, cap, "auto: %s: %d ranks on %d %snodes, %s: no shards that line up, so a flat algorithm with "
                 "log p steps across the network%s", name, c->size, t->nodes, t->emulated ? "emulated " : "",
                 t->per_node ? "one rank a node" : "uneven", size_note);
    }
    return ck_algo_find(name);
}
