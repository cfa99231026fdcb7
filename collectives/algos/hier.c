/*
 * hier — the hierarchical all-reduce: reduce-scatter inside each node, an
 * all-reduce of each rank's shard across nodes, all-gather inside the node
 * (the two-level all-reduce of Open MPI's han, NCCL's trees and Horovod's
 * hierarchical mode). It is written as a composition of registered
 * algorithms, and --algo names the parts, in a name that is itself a valid
 * registry name (letters, digits, _ . -: a tool can write it in a file name
 * or a results line):
 *
 *     hier                   hier.ring.ring
 *     hier.RS.AR             RS the reduce-scatter and the all-gather inside a node (both
 *                            registries must have the name: ring, direct), AR the all-reduce
 *                            across nodes (any host algorithm: ring, rd, rabenseifner, tree ...)
 *     hier.RS-AG.AR          reduce-scatter and all-gather named apart: hier.halving-rd.rabenseifner
 *
 * Idea. A node's ranks talk over shared memory, nodes over a network that is
 * many times slower. A flat ring sends 2(p-1)/p·n per rank, and on a ring
 * that crosses the network at every node boundary, those bytes queue on the
 * node's link. Here the network carries only what must cross it: each node's
 * partial sum, once, cut into L shards that L ranks all-reduce side by side.
 *
 * Worked example, 2 nodes x 2 ranks (p = 4, L = 2 ranks a node, N = 2
 * nodes). The buffer is cut into L = 2 shards A | B (ck_block), xR = rank R's
 * input; node 0 holds ranks 0 and 1, node 1 ranks 2 and 3.
 *
 *   phase                  rank 0       rank 1       rank 2       rank 3       link     group
 *   input                  A0 B0        A1 B1        A2 B2        A3 B3
 *   1 reduce-scatter       A0+A1        B0+B1        A2+A3        B2+B3        intra    node {0,1} {2,3}
 *   2 all-reduce of shard  A0+..+A3     B0+..+B3     A0+..+A3     B0+..+B3     inter    cross {0,2} {1,3}
 *   3 all-gather           A B          A B          A B          A B          intra    node {0,1} {2,3}
 *
 * Bytes per rank (n bytes, ring parts): intra (L-1)/L·n twice, inter
 * 2(N-1)/N·n/L. At 2 x 2 each rank sends n inside its node and n/2 across:
 * n leaves a node. The flat ring 0 -> 1 -> 2 -> 3 -> 0 sends 1.5·n from
 * every rank, and ranks 1 and 3 send theirs across: 1.5·n leaves a node.
 * Cost, each part's own formula on its link (α_i β_i inside a node, α_e β_e
 * between nodes; ring parts shown):
 *     T = 2(L-1)·α_i + 2(L-1)/L·n·β_i + (L-1)/L·n·γ
 *       + 2(N-1)·α_e + 2(N-1)/N·(n/L)·β_e + (N-1)/N·(n/L)·γ
 * With one link for both (the descriptor's .cost) it sends what the flat
 * ring sends, 2(p-1)/p·n, in fewer steps (2(L-1) + 2(N-1) against 2(p-1));
 * its point is the second link: only 2(N-1)/N·n/L of it crosses the
 * network, where β_e >> β_i (ck_hier_cost2 takes both links).
 *
 * The table below is that descriptor's cost where this process has made no
 * communicator of p ranks and COLLKIT_RANKS_PER_NODE is unset: one node,
 * phases 1 and 3 only, which is the ring's cost exactly. At 2 x 2
 * (COLLKIT_RANKS_PER_NODE=2, p = 4) one link gives 8.19 µs at 1K, 204.61 µs
 * at 1M and 12590.91 µs at 64M: the ring's bytes, two steps fewer.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.13       12.19       16.20       60.24
 *       1M      135.07      208.61      225.72      305.76
 *      64M     8392.61    12594.91    13437.77    15788.64
 *
 * Where it runs. The parts run on views of the communicator (topo.c): its
 * node group and its cross group, on the communicator's own transport, so
 * on the mixed transport (--transport shm across nodes) phases 1 and 3 move
 * over shared memory and phase 2 over MPI; every byte counts as this
 * communicator's traffic. Nodes come from MPI_Comm_split_type, or from
 * COLLKIT_RANKS_PER_NODE on one machine. One node: phases 1 and 3 only; one
 * rank a node: phase 2 only. Nodes of different sizes (a hostfile with
 * uneven slots) have no shards that line up: there every rank runs AR over
 * all ranks, flat, and the descriptor counts that.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_algo.h"
#include "collkit_group.h"

typedef struct hier {
    ck_algo d;                 /* the descriptor --algo finds */
    const ck_algo *rs, *ag, *ar;
    char name[64], summary[200], bytes_f[200], cost_f[200];
} hier;

