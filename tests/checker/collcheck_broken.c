/*
 * collcheck_broken — collcheck with the deliberately broken algorithms of
 * broken.c registered, the way a lab registers its own algorithm:
 * ck_register_algo() first, then collcheck_main().
 *
 * A broken copy of a built-in ("broken_ring_skip" is a copy of "ring" with
 * one bug) follows the built-in's schedule, so it borrows the built-in's
 * diagnose hook when it declares none — as a student's ring would declare
 * the library ring's schedule (see labs/).
 */
#include <stdio.h>
#include <string.h>
#include "collcheck.h"

/* Built as collcheck_corpus (CK_CORPUS), the same with heldout.c's set. */
#ifdef CK_CORPUS
#define broken_algos heldout_algos
#define broken_algos_count heldout_algos_count
#endif
extern const ck_algo broken_algos[];
extern const int broken_algos_count;

/* The built-in a broken algorithm copies: the longest registered name X
 * such that its own name starts with "broken_X_". */
static const ck_algo *original_of(const char *name)
{
    const ck_algo *best = NULL;
    const char *rest = name + strlen("broken_");
    for (int i = 0; i < ck_algo_count(); i++) {
        const ck_algo *a = ck_algo_at(i);
        size_t n = strlen(a->name);
        if (!strncmp(rest, a->name, n) && rest[n] == '_' && (!best || n > strlen(best->name))) best = a;
    }
    return best;
}

int main(int argc, char **argv)
{
    static ck_algo algos[64];
    if (broken_algos_count > 64) return 2;
    for (int i = 0; i < broken_algos_count; i++) {
        algos[i] = broken_algos[i];
        const ck_algo *orig = original_of(algos[i].name);
        if (orig && !algos[i].diagnose) algos[i].diagnose = orig->diagnose;
    }
    for (int i = 0; i < broken_algos_count; i++)
        if (ck_register_algo(&algos[i]) != CK_SUCCESS) {
            fprintf(stderr, "collcheck_broken: cannot register '%s'\n", algos[i].name);
            return 2;
        }
    return collcheck_main(argc, argv);
}
