/*
 * oot — collcheck and collbench over the registry plus the out-of-tree
 * algorithms of star.c:   oot check [collcheck args]   oot bench [collbench args]
 */
#include <stdio.h>
#include <string.h>
#include "collcheck.h"
#include "collbench.h"

extern const ck_algo oot_star, oot_star_skip;

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "check") && strcmp(argv[1], "bench"))) {
        fprintf(stderr, "usage: oot check|bench [args]\n");
        return 2;
    }
    if (ck_register_algo(&oot_star) || ck_register_algo(&oot_star_skip)) {
        fprintf(stderr, "oot: cannot register the out-of-tree algorithms\n");
        return 2;
    }
    const int bench = !strcmp(argv[1], "bench");
    argv[1] = argv[0];   /* the tool sees "oot ARGS" as its own command line */
    return bench ? collbench_main(argc - 1, argv + 1) : collcheck_main(argc - 1, argv + 1);
}
