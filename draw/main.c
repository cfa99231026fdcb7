/* colldraw over the built-in registry (draw/README.md). */
#include "colldraw.h"

int main(int argc, char **argv) { return colldraw_main(argc, argv, NULL); }
