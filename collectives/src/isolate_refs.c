/*
 * isolate_refs.c — the reference program of an isolated run,
 * collkit-ref.algo: the library's host algorithms on the minimal runtime
 * (isolate_rt.c), so that a speed part times its reference through the same
 * channel as the student's file (plugin/isolate_host.c). Only algorithms
 * written against collkit_algo.h alone are here: not mpi (MPI's own), not
 * the single-copy ones (peers' memory).
 */
#include "collkit_algo.h"

extern const ck_algo ck_algo_naive, ck_algo_ring, ck_algo_ring_pipelined, ck_algo_tree, ck_algo_tree2, ck_algo_rd,
    ck_algo_rabenseifner, ck_rs_ring, ck_rs_halving, ck_rs_direct, ck_ag_ring, ck_ag_rd, ck_ag_direct;

__attribute__((constructor)) static void register_refs(void)
{
    const ck_algo *const refs[] = {&ck_algo_naive, &ck_algo_ring, &ck_algo_ring_pipelined, &ck_algo_tree,
                                   &ck_algo_tree2, &ck_algo_rd, &ck_algo_rabenseifner, &ck_rs_ring, &ck_rs_halving,
                                   &ck_rs_direct, &ck_ag_ring, &ck_ag_rd, &ck_ag_direct};
    for (unsigned i = 0; i < sizeof refs / sizeof refs[0]; i++) ck_register_algo_or_exit(refs[i], "collkit");
}
