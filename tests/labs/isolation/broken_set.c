/* Some of the checker's deliberately broken algorithms (tests/checker/
 * broken.c), registered as a student's file would register its own, for
 * isolation.sh: the checker's verdict on each must read the same whether
 * the algorithm runs in the checker's process or alone in its own
 * (COLLKIT_ISOLATE=1) — wrong results, a request left posted, a receive of
 * the wrong size, a write past the scratch space or the buffers, a bad
 * status. */
#include "../../checker/broken.c"

static const char *const picks[] = {
    "broken_ring_index", "broken_ring_skip", "broken_ring_leak", "broken_ring_recvsize", "broken_ring_stray",
    "broken_ring_scratch", "broken_ring_scratch_end", "broken_ring_status", "broken_ring_far",
    "broken_ring_sendover", "broken_ring_recvin", "broken_naive_overrun", "broken_ring_uninit", "broken_naive_inplace",
};

__attribute__((constructor)) static void register_picks(void)
{
    for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++)
        for (int i = 0; i < broken_algos_count; i++)
            if (!strcmp(broken_algos[i].name, picks[k])) ck_register_algo_or_exit(&broken_algos[i], "broken_set.c");
}
