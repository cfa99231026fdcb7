/* colldraw with lab 07's reference solution (its ring in all three registries)
 * and the two broken halves of wrong_halves.c registered. */
#include "colldraw.h"

int main(int argc, char **argv) { return colldraw_main(argc, argv, NULL); }
