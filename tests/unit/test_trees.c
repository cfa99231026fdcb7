/*
 * test_trees — the shared algorithm modules and the descriptors of tree,
 * tree2, rd and rabenseifner, without MPI:
 *   - every tree builder (heap, in-order, the double tree's second tree)
 *     gives a tree for every p from 1 to 1024: one root, where expected;
 *     parents and children agree; every rank reachable; the depth the cost
 *     formulas use; and in the double tree no rank is interior in both trees
 *     for p even, exactly one (rank p-1) for p odd;
 *   - the fold's virtual ranks round-trip;
 *   - each cost function equals its header's formula and worked table,
 *     evaluated by hand below;
 *   - bytes_sent / msgs_sent add up over all ranks to what the schedule
 *     moves (every tree edge carries n up and n down, ...);
 *   - the diagnosis hooks name the right segment, tree, round and peer.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "collkit.h"
#include "trees.h"
#include "fold.h"
#include "check.h"

enum { PMAX = 1024 };

static int floor_log2(int p) { int d = 0; while (2 << d <= p) d++; return d; }
static int ceil_log2(int p) { int d = 0; while (1 << d < p) d++; return d; }

/* ------------------------------------------------------------ topologies */

/* One tree of p ranks: returns its depth, or -1 after reporting a failure. */
static int check_tree(ck_tree_kind kind, int p, int want_root, const char *name)
{
    static int queue[PMAX], level[PMAX];
    int roots = 0, bad = 0;
    for (int r = 0; r < p; r++) {
        const ck_tree n = ck_tree_build(kind, p, r);
        if (n.parent < 0) { roots++; bad |= r != want_root; }
        bad |= n.parent >= p || n.parent == r;
        bad |= n.child[1] >= 0 && n.child[0] < 0;                /* child[0] fills first */
        bad |= n.child[0] >= 0 && n.child[0] == n.child[1];
        for (int c = 0; c < 2; c++) {
            const int k = n.child[c];
            if (k < 0) continue;
            bad |= k >= p || k == r || ck_tree_build(kind, p, k).parent != r;
        }
        if (n.parent >= 0) {
            const ck_tree up = ck_tree_build(kind, p, n.parent);
            bad |= up.child[0] != r && up.child[1] != r;
        }
    }
    CHECK(roots == 1 && !bad, "%s p=%d: %d roots (want 1, rank %d), parents and children %s", name, p, roots,
          want_root, bad ? "disagree" : "agree");
    if (roots != 1 || bad) return -1;
    /* Breadth-first from the root: everyone reached, once. */
    int head = 0, tail = 0, depth = 0;
    queue[tail++] = want_root;
    level[want_root] = 0;
    while (head < tail && tail <= p) {
        const int r = queue[head++];
        const ck_tree n = ck_tree_build(kind, p, r);
        depth = level[r] > depth ? level[r] : depth;
        for (int c = 0; c < 2 && tail < p; c++)
            if (n.child[c] >= 0) { level[n.child[c]] = level[r] + 1; queue[tail++] = n.child[c]; }
    }
    CHECK(tail == p, "%s p=%d: %d of %d ranks reachable from the root", name, p, tail, p);
    CHECK(ck_tree_level(kind, p, queue[tail - 1]) == level[queue[tail - 1]], "%s p=%d: ck_tree_level", name, p);
    return depth;
}

