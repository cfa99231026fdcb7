/*
 * pp.h — pipeline parallelism (--pp S --microbatches M): the MLP's layers cut
 * into S stages of consecutive layers on S ranks, a batch cut into M
 * micro-batches that flow through them.
 *
 *   stage s holds layers [s n / S, (s+1) n / S) of the n = hidden + 1
 *   forward    receive a_l0 of micro-batch k from stage s-1, run the stage's
 *              layers, send a_l1 to stage s+1 (the last: the loss)
 *   backward   receive the gradient of a_l1 from stage s+1, back through the
 *              stage's layers (weight gradients SUMMED over the micro-batches),
 *              send the gradient of a_l0 to stage s-1
 *
 * The messages are the library's point-to-point calls (ck_isend, ck_irecv,
 * ck_wait: bounded, named by the watchdog) on the pipeline group's own
 * communicator; sends do not block, receives wait. A schedule is data
 * (collkit_pp.h): each stage's list of operations, F k and B k, made by a
 * generator and checked before it runs; pp_run walks the list. Two are
 * tagtrain's own (--pp-schedule; tagtrain's --schedule is the learning
 * rate's), a program's registered ones are taken by name the same way:
 *
 *   gpipe   all M forwards, then all M backwards (last first): every stage
 *           keeps the activations of all M micro-batches
 *   1f1b    S - s - 1 forwards to fill the pipe, then one forward, one
 *           backward, ..., then the backwards left (PipeDream-Flush): stage s
 *           keeps at most S - s micro-batches in flight, the same bubble
 *
 * A micro-batch takes a slot (its activations) at its F and gives it back
 * at its B; the stage has as many slots as its list ever holds at once.
 *
 * The bubble, the share of a step a stage waits for its neighbours, is
 * (S-1)/(M+S-1) in the model; tagtrain measures it (the time each stage
 * spends in its receives over the time of its steps) and prints both.
 */
#ifndef TRAINER_PP_H
#define TRAINER_PP_H

#include "collkit.h"
#include "collkit_algo.h"
#include "collkit_pp.h"
#include "model.h"
#include "trace.h"

enum { PP_GPIPE = 0, PP_1F1B = 1 };   /* the registry's first two; a program's own follow */

typedef struct pp_ctx {
    int      S, stage, M, sched;
    ck_comm *comm;            /* the pipeline group */
    ck_pp_op *ops;            /* the stage's 2M operations, checked (pp_schedule_check) */
    int      *slot_of;        /* micro-batch k's slot (the lowest free one at its F) */
    int      nslots;          /* micro-batches in flight at most: M (gpipe), S - stage (1f1b) */
    mlp     *slot;            /* each one's activations, the stage's parameters and gradients */
    ck_req  *fwd, *bwd;       /* each slot's last sends (a_l1 forward, the gradient of a_l0 backward) */
    int     *cnt, *off;       /* micro-batch k: cnt[k] rows from off[k] */
    double   wait_s, run_s;   /* seconds waiting in receives, and in pp_run, since opened */
    int      drop_last;       /* test hook TAGTRAIN_TEST_PP_DROP=1: the last micro-batch's rows left out */
    void   (*charge)(double flops);   /* a simulated run's modelled compute (sync.h, tt_sim_charge); NULL: none */
    tr_trace *trace;          /* --trace: each F and B recorded (cat "fwd"/"bwd", index k); NULL: off */
    int      runs;            /* pp_run calls so far: the trace's call number */
} pp_ctx;

/* --pp-schedule's parser (a ck_opt CK_OPT_CUSTOM): the registry's index of NAME into the int field. */
int  pp_schedule_parse(const char *value, void *field, char *err, size_t cap);
const char *pp_schedule_name(int sched);
/* Every stage's list of schedule `sched` for S stages and M micro-batches,
 * checked: 0, or -1 with the reason (the stage, the operation, what it
 * waits for) in err. ops, when not NULL, gets stage `stage`'s list (2M). */
int  pp_schedule_check(int sched, int S, int M, int stage, ck_pp_op *ops, char *err, size_t cap);

/* The stage's layers: [*l0, *l1) of n layers over S stages. */
void pp_stage_layers(int n, int S, int stage, int *l0, int *l1);
/* After base's gradient buffer is final (dp_init): the schedule, checked
 * (a bad one ends the job with the reason, on every rank alike), and the slots. 0 or -1. */
int  pp_open(pp_ctx *p, ck_comm *comm, int S, int stage, int M, int sched, const mlp *base);
void pp_close(pp_ctx *p);
/* One batch of this replica (b rows, labels) forward and backward through the
 * pipeline, the gradients summed into base's; the loss on the last stage
 * (0 elsewhere). A failed message ends the job, named. */
double pp_run(pp_ctx *p, const mlp *base, const csr_rows *x, const size_t *rows, const int *labels, int b,
              rng_t *drop);
/* The activation bytes the stage holds: its slots. */
size_t pp_act_bytes(const pp_ctx *p);

#endif
