/*
 * mpi_map.h — collkit's dtypes and ops as MPI's, for the reference
 * algorithms that call MPI's own collectives (mpi.c, rs_mpi.c, ag_mpi.c).
 * MPI has no bf16: it travels as 16-bit words, reduced by user-defined ops
 * that call collkit's host kernels. Not an algorithm.
 */
#ifndef COLLKIT_MPI_MAP_H
#define COLLKIT_MPI_MAP_H

#include "collkit_algo.h"

/* The MPI datatype and op of (dt, op), op one of sum, prod, min, max. */
int ck_mpi_type_op(ck_dtype dt, ck_op op, MPI_Datatype *type, MPI_Op *mop);

/* The model of a reference that chooses its own algorithm: the cheapest
 * hand-written algorithm of the collective's registry, by its own cost
 * function (-1 when none has one). */
double ck_coll_best_cost(ck_coll coll, const ck_cost_params *m, int p, double n);

#endif