static void test_topologies(void)
{
    for (int p = 1; p <= PMAX; p++) {
        const int dh = check_tree(CK_TREE_HEAP, p, 0, "heap");
        const int d1 = check_tree(CK_TREE_INORDER, p, 0, "in-order");
        const int d2 = check_tree(CK_TREE_INORDER_FLIPPED, p, p - 1, "in-order flipped");
        /* The depths tree.c's and tree2.c's cost formulas use. */
        CHECK(dh == floor_log2(p), "heap p=%d: depth %d, want floor(log2 p) = %d", p, dh, floor_log2(p));
        CHECK(d1 == ceil_log2(p) && d2 == ceil_log2(p), "double tree p=%d: depths %d, %d, want ceil(log2 p) = %d",
              p, d1, d2, ceil_log2(p));

        int both = 0, who = -1, wheap = 0, wdouble = 0;
        for (int r = 0; r < p; r++) {
            const ck_tree a = ck_tree_double(p, r, 0), b = ck_tree_double(p, r, 1);
            const ck_tree fa = ck_tree_inorder(p, r), fb = ck_tree_build(CK_TREE_INORDER_FLIPPED, p, r);
            if (memcmp(&a, &fa, sizeof a) || memcmp(&b, &fb, sizeof b)) both = -PMAX;
            if (ck_tree_children(a) && ck_tree_children(b)) { both++; who = r; }
            const int h = ck_tree_children(ck_tree_heap(p, r)), w = ck_tree_children(a) + ck_tree_children(b);
            wheap = h > wheap ? h : wheap;
            wdouble = w > wdouble ? w : wdouble;
        }
        if (p % 2 == 0 || p == 1)
            CHECK(both == 0, "double tree p=%d: %d ranks interior in both trees, want none", p, both);
        else
            CHECK(both == 1 && who == p - 1, "double tree p=%d: %d ranks interior in both (last %d), want rank %d only",
                  p, both, who, p - 1);
        /* w in the cost formulas: the most children (over both trees) on one rank. */
        const int w = p < 3 ? p - 1 : 2;
        CHECK(wheap == w && wdouble == w, "p=%d: at most %d / %d children on a rank, want w = %d", p, wheap, wdouble, w);
    }
}

static void test_segments(void)
{
    ck_config cfg = {.chunk_bytes = 4096};
    CHECK(ck_tree_segment(&cfg, 8) == 512 && ck_tree_segment(&cfg, 4) == 1024, "segment elements");
    cfg.chunk_bytes = 3;
    CHECK(ck_tree_segment(&cfg, 8) == 1, "a chunk below one element is one element");
    CHECK(ck_tree_segment(NULL, 4) == 65536, "NULL config: the 256 KiB default");
    const size_t lens[] = {1, 2, 7, 64, 1021, 300000}, segs[] = {1, 2, 3, 7, 512};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        for (size_t j = 0; j < sizeof segs / sizeof *segs; j++) {
            const size_t len = lens[i], S = ck_num_chunks(len, segs[j]);
            int bad = 0;
            for (size_t k = 0; k < S; k++) {
                size_t off, n;
                ck_block(len, S, k, &off, &n);
                bad |= n == 0 || n > segs[j];
                for (size_t e = off; e < off + n; e += n > 2 ? n / 2 : 1)
                    bad |= ck_tree_segment_of(len, S, e) != k;
                bad |= ck_tree_segment_of(len, S, off + n - 1) != k;
            }
            CHECK(!bad, "segments of %zu elements by %zu: non-empty, <= seg, segment_of inverts ck_block", len, segs[j]);
        }
}

/* ------------------------------------------------------------ the fold */

static void test_fold(void)
{
    for (int p = 1; p <= PMAX; p++) {
        const ck_fold f = ck_fold_make(p);
        int bad = f.pp != 1 << f.rounds || f.pp > p || 2 * f.pp <= p || f.rem != p - f.pp;
        int seen[PMAX] = {0};
        for (int r = 0; r < p; r++) {
            const int v = ck_fold_to_virtual(&f, r), partner = ck_fold_partner(&f, r);
            const int even_folded = r < 2 * f.rem && r % 2 == 0;
            bad |= (v < 0) != even_folded;
            bad |= v >= f.pp || (v >= 0 && ck_fold_to_real(&f, v) != r);
            if (v >= 0) seen[v]++;
            bad |= (partner >= 0) != (r < 2 * f.rem) || (partner >= 0 && ck_fold_partner(&f, partner) != r);
            bad |= ck_fold_player(&f, r) != (even_folded ? r + 1 : r);
            bad |= ck_fold_msgs(&f, r) != (partner >= 0) || ck_fold_bytes(&f, r, 10) != (partner >= 0 ? 10u : 0u);
        }
        for (int v = 0; v < f.pp; v++) bad |= seen[v] != 1 || ck_fold_to_virtual(&f, ck_fold_to_real(&f, v)) != v;
        CHECK(!bad, "fold p=%d: p' = %d, rem = %d, virtual ranks 0..p'-1 once each, round trip", p, f.pp, f.rem);
    }
}

/* ------------------------------------------------------------ cost formulas */

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)); }

