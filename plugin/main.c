/*
 * The program collkit-cc builds around a student's algorithm file: the three
 * tools in one binary, with the student's algorithm registered (by the
 * CK_REGISTER_ALGO line in their file) before any of them starts.
 *
 *   mpirun -np 4 ./my_ring check --algo my_ring      collcheck
 *   mpirun -np 4 ./my_ring bench --algo my_ring,ring collbench
 *   mpirun -np 2 ./my_ring train --algo my_ring      tagtrain
 *   ./my_ring draw --algo my_ring --np 4             colldraw (starts itself under ckrun)
 *   ./my_ring list                                   the registry, theirs included
 *   ./my_save save --dir DIR ...                     lab 06's crash harness (save.c)
 *
 * `save` needs no MPI: it is dispatched before anything starts MPI.
 */
#include <stdio.h>
#include <string.h>
#include "collcheck.h"
#include "collbench.h"
#include "colldraw.h"
#include "tagtrain.h"

int save_main(int argc, char **argv);   /* save.c */
void plugin_confine(void);              /* confine.c: the grader's confinement (COLLKIT_CONFINE) */
void plugin_isolate(int argc, char **argv);   /* isolate_host.c: the file in a process of its own (COLLKIT_ISOLATE) */

static int usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s check|bench|train|draw|save|list [ARGS]\n"
            "  check  collcheck with these algorithms registered (collcheck --help)\n"
            "  bench  collbench (collbench --help)\n"
            "  train  tagtrain (tagtrain --help)\n"
            "  draw   colldraw: one call drawn step by step (colldraw --help)\n"
            "  save   the crash harness of a saver file (save --help)\n"
            "  list   print the registries (all-reduce, reduce-scatter, all-gather)\n", prog);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage(argv[0]);
    /* Under the grader, the file's algorithms run in a process of their own:
     * the student's program hands over to the trusted one, which starts it. */
    plugin_isolate(argc, argv);
    /* Under the grader, confined before the student's code first runs. */
    ck_set_before_algorithms(plugin_confine);
    const char *tool = argv[1];
    argv[1] = argv[0];   /* the tool sees "PROG ARGS..." as its own command line */
    if (!strcmp(tool, "check")) return collcheck_main(argc - 1, argv + 1);
    if (!strcmp(tool, "bench")) return collbench_main(argc - 1, argv + 1);
    if (!strcmp(tool, "train")) return tagtrain_main(argc - 1, argv + 1);
    if (!strcmp(tool, "draw")) return colldraw_main(argc - 1, argv + 1, "draw");
    if (!strcmp(tool, "save")) return save_main(argc - 1, argv + 1);
    if (!strcmp(tool, "list")) {
        /* The three registries, the file's algorithms among the library's. */
        for (int c = 0; c < CK_NUM_COLLS; c++) {
            if (c) printf("\n%s:\n", ck_coll_name((ck_coll)c));
            ck_coll_algo_print_table((ck_coll)c, stdout);
        }
        return 0;
    }
    argv[1] = (char *)tool;
    fprintf(stderr, "%s: unknown tool '%s'\n", argv[0], tool);
    return usage(argv[0]);
}