/* ------------------------------------------------------------ the views */

typedef struct views { ck_comm *node, *cross; } views;

/* One pair of views per communicator, whatever the parts (a descriptor of
 * its own as the ck_algo_state key, never registered). */
static const ck_algo views_key = {.name = "hier: node and cross-node views"};

static void views_destroy(void *state)
{
    views *v = state;
    ck_comm_destroy(v->node);
    ck_comm_destroy(v->cross);
    free(v);
}

static int get_views(ck_comm *comm, views **out)
{
    if ((*out = ck_algo_state(comm, &views_key))) return CK_SUCCESS;
    views *v = calloc(1, sizeof *v);
    if (!v) return ck_fail(comm, CK_ERR_NOMEM, "hier: out of memory");
    int rc = ck_comm_node_views(comm, &v->node, &v->cross);
    if (!rc) rc = ck_algo_state_set(comm, &views_key, v, views_destroy);
    if (rc) { free(v); return rc; }
    *out = v;
    return CK_SUCCESS;
}

/* The part's failure, said on the communicator the caller sees. */
static int part_failed(ck_comm *comm, const hier *h, const char *phase, ck_comm *view, int rc)
{
    char why[400];
    snprintf(why, sizeof why, "%s", ck_comm_errmsg(view));
    return ck_fail(comm, rc, "%s: %s failed: %s", h->d.name, phase, why);
}

/* ------------------------------------------------------------ the algorithm */

static int hier_run(const hier *h, ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt,
                    ck_op op)
{
    ck_topo t;
    ck_comm_topo(comm, &t);
    if (!t.per_node) return h->ar->run(comm, sendbuf, recvbuf, count, dt, op);   /* uneven nodes: flat */
    views *v;
    int rc = get_views(comm, &v);
    if (rc) return rc;
    /* The views take the communicator's settings of this call (timeout, chunk). */
    ck_config cfg = *ck_comm_config(comm);
    cfg.validate = 0;
    ck_comm_set_config(v->node, &cfg);
    ck_comm_set_config(v->cross, &cfg);

    const int L = t.per_node, N = t.nodes, inplace = sendbuf == recvbuf;
    const size_t es = ck_dtype_size(dt);
    size_t off, len;
    ck_block(count, (size_t)L, (size_t)t.local_rank, &off, &len);
    char *shard = (char *)recvbuf + off * es;

    /* 1. my shard of my node's sum (one rank a node: my input is that) */
    ck_step(comm, 0, "reduce-scatter in the node");
    if (L > 1) rc = ck_reduce_scatter(v->node, h->rs, inplace ? CK_IN_PLACE : sendbuf, inplace ? recvbuf : shard,
                                      count, dt, op);
    else if (!inplace) rc = ck_copy(comm, recvbuf, sendbuf, count * es);
    if (rc) return part_failed(comm, h, "the reduce-scatter in the node", v->node, rc);

    /* 2. the shard summed over the nodes, by the ranks that hold it */
    ck_step(comm, 1, "all-reduce across nodes");
    if (N > 1 && len && (rc = ck_allreduce(v->cross, h->ar, CK_IN_PLACE, shard, len, dt, op)))
        return part_failed(comm, h, "the all-reduce across nodes", v->cross, rc);

    /* 3. every shard to every rank of the node */
    ck_step(comm, 2, "all-gather in the node");
    if (L > 1 && (rc = ck_allgather(v->node, h->ag, CK_IN_PLACE, recvbuf, count, dt)))
        return part_failed(comm, h, "the all-gather in the node", v->node, rc);
    return CK_SUCCESS;
}

