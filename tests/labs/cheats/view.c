/* What the run can see: before main (a constructor), every path of
 * GRADE_TEST_PEEK (':' between) said visible or absent on the output, where
 * the grader keeps it in the run's log (tests/labs/sandbox.sh reads it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collkit_algo.h"

__attribute__((constructor)) static void peek(void)
{
    const char *env = getenv("GRADE_TEST_PEEK");
    if (!env)
        return;
    char list[4096];
    snprintf(list, sizeof list, "%s", env);
    for (char *p = strtok(list, ":"); p; p = strtok(NULL, ":"))
        printf("PEEK %s %s\n", access(p, F_OK) == 0 ? "visible" : "absent", p);
    fflush(stdout);
}

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
}