static void cost_is(const char *algo, int p, double n, const ck_cost_params *m, double want, const char *how)
{
    const ck_algo *a = ck_algo_find(algo);
    const double got = a && a->cost ? a->cost(m, p, n) : NAN;
    CHECK(near(got, want), "%s cost at p=%d, n=%.0f: %.9g, want %.9g (%s)", algo, p, n, got, want, how);
}

/* Every value below is the header's formula worked by hand with α = 1,
 * β = 1e-3, γ = 1e-4, c = 1000 bytes; the α-only rows (β = γ = 0) count the
 * slots of the header's worked table. */
static void test_costs(void)
{
    const ck_cost_params m = {1, 1e-3, 1e-4, 1000}, a = {1, 0, 0, 1000};
    for (int i = 0; i < 4; i++) {
        const char *algo = (const char *[]){"tree", "tree2", "rd", "rabenseifner"}[i];
        const ck_algo *d = ck_algo_find(algo);
        CHECK(d && d->cost && d->cost_formula && d->msgs_sent && d->diagnose, "%s: descriptor filled", algo);
        cost_is(algo, 1, 1e6, &m, 0, "p = 1 costs nothing");
    }
    /* tree: (d+S-1)(2α + 2w·sβ + w·sγ), d = floor(log2 p), S = ceil(n/c), s = n/S, w = min(2,p-1) */
    cost_is("tree", 4, 2000, &a, 6, "table: p = 4, S = 2: slots 0..5");
    cost_is("tree", 4, 2000, &m, 18.6, "d=2 S=2 s=1000: 3(2 + 4 + 0.2)");
    cost_is("tree", 5, 2500, &m, 22, "d=2 S=3 s=2500/3: 4(2 + 10/3 + 1/6)");
    cost_is("tree", 2, 500, &m, 3.05, "d=1 S=1 w=1: 1(2 + 1 + 0.05)");
    cost_is("tree", 7, 1000, &m, 12.4, "d=2 S=1 (n = c): 2(2 + 4 + 0.2)");
    cost_is("tree", 1024, 1e6, &m, 6255.8, "d=10 S=1000 s=1000: 1009(2 + 4 + 0.2)");
    /* tree2: the same on n/2 bytes, d = ceil(log2 p), S = ceil(n/2c) */
    cost_is("tree2", 4, 2000, &a, 4, "table: p = 4, S = 1: slots 0..3");
    cost_is("tree2", 4, 2000, &m, 12.4, "d=2 S=1 s=1000: 2(2 + 4 + 0.2)");
    cost_is("tree2", 6, 5000, &m, 27.5, "d=3 S=3 s=2500/3: 5(2 + 10/3 + 1/6)");
    cost_is("tree2", 3, 1000, &m, 8.2, "d=2 S=1 s=500: 2(2 + 2 + 0.1)");
    cost_is("tree2", 2, 1000, &m, 3.05, "d=1 S=1 s=500 w=1: 1(2 + 1 + 0.05)");
    /* rd: log2(p')(α + nβ + nγ) [+ 2(α + nβ) + nγ] */
    cost_is("rd", 4, 1000, &a, 2, "table: p = 4: 2 rounds");
    cost_is("rd", 3, 1000, &a, 3, "p = 3: fold, 1 round, unfold");
    cost_is("rd", 4, 1000, &m, 4.2, "2(1 + 1 + 0.1)");
    cost_is("rd", 3, 1000, &m, 6.2, "1(2.1) + 2(1 + 1) + 0.1");
    cost_is("rd", 6, 1000, &m, 8.3, "2(2.1) + 4.1");
    cost_is("rd", 2, 1000, &m, 2.1, "1 round");
    /* rabenseifner: 2log2(p')α + 2(p'-1)/p'·nβ + (p'-1)/p'·nγ [+ fold] */
    cost_is("rabenseifner", 4, 1000, &a, 4, "table: p = 4: 4 rounds");
    cost_is("rabenseifner", 4, 1000, &m, 5.575, "4 + 1.5 + 0.075");
    cost_is("rabenseifner", 6, 1000, &m, 9.675, "5.575 + 4.1");
    cost_is("rabenseifner", 8, 800, &m, 7.47, "6 + 1.4 + 0.07");
    cost_is("rabenseifner", 5, 800, &m, 4 + 1.2 + 0.06 + 2 * (1 + 0.8) + 0.08, "p' = 4 + fold");
}

/* ------------------------------------------------------------ traffic sums */