/* Bytes (msgs: messages) rank r sends: each part's own count, on its group. */
static uint64_t hier_count(const hier *h, int msgs, int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    if (count == 0 || p == 1) return 0;
    ck_topo t;
    ck_topo_of_size(p, r, &t);
#define PART_COUNT(a, q, rk, n) ((msgs ? (a)->msgs_sent : (a)->bytes_sent)((q), (rk), (n), es, cfg))
    if (!t.per_node) return PART_COUNT(h->ar, p, r, count);
    const int L = t.per_node, N = t.nodes;
    size_t off, len;
    ck_block(count, (size_t)L, (size_t)t.local_rank, &off, &len);
    uint64_t sum = 0;
    if (L > 1) sum += PART_COUNT(h->rs, L, t.local_rank, count) + PART_COUNT(h->ag, L, t.local_rank, count);
    if (N > 1 && len) sum += PART_COUNT(h->ar, N, t.cross_rank, len);
#undef PART_COUNT
    return sum;
}

static double cost_on(const hier *h, const ck_cost_params *intra, const ck_cost_params *inter, int N, int L,
                      double n)
{
    double T = 0;
    if (L > 1) T += h->rs->cost(intra, L, n) + h->ag->cost(intra, L, n);
    if (N > 1) T += h->ar->cost(inter, N, n / L);
    return T;
}

static double hier_cost(const hier *h, const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    ck_topo t;
    ck_topo_of_size(p, 0, &t);
    return t.per_node ? cost_on(h, m, m, t.nodes, t.per_node, n) : h->ar->cost(m, p, n);
}

/* Where element e of rank f->rank's result comes from: its shard, the node
 * reduce-scatter that made it, the ranks that all-reduced it across nodes. */
static void hier_diagnose(const hier *h, const ck_fault *f, char *out, size_t cap)
{
    ck_topo t;
    ck_topo_of_size(f->p, f->rank, &t);
    if (!t.per_node) {
        snprintf(out, cap, "the nodes are uneven, so %s ran %s over all ranks", h->d.name, h->ar->name);
        return;
    }
    size_t off, len, s = 0;
    for (s = 0; s + 1 < (size_t)t.per_node; s++) {
        ck_block(f->count, (size_t)t.per_node, s, &off, &len);
        if (f->elem < off + len) break;
    }
    int n = snprintf(out, cap, "element %zu is in shard %zu of %d: local rank %zu of every node reduces it in the "
                     "node (%s reduce-scatter), those %d ranks all-reduce it across nodes (%s), and rank %d gets it "
                     "from its node's local rank %zu (%s all-gather)", f->elem, s, t.per_node, s, h->rs->name,
                     t.nodes, h->ar->name, f->rank, s, h->ag->name);
    if (f->missing < 0 || n < 0 || (size_t)n >= cap) return;
    ck_topo m;
    ck_topo_of_size(f->p, f->missing, &m);
    if (m.node != t.node)
        snprintf(out + n, cap - (size_t)n, "; rank %d is on node %d, not rank %d's node %d: its part should have "
                 "come in the all-reduce across nodes of shard %zu", f->missing, m.node, f->rank, t.node, s);
    else
        snprintf(out + n, cap - (size_t)n, "; rank %d is on rank %d's node %d: its input should have come in the "
                 "node's reduce-scatter of shard %zu", f->missing, f->rank, t.node, s);
}

/* ------------------------------------------------------------ the descriptors */

/* Slot 0 is plain `hier`; the others are filled by name on first use. A
 * descriptor's functions get no pointer to it, so each slot has its own. */
