/*
 * collkit_group.h — process groups: a communicator split into smaller ones
 * (by colour and key, as MPI_Comm_split), and the 2-D mesh of a job that is
 * both model-parallel and data-parallel.
 *
 * A group's communicator is a communicator like any other: every algorithm,
 * transport, checker and bench run works on it, its ranks numbered 0..q-1 in
 * the group. The shm transport maps only the group's own ranks; the watchdog
 * and the agreement of every call run over the group. Messages name the
 * group's ranks and, since a reader thinks in the job's ranks, end with the
 * map between the two ("[group ranks 0-1 are world ranks 2,3]").
 *
 * The mesh (Megatron's and DeviceMesh's layout): p = T x D ranks, T the
 * model-parallel (tensor) width. Rank w is model-parallel rank w % T of
 * data-parallel replica w / T:
 *
 *     T = 2, p = 6     model-parallel groups  {0,1} {2,3} {4,5}   (consecutive: the
 *                                                                  chattiest group on one node)
 *                      data-parallel groups   {0,2,4} {1,3,5}     (stride T: the ranks that
 *                                                                  hold the same shard)
 */
#ifndef COLLKIT_GROUP_H
#define COLLKIT_GROUP_H

#include "collkit.h"

/* No group: a rank passing it gets *out == NULL (MPI_UNDEFINED). */
#define CK_GROUP_NONE (-1)

/* Collective over parent: the ranks that give the same color form one
 * communicator, ordered by key (ties by their rank in parent), on the same
 * transport kind as parent (shm: mapped among the group's ranks only).
 * color CK_GROUP_NONE: this rank joins none, *out = NULL. Bounded by the
 * watchdog like ck_comm_create. CK_SUCCESS, or an error with the reason in
 * ck_comm_errmsg(parent). */
int ck_comm_split(ck_comm *parent, int color, int key, ck_comm **out);

/* The same over a plain MPI communicator (a program's own groups, e.g. the
 * trainer's plan): the sub-communicator in *out (free it with
 * MPI_Comm_free), MPI_COMM_NULL for CK_GROUP_NONE. The ranks meet first,
 * bounded (`what` names the wait), since MPI_Comm_split has no bounded form. */
int ck_mpi_split(MPI_Comm parent, int color, int key, MPI_Comm *out, const char *what);

/* One rank's place in a T-wide mesh of p ranks. */
typedef struct ck_mesh {
    int p, T, D;           /* ranks, model-parallel width, data-parallel replicas (p / T) */
    int mp_color, mp_rank; /* the model-parallel group (its ranks w with w / T == mp_color), rank in it */
    int dp_color, dp_rank; /* the data-parallel group (w % T == dp_color), rank in it */
} ck_mesh;

/* Pure arithmetic, no MPI: 0 with *m filled, or -1 with the reason in why
 * (T < 1, T not dividing p, rank out of range). */
int ck_mesh_2d(int p, int T, int rank, ck_mesh *m, char *why, size_t cap);

#endif
