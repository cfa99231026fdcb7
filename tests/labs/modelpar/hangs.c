/*
 * hangs.c — lab 08: schedules tagtrain refuses before they run.
 * HANGS_HOW=hang: each list is whole on its own, together they would hang:
 * stage 0 runs F k, B k one micro-batch at a time, the last stage its
 * forwards last first — stage 0's B 0 waits for stage 1's B 0, behind
 * stage 1's F M-1, which waits for stage 0's F M-1, behind its B 0.
 * HANGS_HOW=drop: the last stage leaves its last backward out.
 * tagtrain plays the messages through when it starts and ends with the reason.
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_pp.h"

int my_1f1b(int S, int stage, int M, ck_pp_op *ops)
{
    const char *how = getenv("HANGS_HOW");
    const int drop = how && !strcmp(how, "drop") && stage == S - 1;
    int n = 0;
    if (stage == 0) {
        for (int k = 0; k < M; k++) {
            ops[n++] = (ck_pp_op){CK_PP_F, k};
            ops[n++] = (ck_pp_op){CK_PP_B, k};
        }
        return n;
    }
    for (int k = M - 1; k >= 0; k--) ops[n++] = (ck_pp_op){CK_PP_F, k};
    for (int k = 0; k < M - drop; k++) ops[n++] = (ck_pp_op){CK_PP_B, k};
    return n;
}

CK_REGISTER_SCHEDULE(my_1f1b)
