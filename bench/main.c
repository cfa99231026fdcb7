/* collbench — the benchmark program: collbench_main over the built-in registry. */
#include "collbench.h"

int main(int argc, char **argv) { return collbench_main(argc, argv); }
