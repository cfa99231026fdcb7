/*
 * my_1f1b.c — lab 08: the 1F1B pipeline schedule, as data.
 *
 * tagtrain --pp S cuts the model's layers into S stages, one per rank, and
 * each batch into M micro-batches. A schedule says, for every stage, the
 * order in which it runs the forwards (F k) and backwards (B k) of the M
 * micro-batches: you write that order, tagtrain checks it and runs it
 * (collkit_pp.h). Run it with
 *
 *   build/bin/ckrun -np 4 build/labs/08-modelpar/lab train --pp 4 --microbatches 8 --pp-schedule my_1f1b
 *
 * 1F1B (HANDOUT step 2): stage `stage` first runs S - stage - 1 forwards to
 * fill the pipe; then, until the forwards run out, one forward and one
 * backward; then the backwards left, in order. It holds at most S - stage
 * micro-batches' activations at once; GPipe (every F, then every B) holds M.
 */
#include "collkit_pp.h"

/* Stage `stage` of S: its 2M operations into ops, in order; returns how many. */
int my_1f1b(int S, int stage, int M, ck_pp_op *ops)
{
    (void)S;
    (void)stage;
    (void)M;
    (void)ops;
    int n = 0;
    /* TODO (step 2): the warm-up forwards, the steady state (one F, one B), the cool-down backwards.
     *   ops[n++] = (ck_pp_op){CK_PP_F, k};    the forward of micro-batch k
     *   ops[n++] = (ck_pp_op){CK_PP_B, k};    its backward */
    return n;
}

CK_REGISTER_SCHEDULE(my_1f1b)
