/*
 * check.h — the suite's tiny test harness: CHECK(cond, printf-args) counts a
 * pass or prints the failure with file and line (and rank, for MPI tests that
 * set check_rank); a test program ends with the line "N passed, M failed",
 * which CTest logs and CI reads.
 */
#ifndef COLLKIT_TEST_CHECK_H
#define COLLKIT_TEST_CHECK_H
#include <stdio.h>

static int passed, failed;
static int check_rank = -1;   /* MPI tests: this rank, printed with each failure */

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond) passed++;                                                       \
        else {                                                                    \
            failed++;                                                             \
            if (check_rank >= 0) printf("FAIL rank %d %s:%d: ", check_rank, __FILE__, __LINE__); \
            else printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                                  \
            printf("\n");                                                         \
        }                                                                         \
    } while (0)

#endif
