/*
 * collbench — all-reduce benchmark for the collkit registry.
 *
 *   mpirun -np 4 collbench --algo all -b 8 -e 64M -f 4 -c 1        the table
 *   mpirun -np 2 collbench --pingpong --save-model params.txt        fit α, β; time γ
 *   collbench --extrapolate --model params.txt --csv extrap.csv      the model at 2..4096 ranks
 *   mpirun -np 3 collbench --algo NAME -b 4M -e 4M --trace t.json   a Perfetto trace
 *   collbench --gpus                                                 how many GPUs, or why none
 *
 * As a library (collbench_main), so a program that registers its own
 * algorithms first (a lab, a test) gets the whole benchmark for them.
 *
 * Exit status: 0 fine, 1 a run failed or a result was wrong, 2 bad
 * arguments, 3 the device asked for is not available (--device cuda on a
 * build without CUDA or a machine without a GPU).
 */
#include <stdio.h>
#include <string.h>
#include "collbench.h"
#include "collcheck.h"   /* cc_set_seed */
#include "collkit_util.h"

/* --gpus: scripts decide on it (scripts/bench.sh, scripts/gpu-check.sh):
 * the count on stdout, CUDA's reason on stderr, never swallowed. */
static int print_gpus(void)
{
    int n = 0;
    char why[320];
    int rc = ck_gpu_count(&n, why, sizeof why);
    if (rc == CK_SUCCESS) printf("%d\n", n);
    else fprintf(stderr, "collbench: %s\n", why);
    if (ck_stdout_done("collbench")) return 1;
    return rc == CK_SUCCESS ? 0 : rc == CK_ERR_UNSUPPORTED ? 3 : 1;
}

/* --model FILE: read before MPI starts. 0, or 2 after saying why not. */
static int load_model(const bm_opts *o, bm_params *file_model, bm_params **model)
{
    *model = NULL;
    if (!strcmp(o->model, "auto") || !strcmp(o->model, "none")) return 0;
    char err[256];
    if (bm_params_load(o->model, file_model, err, sizeof err)) {
        if (ck_is_print_rank()) fprintf(stderr, "collbench: error: --model: %s\n", err);
        return 2;
    }
    *model = file_model;
    return 0;
}

/* --extrapolate: the model alone, no MPI. */
static int extrapolate(const bm_opts *o, const bm_params *model)
{
    if (!model) {
        if (ck_is_print_rank())
            fprintf(stderr, "collbench: error: --extrapolate needs --model FILE "
                            "(write one with: mpirun -np 2 collbench --pingpong --save-model FILE)\n");
        return 2;
    }
    ck_before_algorithms();   /* the cost functions are the algorithms' own code */
    int rc = bm_run_extrapolate(o, model);
    return ck_stdout_done("collbench") && !rc ? 1 : rc;
}

/* After MPI_Init: the watchdog, the same command line on every rank, memory
 * for the largest size, the communicator. 0 with *comm, or the exit status
 * (MPI finalized). */
