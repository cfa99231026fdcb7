/*
 * extrapolate.c — "what this looks like on a cluster": the model of every
 * algorithm for p = 2, 4, ..., --pmax ranks (every p with --every-p) and
 * sizes 8 B .. 1 GB, and the sizes at which the fastest algorithm changes.
 * Pure arithmetic: it runs without mpirun, from a parameter file written by
 * --pingpong --save-model.
 *
 * The α, β, γ measured on this machine are kept fixed as p grows, as if the
 * cluster's links were as fast as this machine's shared memory: the shape of
 * the curves (which term dominates where) is the lesson, not the values.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "collbench.h"

int bm_run_extrapolate(const bm_opts *o, const bm_params *m)
{
    const ck_algo *algos[BM_MAX_ALGOS];
    int na = 0;
    /* A reference's model (a library's choice among the others) is not a strategy of its own. */
    for (int i = 0; i < o->nalgos; i++)
        if (o->algos[i]->cost && !(o->algos[i]->flags & CK_ALGO_REFERENCE)) algos[na++] = o->algos[i];
    if (!na) { fprintf(stderr, "collbench: --extrapolate: none of the chosen algorithms has a model\n"); return 2; }

    FILE *csv = NULL;
    if (o->csv && !(csv = bm_out_open(o->csv))) return 1;
    if (csv) fprintf(csv, "algo,p,bytes,time_us,busbw_gbs\n");
    for (int i = 0; i < na; i++)
        for (int p = 2; p <= o->extrap_pmax; p = o->extrap_every_p ? p + 1 : 2 * p)
            for (double n = 8; n <= (double)(1u << 30); n *= 2) {
                double t = bm_predict(algos[i], m, p, n);
                if (csv) fprintf(csv, "%s,%d,%.0f,%.4f,%.5f\n", algos[i]->name, p, n, t * 1e6, n / t / 1e9 * 2.0 * (p - 1) / p);
            }
    if (csv) fclose(csv);

    printf("# collbench --extrapolate: alpha-beta-gamma model, sizes 8 B .. 1 GB\n");
    bm_params_print(stdout, "# ", m);
    printf("# fastest algorithm by size (crossovers), among:");
    for (int i = 0; i < na; i++) printf(" %s", algos[i]->name);
    printf("\n");
    for (int p = 2; p <= o->extrap_pmax; p = o->extrap_every_p ? p + 1 : 2 * p) {
        double size[32];
        int from[32], to[32], first;
        int k = bm_crossovers(algos, na, m, p, 8, (double)(1u << 30), BM_CROSSOVER_TOL, size, from, to, 32, &first);
        if (k < 0 || first < 0) {
            fflush(stdout);
            fprintf(stderr, "collbench: --extrapolate: no algorithm has a finite predicted time at p = %d, 8 B "
                            "(a cost function, or the model's parameters, gives NaN or inf)\n", p);
            return 2;
        }
        char buf[32];
        printf("  p = %5d: %s", p, algos[first]->name);
        for (int j = 0; j < k; j++) printf(" | %s from %s", algos[to[j]]->name, bm_size_str(size[j], buf, sizeof buf));
        printf("\n");
    }
    return 0;
}
