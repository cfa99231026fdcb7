/*
 * cuda_imports.c — what the CUDA plug-in takes from the program. No file of
 * the library refers to this table (so naming every function in it makes no
 * circle of calls, README.md): the linker is told to keep it in every
 * program that links libcollkit (--undefined=ck_cuda_plugin_imports, an
 * interface link option of collkit, collectives/CMakeLists.txt).
 */
#include "internal.h"
#include "protocol.h"
#include "collkit_util.h"

#ifdef COLLKIT_HAVE_CUDA
/* The library functions the CUDA plug-in (cuda_loader.c) calls. A program
 * links only the members of libcollkit.a it references itself, so a program
 * that never named, say, ck_dtype_is_float would not have it for the plug-in
 * to bind to: this table references every one. A library function the
 * plug-in starts calling goes here too: until it does, dlopen (RTLD_NOW)
 * refuses the plug-in and names the function ("undefined symbol: ...",
 * which gpu.plugin reports). */
typedef void (*ck_any_fn)(void);
__attribute__((used)) const ck_any_fn ck_cuda_plugin_imports[] = {
    (ck_any_fn)ck_algo_state,   (ck_any_fn)ck_algo_state_set, (ck_any_fn)ck_comm_config,
    (ck_any_fn)ck_comm_errmsg,  (ck_any_fn)ck_comm_mpi,       (ck_any_fn)ck_comm_rank,
    (ck_any_fn)ck_comm_size,    (ck_any_fn)ck_comm_mem,       (ck_any_fn)ck_count_traffic,
    (ck_any_fn)ck_dtype_is_float, (ck_any_fn)ck_dtype_name,   (ck_any_fn)ck_dtype_size,
    (ck_any_fn)ck_fail,         (ck_any_fn)ck_now,            (ck_any_fn)ck_sync,
    (ck_any_fn)ck_poll_bounded, (ck_any_fn)ck_is_print_rank,
    (ck_any_fn)ck_proto_init,   (ck_any_fn)ck_proto_fini,     (ck_any_fn)ck_proto_post,
    (ck_any_fn)ck_proto_test,   (ck_any_fn)ck_proto_cancel,   (ck_any_fn)ck_proto_progress,
    (ck_any_fn)ck_proto_pending, (ck_any_fn)ck_proto_fail,    (ck_any_fn)ck_proto_break,
    (ck_any_fn)ck_proto_dead,
};
#endif
