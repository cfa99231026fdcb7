/*
 * group.c — process groups (collkit_group.h): a communicator split by colour
 * and key, the note that maps a group's ranks to the job's in its messages,
 * and the 2-D mesh of model- and data-parallel groups.
 *
 * A group needs nothing new of the layers below: ck_comm_create already
 * takes any MPI communicator, and everything it sets up (the shm segments,
 * the agreement of each call, the bound of each wait) runs over the
 * communicator it is given. What a group adds is the split itself, met
 * first and bounded like every collective of the kit, and the names: a
 * watchdog message saying "rank 1 waited for rank 0" in a group of world
 * ranks 2 and 3 would send its reader to the wrong processes.
 */
#include <stdio.h>
#include <string.h>
#include "collkit_group.h"
#include "internal.h"

int ck_mpi_split(MPI_Comm parent, int color, int key, MPI_Comm *out, const char *what)
{
    *out = MPI_COMM_NULL;
    /* MPI_Comm_split has no nonblocking form: meet first, bounded (a rank
     * that never comes ends the job, named), then split. */
    ck_watch_barrier(parent, what ? what : "ck_comm_split");
    return MPI_Comm_split(parent, color == CK_GROUP_NONE ? MPI_UNDEFINED : color, key, out) == MPI_SUCCESS
               ? CK_SUCCESS : CK_ERR_TRANSPORT;
}

int ck_comm_split(ck_comm *parent, int color, int key, ck_comm **out)
{
    if (!parent || !out || (color < 0 && color != CK_GROUP_NONE)) return CK_ERR_INVALID_ARG;
    *out = NULL;
    MPI_Comm sub;
    if (ck_mpi_split(parent->mpi, color, key, &sub, "ck_comm_split"))
        return ck_fail(parent, CK_ERR_TRANSPORT, "ck_comm_split: MPI_Comm_split failed (colour %d, key %d)", color, key);
    if (sub == MPI_COMM_NULL) return CK_SUCCESS;
    /* ck_comm_create duplicates it: the group's own communicator is freed here. */
    const int rc = ck_comm_create(sub, parent->tr.mem, out);
    MPI_Comm_free(&sub);
    if (rc) return ck_fail(parent, rc, "ck_comm_split: the group's communicator (colour %d): %s", color, ck_strerror(rc));
    return CK_SUCCESS;
}

/* " [group ranks 0-1 are world ranks 2,3]" for a communicator whose ranks are
 * not the job's own, else "". Local: no communication. */
void ck_group_note(MPI_Comm comm, char *out, size_t cap)
{
    int q, world_size;
    out[0] = '\0';
    MPI_Comm_size(comm, &q);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Group g, w;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    enum { SHOWN = 16 };
    int mine[SHOWN], theirs[SHOWN], n = q < SHOWN ? q : SHOWN, same = q == world_size;
    for (int i = 0; i < n; i++) mine[i] = i;
    MPI_Group_translate_ranks(g, n, mine, w, theirs);
    for (int i = 0; i < n; i++) same = same && theirs[i] == i;
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    if (same) return;
    size_t len = (size_t)snprintf(out, cap, " [group ranks 0-%d are world ranks ", q - 1);
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d", i ? "," : "", theirs[i]);
    if (len < cap) snprintf(out + len, cap - len, "%s]", q > n ? ",..." : "");
}

int ck_mesh_2d(int p, int T, int rank, ck_mesh *m, char *why, size_t cap)
{
    if (p < 1 || T < 1 || rank < 0 || rank >= p) {
        snprintf(why, cap, "a mesh of %d ranks, width %d: rank %d is not in it", p, T, rank);
        return -1;
    }
    if (p % T) {
        snprintf(why, cap, "a model-parallel width of %d does not divide the %d ranks (want p = %d x replicas)", T, p, T);
        return -1;
    }
    *m = (ck_mesh){.p = p, .T = T, .D = p / T, .mp_color = rank / T, .mp_rank = rank % T, .dp_color = rank % T,
                   .dp_rank = rank / T};
    return 0;
}
