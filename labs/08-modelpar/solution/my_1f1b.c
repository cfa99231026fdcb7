/*
 * my_1f1b.c — lab 08: the 1F1B pipeline schedule, as data (reference
 * solution).
 *
 * Stage `stage` of S runs S - stage - 1 forwards to fill the pipe; then one
 * forward and one backward while forwards are left; then the backwards left.
 * At most S - stage micro-batches are between their F and their B.
 */
#include "collkit_pp.h"

int my_1f1b(int S, int stage, int M, ck_pp_op *ops)
{
    /* The warm-up: the forwards that reach the last stage before its first backward. */
    int warm = S - stage - 1;
    if (warm > M) warm = M;
    int n = 0, f = 0;
    while (f < warm) ops[n++] = (ck_pp_op){CK_PP_F, f++};
    /* Steady state, then the cool-down: every backward in order, a forward before each while any is left. */
    for (int b = 0; b < M; b++) {
        if (f < M) ops[n++] = (ck_pp_op){CK_PP_F, f++};
        ops[n++] = (ck_pp_op){CK_PP_B, b};
    }
    return n;
}

CK_REGISTER_SCHEDULE(my_1f1b)