static void test_traffic_sums(void)
{
    ck_config cfg = {.chunk_bytes = 4096};
    const ck_algo *tree = ck_algo_find("tree"), *tree2 = ck_algo_find("tree2");
    const ck_algo *rd = ck_algo_find("rd"), *rab = ck_algo_find("rabenseifner");
    if (!tree || !tree2 || !rd || !rab) { CHECK(0, "algorithms registered"); return; }
    const size_t es = 4;
    for (int p = 1; p <= 70; p++) {
        const size_t counts[] = {1, (size_t)p - 1, (size_t)p + 1, 1021, 300000};
        const ck_fold f = ck_fold_make(p);
        for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
            const size_t n = counts[i];
            const uint64_t nb = (uint64_t)n * es, seg = ck_tree_segment(&cfg, es);
            size_t o, h0, h1;
            ck_block(n, 2, 0, &o, &h0);
            ck_block(n, 2, 1, &o, &h1);
            uint64_t sb[4] = {0}, sm[4] = {0}, maxb[4] = {0}, zero = 0;
            for (int r = 0; r < p; r++) {
                const ck_algo *al[4] = {tree, tree2, rd, rab};
                for (int a = 0; a < 4; a++) {
                    const uint64_t b = al[a]->bytes_sent(p, r, n, es, &cfg);
                    sb[a] += b;
                    sm[a] += al[a]->msgs_sent(p, r, n, es, &cfg);
                    maxb[a] = b > maxb[a] ? b : maxb[a];
                    zero += al[a]->bytes_sent(p, r, 0, es, &cfg) + al[a]->msgs_sent(p, r, 0, es, &cfg);
                }
            }
            const uint64_t P = (uint64_t)p, edges = 2 * (P - 1), pp = (uint64_t)f.pp;
            /* Trees: every edge carries each segment once up and once down. */
            CHECK(sb[0] == edges * nb && sm[0] == edges * ck_num_chunks(n, seg) && maxb[0] <= 3 * nb,
                  "tree p=%d n=%zu: sum %llu B / %llu msgs, max %llu B", p, n, (unsigned long long)sb[0],
                  (unsigned long long)sm[0], (unsigned long long)maxb[0]);
            CHECK(sb[1] == edges * nb && sm[1] == edges * (ck_num_chunks(h0, seg) + ck_num_chunks(h1, seg)) &&
                  maxb[1] <= 2 * nb + es,
                  "tree2 p=%d n=%zu: sum %llu B / %llu msgs, max %llu B (<= 2n + one element)", p, n,
                  (unsigned long long)sb[1], (unsigned long long)sm[1], (unsigned long long)maxb[1]);
            /* rd: p' ranks send n per round; each folded pair sends n twice. */
            CHECK(sb[2] == (pp * (uint64_t)f.rounds + 2 * (uint64_t)f.rem) * nb &&
                  sm[2] == pp * (uint64_t)f.rounds + 2 * (uint64_t)f.rem,
                  "rd p=%d n=%zu: sum %llu B / %llu msgs", p, n, (unsigned long long)sb[2], (unsigned long long)sm[2]);
            /* rabenseifner: in the round of mask m the runs of 2m blocks are
             * each split by m pairs, so m·n moves; masks sum to p'-1 per phase. */
            CHECK(sb[3] == (2 * (pp - 1) + 2 * (uint64_t)f.rem) * nb &&
                  sm[3] == 2 * pp * (uint64_t)f.rounds + 2 * (uint64_t)f.rem,
                  "rabenseifner p=%d n=%zu: sum %llu B / %llu msgs", p, n, (unsigned long long)sb[3],
                  (unsigned long long)sm[3]);
            CHECK(zero == 0, "p=%d: count 0 sends nothing", p);
        }
    }
}

/* ------------------------------------------------------------ diagnosis */

static int says(const char *algo, const ck_fault *f, const char *want)
{
    char msg[512] = "";
    ck_algo_find(algo)->diagnose(f, msg, sizeof msg);
    if (want[0] ? strstr(msg, want) != NULL : msg[0] == '\0') return 1;
    printf("  %s said: '%s', want '%s'\n", algo, msg, want);
    return 0;
}

