/*
 * collcheck_broken — collcheck with the deliberately broken algorithms of
 * broken.c registered, the way a lab registers its own algorithm:
 * ck_register_algo() first, then collcheck_main().
 */
#include <stdio.h>
#include "collcheck.h"

extern const ck_algo broken_algos[];
extern const int broken_algos_count;

int main(int argc, char **argv)
{
    for (int i = 0; i < broken_algos_count; i++)
        if (ck_register_algo(&broken_algos[i]) != CK_SUCCESS) {
            fprintf(stderr, "collcheck_broken: cannot register '%s'\n", broken_algos[i].name);
            return 2;
        }
    return collcheck_main(argc, argv);
}
