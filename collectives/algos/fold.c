/*
 * fold.c — the non-power-of-two fold of fold.h: which ranks pair up, the
 * virtual ranks the rounds run on, and the two exchanges around them.
 */
#include <stdarg.h>
#include <stdio.h>
#include "fold.h"

ck_fold ck_fold_make(int p)
{
    ck_fold f = {p, 1, 0, 0};
    while (2 * f.pp <= p) {
        f.pp *= 2;
        f.rounds++;
    }
    f.rem = p - f.pp;
    return f;
}

int ck_fold_to_virtual(const ck_fold *f, int r)
{
    if (r < 2 * f->rem) return r % 2 ? r / 2 : -1;
    return r - f->rem;
}

int ck_fold_to_real(const ck_fold *f, int v) { return v < f->rem ? 2 * v + 1 : v + f->rem; }

int ck_fold_partner(const ck_fold *f, int r) { return r < 2 * f->rem ? r ^ 1 : -1; }

int ck_fold_in(ck_comm *comm, const ck_fold *f, const void *sendbuf, void *recvbuf, void *tmp,
               size_t count, ck_dtype dt, ck_op op, const void **data)
{
    const int r = ck_comm_rank(comm), partner = ck_fold_partner(f, r);
    const size_t bytes = count * ck_dtype_size(dt);
    int rc;

    *data = sendbuf;
    if (partner < 0) return CK_SUCCESS;
    ck_step(comm, 0, "fold");
    if (r % 2 == 0) return ck_sendrecv(comm, sendbuf, bytes, partner, NULL, 0, -1, CK_FOLD_TAG_IN);
    if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, bytes, partner, CK_FOLD_TAG_IN))) return rc;
    *data = recvbuf;
    return ck_reduce_local(comm, recvbuf, tmp, sendbuf, count, dt, op);   /* even op odd */
}

int ck_fold_out(ck_comm *comm, const ck_fold *f, void *recvbuf, size_t bytes, int step)
{
    const int r = ck_comm_rank(comm), partner = ck_fold_partner(f, r);
    if (partner < 0) return CK_SUCCESS;
    ck_step(comm, step, "unfold");
    if (r % 2) return ck_sendrecv(comm, recvbuf, bytes, partner, NULL, 0, -1, CK_FOLD_TAG_OUT);
    return ck_sendrecv(comm, NULL, 0, -1, recvbuf, bytes, partner, CK_FOLD_TAG_OUT);
}

uint64_t ck_fold_bytes(const ck_fold *f, int r, uint64_t n) { return ck_fold_partner(f, r) >= 0 ? n : 0; }

uint64_t ck_fold_msgs(const ck_fold *f, int r) { return ck_fold_partner(f, r) >= 0 ? 1 : 0; }

int ck_fold_player(const ck_fold *f, int r) { return ck_fold_to_virtual(f, r) < 0 ? r + 1 : r; }

void ck_fold_explain(const ck_fold *f, int who, int rank, ck_sbuf *out)
{
    if (who >= 0 && ck_fold_player(f, who) != who) {
        ck_sbuf_sep(out, "; ");
        ck_sbuf_add(out, "rank %d folds its input into rank %d at the fold", who, who + 1);
    }
    if (rank >= 0 && ck_fold_player(f, rank) != rank) {
        ck_sbuf_sep(out, "; ");
        ck_sbuf_add(out, "rank %d gets the result from rank %d at the unfold", rank, rank + 1);
    }
}

/* The first block virtual rank v is responsible for. */
static int first_block(const ck_fold *f, int v) { return v < f->rem ? 2 * v : v + f->rem; }

void ck_fold_vrange(const ck_fold *f, size_t count, int a, int b, size_t *off, size_t *len)
{
    size_t o, l, end = count;
    ck_block(count, f->p, first_block(f, a), off, &l);
    if (b < f->pp) {
        ck_block(count, f->p, first_block(f, b), &o, &l);
        end = o;
    }
    *len = end - *off;
}
