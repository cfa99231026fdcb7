/*
 * collkit_pp.h — a pipeline schedule as data (tagtrain --pp S --pp-schedule NAME).
 *
 * A schedule is, for each stage, the order in which it runs its forwards
 * and backwards of the step's M micro-batches: a list of 2M operations,
 * F k (the forward of micro-batch k) and B k (its backward). A generator
 * writes stage `stage`'s list:
 *
 *   int my_1f1b(int S, int stage, int M, ck_pp_op *ops);   returns 2M
 *
 * and registers it by its name, which --pp-schedule then takes:
 *
 *   CK_REGISTER_SCHEDULE(my_1f1b)
 *
 * tagtrain's own are `gpipe` (every F, then every B) and `1f1b`. The trainer
 * runs any list as it is, after checking it on every rank (pp.c): each F k
 * and B k exactly once on each stage, B k after F k, and no wait that never
 * ends — it plays the whole pipeline's messages through first (an F k waits
 * for stage s-1's F k, a B k for stage s+1's B k) and refuses a list that
 * would hang, naming the stages and what each waits for. A stage keeps the
 * activations of every micro-batch between its F and its B: the most at
 * once is the stage's activation memory (GPipe: M; 1F1B: S - stage).
 */
#ifndef COLLKIT_PP_H
#define COLLKIT_PP_H

#ifdef __cplusplus
extern "C" {
#endif

enum { CK_PP_F = 'F', CK_PP_B = 'B' };

typedef struct ck_pp_op {
    int kind;   /* CK_PP_F or CK_PP_B */
    int mb;     /* the micro-batch, 0 .. M-1 */
} ck_pp_op;

/* Stage `stage` (0 .. S-1)'s operations, in order, into ops (room for 2M); returns how many. */
typedef int (*ck_pp_schedule_fn)(int S, int stage, int M, ck_pp_op *ops);

/* Adds a schedule under `name` (--pp-schedule NAME); a name taken, or too
 * many schedules, ends the program with the file's name. */
void ck_register_schedule_or_exit(const char *name, ck_pp_schedule_fn fn, const char *file);

#define CK_REGISTER_SCHEDULE(fn)                                                    \
    __attribute__((constructor)) static void ck_register_schedule_##fn(void)       \
    {                                                                               \
        ck_register_schedule_or_exit(#fn, &(fn), __FILE__);                         \
    }

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_PP_H */
