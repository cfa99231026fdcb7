/*
 * collcheck — check all-reduce algorithms for exact results, buffer overruns,
 * traffic, message counts and hangs. Everything lives in the collkit_check
 * library (collcheck.c and the files check_cli.h lists), so a lab or test
 * can register its own algorithm and call collcheck_main() the same way:
 *
 *     int main(int argc, char **argv)
 *     {
 *         ck_register_algo(&my_algo);
 *         return collcheck_main(argc, argv);
 *     }
 */
#include "collcheck.h"

int main(int argc, char **argv) { return collcheck_main(argc, argv); }