static void test_diagnose(void)
{
    ck_config cfg = {.chunk_bytes = 256 * 1024};
    ck_fault f = {.p = 4, .rank = 0, .count = 64, .elem = 17, .esize = 8, .missing = 3, .doubled = -1, .cfg = &cfg};
    CHECK(says("tree", &f, "element 17 is in segment 0 of 1") &&
          says("tree", &f, "rank 3's input should go up 3 -> 1 -> 0; its parent, rank 1 (level 1), adds it"),
          "tree: the missing rank's path up");
    cfg.chunk_bytes = 16;   /* 2 f64 per segment: element 17 is in segment 8 of 32 */
    CHECK(says("tree", &f, "segment 8 of 32"), "tree: the segment");
    f.missing = -1;
    f.rank = 3;
    CHECK(says("tree", &f, "rank 3 gets the result from its parent, rank 1, on the way down 0 -> 1 -> 3"),
          "tree: the way down");
    f.missing = 0;
    CHECK(says("tree", &f, "rank 0 is the root"), "tree: the root's own input");

    cfg.chunk_bytes = 256 * 1024;
    f = (ck_fault){.p = 4, .rank = 2, .count = 64, .elem = 40, .esize = 8, .missing = 0, .doubled = -1, .cfg = &cfg};
    CHECK(says("tree2", &f, "tree 2's half (elements 32..63, root rank 3)") &&
          says("tree2", &f, "rank 0's input should go up 0 -> 1 -> 3"), "tree2: the second tree");
    f.elem = 5;
    CHECK(says("tree2", &f, "tree 1's half (elements 0..31, root rank 0)") &&
          says("tree2", &f, "rank 0 is the root"), "tree2: the first tree");

    /* rd, p = 4: rank 2's data reaches rank 1 in round 1 (bit 1), from rank 3. */
    f = (ck_fault){.p = 4, .rank = 1, .count = 64, .elem = 9, .esize = 8, .missing = 2, .doubled = -1, .cfg = &cfg};
    CHECK(says("rd", &f, "rank 2's data should reach rank 1 in round 1") && says("rd", &f, "from rank 3"), "rd: round");
    /* rd, p = 3: rank 0 folds into rank 1 (virtual 0); rank 2 (virtual 1) gets it in round 0. */
    f.p = 3, f.rank = 2, f.missing = 0;
    CHECK(says("rd", &f, "rank 1's data should reach rank 2 in round 0") &&
          says("rd", &f, "rank 0 folds its input into rank 1 at the fold"), "rd: fold");
    f.rank = 0, f.missing = 2;
    CHECK(says("rd", &f, "rank 0 gets the result from rank 1 at the unfold"), "rd: unfold");

    /* rabenseifner, p = 4, element 17 in block B (16..31), finished by rank 1.
     * The header's table: rank 2 sends A2 B2 -> 0 at m = 2 (round 0); rank 3
     * gets A B from rank 1 at all-gather m = 2 (round 1). */
    f = (ck_fault){.p = 4, .rank = 3, .count = 64, .elem = 17, .esize = 8, .missing = 2, .doubled = -1, .cfg = &cfg};
    CHECK(says("rabenseifner", &f, "element 17 is in block 1 of 4 (elements 16..31), finished by rank 1") &&
          says("rabenseifner", &f, "rank 2 sends its share of it at reduce-scatter round 0 (mask 2) to rank 0") &&
          says("rabenseifner", &f, "rank 3 receives block 1 at all-gather round 1 from rank 1"),
          "rabenseifner: block, owner, rounds");

    /* Short buffers: truncated, terminated, never overrun. */
    const char *names[] = {"tree", "tree2", "rd", "rabenseifner"};
    for (int a = 0; a < 4; a++)
        for (size_t cap = 1; cap < 40; cap += 7) {
            char buf[64];
            memset(buf, 'x', sizeof buf);
            ck_fault g = {.p = 7, .rank = 2, .count = 100, .elem = 77, .esize = 4, .missing = 0, .doubled = -1, .cfg = &cfg};
            ck_algo_find(names[a])->diagnose(&g, buf, cap);
            CHECK(memchr(buf, '\0', cap) && buf[cap] == 'x', "%s: diagnosis fits in %zu bytes", names[a], cap);
        }

    f.p = 1;
    CHECK(says("tree", &f, "") && says("tree2", &f, "") && says("rd", &f, "") && says("rabenseifner", &f, ""),
          "p = 1: nothing to say");
}

int main(void)
{
    test_topologies();
    test_segments();
    test_fold();
    test_costs();
    test_traffic_sums();
    test_diagnose();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
