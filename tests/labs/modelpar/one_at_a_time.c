/*
 * one_at_a_time.c — lab 08: a schedule that is no cheat but no pipeline
 * either: each stage runs F k then B k, one micro-batch at a time. It
 * holds one micro-batch (less than 1F1B) and trains the same model, but
 * the stages take turns: the bubble is (S-1)/S of the step, not
 * (S-1)/(M+S-1). The schedule part gives half its points.
 */
#include "collkit_pp.h"

int my_1f1b(int S, int stage, int M, ck_pp_op *ops)
{
    (void)S;
    (void)stage;
    int n = 0;
    for (int k = 0; k < M; k++) {
        ops[n++] = (ck_pp_op){CK_PP_F, k};
        ops[n++] = (ck_pp_op){CK_PP_B, k};
    }
    return n;
}

CK_REGISTER_SCHEDULE(my_1f1b)
