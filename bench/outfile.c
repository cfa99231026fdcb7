/*
 * outfile.c — collbench's result files (--csv, --json, --save-model, --trace,
 * --results): opened by the kit's one output-file rule, closed with every
 * write error reported (a full disk is an error, not a short file).
 */
#include <stdio.h>
#include "collbench.h"
#include "collkit_util.h"

FILE *bm_out_open(const char *path)
{
    char why[256];
    FILE *f = ck_output_open(path, why, sizeof why);
    if (!f) fprintf(stderr, "collbench: cannot write %s: %s\n", path, why);
    return f;
}

int bm_out_close(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "collbench: error writing %s (disk full or not writable?)\n", path);
        return 1;
    }
    return 0;
}
