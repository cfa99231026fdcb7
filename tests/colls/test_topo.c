/*
 * test_topo — the node layout's arithmetic (collkit_group.h: ck_topo_fill,
 * ck_topo_of_size) and the hierarchical descriptor's counts on it, without
 * MPI: the layouts the emulation knob cannot make (ranks placed round-robin,
 * as `mpirun --map-by node` does; nodes of different sizes) included.
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_group.h"
#include "../check.h"

/* rank's place: node, local rank, local size, cross rank, per_node, nodes */
static void expect(const char *what, int p, const int *node_of, int rank, const int want[6])
{
    ck_topo t;
    ck_topo_fill(p, node_of, rank, &t);
    const int got[6] = {t.node, t.local_rank, t.local_size, t.cross_rank, t.per_node, t.nodes};
    CHECK(!memcmp(got, want, sizeof got), "%s rank %d: node %d local %d/%d cross %d per_node %d nodes %d", what, rank,
          got[0], got[1], got[2], got[3], got[4], got[5]);
}

int main(void)
{
    /* 2 x 2 consecutive: node groups {0,1} {2,3}, cross groups {0,2} {1,3} */
    const int blocks[4] = {0, 0, 1, 1};
    expect("blocks", 4, blocks, 0, (const int[6]){0, 0, 2, 0, 2, 2});
    expect("blocks", 4, blocks, 1, (const int[6]){0, 1, 2, 0, 2, 2});
    expect("blocks", 4, blocks, 3, (const int[6]){1, 1, 2, 1, 2, 2});
    /* round-robin (--map-by node): node groups {0,2} {1,3}, cross groups {0,1} {2,3} */
    const int rr[4] = {0, 1, 0, 1};
    expect("round-robin", 4, rr, 1, (const int[6]){1, 0, 2, 1, 2, 2});
    expect("round-robin", 4, rr, 2, (const int[6]){0, 1, 2, 0, 2, 2});
    /* uneven: 3 + 1, no ranks-a-node */
    const int uneven[4] = {0, 0, 0, 1};
    expect("uneven", 4, uneven, 3, (const int[6]){1, 0, 1, 1, 0, 2});
    expect("uneven", 4, uneven, 2, (const int[6]){0, 2, 3, 0, 0, 2});

    /* Without a communicator: the knob's layout where it divides p, else one node. */
    ck_topo t;
    setenv("COLLKIT_RANKS_PER_NODE", "3", 1);
    ck_topo_of_size(6, 4, &t);
    CHECK(t.nodes == 2 && t.per_node == 3 && t.node == 1 && t.local_rank == 1 && t.cross_rank == 1 && t.emulated == 0,
          "knob 3, p 6, rank 4: nodes %d per_node %d node %d local %d cross %d", t.nodes, t.per_node, t.node,
          t.local_rank, t.cross_rank);
    ck_topo_of_size(4, 1, &t);
    CHECK(t.nodes == 1 && t.per_node == 4, "knob 3, p 4: one node, got %d nodes", t.nodes);

    /* hier's traffic at 2 x 3, ring parts: 2(L-1)/L·n inside + 2(N-1)/N·n/L across, n = 6000 B */
    const ck_algo *h = ck_algo_find("hier"), *ring = ck_algo_find("ring");
    const ck_config cfg = {.chunk_bytes = 1 << 18};
    CHECK(h && h->bytes_sent(6, 4, 750, 8, &cfg) == 2 * 2 * 6000 / 3 + 2 * 1 * 6000 / 2 / 3,
          "hier at 2 x 3 sends %llu B", h ? (unsigned long long)h->bytes_sent(6, 4, 750, 8, &cfg) : 0ull);
    /* ... the flat ring's total, in fewer messages */
    CHECK(h && h->bytes_sent(6, 4, 750, 8, &cfg) == ring->bytes_sent(6, 4, 750, 8, &cfg), "hier's bytes != ring's");
    CHECK(h && h->msgs_sent(6, 4, 750, 8, &cfg) < ring->msgs_sent(6, 4, 750, 8, &cfg), "hier sends more messages");
    /* the names: compositions found, others not */
    CHECK(ck_algo_find("hier.ring.rd") && ck_algo_find("hier.halving-rd.rabenseifner"), "a composition not found");
    CHECK(!ck_algo_find("hier.ring.mpi") && !ck_algo_find("hier.ring.oneshot") && !ck_algo_find("hier.ring.hier") &&
          !ck_algo_find("hier.nosuch.ring") && !ck_algo_find("hier.ring") && !ck_algo_find("hier.ring.nosuch"),
          "a name that is no composition was taken");
    const ck_algo *rs, *ar, *ag, *c = ck_algo_find("hier.halving-rd.rabenseifner");
    CHECK(c && !ck_hier_parts(c, &rs, &ar, &ag) && !strcmp(rs->name, "halving") && !strcmp(ag->name, "rd") &&
          !strcmp(ar->name, "rabenseifner"), "the parts of hier.halving-rd.rabenseifner");
    /* two links: a network 10x slower costs hier its share only */
    const ck_cost_params fast = {2e-6, 0.1e-9, 0.05e-9, 1 << 18}, slow = {20e-6, 1e-9, 0.05e-9, 1 << 18};
    const double two = ck_hier_cost2(h, &fast, &slow, 2, 3, 6e6), one = ck_hier_cost2(h, &fast, &fast, 2, 3, 6e6);
    CHECK(two > one && two < ring->cost(&slow, 6, 6e6), "hier on two links: %g s, one link %g s, flat ring on the "
          "slow link %g s", two, one, ring->cost(&slow, 6, 6e6));
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
