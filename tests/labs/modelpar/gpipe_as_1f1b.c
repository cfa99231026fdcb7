/*
 * gpipe_as_1f1b.c — lab 08's cheat: asked for 1F1B, it hands in GPipe
 * (every forward, then every backward) under the name my_1f1b. The model it
 * trains is the same (the equivalence part passes) and so is the bubble;
 * what gives it away is the memory: stage 0 holds all M micro-batches'
 * activations, not S. The schedule part scores nothing.
 */
#include "collkit_pp.h"

int my_1f1b(int S, int stage, int M, ck_pp_op *ops)
{
    (void)S;
    (void)stage;
    for (int i = 0; i < 2 * M; i++) ops[i] = i < M ? (ck_pp_op){CK_PP_F, i} : (ck_pp_op){CK_PP_B, 2 * M - 1 - i};
    return 2 * M;
}

CK_REGISTER_SCHEDULE(my_1f1b)
