/*
 * collcheck.c — the checker's driver: runs a matrix of all-reduce cases
 * (count x dtype x op x in-place x alignment; matrix.c) through ck_allreduce
 * for each selected algorithm (options.c) and checks every case (case.c:
 * result, guards, traffic, messages).
 *
 * Hangs: the communicator's watchdog turns a hang inside an algorithm into
 * CK_ERR_TIMEOUT with "rank R waited for rank Q at step S"; the checker's own
 * agreement among ranks is polled with a deadline too, so the run ends within
 * a bound whatever the algorithm does.
 *
 * Rank 0 prints one line per case and the closing line "N passed, M failed";
 * the exit code is 0 only when nothing failed (2 for bad arguments, or for
 * options that leave no case to run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check_cli.h"
#include "collkit_util.h"

/* ------------------------------------------------------------ agreement */

/* Poll a nonblocking collective until done or the deadline (limit <= 0: none).
 * The checker never blocks in an MPI collective: a rank that is gone or stuck
 * must not hang the others. */
static int wait_bounded(MPI_Request *rq, double limit)
{
    double t0 = ck_now();
    struct timespec nap = {0, 200000};
    for (unsigned long spin = 0;; spin++) {
        int done = 0;
        if (MPI_Test(rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
        if (done) return 0;
        if (limit > 0 && ck_now() - t0 > limit) return 1;
        if (spin > 1000) nanosleep(&nap, NULL);
    }
}

static void case_label(char *out, size_t cap, const cc_case *c, const ck_algo *a, int width)
{
    snprintf(out, cap, "%-*s n=%-8zu %-4s %-4s %-12s%s", width, a->name, c->count, ck_dtype_name(c->dt),
             ck_op_name(c->op), c->inplace ? "in-place" : "out-of-place", c->misaligned ? " misaligned" : "");
}

static void finish_abort(int rank, int passed, int failed, const char *why)
{
    if (rank == 0) {
        printf("collcheck: %s\n", why);
        printf("%d passed, %d failed\n", passed, failed);
        fflush(stdout);
        fflush(stderr);
        struct timespec t = {0, 300000000};   /* let the launcher forward the output */
        nanosleep(&t, NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The other ranks give rank 0 time to print, then end themselves. */
    struct timespec t = {3, 0};
    nanosleep(&t, NULL);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int setup_comm(ck_comm **comm, const cc_options *o)
{
    int rc = ck_comm_create(MPI_COMM_WORLD, o->mem, comm);
    if (rc) return rc;
    ck_config *cfg = ck_comm_config(*comm);
    cfg->timeout_s = o->timeout;
    if (o->chunk) cfg->chunk_bytes = o->chunk;
    cfg->validate = 1;
    return CK_SUCCESS;
}

int collcheck_main(int argc, char **argv)
{
    cc_options o;
    /* Parse before MPI_Init: --help and --algo list work without mpirun, and
     * bad arguments end every rank the same way without any communication. */
    int code = cc_parse_args(argc, argv, &o, !ck_is_print_rank());
    if (code >= 0) return code;

    int was_init = 0;
    MPI_Initialized(&was_init);
    if (!was_init) MPI_Init(&argc, &argv);
    /* Errors come back as codes (CK_ERR_TRANSPORT), e.g. a message longer than
     * the posted receive, instead of killing the job from inside MPI. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm ctl;
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl);

    ck_comm *comm = NULL;
    int rc = setup_comm(&comm, &o);
    if (rc) {
        if (rank == 0)
            fprintf(stderr, "collcheck: cannot create a communicator for %s buffers: %s\n",
                    o.mem == CK_MEM_CUDA ? "cuda" : "host", ck_strerror(rc));
        MPI_Comm_free(&ctl);
        if (!was_init) MPI_Finalize();
        return 2;
    }
    ck_config *cfg = ck_comm_config(comm);

    cc_case *cases = NULL;
    int ncases = cc_build_matrix(&o, p, &cases);
    if (ncases <= 0) {
        /* "0 passed, 0 failed" would read as success: say what left nothing
         * (every rank built the same empty matrix, so all stop here alike). */
        if (rank == 0) {
            if (ncases < 0) fprintf(stderr, "collcheck: out of memory building the case list\n");
            else if (o.count_text)
                fprintf(stderr, "collcheck: no case to run: --count '%s' gives no count >= 0 at p = %d\n",
                        o.count_text, p);
            else fprintf(stderr, "collcheck: no case to run at p = %d with these options\n", p);
        }
        free(cases);
        ck_comm_destroy(comm);
        MPI_Comm_free(&ctl);
        if (!was_init) MPI_Finalize();
        return 2;
    }
    int width = 6;
    for (int a = 0; a < o.nalgos; a++)
        if ((int)strlen(o.algos[a]->name) > width) width = (int)strlen(o.algos[a]->name);
    if (rank == 0) {
        printf("collcheck: %d rank%s, %s buffers (%s transport), %d cases per algorithm, "
               "timeout %g s, chunk %zu B\n", p, p == 1 ? "" : "s", o.mem == CK_MEM_CUDA ? "cuda" : "host",
               ck_comm_transport_name(comm), ncases, cfg->timeout_s, cfg->chunk_bytes);
        fflush(stdout);
    }

    /* The agreement deadline: longer than any single watchdog wait, so a rank
     * that timed out has time to arrive and say so. */
    const double limit = o.timeout > 0 ? 2 * o.timeout + 10 : 0;
    int passed = 0, failed = 0;
    cc_result *all = rank == 0 ? malloc((size_t)p * sizeof *all) : NULL;
    cc_result res;
    for (int a = 0; a < o.nalgos; a++) {
        const ck_algo *algo = o.algos[a];
        if (rank == 0 && (algo->flags & CK_ALGO_REFERENCE)) {
            printf("%-*s traffic: not counted (reference)\n", width, algo->name);
            fflush(stdout);
        }
        for (int k = 0; k < ncases; k++) {
            const cc_case *cs = &cases[k];
            char label[160];
            case_label(label, sizeof label, cs, algo, width);
            cc_run_case(comm, algo, cs, &res);

            int loc[2] = {res.fail, res.poisoned}, glob[2] = {0, 0};
            MPI_Request rq;
            int w = MPI_Iallreduce(loc, glob, 2, MPI_INT, MPI_MAX, ctl, &rq) == MPI_SUCCESS ? wait_bounded(&rq, limit) : -1;
            if (w == 0 && glob[0]) {
                if (MPI_Igather(&res, (int)sizeof res, MPI_BYTE, all, (int)sizeof res, MPI_BYTE, 0, ctl, &rq) != MPI_SUCCESS)
                    w = -1;
                else
                    w = wait_bounded(&rq, limit);
            }
            if (w != 0) {
                char why[512];
                snprintf(why, sizeof why, "rank %d gave up after %.0f s waiting for the other ranks to finish "
                         "'%s' (a rank is stuck where no watchdog reaches)", rank, limit, label);
                if (rank != 0) fprintf(stderr, "collcheck: %s\n", why);
                else printf("%s  FAIL  %s\n", label, res.fail ? res.msg : "(no result from the other ranks)");
                finish_abort(rank, passed, failed + 1, why);
            }
            if (!glob[0]) {
                passed++;
                if (rank == 0) { printf("%s  PASS\n", label); fflush(stdout); }
                continue;
            }
            failed++;
            if (rank == 0) {
                /* The first failing rank speaks; a rank whose watchdog fired
                 * goes first, since its message names the stuck step. */
                int who = -1, nf = 0;
                for (int q = 0; q < p; q++)
                    if (all[q].fail) {
                        nf++;
                        if (who < 0 || (all[q].status == CK_ERR_TIMEOUT && all[who].status != CK_ERR_TIMEOUT)) who = q;
                    }
                printf("%s  FAIL  %s", label, who >= 0 ? all[who].msg : "?");
                if (nf > 1) {
                    printf(" [failed on %d of %d ranks:", nf, p);
                    for (int q = 0; q < p; q++)
                        if (all[q].fail) printf(" %d", q);
                    printf("]");
                }
                printf("\n");
                if (o.verbose)
                    for (int q = 0; q < p; q++)
                        if (all[q].fail && q != who) printf("    %s\n", all[q].msg);
                fflush(stdout);
            }
            if (glob[1])
                finish_abort(rank, passed, failed,
                             "stopping: after a watchdog timeout or transport error messages may still be in "
                             "flight, so later cases could not be trusted");
            /* A failed algorithm may have left unmatched messages behind:
             * start the next case on a fresh communicator. */
            ck_comm_destroy(comm);
            if (setup_comm(&comm, &o)) finish_abort(rank, passed, failed, "cannot recreate the communicator");
            cfg = ck_comm_config(comm);
        }
    }
    if (rank == 0) {
        printf("%d passed, %d failed\n", passed, failed);
        fflush(stdout);
    }
    free(all);
    free(cases);
    ck_comm_destroy(comm);
    MPI_Comm_free(&ctl);
    if (!was_init) MPI_Finalize();
    return failed ? 1 : 0;
}
