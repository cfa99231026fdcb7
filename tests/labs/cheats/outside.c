/* Writes outside its folder: into the file named by GRADE_TEST_OUTSIDE (the
 * test's witness), and appends to the lab's lab.conf beside the grader. */
#include <stdio.h>
#include <stdlib.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    const char *paths[] = {getenv("GRADE_TEST_OUTSIDE"), getenv("GRADE_TEST_CONF")};
    for (int i = 0; i < 2; i++) {
        FILE *f = paths[i] ? fopen(paths[i], "a") : NULL;
        if (f) { fputs("part extra 100 integrity\n", f); fclose(f); }
    }
}