static int start(int argc, char **argv, const bm_opts *o, ck_comm **comm)
{
    /* Every wait bounded, a stopped rank named (ck_bounded_*, ck_watch_*). */
    if (ck_watch_init("collbench")) {
        MPI_Finalize();
        return 1;
    }
    ck_watch_phase("start-up");
    /* Ranks given other sizes, iteration counts or modes would exchange
     * messages that do not match: refused here, before any of them. */
    if (ck_same_command_line(MPI_COMM_WORLD, argc, argv, "collbench")) {
        ck_watch_finalize();
        return 2;
    }
    /* The largest size's buffers, before any is allocated: about 6 times -e
     * per rank (send and receive buffers, the check's expected result and
     * inputs, the algorithm's scratch space), 8 with --paired (each
     * algorithm its own buffers). */
    char what[96];
    const uint64_t per = o->mode == BM_MODE_PAIRED ? 8 : o->mode == BM_MODE_PINGPONG ? 4 : 6;
    snprintf(what, sizeof what, "-e %zu B", o->maxbytes);
    if (ck_memory_fits(MPI_COMM_WORLD, per * (uint64_t)o->maxbytes + (16u << 20), "collbench", what)) {
        ck_watch_finalize();
        return 2;
    }
    int rc = ck_comm_create(MPI_COMM_WORLD, o->mem, comm);
    if (rc) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            if (rc == CK_ERR_UNSUPPORTED)
                fprintf(stderr, "collbench: --device %s is not available here (collkit built without it, or no "
                                "device)\n", o->mem == CK_MEM_CUDA ? "cuda" : "host");
            else
                fprintf(stderr, "collbench: cannot create the communicator: %s\n", ck_strerror(rc));
        }
        ck_watch_finalize();
        return rc == CK_ERR_UNSUPPORTED ? 3 : 1;
    }
    ck_watch_phase(o->mode == BM_MODE_PINGPONG ? "ping-pong" : o->mode == BM_MODE_PAIRED ? "paired" : "sweep");
    bm_trace_set_capacity((size_t)o->trace_capacity);
    if (o->chunk) {
        ck_config cfg = *ck_comm_config(*comm);
        cfg.chunk_bytes = o->chunk;
        ck_comm_set_config(*comm, &cfg);
    }
    return 0;
}

/* The sweep, with the model given, or calibrated first (--model auto). */
static int sweep(ck_comm *comm, const bm_opts *o, bm_params *model)
{
    bm_params auto_model;
    int rc = 0;
    if (model) {
        model->chunk = (double)ck_comm_config(comm)->chunk_bytes;   /* the chunk the algorithms use now */
        if (bm_node_ranks(comm, &model->node_ranks)) return 2;        /* this run's nodes, not the file's */
    } else if (!strcmp(o->model, "auto") && ck_comm_size(comm) > 1) {
        /* A short ping-pong first (a pair inside a node, a pair across
         * nodes), so the model column describes this run's links. */
        rc = bm_calibrate(comm, o, 8, 4u << 20, 8, 20, 0, &auto_model);
        if (rc == 2) return 2;
        if (!rc) model = &auto_model;
        if (!rc && o->save_model && ck_comm_rank(comm) == 0 &&
            bm_params_save(o->save_model, model, "calibrated by collbench (auto)"))
            fprintf(stderr, "collbench: cannot write %s\n", o->save_model);
    }
    return bm_run_sweep(comm, o, model);
}

int collbench_main(int argc, char **argv)
{
    bm_opts o;
    int rc = bm_parse_args(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : 2;
    char why[1200];
    if (o.results && ck_is_print_rank() && ck_output_free(o.results, o.overwrite, why, sizeof why)) {
        fprintf(stderr, "collbench: error: --results %s\n", why);   /* rank 0 writes it: the others end with the job */
        return 2;
    }
    if (o.mode == BM_MODE_GPUS) return print_gpus();
    if (o.mode == BM_MODE_LIST) {
        if (ck_is_print_rank()) ck_coll_algo_print_table(o.coll, stdout);
        return ck_stdout_done("collbench") ? 1 : 0;
    }
    cc_set_seed(o.seed);   /* the checker's inputs of every check and paired call */
    bm_params file_model, *model;
    if ((rc = load_model(&o, &file_model, &model))) return rc;
    if (o.mode == BM_MODE_EXTRAPOLATE) return extrapolate(&o, model);

    MPI_Init(&argc, &argv);
    ck_comm *comm = NULL;
    if ((rc = start(argc, argv, &o, &comm))) return rc;
    if (o.mode == BM_MODE_PINGPONG) rc = bm_run_pingpong(comm, &o);
    else if (o.mode == BM_MODE_PAIRED) rc = bm_run_paired(comm, &o);
    else rc = sweep(comm, &o, model);
    ck_comm_destroy(comm);
    ck_watch_finalize();
    /* The table is the product: a full disk or a closed pipe is a failure. */
    return ck_stdout_done("collbench") && !rc ? 1 : rc;
}
