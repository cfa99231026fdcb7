/* tagtrain — the trainer program: tagtrain_main over the built-in registry. */
#include "tagtrain.h"

int main(int argc, char **argv) { return tagtrain_main(argc, argv); }
