/* Fills the disk before main (a constructor: where a file can still be
 * opened): 64 MB files in the run's folder until a write fails (its disk
 * limit), then the honest work. Bounded at 8 GB by the fixture itself, so
 * that a grader whose limit does not hold fails its test without filling the
 * machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collkit_algo.h"

__attribute__((constructor)) static void fill(void)
{
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    char name[64];
    for (int i = 0; i < 128; i++) {
        snprintf(name, sizeof name, "fill.%d.%d", (int)getpid(), i);
        FILE *f = fopen(name, "w");
        if (!f) return;
        for (int k = 0; k < 64; k++)
            if (fwrite(block, 1, sizeof block, f) != sizeof block) { fclose(f); return; }
        if (fclose(f) != 0) return;
    }
}

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
}
