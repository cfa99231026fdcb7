/* tagtrain.h — the trainer's command line as a function (calls MPI_Init_thread
 * and MPI_Finalize itself). Programs that carry their own all-reduce register
 * it with ck_register_algo() first; then `--algo NAME` trains with it. */
#ifndef COLLKIT_TAGTRAIN_H
#define COLLKIT_TAGTRAIN_H
int tagtrain_main(int argc, char **argv);
#endif