enum { NSLOTS = 24 };
static hier slots[NSLOTS];

#define HIER_SLOT(i)                                                                                        \
    static int run_##i(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)                 \
    { return hier_run(&slots[i], c, s, r, n, dt, op); }                                                     \
    static uint64_t bytes_##i(int p, int r, size_t n, size_t es, const ck_config *cfg)                      \
    { return hier_count(&slots[i], 0, p, r, n, es, cfg); }                                                  \
    static uint64_t msgs_##i(int p, int r, size_t n, size_t es, const ck_config *cfg)                       \
    { return hier_count(&slots[i], 1, p, r, n, es, cfg); }                                                  \
    static double cost_##i(const ck_cost_params *m, int p, double n) { return hier_cost(&slots[i], m, p, n); } \
    static void diag_##i(const ck_fault *f, char *o, size_t cap) { hier_diagnose(&slots[i], f, o, cap); }
HIER_SLOT(0) HIER_SLOT(1) HIER_SLOT(2) HIER_SLOT(3) HIER_SLOT(4) HIER_SLOT(5) HIER_SLOT(6) HIER_SLOT(7)
HIER_SLOT(8) HIER_SLOT(9) HIER_SLOT(10) HIER_SLOT(11) HIER_SLOT(12) HIER_SLOT(13) HIER_SLOT(14) HIER_SLOT(15)
HIER_SLOT(16) HIER_SLOT(17) HIER_SLOT(18) HIER_SLOT(19) HIER_SLOT(20) HIER_SLOT(21) HIER_SLOT(22) HIER_SLOT(23)
#undef HIER_SLOT

#define FNS(i) {run_##i, bytes_##i, msgs_##i, cost_##i, diag_##i}
static const struct fns {
    ck_allreduce_fn run;
    ck_count_fn bytes, msgs;
    ck_cost_fn cost;
    ck_diagnose_fn diagnose;
} fns[NSLOTS] = {FNS(0), FNS(1), FNS(2), FNS(3), FNS(4), FNS(5), FNS(6), FNS(7), FNS(8), FNS(9), FNS(10), FNS(11),
                 FNS(12), FNS(13), FNS(14), FNS(15), FNS(16), FNS(17), FNS(18), FNS(19), FNS(20), FNS(21), FNS(22),
                 FNS(23)};
#undef FNS

/* A part must run on host buffers and count what it sends: a reference
 * (MPI's own collective) moves its bytes where no counter sees them. */
static int usable(const ck_algo *a) { return a && (a->mem & CK_MEM_HOST) && a->bytes_sent && !(a->flags & CK_ALGO_REFERENCE); }

/* "RS[-AG].AR" into the parts; 0 when every part is a usable algorithm.
 * The first '.' ends the node's part (no built-in reduce-scatter or
 * all-gather has a '.' or '-' in its name); AR is the rest. */
static int parse_parts(const char *spec, hier *h)
{
    char buf[64], *dot, *dash;
    if (strlen(spec) >= sizeof buf) return -1;
    strcpy(buf, spec);
    if (!(dot = strchr(buf, '.'))) return -1;
    *dot = '\0';
    if ((dash = strchr(buf, '-'))) *dash = '\0';
    h->rs = ck_coll_algo_find(CK_COLL_REDUCE_SCATTER, buf);
    h->ag = ck_coll_algo_find(CK_COLL_ALLGATHER, dash ? dash + 1 : buf);
    h->ar = strncmp(dot + 1, "hier", 4) ? ck_coll_algo_find(CK_COLL_ALLREDUCE, dot + 1) : NULL;
    return usable(h->rs) && usable(h->ag) && usable(h->ar) ? 0 : -1;
}

