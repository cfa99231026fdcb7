/* colldraw with lab 01's reference solution and a broken ring registered
 * (their CK_REGISTER_ALGO lines), as collkit-cc's `draw` builds it for a student. */
#include "colldraw.h"

int main(int argc, char **argv) { return colldraw_main(argc, argv, NULL); }
