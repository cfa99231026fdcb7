/* args.h — tagtrain's command line: one table of options (ck_opt, in args.c)
 * drives the parsing, --help, and the comparison of a configuration with a
 * checkpoint's (the rows marked CK_OPT_MODEL: a resumed run keeps them, and
 * a save directory's checkpoints of another configuration are another run's). */
#ifndef COLLKIT_TRAINER_ARGS_H
#define COLLKIT_TRAINER_ARGS_H
#include <stdio.h>
#include "ckpt.h"

/* The table's rows, at most (args.c checks it). */
enum { TT_ARGS_MAX_ROWS = 64 };

typedef struct {
    train_config tc;
    const char *algo_name, *transport, *data, *holdout, *save_dir, *resume, *metrics, *log;
    const char *trace;               /* --trace FILE: the timeline of every step (trace.h) */
    const char *rs_algo, *ag_algo;   /* --zero: the two halves of the gradient all-reduce */
    const char *zero_arg;            /* --zero as given; zero is its stage */
    int zero;                        /* 0 replicated, 1 optimizer state sharded, 2 gradients too (zero.h) */
    int device;                      /* --device: 0 cpu, 1 cuda (devstep.h) */
    int tp;                          /* --tp: tensor-parallel width (1: none; tp.h) */
    const char *tp_algo;             /* --tp-algo: the all-reduce inside forward and backward */
    int pp, microbatches, pp_sched;  /* --pp stages, --microbatches, --pp-schedule (PP_GPIPE, PP_1F1B; pp.h) */
    double bucket_mb;
    int check_sync, threads, stop_after, inject_desync, no_save, quiet, sparse_grads, strict_data, breakdown;
    int overwrite;   /* --overwrite: an existing --log, --trace or --metrics file may be written over */
    int save_every;
    int set_epochs;  /* --epochs given explicitly (matters on --resume) */
    int default_save;   /* --save not given: the default folder, which holds the latest run */
    const char *given[TT_ARGS_MAX_ROWS];   /* per row of the table, the value given (the last one), or NULL */
} tt_options;

/* What tt_args_parse returns: CK_OPT_RUN (0), CK_OPT_HELP (1: print
 * tt_args_help, exit 0), CK_OPT_BAD (2: the reason in err, exit 2), or
 * TT_ARGS_LIST (--algo list: print the algorithms, exit 0). */
enum { TT_ARGS_LIST = 3 };
int tt_args_parse(int argc, char **argv, tt_options *o, char *err, size_t cap);
void tt_args_help(FILE *f);

/* The first option of the model's configuration (a CK_OPT_MODEL row) whose
 * field differs between o's configuration and `other`: only among the
 * options given when given_only. NULL when none does; else its name, and in
 * *value the value given (NULL when it was not given). */
const char *tt_args_model_differs(const tt_options *o, const train_config *other, int given_only,
                                  const char **value);

/* The memory a transport's buffers are in (ck_comm_create): shm maps the
 * ranks' buffers into each other. */
unsigned tt_transport_mem(const char *transport);

#endif
