/* Reads a file of the grader's tree it should never see (GRADE_TEST_SECRET:
 * the reference solution) and prints it, where the run's log keeps it (a
 * verdict the student sees could carry it too). */
#include <stdio.h>
#include <stdlib.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    static int once;
    const char *path = getenv("GRADE_TEST_SECRET");
    FILE *f = !once && path ? fopen(path, "r") : NULL;
    once = 1;
    if (!f) return;
    char text[512];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    fprintf(stderr, "%s\n", text);
}