static void fill(hier *h, int i, const char *name)
{
    snprintf(h->name, sizeof h->name, "%s", name);
    snprintf(h->summary, sizeof h->summary, "hierarchical: %s reduce-scatter + %s all-gather in each node, %s "
             "across nodes%s", h->rs->name, h->ag->name, h->ar->name,
             i == 0 ? " (hier.RS[-AG].AR picks the parts)" : "");
    snprintf(h->bytes_f, sizeof h->bytes_f, "intra: %s + %s of n on L; inter: %s of n/L on N", h->rs->bytes_formula,
             h->ag->bytes_formula, h->ar->bytes_formula);
    snprintf(h->cost_f, sizeof h->cost_f, "RS_L(n) + AG_L(n) on the node's link, AR_N(n/L) on the network: %s",
             h->ar->cost_formula ? h->ar->cost_formula : "-");
    const int costed = h->rs->cost && h->ag->cost && h->ar->cost, counted = h->rs->msgs_sent && h->ag->msgs_sent &&
                                                                           h->ar->msgs_sent;
    h->d = (ck_algo){.name = h->name, .summary = h->summary, .mem = CK_MEM_HOST, .bytes_formula = h->bytes_f,
                     .bytes_sent = fns[i].bytes, .msgs_sent = counted ? fns[i].msgs : NULL, .cost_formula = h->cost_f,
                     .cost = costed ? fns[i].cost : NULL, .diagnose = fns[i].diagnose, .run = fns[i].run,
                     .coll = CK_COLL_ALLREDUCE};
}

/* "hier.RS[-AG].AR" (the registry asks for names it does not hold): its
 * descriptor, made on first use; NULL for a composition that is not one. */
const ck_algo *ck_hier_compose(const char *name)
{
    for (int i = 1; i < NSLOTS; i++)
        if (slots[i].d.name && !strcmp(slots[i].name, name)) return &slots[i].d;
    hier h = {0};
    if (strncmp(name, "hier.", 5) || parse_parts(name + 5, &h)) return NULL;
    for (int i = 1; i < NSLOTS; i++)
        if (!slots[i].d.name) {
            slots[i] = h;
            fill(&slots[i], i, name);
            return &slots[i].d;
        }
    return NULL;   /* more compositions than slots in one process */
}

/* Plain `hier` (algos.def): ring inside the node and ring across nodes. Its
 * parts are looked up when the program starts. */
const ck_algo ck_algo_hier = {
    .name = "hier",
    .summary = "hierarchical: ring reduce-scatter + all-gather in each node, ring across nodes (hier.RS[-AG].AR picks "
               "the parts)",
    .mem = CK_MEM_HOST,
    .bytes_formula = "intra: 2(L-1)/L * n; inter: 2(N-1)/N * n/L (L ranks a node, N nodes)",
    .bytes_sent = bytes_0,
    .msgs_sent = msgs_0,
    .cost_formula = "2(L-1)α + 2(L-1)/L·nβ + (L-1)/L·nγ + 2(N-1)α + 2(N-1)/N·(n/L)β + (N-1)/N·(n/L)γ",
    .cost = cost_0,
    .diagnose = diag_0,
    .run = run_0,
};

__attribute__((constructor)) static void hier_defaults(void)
{
    parse_parts("ring.ring", &slots[0]);
    slots[0].d = ck_algo_hier;
}

int ck_hier_parts(const ck_algo *a, const ck_algo **rs, const ck_algo **ar, const ck_algo **ag)
{
    for (int i = 0; a && i < NSLOTS; i++)
        if (a == &slots[i].d || (i == 0 && a == &ck_algo_hier)) {
            *rs = slots[i].rs;
            *ar = slots[i].ar;
            *ag = slots[i].ag;
            return 0;
        }
    return -1;
}

double ck_hier_cost2(const ck_algo *a, const ck_cost_params *intra, const ck_cost_params *inter, int nodes,
                     int per_node, double n)
{
    for (int i = 0; a && i < NSLOTS; i++)
        if ((a == &slots[i].d || (i == 0 && a == &ck_algo_hier)) && a->cost)
            return cost_on(&slots[i], intra, inter, nodes, per_node, n);
    return NAN;
}
